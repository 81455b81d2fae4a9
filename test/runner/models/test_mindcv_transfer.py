"""Transfer with mindcv backbones, as a user runs it, for every family CI builds (CI_FAMILIES), on two
synthetic tasks: task A trained from scratch gives the pretrained backbone; on a few-shot task B (5
labelled images per class, 40 per class to validate on) a linear probe on it (frozen backbone, through
the feature cache) beats training the same network from scratch, by 0.2 in validation accuracy, and
the backbone stays A's.

- colour: A is the demo's four shapes, each in one colour (data_a); B three shapes in other colours
  (data_b_few). A is separable by colour alone, so A's backbones learn mostly colour, and some families
  learn B's colours from scratch even from 15 images.
- shape: A' is six shapes, each image in a random colour (shapes_a), so only shape tells the classes
  apart; B' three other shapes, random colours too (shapes_b_few). From scratch every family stayed at
  chance on B', so the margin measures what A' taught; SqueezeNet and XCiT learn A' only at a lower
  learning rate (RECIPE_A), and ViT-B/32 does not learn it from scratch at all.
No one synthetic task is a stand-in for ImageNet for every family; docs/weights.md has both tables.

Choices: 64 px (SqueezeNet and GoogLeNet need more than 32; ViT takes its 224), fp32 (O2's fp16 blew
up GoogLeNet's first steps), task A once per family with one recipe that learns it from scratch
(FROM_SCRATCH, 8 epochs; exceptions in RECIPE_A), the same recipe for the scratch baseline on B (8
epochs), and 30 probe epochs, which the cache makes nearly free. No augmentation on the shape task (a
random resized crop cuts the shape out or changes its aspect). The probe's head is the runner's
default (`model.head_norm: auto`): on the families without normalisation layers (VGG, SqueezeNet,
GoogLeNet), whose features reach the thousands, it normalises them first.

Opt-in (ASCEND_FINETUNE_SLOW_TESTS=1): per case about a minute for MobileNetV3-S, up to 13 minutes
for the others on a loaded box (ViT at 224 px about 12 on the colour task); the measured accuracies
and times are in docs/weights.md ("Transfer per family")."""

from __future__ import annotations

import json
import os
import time

import mindspore as ms
import numpy as np
import pytest
from conftest import ROOT, events, of_type, runner, spec, write_spec
from test_mindcv_backbones import CI_FAMILIES

from ascend_finetune.models.backbones import fixed_image_size

pytestmark = pytest.mark.skipif(
    os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") != "1", reason="slow (3 runs per family); ASCEND_FINETUNE_SLOW_TESTS=1"
)
# Task A's recipe, and the baseline's on task B: AdamW from 5e-4 after 9 steps of warm-up (AdamW's
# first steps at 1e-3 blew up the networks without BatchNorm, VGG and SqueezeNet, and GoogLeNet).
FROM_SCRATCH = {"optimizer": "adamw", "lr": 5e-4, "warmup_steps": 9, "epochs": 8}
# Where that recipe does not suit a (task, family), as a user would tune it for task A; the scratch
# baseline on task B takes the same learning rate. ViT takes 224 px only: on the colour task (5 min an
# epoch when measured, val accuracy 1.0 after one) 2 epochs. GoogLeNet's A' reached 0.35 in 8 epochs,
# 0.83 in 16. At 5e-4 SqueezeNet's A' loss stayed at ln 6 for 16 epochs (its output constant), at
# 2e-3 too, and XCiT-T's at 1.80 after 8; at 1e-4 they learnt A' to 0.97 in 12 epochs.
RECIPE_A = {
    ("colour", "vit_b_32_224"): {"epochs": 2},
    ("shape", "googlenet"): {"epochs": 16},
    ("shape", "squeezenet1_0"): {"lr": 1e-4, "epochs": 12},
    ("shape", "xcit_tiny_12_p16_224"): {"lr": 1e-4, "epochs": 12},
    # Beyond CI's families (ASCEND_FINETUNE_TRANSFER_FAMILIES): at 5e-4 for 8 epochs PVTv2-b0's A'
    # reached 0.22, at 1e-4 for 12 0.89; RegNetX-200MF's 0.40 in 8 epochs, 0.64 in 16.
    ("shape", "pvt_v2_b0"): {"lr": 1e-4, "epochs": 12},
    ("shape", "regnet_x_200mf"): {"epochs": 16},
    # MnasNet-0.5's A' stayed at 1/6 in 8 and 12 epochs (its BatchNorm moving statistics lagged); in 24 it
    # reached 0.94
    ("shape", "mnasnet_050"): {"epochs": 24},
    # CMT-Ti's A' stayed near chance at 5e-4 for 8 epochs (0.21); at 1e-4 it reached 0.94 after 8 and
    # 1.00 after 12 (2026-12-07)
    ("shape", "cmt_tiny"): {"lr": 1e-4, "epochs": 12},
    # Visformer-Ti's A' reached 0.35 at 5e-4 for 8 epochs; at 1e-4 it was still at 0.36 after 8 and reached
    # 0.94 (its best epoch) within 12 (2026-12-07)
    ("shape", "visformer_tiny"): {"lr": 1e-4, "epochs": 12},
    # RepVGG-B0's A' reached 0.86 at 5e-4 for 8 epochs, but its probe only 0.62 against a scratch 0.49; at
    # 1e-4 for 12 A' reached 0.71 and the probe 0.68 against 0.40 (2026-12-07)
    ("shape", "repvgg_b0"): {"lr": 1e-4, "epochs": 12},
}
# The probe on cached features: its epochs cost next to nothing after the one extraction, so it gets 30
# (cosine from 1e-3): a backbone trained briefly from scratch can give features in the hundreds (the
# probe's loss was ~100 on SqueezeNet's and GoogLeNet's), which a constant 5e-3 never settles on.
PROBE = {"optimizer": "adamw", "lr": 1e-3, "lr_schedule": "cosine", "epochs": 30}
EPOCHS_B = 8  # the scratch baseline on task B: A's recipe, 8 epochs
RESULTS = os.environ.get("ASCEND_FINETUNE_TRANSFER_RESULTS")  # a JSON-lines file for the table, if set
# Each of a case's three runs must end within this many seconds (a bigger box, or patience, can raise it).
TIMEOUT_S = int(os.environ.get("ASCEND_FINETUNE_TRANSFER_TIMEOUT", "1800"))


def _train(tmp_path, name: str, s: dict):
    path = write_spec(tmp_path / f"{name}.json", s)
    t0 = time.monotonic()
    code, out = runner("train", str(path), "--run-dir", str(tmp_path / name), timeout=TIMEOUT_S)
    assert code == 0, out
    return tmp_path / name, events(tmp_path / name), time.monotonic() - t0


def _params(path, prefix):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items() if k.startswith(prefix)}


def _val_acc(evs) -> float:
    return max(e["val_acc"] for e in of_type(evs, "eval"))


# (task, family) pairs whose frozen probe did not beat scratch by the margin in the runs docs/weights.md
# records (2026-12-06): strict, so the day one does, the test says so. Every family passes on at least
# one task but ViT-B/32, which learns neither task B's colours from A's nor task A' from scratch.
NO_TRANSFER = {
    ("colour", "convnext_tiny"): "scratch learns even 5 images a class of task B to 0.68, the probe reaches "
    "0.77 (+0.08); A's features hold about 0.8 (NumPy probes 0.74-0.79)",
    ("colour", "squeezenet1_0"): "with head_norm's normalisation the probe rises from 0.35 to 0.53, what A's "
    "features hold (nearest class mean 0.50; task A stops at 0.75); scratch 0.81. At lr 1e-4 (task A 1.00) "
    "probe 0.72, scratch 0.78",
    ("colour", "vit_b_32_224"): "224 px: scratch learns 5 images a class of task B to 0.67, the probe only 0.68",
    ("colour", "vgg11"): "with head_norm's normalisation the probe rises from 0.33 to 0.43, what A's features "
    "hold (half of them dead; nearest class mean 0.43); scratch 0.67",
}
# Beyond CI's families, on the shape task (opt-in; docs/weights.md "Beyond CI's families").
NO_TRANSFER.update(
    {
        ("shape", "poolformer_s12"): "A' not learnt: 0.33 at 5e-4 for 8 epochs and for 16, 0.29 at 1e-4 for 12; "
        "mindcv's own model, with its own head and outside the runner, stays near ln 6 on A' too",
        ("shape", "pit_xs"): "224 px, a vision transformer from scratch: A' reached only 0.21 in 8 epochs (18 min); "
        "probe 0.48 against scratch 0.33 (+0.14); at 1e-4 for 12 epochs A' 0.32, probe 0.36, scratch 0.38",
        ("shape", "convit_tiny"): "224 px, a vision transformer from scratch: A' stayed at chance in 8 epochs (0.18, "
        "22 min); probe 0.33, scratch 0.46. At 1e-4 for 12 epochs (28 min) A' reached 0.38, probe 0.48, scratch 0.41",
        ("shape", "inception_v3"): "224 px: A' not learnt in 8 epochs (0.19; train loss 2.67 to 1.80, ln 6 is 1.79); "
        "probe 0.35, scratch 0.33. At 1e-4 for 12 epochs (20 min) its train loss fell to about 0 while validation "
        "stayed at 1/6 (verdict fits_train_only: BatchNorm moving statistics at momentum 0.9997); probe 0.35",
        ("shape", "inception_v4"): "224 px: A' not learnt in 8 epochs (1/6 after every epoch, 60 min, 2026-12-08; "
        "train loss still 1.89 at step 238, ln 6 is 1.79; validation loss 1e13 to 1e16, its BatchNorms' moving "
        "statistics at momentum 0.9997 as Inception v3's); probe 0.33, scratch 0.33",
        ("shape", "swin_tiny"): "224 px, a vision transformer from scratch: A' 0.24 after its first epoch, then "
        "1/6 after every other (36 min, 2026-12-08; validation loss near ln 6); probe 0.41, scratch 0.38",
        ("shape", "crossvit_9"): "A' not learnt in 8 epochs (0.26, 25 min; it resizes 64 px to 240 and 224 inside); "
        "probe 0.33, scratch 0.33. At 1e-4 for 12 epochs (34 min) A' reached 0.39, probe 0.36, scratch 0.41",
    }
)
# Passed and failed in different runs (seeded runs do not repeat bit for bit here). GoogLeNet on colour: its
# scratch baseline learnt B to 0.64 once (probe 0.80) and stayed at chance (0.33) the next time.
FLAKY = {
    ("colour", "googlenet"): "scratch baseline 0.64 in one run, 0.33 in the next",
    # A' at a constant 5e-4 is unstable at its end (0.94 after epoch 7, 0.43 after 8); the best epoch's
    # backbone gave a probe of 0.33, 0.47 and 0.93 in three runs, against scratch 0.33 each time.
    ("shape", "mobilevit_small"): "probe 0.33, 0.47 and 0.93 in three runs against scratch 0.33",
}
# Seconds per full train step at batch 16 on this box's 2 cores: twice bench/README.md's batch-8 `full ms`
# (that projection came within -15% to +45% of the measured task A' runs of PiT-XS, ConViT-Ti, Visformer-Ti,
# CrossViT-9, CMT-Ti and Inception v3); MLP-Mixer's as measured in its task A' run (6 to 10 s).
STEP_S = {
    "cait_xxs24_224": 11,
    "coat_tiny": 35,
    "inception_v4": 11,
    "mae_b_16_224_finetune": 28,
    "mlp_mixer_s_p16": 8,
    "repmlp_b224": 40,
    "swin_tiny": 12,
    "swinv2_tiny_window8": 176,
}
A_STEPS_PER_EPOCH = {"colour": 9, "shape": 40}  # 144 and 648 training images, batch 16


def _too_slow(task: str, family: str) -> str | None:
    """Why a case is skipped: its task A' run, projected from STEP_S, would pass TIMEOUT_S."""
    if family not in STEP_S:
        return None
    steps = A_STEPS_PER_EPOCH[task] * {**FROM_SCRATCH, **RECIPE_A.get((task, family), {})}["epochs"]
    projected = STEP_S[family] * steps
    if projected <= TIMEOUT_S:
        return None
    return (
        f"task A' projected at about {projected // 60} min ({steps} steps at {STEP_S[family]} s), past the "
        f"{TIMEOUT_S // 60}-minute limit per run: raise ASCEND_FINETUNE_TRANSFER_TIMEOUT to run it"
    )


NOT_RUN = {
    ("shape", "vit_b_32_224"): "does not learn task A' from scratch in CPU time: at AdamW 1e-4 its loss was still "
    "ln 6 after 5 epochs (A' val 0.17); at 3e-5 with 40 warm-up steps A' reached 0.39 in 8 epochs (32 min), "
    "probe 0.38, scratch 0.38; skipped, not xfailed, to spare that half hour",
    ("shape", "mlp_mixer_s_p16"): "224 px, an all-MLP network from scratch: A' reached 0.39 in 8 epochs (50 min, "
    "2026-12-07), probe 0.36, scratch 0.36; skipped, not xfailed, to spare that hour",
}


def _case(task: str, family: str):
    key = (task, family)
    if key in NO_TRANSFER:
        return pytest.param(task, family, marks=pytest.mark.xfail(strict=True, reason=NO_TRANSFER[key]))
    if key in FLAKY:
        return pytest.param(task, family, marks=pytest.mark.xfail(strict=False, reason=FLAKY[key]))
    if key in NOT_RUN:
        return pytest.param(task, family, marks=pytest.mark.skip(reason=NOT_RUN[key]))
    if slow := _too_slow(task, family):
        return pytest.param(task, family, marks=pytest.mark.skip(reason=slow))
    return pytest.param(task, family)


def _one_per_family() -> list[str]:
    """The offered mindcv backbones of the families CI's do not cover, the smallest of each (by
    parameters): backbones.json."""
    doc = json.loads((ROOT / "runner" / "ascend_finetune" / "backbones.json").read_text())["backbones"]
    covered = {doc[n]["family"] for n in CI_FAMILIES}
    best: dict[str, tuple[int, str]] = {}
    for name, b in doc.items():
        if b["family"] not in covered and (b["family"] not in best or b["params"] < best[b["family"]][0]):
            best[b["family"]] = (b["params"], name)
    return sorted(n for _, n in best.values())


# Beyond CI's families: ASCEND_FINETUNE_TRANSFER_FAMILIES=all (one backbone per offered family) or a
# comma-separated list of backbones, with ASCEND_FINETUNE_TRANSFER_TASKS=shape to run one task only.
# docs/weights.md records what the other families measured.
_MORE = os.environ.get("ASCEND_FINETUNE_TRANSFER_FAMILIES", "")
FAMILIES = sorted(CI_FAMILIES) + [
    b for b in (_one_per_family() if _MORE == "all" else [m for m in _MORE.split(",") if m]) if b not in CI_FAMILIES
]
_TASKS = os.environ.get("ASCEND_FINETUNE_TRANSFER_TASKS", "colour,shape").split(",")
CASES = [_case(task, family) for task in ("colour", "shape") if task in _TASKS for family in FAMILIES]
# Each task's data (conftest fixtures: A, then B's few-shot train and val) and data settings. The shape
# task trains without augmentation: a random resized crop cuts the shape out or changes its aspect.
TASKS = {
    "colour": ("data_a", "data_b_few", {}),
    "shape": ("shapes_a", "shapes_b_few", {"augment": "none"}),
}


@pytest.mark.parametrize(("task", "backbone"), CASES)
def test_frozen_pretrained_mindcv_backbone_beats_training_from_scratch(task, backbone, request, tmp_path):
    fixture_a, fixture_b, task_data = TASKS[task]
    recipe_a = {**FROM_SCRATCH, **RECIPE_A.get((task, backbone), {})}
    data_a, (b_train, b_val) = request.getfixturevalue(fixture_a), request.getfixturevalue(fixture_b)
    size = fixed_image_size(backbone) or 64
    data = {"image_size": size, "batch_size": 16, **task_data}
    amp = {"level": "O0", "loss_scale": "none"}
    a = spec(
        data_a,
        data=data,
        amp=amp,
        model={"backbone": backbone, "freeze": "none"},
        train=recipe_a,
    )
    run_a, evs_a, t_a = _train(tmp_path, "a", a)
    best = next(e for e in json.load(open(run_a / "checkpoints.json")) if e["best"])
    pretrained = run_a / best["file"]

    b_data = {**data, "val": str(b_val), "batch_size": 5}  # 15 training images: 3 steps an epoch
    frozen = spec(
        b_train,
        data=b_data,
        amp=amp,
        model={"backbone": backbone, "pretrained": str(pretrained), "freeze": "backbone"},
        train={**PROBE, "cache_features": True},
    )
    run_b, evs_b, t_b = _train(tmp_path, "b", frozen)
    scratch = spec(b_train, data=b_data, amp=amp, model={"backbone": backbone}, train={**recipe_a, "epochs": EPOCHS_B})
    _, evs_s, t_s = _train(tmp_path, "s", scratch)

    # The probe's final accuracy against the best the scratch run reached at any epoch.
    acc_a, acc_frozen, acc_scratch = _val_acc(evs_a), of_type(evs_b, "eval")[-1]["val_acc"], _val_acc(evs_s)
    if RESULTS:
        row = {
            "task": task,
            "backbone": backbone,
            "px": size,
            "acc_a": acc_a,
            "frozen": acc_frozen,
            "scratch": acc_scratch,
        }
        with open(RESULTS, "a") as f:
            f.write(json.dumps({**row, "s_a": t_a, "s_frozen": t_b, "s_scratch": t_s}) + "\n")
    assert not [w for w in of_type(evs_b, "warning") if w["code"] == "pretrained_partial"], "every tensor loads"
    started = of_type(evs_b, "run_started")[0]
    assert started["pretrained"]["loaded"] > 0 and not started["pretrained"]["missing"]
    # 0.2 is 24 of task B's 120 validation images: over three times the spread of the difference of
    # accuracies near 0.8 and 0.33 on 120 images each (sqrt((0.8 * 0.2 + 0.33 * 0.67) / 120) = 0.06).
    assert acc_frozen >= acc_scratch + 0.2, (acc_frozen, acc_scratch)
    # The probe trained on cached features (their cost against scratch is in RESULTS, not asserted: timing
    # stays out of tests).
    assert "feature_cache" in of_type(evs_b, "epoch_end")[0], "the frozen probe used the feature cache"

    last = run_b / json.load(open(run_b / "checkpoints.json"))[-1]["file"]
    a_backbone, b_backbone = _params(pretrained, "backbone."), _params(last, "backbone.")
    assert a_backbone and a_backbone.keys() == b_backbone.keys()
    for k in a_backbone:  # weights and BatchNorm moving statistics alike
        assert np.array_equal(a_backbone[k], b_backbone[k]), f"frozen {k} changed"
