"""Transfer with mindcv backbones, as a user runs it: task A (demo shapes) trained from scratch gives the
pretrained backbone; on task B (other colours) a frozen fine-tune from it (through the feature cache)
beats training the same network from scratch for the same epochs, and the backbone stays A's.

Opt-in (ASCEND_FINETUNE_SLOW_TESTS=1): three training runs per family took 8 min on the shared 2-core
box, and at 32 px / 4 epochs task A reaches only about 31% (mobilenet_v3_small_100), so the frozen
probe beat scratch narrowly (0.40 vs 0.33 val accuracy on task B): not yet a margin a CI tier can hold."""

from __future__ import annotations

import json
import os

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

pytestmark = pytest.mark.skipif(
    os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") != "1", reason="slow (3 runs per family); ASCEND_FINETUNE_SLOW_TESTS=1"
)


def _train(tmp_path, name: str, s: dict):
    path = write_spec(tmp_path / f"{name}.json", s)
    code, out = runner("train", str(path), "--run-dir", str(tmp_path / name), timeout=900)
    assert code == 0, out
    return tmp_path / name, events(tmp_path / name)


def _params(path, prefix):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items() if k.startswith(prefix)}


@pytest.mark.parametrize("backbone", ["mobilenet_v3_small_100", "efficientnet_b0"])
def test_frozen_pretrained_mindcv_backbone_beats_training_from_scratch(backbone, data_a, data_b, tmp_path):
    opt = {"optimizer": "adamw", "lr": 2e-3, "epochs": 4}
    run_a, _ = _train(tmp_path, "a", spec(data_a, model={"backbone": backbone, "freeze": "none"}, train=opt))
    best = next(e for e in json.load(open(run_a / "checkpoints.json")) if e["best"])
    pretrained = run_a / best["file"]

    b_data = {"val_split": 0.3}
    frozen = spec(
        data_b,
        data=b_data,
        model={"backbone": backbone, "pretrained": str(pretrained), "freeze": "backbone"},
        train={**opt, "lr": 5e-3, "cache_features": True},
    )
    run_b, evs_b = _train(tmp_path, "b", frozen)
    scratch = spec(data_b, data=b_data, model={"backbone": backbone, "freeze": "none"}, train=opt)
    _, evs_s = _train(tmp_path, "s", scratch)

    assert not [w for w in of_type(evs_b, "warning") if w["code"] == "pretrained_partial"], "every tensor loads"
    started = of_type(evs_b, "run_started")[0]
    assert started["pretrained"]["loaded"] > 0 and not started["pretrained"]["missing"]
    acc_frozen = of_type(evs_b, "eval")[-1]["val_acc"]
    acc_scratch = of_type(evs_s, "eval")[-1]["val_acc"]
    assert acc_frozen > acc_scratch, (acc_frozen, acc_scratch)

    last = run_b / json.load(open(run_b / "checkpoints.json"))[-1]["file"]
    a_backbone, b_backbone = _params(pretrained, "backbone."), _params(last, "backbone.")
    assert a_backbone.keys() == b_backbone.keys() and len(a_backbone) > 100
    for k in a_backbone:  # weights and BatchNorm moving statistics alike
        assert np.array_equal(a_backbone[k], b_backbone[k]), f"frozen {k} changed"
