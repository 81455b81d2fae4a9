"""The checkpoint store: keep_max retention, which never drops the best or the newest checkpoint."""

from __future__ import annotations

import json
import os

import mindspore as ms

from ascend_finetune.checkpoints.manifest import sha256_file
from ascend_finetune.checkpoints.store import CheckpointStore


def test_keep_max_drops_the_oldest_but_never_the_best(tmp_path):
    net = ms.nn.Dense(4, 2)
    entries = [{"name": p.name, "data": p} for p in net.get_parameters()]
    store = CheckpointStore(str(tmp_path), "r/un x", "ckpt", keep_max=3, keep_best=True)
    accs = [0.9, 0.5, 0.6, 0.7, float("nan"), 0.8]  # the first is the best
    for i, acc in enumerate(accs, start=1):
        store.save(entries, epoch=i, step=i * 10, metrics={"val_acc": acc, "loss": acc})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 50, 60]
    assert [e["best"] for e in manifest] == [True, False, False]
    assert manifest[1]["metrics"]["val_acc"] is None, "NaN is written as null"
    on_disk = sorted(os.listdir(tmp_path / "checkpoints"))
    assert on_disk == sorted(os.path.basename(e["file"]) for e in manifest)
    assert all(f.startswith("r-un-x-") for f in on_disk), "names are file-system safe"
    for e in manifest:
        assert sha256_file(tmp_path / e["file"]) == e["sha256"]
    # a new best takes the flag, and the old best may then go
    store.save(entries, epoch=7, step=70, metrics={"val_acc": 0.95})
    store.save(entries, epoch=8, step=80, metrics={"val_acc": 0.1})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [60, 70, 80] and [e["best"] for e in manifest] == [False, True, False]


def test_keep_max_one_never_deletes_the_checkpoint_just_saved(tmp_path):
    net = ms.nn.Dense(4, 2)
    entries = [{"name": p.name, "data": p} for p in net.get_parameters()]
    store = CheckpointStore(str(tmp_path), "r", "ckpt", keep_max=1, keep_best=True)
    store.save(entries, epoch=1, step=10, metrics={"val_acc": 0.9})
    store.save(entries, epoch=1, step=15, metrics={"loss": 1.0, "reason": "stopped"})  # not better
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 15], "the best stays and so does the newest"
    store.save(entries, epoch=2, step=20, metrics={"loss": 0.9})
    manifest = json.load(open(tmp_path / "checkpoints.json"))
    assert [e["step"] for e in manifest] == [10, 20]
    assert sorted(os.listdir(tmp_path / "checkpoints")) == ["r-e1-s10.ckpt", "r-e2-s20.ckpt"]
    store = CheckpointStore(str(tmp_path / "nobest"), "r", "ckpt", keep_max=2, keep_best=False)
    for step, acc in ((1, 0.9), (2, 0.1), (3, 0.2)):
        store.save(entries, epoch=1, step=step, metrics={"val_acc": acc})
    manifest = json.load(open(tmp_path / "nobest" / "checkpoints.json"))
    assert [(e["step"], e["best"]) for e in manifest] == [(2, False), (3, False)], "without keep_best, plain rotation"
