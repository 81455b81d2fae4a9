"""Per-part learning rates (train.backbone_lr_mult, train.layer_decay): on a real CPU fine-tune, a
backbone at rate 0 keeps its weights bit for bit while the head trains; MindSpore's optimizer gets
one rate per part as the layer-wise rule says; a run with groups resumes."""

from __future__ import annotations

import json

import mindspore as ms
import numpy as np
import pytest
from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.train.param_groups import groups, part_of, part_scales


def _params(path, prefix):
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(str(path)).items() if k.startswith(prefix)}


def _train(tmp_path, name, s):
    code, out = runner("train", str(write_spec(tmp_path / f"{name}.json", s)), "--run-dir", str(tmp_path / name))
    assert code == 0, out
    return tmp_path / name


@pytest.fixture(scope="module")
def pretrained(data_a, tmp_path_factory):
    """A backbone to start from: one epoch of task A from scratch."""
    d = tmp_path_factory.mktemp("pg_pre")
    run = _train(d, "pre", spec(data_a, name="pre", train={"epochs": 1, "lr": 0.01}))
    return run / json.load(open(run / "checkpoints.json"))[-1]["file"]


def test_backbone_lr_mult_zero_keeps_the_backbone_while_the_head_trains(pretrained, data_b, tmp_path):
    s = spec(
        data_b,
        name="mult0",
        model={"pretrained": str(pretrained), "freeze": "none"},
        train={"epochs": 2, "lr": 0.01, "backbone_lr_mult": 0.0},
        amp={"level": "O0", "loss_scale": "none"},
    )
    run = _train(tmp_path, "mult0", s)
    evs = events(run)
    manifest = json.load(open(run / "checkpoints.json"))
    last = run / manifest[-1]["file"]
    before, after = _params(pretrained, "backbone."), _params(last, "backbone.")
    assert before.keys() == after.keys() and len(before) == 100
    weights = [k for k in before if "moving_" not in k]
    for k in weights:  # convolutions and BatchNorm gamma/beta: rate 0
        assert np.array_equal(before[k], after[k]), f"{k} moved at backbone_lr_mult 0"
    # Not frozen, so its BatchNorms still run in train mode: their moving statistics follow task B.
    assert any(not np.array_equal(before[k], after[k]) for k in before if "moving_" in k)
    h0 = _params(run / manifest[0]["file"], "head.")["head.weight"]
    assert h0.shape == (3, 512) and not np.array_equal(h0, _params(last, "head.")["head.weight"]), "the head trains"
    epochs = of_type(evs, "epoch_end")
    assert epochs[-1]["train_loss"] < epochs[0]["train_loss"], "the head learns"
    assert all(st["lr"] == pytest.approx(0.01) for st in of_type(evs, "step")), "steps report the head's rate"

    # Resume from the first epoch's checkpoint: the group rates come from the spec, the rest loads.
    s2 = dict(s, name="mult0")
    code, out = runner(
        "train",
        str(write_spec(tmp_path / "r.json", s2)),
        "--run-dir",
        str(tmp_path / "resumed"),
        "--resume",
        str(run / manifest[0]["file"]),
    )
    assert code == 0, out
    resumed = _params(tmp_path / "resumed" / json.load(open(tmp_path / "resumed" / "checkpoints.json"))[-1]["file"], "")
    for k in weights:
        assert np.array_equal(before[k], resumed[k]), f"{k} moved after the resume"


def test_layer_decay_gives_each_part_its_rate():
    """The optimizer MindSpore builds from our groups holds, per parameter, the layer-wise rate."""
    from mindspore import nn

    from ascend_finetune.models.net import TransferNet

    net = TransferNet("resnet18", 3)
    params = net.trainable_params()
    t = {"backbone_lr_mult": 0.5, "layer_decay": 0.8}
    opt = nn.Momentum(groups(params, t, 0.1), 0.1, 0.9)
    rates = {p.name: float(opt.get_lr_parameter(p).asnumpy()) for p in opt.parameters}
    want = {"stem": 0.5 * 0.8**5, "layer1": 0.5 * 0.8**4, "layer4": 0.5 * 0.8, "head": 1.0}
    for name, rate in rates.items():
        part = part_of(name)
        assert rate == pytest.approx(0.1 * part_scales(0.5, 0.8)[part], rel=1e-6)
        if part in want:
            assert rate == pytest.approx(0.1 * want[part], rel=1e-6), name
    assert part_of("backbone.conv1.weight") == "stem" and part_of("backbone.layer3.1.bn2.gamma") == "layer3"
    assert [p.name for p in opt.parameters] == [p.name for p in params], "order_params keeps the network's order"
