"""The training loss from the spec: cross-entropy with label smoothing (`train.label_smoothing`) and
class weights (`train.class_weights`), as `nn.CrossEntropyLoss` computes them (PyTorch's semantics:
the smoothed target is `(1 - s) * onehot + s / C`; with weights the mean is the sum of weighted
losses over the sum of the batch's target weights)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..data.folder import DataError


def class_counts(samples: Sequence[tuple[str, int]], num_classes: int) -> np.ndarray:
    return np.bincount(np.array([label for _, label in samples], np.int64), minlength=num_classes)[:num_classes]


def class_weights(spec_value: Any, counts: np.ndarray) -> np.ndarray | None:
    """The loss's per-class weights: None (unweighted), "auto" (inverse frequency, scikit-learn's
    "balanced": n / (C * n_c), a class without training images gets 0) or the user's list."""
    n = len(counts)
    if spec_value is None:
        return None
    if spec_value == "auto":
        total = float(counts.sum())
        return np.array([total / (n * c) if c else 0.0 for c in counts], np.float32)
    if len(spec_value) != n:
        raise DataError(
            "train.class_weights",
            f"train.class_weights has {len(spec_value)} weights but the data has {n} classes",
            f'give {n} weights, one per class in the classes\' order (sorted folder names), or set it to "auto"',
            "class_weights_count",
            count=len(spec_value),
            num_classes=n,
        )
    return np.array(spec_value, np.float32)


def make_loss(train: Mapping[str, Any], counts: np.ndarray) -> Any:
    """`nn.CrossEntropyLoss` (log-softmax inside: the recipe's SoftmaxCrossEntropyWithLogits overflows
    on CPU once a logit passes ~88) with the spec's smoothing and weights."""
    import mindspore as ms
    from mindspore import nn

    w = class_weights(train.get("class_weights"), counts)
    return nn.CrossEntropyLoss(
        weight=ms.Tensor(w) if w is not None else None,
        reduction="mean",
        label_smoothing=float(train.get("label_smoothing") or 0.0),
    )
