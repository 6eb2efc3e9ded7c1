"""tailgate.prereg."""
