"""Transfer with mindcv backbones, as a user runs it, for every family CI builds (CI_FAMILIES): task A
(demo shapes) trained from scratch gives the pretrained backbone; on task B (other colours) a linear
probe on it (frozen backbone, through the feature cache) beats training the same network from scratch,
by 0.2 in validation accuracy, in less wall time, and the backbone stays A's.

Choices: 64 px (SqueezeNet and GoogLeNet need more than 32; ViT takes its 224), fp32 (O2's fp16 blew
up GoogLeNet's first steps), task A once per family with one recipe that learns it from scratch
(FROM_SCRATCH, 8 epochs), the same recipe for the scratch baseline on B (4 epochs), and 20 probe
epochs, which the cache makes nearly free: the probe still costs less than the scratch run.

Opt-in (ASCEND_FINETUNE_SLOW_TESTS=1): 4 to 35 min per family on the 2-core box loaded by other jobs
(ViT at 224 px and ConvNeXt the longest), 0.5 to 1 min for the small networks once it was quiet; the
measured accuracies and times are in docs/weights.md ("Transfer per family")."""

from __future__ import annotations

import json
import os
import time

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec
from test_mindcv_backbones import CI_FAMILIES

from ascend_finetune.models.backbones import fixed_image_size

pytestmark = pytest.mark.skipif(
    os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") != "1", reason="slow (3 runs per family); ASCEND_FINETUNE_SLOW_TESTS=1"
)
# Task A's recipe, and the baseline's on task B: AdamW from 5e-4 after one epoch of warm-up (AdamW's
# first steps at 1e-3 blew up the networks without BatchNorm, VGG and SqueezeNet, and GoogLeNet).
FROM_SCRATCH = {"optimizer": "adamw", "lr": 5e-4, "warmup_steps": 9}
EPOCHS_A = {"vit_b_32_224": 2}  # 224 px only: 5 min an epoch here, and A's val accuracy was 1.0 after one
# The probe on cached features: its epochs cost next to nothing after the one extraction, so it gets 20
# (cosine from 1e-3): a backbone trained briefly from scratch can give features in the hundreds (the
# probe's loss was ~100 on SqueezeNet's and GoogLeNet's), which a constant 5e-3 never settles on.
PROBE = {"optimizer": "adamw", "lr": 1e-3, "lr_schedule": "cosine", "epochs": 20}
RESULTS = os.environ.get("ASCEND_FINETUNE_TRANSFER_RESULTS")  # a JSON-lines file for the table, if set


def _train(tmp_path, name: str, s: dict):
    path = write_spec(tmp_path / f"{name}.json", s)
    t0 = time.monotonic()
    code, out = runner("train", str(path), "--run-dir", str(tmp_path / name), timeout=1800)
    assert code == 0, out
    return tmp_path / name, events(tmp_path / name), time.monotonic() - t0


def _params(path, prefix):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items() if k.startswith(prefix)}


def _val_acc(evs) -> float:
    return max(e["val_acc"] for e in of_type(evs, "eval"))


# Families whose frozen probe did not beat scratch by the margin in the run docs/weights.md records
# (2026-12-06): strict, so the day one does, the test says so.
NO_TRANSFER = {
    "convnext_tiny": "scratch learns task B's colours in 4 epochs (0.97) above the probe (0.87)",
    "googlenet": "task A reached only 0.75, and the probe tied scratch on task B (0.67 each)",
    "squeezenet1_0": "no BatchNorm: features of a backbone trained from scratch reach ~100, probe 0.40, scratch 0.90",
    "vgg11": "no BatchNorm: features reach the thousands (probe loss 2,400 at first), probe 0.40, scratch 0.63",
    "xcit_tiny_12_p16_224": "scratch learns task B's colours in 4 epochs (0.97) above the probe (0.90)",
}
FAMILIES = [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=NO_TRANSFER[n])) if n in NO_TRANSFER else n
    for n in sorted(CI_FAMILIES)
]


@pytest.mark.parametrize("backbone", FAMILIES)
def test_frozen_pretrained_mindcv_backbone_beats_training_from_scratch(backbone, data_a, data_b, tmp_path):
    size = fixed_image_size(backbone) or 64
    data, amp = {"image_size": size, "batch_size": 16}, {"level": "O0", "loss_scale": "none"}
    a = spec(
        data_a,
        data=data,
        amp=amp,
        model={"backbone": backbone, "freeze": "none"},
        train={**FROM_SCRATCH, "epochs": EPOCHS_A.get(backbone, 8)},
    )
    run_a, evs_a, t_a = _train(tmp_path, "a", a)
    best = next(e for e in json.load(open(run_a / "checkpoints.json")) if e["best"])
    pretrained = run_a / best["file"]

    b_data = {**data, "val_split": 0.3}
    frozen = spec(
        data_b,
        data=b_data,
        amp=amp,
        model={"backbone": backbone, "pretrained": str(pretrained), "freeze": "backbone"},
        train={**PROBE, "cache_features": True},
    )
    run_b, evs_b, t_b = _train(tmp_path, "b", frozen)
    scratch = spec(data_b, data=b_data, amp=amp, model={"backbone": backbone}, train={**FROM_SCRATCH, "epochs": 4})
    _, evs_s, t_s = _train(tmp_path, "s", scratch)

    # The probe's final accuracy against the best the scratch run reached at any epoch.
    acc_a, acc_frozen, acc_scratch = _val_acc(evs_a), of_type(evs_b, "eval")[-1]["val_acc"], _val_acc(evs_s)
    if RESULTS:
        row = {"backbone": backbone, "px": size, "acc_a": acc_a, "frozen": acc_frozen, "scratch": acc_scratch}
        with open(RESULTS, "a") as f:
            f.write(json.dumps({**row, "s_a": t_a, "s_frozen": t_b, "s_scratch": t_s}) + "\n")
    assert not [w for w in of_type(evs_b, "warning") if w["code"] == "pretrained_partial"], "every tensor loads"
    started = of_type(evs_b, "run_started")[0]
    assert started["pretrained"]["loaded"] > 0 and not started["pretrained"]["missing"]
    # 0.2 is 6 of task B's 30 validation images: twice the spread of the difference of two
    # accuracies near 0.8 on 30 images each (sqrt(2 * 0.8 * 0.2 / 30) = 0.10).
    assert acc_frozen >= acc_scratch + 0.2, (acc_frozen, acc_scratch)
    assert t_b < t_s, "the probe on cached features costs less than training from scratch"

    last = run_b / json.load(open(run_b / "checkpoints.json"))[-1]["file"]
    a_backbone, b_backbone = _params(pretrained, "backbone."), _params(last, "backbone.")
    assert a_backbone and a_backbone.keys() == b_backbone.keys()
    for k in a_backbone:  # weights and BatchNorm moving statistics alike
        assert np.array_equal(a_backbone[k], b_backbone[k]), f"frozen {k} changed"
