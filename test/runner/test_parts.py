"""The runner's parts on their own: backbones, freezing, schedules, checkpoint retention."""
from __future__ import annotations

import json
import math
import os

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.checkpoints import CheckpointStore, sha256_file
from ascend_finetune.model import TransferNet, apply_freeze, frozen_parts
from ascend_finetune.train import lr_per_step, resolve_target


@pytest.mark.parametrize("name,features,tensors", [("resnet18", 512, 100), ("resnet34", 512, 180),
                                                    ("resnet50", 2048, 265), ("resnet101", 2048, 520)])
def test_backbones_build_with_modelzoo_shapes(name, features, tensors):
    net = TransferNet(name, 7)
    assert net.backbone.num_features == features
    assert net.head.weight.shape == (7, features)
    assert len(list(net.backbone.get_parameters())) == tensors
    w = np.abs(net.head.weight.asnumpy())
    assert 0 < w.std() < 0.05, "head init Normal(0.02)"


def test_resnet18_forward_gives_class_logits():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        out = TransferNet("resnet18", 5)(ms.Tensor(np.zeros((2, 3, 32, 32), np.float32)))
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert out.shape == (2, 5)


@pytest.mark.parametrize("freeze,frozen_prefixes", [
    ("none", []),
    ("backbone", ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4"]),
    ("up_to:layer2", ["conv1", "bn1", "layer1", "layer2"]),
])
def test_freeze_modes_mark_exactly_their_parts(freeze, frozen_prefixes):
    net = TransferNet("resnet18", 3, frozen_parts(freeze))
    apply_freeze(net)
    for name, p in net.parameters_and_names():
        part = name.split(".")[1] if name.startswith("backbone.") else "head"
        if "moving_" in name:
            continue  # statistics are never trainable
        assert p.requires_grad == (part not in frozen_prefixes), name


def test_lr_schedules_with_warmup():
    t = {"lr": 0.1, "warmup_steps": 4, "lr_schedule": "constant", "lr_step_size": None, "lr_step_gamma": 0.1}
    assert lr_per_step(t, 8) == pytest.approx([0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1, 0.1])
    cos = lr_per_step({**t, "lr_schedule": "cosine", "warmup_steps": 0}, 10)
    assert cos[0] == pytest.approx(0.1) and cos[5] == pytest.approx(0.05) and cos[-1] < 0.003
    assert all(a >= b for a, b in zip(cos, cos[1:]))
    step = lr_per_step({**t, "lr_schedule": "step", "warmup_steps": 0, "lr_step_size": 3}, 7)
    assert step == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001])


def test_device_auto_is_cpu_without_an_npu():
    assert resolve_target("auto") == "CPU"


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


def test_other_amp_levels_scalers_optimizers_and_safetensors(data_a, tmp_path):
    """O1 with a fixed loss scale, SGD, a cosine schedule after warm-up, safetensors checkpoints."""
    s = spec(data_a, name="o1", amp={"level": "O1", "loss_scale": "fixed", "init_scale": 128},
             train={"epochs": 1, "optimizer": "sgd", "lr": 0.02, "lr_schedule": "cosine", "warmup_steps": 3},
             checkpoint={"format": "safetensors"})
    code, out = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    started = of_type(evs, "run_started")[0]
    assert started["amp"] == {"level": "O1", "loss_scale": "fixed"}
    steps = of_type(evs, "step")
    assert all(st["loss_scale"] == 128 for st in steps), "a fixed scale never moves"
    expected = lr_per_step(started["spec"]["train"], started["total_steps"])
    applied = 0
    for st in steps:
        assert st["lr"] == pytest.approx(expected[applied])
        applied += not st["skipped"]
    ck = of_type(evs, "checkpoint")[-1]
    assert ck["file"].endswith(".safetensors")
    state = ms.load_checkpoint(str(tmp_path / "run" / ck["file"]), format="safetensors")
    assert int(state["step_num"].asnumpy()) == started["total_steps"]
    assert math.isfinite(steps[-1]["loss"])


def test_image_scan_is_cached_and_rechecks_changed_files(tmp_path, monkeypatch):
    from PIL import Image

    from ascend_finetune import data
    from ascend_finetune.demo_data import make_shapes

    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "set"
    make_shapes(str(root), per_class=5, size=32)
    decoded = []
    real = data._check_image
    monkeypatch.setattr(data, "_check_image", lambda p: decoded.append(p) or real(p))
    first = data.scan(str(root), 2)
    assert len(decoded) == 20 and len(first.samples) == 20
    decoded.clear()
    assert data.scan(str(root), 2).samples == first.samples
    assert decoded == [], "an unchanged set is not decoded again"
    victim = root / "red circle" / "0000.png"
    victim.write_bytes(victim.read_bytes()[:30])  # truncated since the last scan
    os.utime(victim, ns=(1, 1))
    third = data.scan(str(root), 2)
    assert decoded == [str(victim)]
    assert [p for p, _ in third.skipped] == [str(victim)] and len(third.samples) == 19
    Image.new("RGB", (32, 32)).save(victim)  # repaired
    assert len(data.scan(str(root), 2).samples) == 20
