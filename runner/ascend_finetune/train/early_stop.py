"""Early stopping (`train.early_stopping`) and the metric watch it shares with the plateau schedule:
after each epoch's eval, is the metric better than its best by more than `min_delta`? Keras'
EarlyStopping semantics: the first epoch sets the best; `patience` epochs in a row without an
improvement stop the run (so a metric that never improves after epoch 1 stops it after epoch
1 + patience). The counters ride in the checkpoint (`state`/`load`), so a resumed run goes on counting."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

LOWER_IS_BETTER = {"val_loss": True, "train_loss": True, "val_acc": False}


class Watch:
    """A metric's best value and the epochs since it last improved."""

    def __init__(self, metric: str, min_delta: float):
        self.metric, self.min_delta = metric, float(min_delta)
        self.lower = LOWER_IS_BETTER[metric]
        self.best = math.nan  # NaN: nothing seen yet
        self.best_epoch = 0
        self.bad = 0  # epochs in a row without an improvement

    def observe(self, value: float | None, epoch: int) -> bool:
        """Record this epoch's value; True when it improved on the best. A missing or non-finite
        value counts as no improvement."""
        if value is None or not math.isfinite(value):
            self.bad += 1
            return False
        if math.isnan(self.best):
            better = True
        else:
            better = value < self.best - self.min_delta if self.lower else value > self.best + self.min_delta
        if better:
            self.best, self.best_epoch, self.bad = float(value), epoch, 0
        else:
            self.bad += 1
        return better

    def state(self) -> np.ndarray:
        return np.array([self.best, self.best_epoch, self.bad], np.float64)

    def load(self, state: np.ndarray) -> None:
        best, best_epoch, bad = (float(v) for v in np.asarray(state, np.float64).reshape(-1)[:3])
        self.best, self.best_epoch, self.bad = best, int(best_epoch), int(bad)


class EarlyStopping:
    """`train.early_stopping` with patience > 0."""

    STATE_ENTRY = "knobs.early_stopping"

    def __init__(self, cfg: dict[str, Any]):
        self.patience = int(cfg["patience"])
        self.watch = Watch(cfg["metric"], cfg["min_delta"])

    def state(self) -> np.ndarray:
        return self.watch.state()

    def load(self, state: np.ndarray) -> None:
        self.watch.load(state)

    def after_eval(self, metrics: dict[str, Any], epoch: int) -> dict[str, Any] | None:
        """None to go on, else run_finished's `early_stop`: why the run ends here."""
        w = self.watch
        w.observe(metrics.get(w.metric), epoch)
        if w.bad < self.patience:
            return None
        return {
            "epoch": epoch,
            "metric": w.metric,
            "best": None if math.isnan(w.best) else w.best,
            "best_epoch": w.best_epoch,
            "patience": self.patience,
            "min_delta": w.min_delta,
            "message": f"{w.metric} did not improve by more than {w.min_delta:g} for {self.patience} epoch(s) "
            + (f"(best {w.best:.4g} at epoch {w.best_epoch})" if w.best_epoch else "(no finite value)"),
        }
