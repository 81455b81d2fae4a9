"""Training: the trainer, the run around it (run.py), the per-rank entry (rank.py), the pre-flight
checks and the frozen-backbone feature cache."""
