"""The epoch-level knobs of `train` that keep state across a run: early stopping, the plateau
schedule and the weights' EMA. The trainer builds one `Knobs`; the run loop calls its hooks
(after each update, at each eval, at each checkpoint), and a resume loads their state back from
the checkpoint's `knobs.*` entries and the EMA checkpoint beside it. Of several ranks, rank 0 alone
evaluates and decides; the others take its decisions at the epoch's end (`after_epoch`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..data.folder import DataError
from .early_stop import EarlyStopping
from .ema import WeightEMA, ema_file_for
from .plateau import Plateau, apply


class Knobs:
    def __init__(self, tr: Any):
        t = tr.spec["train"]
        self.tr = tr
        es = t.get("early_stopping") or {}
        self.early = EarlyStopping(es) if int(es.get("patience") or 0) > 0 else None
        if self.early and not tr.val_samples:
            raise DataError(
                "train.early_stopping",
                "early stopping watches a validation metric, but this run has no validation images",
                "set data.val or data.val_split, or train.early_stopping.patience to 0",
                "early_stopping_without_val",
            )
        self.plateau = None
        if t["lr_schedule"] == "plateau":
            cfg = dict(t["plateau"])
            if cfg["metric"].startswith("val_") and not tr.val_samples:
                tr.warn(
                    "plateau_on_train_loss",
                    f"train.plateau.metric is {cfg['metric']} but the run has no validation images: "
                    "the plateau schedule watches the epoch's training loss instead",
                    {"metric": cfg["metric"]},
                )
                cfg["metric"] = "train_loss"
            self.plateau = Plateau(cfg, float(t["lr"]))
        self.ema = WeightEMA(tr.net, float(t["ema"])) if t.get("ema") else None

    def after_update(self) -> None:
        """After each applied optimizer update (a skipped overflow step is not one)."""
        if self.ema is not None:
            self.ema.update()

    def evaluate_ema(self) -> dict[str, Any] | None:
        """The EMA weights' eval (the same validation set), or None without EMA."""
        if self.ema is None:
            return None
        with self.ema.swapped_in():
            return self.tr.evaluate()

    def after_epoch(
        self,
        epoch: int,
        metrics: dict[str, Any],
        emit: Callable[..., Any],
        from_leader: Callable[[list[float]], list[float]] | None = None,
    ) -> dict[str, Any] | None:
        """After the epoch's eval, before its checkpoint (so that the checkpoint holds the counters
        after this epoch): lowers the rate at a plateau (an `lr_reduced` event); returns
        run_finished's `early_stop` when the run is to end here, else None.

        Of several ranks (`from_leader`: RankStrategy.from_leader), rank 0 alone evaluates, so it
        alone decides, and every rank takes its [stop, rate ratio] from it here, before the next
        step: all ranks end at the same step, and apply the same (float32) ratio at the same update."""
        tr = self.tr
        shared = from_leader is not None and (self.early is not None or self.plateau is not None)
        leads = not (tr.rank and tr.rank.rank)
        dropped, early = None, None
        if leads and self.plateau is not None:
            dropped = self.plateau.after_eval(metrics.get(self.plateau.watch.metric), epoch)
        if leads and self.early is not None:
            early = self.early.after_eval(metrics, epoch)
        ratio = dropped[1] / dropped[0] if dropped else 1.0
        if shared:
            assert from_leader is not None
            stop, ratio = from_leader([1.0 if early else 0.0, ratio])
            if stop > 0.5 and early is None:  # another rank: rank 0's run_finished says why
                early = {"epoch": epoch, "message": "rank 0's train.early_stopping ended the run at this epoch"}
            if ratio != 1.0 and self.plateau is not None and not leads:
                self.plateau.scale *= ratio  # rank 0's Plateau counted it already
        if ratio != 1.0:
            apply(tr.optimizer, tr.lrs, tr.applied, ratio)
        if dropped and self.plateau is not None:
            w = self.plateau.watch
            emit(
                "lr_reduced",
                epoch=epoch,
                step=tr.step,
                lr=dropped[1],
                previous_lr=dropped[0],
                metric=w.metric,
                best=w.best,
                best_epoch=w.best_epoch,
            )
        return early

    def state(self) -> dict[str, Any]:
        """Checkpoint entries of the counters (the EMA shadow is its own checkpoint)."""
        import mindspore as ms

        out = {}
        for k in (self.early, self.plateau):
            if k is not None:
                out[k.STATE_ENTRY] = ms.Tensor(k.state().astype(np.float32))
        return out

    def load(self, state: dict[str, Any], ckpt: str) -> None:
        """A resume: the counters from the checkpoint, the plateau's rate re-applied to the optimizer's
        schedule (the spec owns it, so it was not loaded), the EMA shadow from the EMA checkpoint."""
        from ..checkpoints.store import load_state

        tr = self.tr
        if self.early is not None and EarlyStopping.STATE_ENTRY in state:
            self.early.load(state[EarlyStopping.STATE_ENTRY].asnumpy())
        if self.plateau is not None and Plateau.STATE_ENTRY in state:
            self.plateau.load(state[Plateau.STATE_ENTRY].asnumpy())
            if self.plateau.scale != 1.0:
                apply(tr.optimizer, tr.lrs, tr.applied, self.plateau.scale)
        if self.ema is not None:
            path = ema_file_for(ckpt)
            if os.path.isfile(path):
                missing = self.ema.load(load_state(path))
                if missing:
                    tr.warn(
                        "ema_partial",
                        f"{os.path.basename(path)} lacks {len(missing)} EMA tensors: "
                        "those start from the resumed weights",
                        {"missing": missing[:20], "file": os.path.basename(path), "count": len(missing)},
                    )
            else:
                self.ema.reset_to_weights()
                tr.warn(
                    "ema_restarted",
                    f"no EMA checkpoint beside {os.path.basename(ckpt)} ({os.path.basename(path)}): "
                    "the weights' average starts again from the resumed weights",
                    {"file": os.path.basename(path), "checkpoint": os.path.basename(ckpt)},
                )
