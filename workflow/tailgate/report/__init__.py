"""tailgate.report."""
