"""tailgate.score."""
