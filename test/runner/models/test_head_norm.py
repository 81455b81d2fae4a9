"""model.head_norm: the feature normalisation in front of the head (models/net.py NormedHead). `auto`
puts it on a frozen backbone without normalisation layers (SqueezeNet here), whose features a plain
head cannot settle on; the run trains, saves the statistics with the head, and eval and export
rebuild the same head from the checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import mindspore as ms
import numpy as np
import pytest
from conftest import ROOT, events, of_type, spec, write_spec

from ascend_finetune.data.demo import CLASSES, make_shapes
from ascend_finetune.models.net import NORM_ENTRY, NormedHead, TransferNet

TWO = {k: CLASSES[k] for k in ("red circle", "green square")}


def cli(*args: str) -> tuple[int, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run([sys.executable, "-m", "ascend_finetune", *args], capture_output=True, text=True, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert lines, r.stderr[-2000:]
    return r.returncode, json.loads(lines[-1])


@pytest.mark.parametrize(
    "backbone, freeze, head_norm, normed",
    [
        ("squeezenet1_0", "backbone", "auto", True),  # no normalisation layer anywhere
        ("squeezenet1_0", "none", "auto", False),  # it trains: its own scale follows the head
        ("squeezenet1_0", "backbone", "none", False),
        ("resnet18", "backbone", "auto", False),  # BatchNorm before the pooling
        ("resnet18", "none", "batchnorm", True),
    ],
)
def test_head_norm_resolves_by_freeze_and_backbone(backbone, freeze, head_norm, normed):
    from ascend_finetune.models.net import frozen_parts

    net = TransferNet(backbone, 3, frozen_parts(freeze, backbone), "default", head_norm)
    assert isinstance(net.head, NormedHead) is normed
    names = [p.name for p in net.get_parameters()]
    assert "head.weight" in names and "head.bias" in names and (NORM_ENTRY in names) is normed


def test_normed_head_is_a_dense_on_standardised_features():
    rng = np.random.default_rng(0)
    head = NormedHead(6, 3)
    mean, var = rng.uniform(100, 3000, 6).astype(np.float32), rng.uniform(1e4, 1e6, 6).astype(np.float32)
    head.norm.moving_mean.set_data(ms.Tensor(mean))
    head.norm.moving_variance.set_data(ms.Tensor(var))
    head.set_train(False)
    x = (mean + np.sqrt(var) * rng.standard_normal((4, 6))).astype(np.float32)  # features in the thousands
    w, b = head.weight.asnumpy(), head.bias.asnumpy()
    want = ((x - mean) / np.sqrt(var + 1e-6)) @ w.T + b
    np.testing.assert_allclose(head(ms.Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_a_probe_with_the_normalisation_trains_evaluates_and_exports(tmp_path):
    data = tmp_path / "two"
    make_shapes(str(data), per_class=8, size=32, seed=3, classes=TWO)
    s = spec(
        data,
        model={"backbone": "squeezenet1_0", "freeze": "backbone"},  # head_norm left to auto
        data={"image_size": 64, "batch_size": 6, "val_split": 0.25},  # 12 training images: 2 steps an epoch
        train={"epochs": 1, "lr": 1e-3, "optimizer": "adamw", "cache_features": True},
        amp={"level": "O0", "loss_scale": "none"},
    )
    run = tmp_path / "run"
    code, out = cli("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run))
    assert code == 0, out
    assert len(of_type(events(run), "step")) == 2
    entry = json.loads((run / "checkpoints.json").read_text())[-1]
    ckpt = run / entry["file"]
    saved = ms.load_checkpoint(str(ckpt))
    stats = saved[NORM_ENTRY].asnumpy()
    assert stats.shape == (512,) and np.abs(stats).max() > 0, "the statistics followed the features"

    code, ev = cli("eval", "--run", str(run), "--ckpt", str(ckpt))
    assert code == 0, ev
    assert ev["accuracy"] == pytest.approx(entry["metrics"]["val_acc"])  # the run's own eval, head and all

    # inspect and compare read a mindcv backbone by its cell paths (backbone.model.*), frozen as the spec says
    code, ins = cli("inspect", str(ckpt), "--run", str(run))
    assert code == 0, ins
    by = {t["name"]: t for t in ins["tensors"]}
    first = by["backbone.model.features.0.weight"]
    assert first["module"] == "backbone.model.features.0" and first["trainable"] is False
    assert by["head.weight"]["trainable"] is True and by["head.weight"]["shape"] == [2, 512]
    assert ins["freeze"] == "backbone" and ins["head_matches_classes"] is True
    code, cmp = cli("compare", str(ckpt), str(ckpt), "--run", str(run))
    assert code == 0, cmp
    marks = {t["name"]: t["frozen"] for t in cmp["tensors"] if t["kind"] == "param"}
    assert marks["backbone.model.features.0.weight"] is True and marks["head.weight"] is False
    assert cmp["summary"]["changed"] == 0 and cmp["summary"]["frozen_max_l2"] == 0.0

    code, ex = cli("export", "--run", str(run), "--ckpt", str(ckpt), "--format", "mindir")
    assert code == 0, ex
    from ascend_finetune.checkpoints.loading import load_net
    from ascend_finetune.checkpoints.tools import load_run

    before = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = load_net(load_run(str(run)), str(ckpt))
        assert isinstance(net.head, NormedHead)
        np.testing.assert_array_equal(net.head.norm.moving_mean.asnumpy(), stats)
        x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
        exported = ms.nn.GraphCell(ms.load(ex["file"]))(ms.Tensor(x)).asnumpy()
        np.testing.assert_allclose(exported, net(ms.Tensor(x)).asnumpy(), rtol=1e-4, atol=1e-5)
    finally:
        ms.set_context(mode=before)


def test_a_run_from_before_head_norm_resumes_with_the_head_it_had(tmp_path):
    # A frozen SqueezeNet probe trained without the normalisation (as every run before model.head_norm
    # was); its spec, without the field, now resolves to auto, which would add one. The resume keeps
    # the head the checkpoint has instead of refusing it as another model.
    data = tmp_path / "two"
    make_shapes(str(data), per_class=8, size=32, seed=3, classes=TWO)
    s = spec(
        data,
        model={"backbone": "squeezenet1_0", "freeze": "backbone", "head_norm": "none"},
        data={"image_size": 64, "batch_size": 6, "val_split": 0.25},
        train={"epochs": 2, "lr": 1e-3, "optimizer": "adamw", "cache_features": True},
        amp={"level": "O0", "loss_scale": "none"},
    )
    code, out = cli("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "old"))
    assert code == 0, out
    first = next(c for c in of_type(events(tmp_path / "old"), "checkpoint") if c["step"] == 2)
    del s["model"]["head_norm"]
    again = tmp_path / "again"
    code, out = cli(
        "train",
        str(write_spec(tmp_path / "s2.json", s)),
        "--run-dir",
        str(again),
        "--resume",
        str(tmp_path / "old" / first["file"]),
    )
    assert code == 0, out
    evs = events(again)
    assert evs[-1]["status"] == "completed" and len(of_type(evs, "step")) == 2
    last = ms.load_checkpoint(str(again / of_type(evs, "checkpoint")[-1]["file"]))
    assert "head.weight" in last and NORM_ENTRY not in last
