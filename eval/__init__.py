"""Benchmarks for yait_byheart. Run ``python -m eval locomo --help`` from the repository root."""
