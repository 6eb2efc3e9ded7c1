"""The run's score and severity files, on their scales: the severity scales (``transform``), the
files the analyses read (``severities``, ``score_files``) and the bounded-support diagnostics."""
