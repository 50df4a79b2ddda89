"""Benchmarks print figures and are run by hand (``make bench``); pytest collects nothing here."""

collect_ignore_glob = ["*.py"]
