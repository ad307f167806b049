"""LoCoMo harness: byheart against baselines; offline, live replay, outside knowledge, answers."""
