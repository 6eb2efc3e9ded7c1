"""A workflow run's record: the run ledger (``ledger``), the answer printed when it ends
(``summary``), the jobs it ran (``joblog``) and a stop by Ctrl-C or SIGTERM (``interrupts``)."""
