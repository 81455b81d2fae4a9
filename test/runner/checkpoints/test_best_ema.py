"""train.ema's "best" rule: the EMA checkpoint is chosen as best when it scores higher than the raw
weights' checkpoint, and the raw one when it does not. The real CheckpointStore (real MindSpore
checkpoint files and manifest) with the entries the run saves at each epoch end: the raw weights,
then their EMA beside them (`kind: "ema"`), as Run._checkpoint does."""

from __future__ import annotations

import json

import mindspore as ms
import numpy as np

from ascend_finetune.checkpoints.store import CheckpointStore


def _weights(v: float) -> list[dict]:
    return [{"name": "head.weight", "data": ms.Tensor(np.full((2, 3), v, np.float32))}]


def _epoch(store: CheckpointStore, epoch: int, raw: dict, ema: dict) -> tuple[dict, dict]:
    r = store.save(_weights(epoch), epoch, 4 * epoch, {"loss": 1.0, **raw})
    e = store.save(_weights(epoch + 0.5), epoch, 4 * epoch, ema, kind="ema")
    return r, e


def _best_file(run_dir) -> list[str]:
    return [e["file"] for e in json.loads((run_dir / "checkpoints.json").read_text()) if e["best"]]


def test_the_ema_checkpoint_is_best_only_when_it_scores_higher(tmp_path):
    store = CheckpointStore(str(tmp_path), "t", "ckpt", keep_max=10, keep_best=True)
    # epoch 1: the average scores higher than the raw weights: it is the best
    raw1, ema1 = _epoch(store, 1, {"val_acc": 0.50, "val_loss": 1.2}, {"val_acc": 0.75, "val_loss": 1.1})
    assert ema1["best"] and ema1["kind"] == "ema" and ema1["file"].endswith("-ema.ckpt")
    assert _best_file(tmp_path) == [ema1["file"]] and store.best()["file"] == ema1["file"]
    # epoch 2: the raw weights beat every checkpoint (the average lags): the raw one is the best
    raw2, ema2 = _epoch(store, 2, {"val_acc": 0.90, "val_loss": 0.4}, {"val_acc": 0.80, "val_loss": 0.6})
    assert not ema2["best"] and _best_file(tmp_path) == [raw2["file"]]
    # epoch 3: the same accuracy, a lower loss for the average: the tie goes to the EMA checkpoint
    raw3, ema3 = _epoch(store, 3, {"val_acc": 0.95, "val_loss": 0.30}, {"val_acc": 0.95, "val_loss": 0.25})
    assert _best_file(tmp_path) == [ema3["file"]]
    # ... and it loads: the EMA weights, not the raw ones
    loaded = ms.load_checkpoint(str(tmp_path / ema3["file"]))
    assert np.allclose(loaded["head.weight"].asnumpy(), 3.5)


def test_without_ema_metrics_the_raw_checkpoint_stays_best(tmp_path):
    # An EMA checkpoint saved without an eval (no validation images) has no val_acc: never best.
    store = CheckpointStore(str(tmp_path), "t", "ckpt", keep_max=10, keep_best=True)
    raw1, ema1 = _epoch(store, 1, {"val_acc": 0.5, "val_loss": 1.0}, {})
    assert _best_file(tmp_path) == [raw1["file"]] and not ema1["best"]
