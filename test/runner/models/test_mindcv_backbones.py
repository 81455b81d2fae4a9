"""mindcv backbones: every offered family builds, trains 2 GRAPH-mode steps with `up_to:<stage>` frozen
(exactly those stages' parameters untouched, the rest trained) and exports a MindIR that computes what
the network computes; mindcv's checkpoints load by name and give mindcv's own features."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn

from ascend_finetune.models import backbones as bb
from ascend_finetune.models.net import BackboneFeatures, TransferNet, apply_freeze, frozen_parts, set_train_mode
from ascend_finetune.models.pretrained import load_backbone


def surveyed_per_family() -> list[str]:
    """The variant bench/backbone_survey.py tried of each offered family (its smallest, or the cheapest
    to run: ViT-B/32's 49 tokens)."""
    families = bb.catalog()["families"]
    return sorted({families[e["family"]]["model"] for e in bb.mindcv_models().values()})


FAMILIES = surveyed_per_family()


def test_the_issue_s_families_are_offered():
    assert {bb.family(n) for n in FAMILIES} >= {"mobilenetv3", "efficientnet", "convnext", "vit"}


def _images(n: int, size: int, seed: int = 0) -> ms.Tensor:
    return ms.Tensor(np.random.default_rng(seed).random((n, 3, size, size), np.float32))


@pytest.mark.parametrize("name", FAMILIES)
def test_family_trains_with_stages_frozen_and_exports_mindir(name, tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    stages = bb.stages_of(name)
    freeze = f"up_to:{stages[1]}"
    net = TransferNet(name, 3, frozen_parts(freeze, name))
    apply_freeze(net)
    set_train_mode(net, True)
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    step = nn.TrainOneStepCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.Momentum(net.trainable_params(), 0.05, 0.9)
    )
    step.set_train(True)
    set_train_mode(net, True)  # the step's set_train reached the frozen parts too
    x, y = _images(4, bb.fixed_image_size(name) or 64), ms.Tensor(np.array([0, 1, 2, 0], np.int32))
    losses = [float(step(x, y).asnumpy()) for _ in range(2)]
    assert all(np.isfinite(losses)), losses

    frozen, trained, still = [], [], []
    for p in net.get_parameters():
        changed = not np.array_equal(before[p.name], p.asnumpy())
        rel = p.name[len(bb.MINDCV_PREFIX) :] if p.name.startswith(bb.MINDCV_PREFIX) else None
        if rel is not None and bb.frozen_param(name, rel, freeze):
            frozen.append(p.name)
            assert not changed, f"{p.name} is in a frozen part ({freeze}) but changed"
        elif "moving_" not in p.name:
            (trained if changed else still).append(p.name)
    stem_and_two = [path for _, paths in bb.parts_of(name)[:3] for path in paths]
    rels = [n[len(bb.MINDCV_PREFIX) :] for n in frozen]
    assert rels and all(any(r == s or r.startswith(s + ".") for s in stem_and_two) for r in rels)
    assert "head.weight" in trained and "head.bias" in trained
    assert len(trained) > 0.9 * (len(trained) + len(still)), f"untrained: {still[:10]}"

    net.set_train(False)
    want = net(x).asnumpy()
    ms.export(net, x, file_name=str(tmp_path / "net"), file_format="MINDIR")
    graph = nn.GraphCell(ms.load(str(tmp_path / "net.mindir")))
    got = graph(x).asnumpy()
    assert got.shape == (4, 3) and np.abs(got - want).max() < 1e-4


@pytest.mark.parametrize("name", ["mobilenet_v3_small_100", "convnext_tiny"])
def test_mindcv_checkpoint_loads_and_gives_mindcv_s_features(name, tmp_path):
    """A checkpoint saved from mindcv's model (what mindcv publishes: its parameter names, its
    classifier) loads into the runner's backbone without a missing tensor, and the features are
    mindcv's forward_features and pooling on the same weights."""
    from ascend_finetune.models.mindcv_net import build_mindcv

    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        ms.set_seed(1)
        ref = build_mindcv(name)
        ref.set_train(False)
        ms.save_checkpoint(ref, str(tmp_path / "w.ckpt"))
        net = TransferNet(name, 3)
        report = load_backbone(net.backbone, str(tmp_path / "w.ckpt"))
        x = _images(2, 64, seed=3)
        net.set_train(False)
        got = BackboneFeatures(net)(x).asnumpy()
        feats = ref.forward_features(x)
        want = (feats.mean((2, 3)) if feats.ndim == 4 else feats).asnumpy()
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert not report.missing and not report.unexpected and not report.mismatched
    assert report.head_dropped and all(h.startswith("classifier.") for h in report.head_dropped)
    assert got.shape == (2, bb.mindcv_models()[name]["num_features"])
    assert np.abs(got - want).max() == 0.0


def test_a_resnet_checkpoint_is_refused_by_a_mindcv_backbone(tmp_path):
    ms.save_checkpoint(TransferNet("resnet18", 3), str(tmp_path / "r18.ckpt"))
    from ascend_finetune.checkpoints.errors import PretrainedError

    with pytest.raises(PretrainedError, match="another architecture"):
        load_backbone(TransferNet("mobilenet_v3_small_100", 3).backbone, str(tmp_path / "r18.ckpt"))
