"""Eval metrics shared by the in-run eval (train/trainer.py) and `eval` (evaluate.py).

Batches are padded to the batch size (`pad_batch`), so the eval graph is compiled for one input shape
(a partial last batch would compile a second one, or be dropped); the padding rows are cut off the
logits before any metric sees them. `Tally` then counts every image once: loss, top-1 and top-5
accuracy, the confusion matrix, and optionally each image's top-5 for the predictions gallery.

Top-k follows MindSpore's own `TopKCategoricalAccuracy` (`np.argsort(-logits)[:, :k]`); with k or fewer
classes every finite row is a hit, so top-5 is 1.0 by definition there. An image with NaN/Inf logits
is a miss in every metric (its argmax would otherwise "predict" class 0).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

TOP_K = 5
MAX_PREDICTIONS = 2000  # per-image records kept in `<ckpt>.eval.json`: ~110 bytes each


def pad_batch(x: np.ndarray, batch: int) -> tuple[np.ndarray, int]:
    """(x padded with zero rows to `batch` rows, the number of real rows)."""
    n = int(x.shape[0])
    if n >= batch:
        return x, n
    return np.concatenate([x, np.zeros((batch - n, *x.shape[1:]), x.dtype)]), n


def top_k(logits: np.ndarray, k: int = TOP_K) -> np.ndarray:
    """The indices of each row's k largest logits, largest first (ties: the lower index first)."""
    return np.argsort(-logits, axis=1, kind="stable")[:, : min(k, logits.shape[1])]


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class Tally:
    """Running eval counts over batches of (float64 logits, int labels) in sample order.

    `record`: keep each image's top-5 (class indices and probabilities) for `predictions`."""

    def __init__(self, num_classes: int, record: bool = False):
        self.n = num_classes
        self.confusion = np.zeros((num_classes, num_classes), np.int64)
        self.class_total = np.zeros(num_classes, np.int64)
        self.loss_sum, self.count, self.nonfinite, self.top5_hits = 0.0, 0, 0, 0
        self.record = record
        self._top: list[np.ndarray] = []  # per batch: (rows, k) class indices, -1 for a non-finite row
        self._prob: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []

    def add(self, logits: np.ndarray, labels: np.ndarray) -> None:
        logits = logits.astype(np.float64)
        labels = labels.astype(np.int64)
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        self.loss_sum += float(-logp[np.arange(len(labels)), labels].sum())
        self.count += len(labels)
        ok = np.isfinite(logits).all(axis=1)
        self.nonfinite += int((~ok).sum())
        np.add.at(self.confusion, (labels[ok], logits[ok].argmax(axis=1)), 1)
        np.add.at(self.class_total, labels, 1)
        top = top_k(np.where(ok[:, None], logits, 0.0))
        self.top5_hits += int(((top == labels[:, None]).any(axis=1) & ok).sum())
        if self.record:
            probs = np.take_along_axis(softmax(np.where(ok[:, None], logits, 0.0)), top, axis=1)
            self._top.append(np.where(ok[:, None], top, -1).astype(np.int32))
            self._prob.append(probs.astype(np.float32))
            self._labels.append(labels)

    @property
    def accuracy(self) -> float:
        return float(np.trace(self.confusion) / max(1, self.count))

    @property
    def top5(self) -> float:
        return self.top5_hits / max(1, self.count)

    def run(self, logits_of: Any, batches: Any, batch_size: int) -> None:
        """Feeds every batch of (images, labels) through `logits_of`, padded to `batch_size` rows: one
        compiled input shape; the padding's logits are dropped before they are counted."""
        import mindspore as ms

        for x, y in batches:
            xs = x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)
            ys = y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y)
            padded, n = pad_batch(xs, batch_size)
            self.add(logits_of(ms.Tensor(padded)).asnumpy()[:n], ys[:n])

    def predictions(self, files: list[str], limit: int = MAX_PREDICTIONS, seed: int = 0) -> dict[str, Any]:
        """Per-image records `{file, label, top: [[class, prob], ...]}` (top null for NaN/Inf logits),
        all of them up to `limit`; above it the mistakes (the most confident first: where label errors
        show) and a seeded sample of the correct images (a quarter of the limit, or what the mistakes
        leave). `kept` says which were kept."""
        if not self._top:
            return {"records": [], "kept": {"total": 0, "kept": 0, "limit": limit, "all": True}}
        top, prob, labels = np.concatenate(self._top), np.concatenate(self._prob), np.concatenate(self._labels)
        total = len(labels)
        wrong = top[:, 0] != labels
        if total <= limit:
            keep = list(range(total))
            kept: dict[str, Any] = {"total": total, "kept": total, "limit": limit, "all": True}
        else:
            mistakes = np.flatnonzero(wrong)
            right = np.flatnonzero(~wrong)
            n_right = min(len(right), max(limit // 4, limit - len(mistakes)))
            by_conf = mistakes[np.argsort(-np.where(top[mistakes, 0] >= 0, prob[mistakes, 0], -1.0), kind="stable")]
            chosen_mistakes = by_conf[: limit - n_right]
            chosen_right = random.Random(seed).sample(right.tolist(), n_right)
            keep = sorted(chosen_mistakes.tolist() + chosen_right)
            kept = {
                "total": total,
                "kept": len(keep),
                "limit": limit,
                "all": False,
                "mistakes": int(wrong.sum()),
                "mistakes_kept": len(chosen_mistakes),
                "correct_kept": len(chosen_right),
                "rule": "the most confident mistakes, then a seeded sample of the correct images",
            }
        records = []
        for i in keep:
            row = None if top[i, 0] < 0 else [[int(c), round(float(p), 5)] for c, p in zip(top[i], prob[i])]
            records.append({"file": files[i], "label": int(labels[i]), "top": row})
        return {"records": records, "kept": kept}
