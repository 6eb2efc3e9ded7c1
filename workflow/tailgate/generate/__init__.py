"""tailgate.generate."""
