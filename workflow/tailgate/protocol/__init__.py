"""tailgate.protocol."""
