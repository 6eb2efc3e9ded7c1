"""tailgate.stats."""
