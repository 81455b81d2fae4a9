"""`data.sampling: balanced`: each epoch's training list drawn class-balanced (PyTorch's
WeightedRandomSampler with weights 1/n_class, with replacement), as many images as the training set
has, seeded by the epoch's seed. The pipeline then shuffles and shards this list like the plain one
(every rank draws the same list from the same seed and takes its own shard), so the plan's
steps per epoch do not change."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def balanced_epoch(samples: Sequence[tuple[str, int]], seed: int) -> list[tuple[str, int]]:
    if not samples:
        return []
    labels = np.array([label for _, label in samples], np.int64)
    counts = np.bincount(labels)
    weights = 1.0 / counts[labels]  # every class present gets the same total probability
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(samples), size=len(samples), replace=True, p=weights / weights.sum())
    return [samples[i] for i in picks]
