"""tailgate.analyses."""
