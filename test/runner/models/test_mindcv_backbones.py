"""mindcv backbones: every offered family builds, trains 2 GRAPH-mode steps with `up_to:<stage>` frozen
(exactly those stages' parameters untouched, the rest trained) and exports a MindIR that computes what
the network computes; mindcv's checkpoints load by name and give mindcv's own features; the stage rule
for models without feature_info gives the known stages of two.

CI cost: most of each family's test is MindSpore's GRAPH compile of the train step, which input size
and batch do not change (the reference output is computed in PyNative, so each family compiles the
train step and the export only). All 32 families cost about 40 min on a loaded 2-core box (2026-12-06,
every one passed), so CI runs the issue's families and one family for each way the runner reads a
mindcv model (CI_FAMILIES); ASCEND_FINETUNE_SLOW_TESTS=1 runs every offered family, as
bench/backbone_survey.py does."""

from __future__ import annotations

import os

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
# The issue's four families (feature_info stages), plus: stages probed from the structure (VGG), the
# model's own construct minus its classifier (GoogLeNet), a classifier with a second top-level name
# (SqueezeNet's final_conv), a fixed 224 px input whose tokens pool inside (XCiT).
CI_FAMILIES = {
    "mobilenet_v3_small_100",
    "efficientnet_b0",
    "convnext_tiny",
    "vit_b_32_224",
    "vgg11",
    "googlenet",
    "squeezenet1_0",
    "xcit_tiny_12_p16_224",
}
ALL = os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") == "1"
TRAINED = [
    n
    if ALL or n in CI_FAMILIES
    else pytest.param(n, marks=pytest.mark.skipif(True, reason="ASCEND_FINETUNE_SLOW_TESTS=1"))
    for n in FAMILIES
]


def test_the_issue_s_families_are_offered():
    assert {bb.family(n) for n in FAMILIES} >= {"mobilenetv3", "efficientnet", "convnext", "vit"}
    assert CI_FAMILIES <= set(FAMILIES), CI_FAMILIES - set(FAMILIES)


def _images(n: int, size: int, seed: int = 0) -> ms.Tensor:
    return ms.Tensor(np.random.default_rng(seed).random((n, 3, size, size), np.float32))


@pytest.mark.parametrize("name", TRAINED)
def test_family_trains_with_stages_frozen_and_exports_mindir(name, tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    stages = bb.stages_of(name)
    freeze = f"up_to:{stages[1]}"
    net = TransferNet(name, 3, frozen_parts(freeze, name))
    constant = set(net.constant_ids)  # the model's own (SwinV2's index tables), never trained
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

    # Trained: moved, or given a gradient (its momentum is not zero): behind a 1e-6 layer scale
    # (EdgeNeXt) a norm's step is below float32's resolution at 1.0, yet it trains.
    opt = step.optimizer
    fed = {q.name for q, m in zip(opt.parameters, opt.moments, strict=True) if np.any(m.asnumpy() != 0)}
    frozen, trained, still = [], [], []
    for p in net.get_parameters():
        changed = not np.array_equal(before[p.name], p.asnumpy()) or p.name in fed
        rel = p.name[len(bb.MINDCV_PREFIX) :] if p.name.startswith(bb.MINDCV_PREFIX) else None
        if rel is not None and bb.frozen_param(name, rel, freeze):
            frozen.append(p.name)
            assert not changed, f"{p.name} is in a frozen part ({freeze}) but changed"
        elif "moving_" not in p.name and id(p) not in constant:
            (trained if changed else still).append(p.name)
    stem_and_two = [path for _, paths in bb.parts_of(name)[:3] for path in paths]
    rels = [n[len(bb.MINDCV_PREFIX) :] for n in frozen]
    assert rels and all(any(r == s or r.startswith(s + ".") for s in stem_and_two) for r in rels)
    assert "head.weight" in trained and "head.bias" in trained
    assert len(trained) > 0.9 * (len(trained) + len(still)), f"untrained: {still[:10]}"

    net.set_train(False)
    ms.set_context(mode=ms.PYNATIVE_MODE)  # the reference without a third graph compile (CI time)
    try:
        want = net(x).asnumpy()
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
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


def _smallest_per_pooling() -> list[str]:
    """One backbone (the smallest) for each way the runner pools a forward_features output itself."""
    best: dict[str, tuple[int, str]] = {}
    for n, e in bb.mindcv_models().items():
        if e.get("call") != "construct" and (e["pool"] not in best or e["params"] < best[e["pool"]][0]):
            best[e["pool"]] = (e["params"], n)
    return sorted(n for _, n in best.values())


@pytest.mark.parametrize("name", _smallest_per_pooling())
def test_the_runner_s_pooling_gives_what_mindcv_s_own_head_reads(name, tmp_path):
    """The reference is mindcv's own forward: its model with the classifier cells made Identity (nothing
    else changed) returns what its classifier would read (ViT's class token or mean after fc_norm,
    PiT's class token, a map's global mean). The runner's backbone, on the same weights, pools
    forward_features with its own code (`pool` in backbones.json) and must give the same vector.
    CrossViT's head is a Dense per branch token, averaged: one Dense on the runner's tokens side by
    side must give its logits."""
    from ascend_finetune.models.mindcv_net import build_mindcv

    entry = bb.mindcv_models()[name]
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        ms.set_seed(2)
        ref = build_mindcv(name)
        ref.set_train(False)
        ms.save_checkpoint(ref, str(tmp_path / "w.ckpt"))
        x = _images(2, int(entry.get("image_size", 64)), seed=4)
        if entry["pool"] == "concat":  # CrossViT: mindcv's logits, the mean of one Dense per branch token
            heads = list(ref.head)
            want = ref(x).asnumpy()
        else:
            for attr in entry["head"]:
                setattr(ref, attr, nn.Identity())
            want = ref(x).asnumpy()
        net = TransferNet(name, 3)
        report = load_backbone(net.backbone, str(tmp_path / "w.ckpt"))
        net.set_train(False)
        got = BackboneFeatures(net)(x).asnumpy()
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert not report.missing and not report.unexpected and not report.mismatched
    assert got.shape[1] == entry["num_features"]
    assert float(np.std(want)) > 0, "the reference varies"
    if entry["pool"] == "concat":
        # One Dense on the concatenated tokens holds mindcv's head exactly: [W_0, W_1] / 2 and the mean bias.
        w = np.concatenate([h.weight.asnumpy() for h in heads], axis=1) / len(heads)
        b = np.mean([h.bias.asnumpy() for h in heads], axis=0)
        got = got @ w.T + b
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_a_resnet_checkpoint_is_refused_by_a_mindcv_backbone(tmp_path):
    ms.save_checkpoint(TransferNet("resnet18", 3), str(tmp_path / "r18.ckpt"))
    from ascend_finetune.checkpoints.errors import PretrainedError

    with pytest.raises(PretrainedError, match="another architecture"):
        load_backbone(TransferNet("mobilenet_v3_small_100", 3).backbone, str(tmp_path / "r18.ckpt"))


def test_stages_without_feature_info_follow_the_resolution():
    """The one rule for models without feature_info (mindcv_net._probed), on two whose stages are
    known: SE-ResNet's layer1-4 (the max-pool, parameterless, opens layer1), and VGG-11's blocks
    between its max-pools (the last pool joins the last block)."""
    from ascend_finetune.models.mindcv_net import build_mindcv, structure

    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        se = build_mindcv("seresnet18")
        got = structure(se, "senet", se.forward_features)
        vgg = build_mindcv("vgg11")
        got_vgg = structure(vgg, "vgg", vgg.forward_features)
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert got["stem"] == ["layer0"]
    assert [(s["name"], s["paths"]) for s in got["stages"]] == [
        ("layer1", ["pool0", "layer1"]),
        ("layer2", ["layer2"]),
        ("layer3", ["layer3"]),
        ("layer4", ["layer4"]),
    ]
    assert got_vgg["stem"] == ["features.0", "features.1"]  # conv + ReLU at full resolution
    assert [s["paths"][0] for s in got_vgg["stages"]] == ["features.2", "features.5", "features.10", "features.15"]
    assert got_vgg["stages"][-1]["paths"][-1] == "features.20"  # the last max-pool
    assert got == {k: bb.mindcv_models()["seresnet18"][k] for k in ("stem", "stages")}


def test_a_parameterless_unit_after_a_patch_embedding_joins_the_first_stage():
    """Swin: its patch embedding reduces by 4 (the stem), then a position dropout (no parameters) at the
    same resolution, then layers that each downsample at their end. The dropout opens the first stage
    (it stopped the probe once, with an IndexError); layers.2 and layers.3 end at the same 7x7, one
    stage named by the last."""
    from ascend_finetune.models.mindcv_net import build_mindcv, structure

    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        swin = build_mindcv("swin_tiny")
        got = structure(swin, "swintransformer", swin.forward_features, 224)
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    assert got["stem"] == ["patch_embed"]
    assert [(s["name"], s["paths"]) for s in got["stages"]] == [
        ("layers.0", ["pos_drop", "layers.0"]),
        ("layers.1", ["layers.1"]),
        ("layers.3", ["layers.2", "layers.3"]),
    ]
    assert got == {k: bb.mindcv_models()["swin_tiny"][k] for k in ("stem", "stages")}


def test_hrnet_s_stages_follow_its_branches_and_hold_every_parameter_once():
    """HRNet, whose stages run parallel branches (no resolution-per-unit rule orders them): its own
    stages, checked on mindcv's model itself. In the order its forward runs them, each stage's output
    has one branch more than the last, the new one at half the resolution (the paper's 4 stages);
    stem, stages, neck (what merges the branches: incre, downsample, final_layer) and head hold
    every parameter exactly once; and backbones.json says the same."""
    from ascend_finetune.models.mindcv_net import build_mindcv, structure

    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        net = build_mindcv("hrnet_w32")
        got = structure(net, "hrnet")
        cells = dict(net.cells_and_names())
        order: list[str] = []
        branches: dict[str, list[int]] = {}

        def hook(path):
            def record(_cell, _inputs, out):
                order.append(path)
                outs = out if isinstance(out, (list, tuple)) else [out]
                branches[path] = [int(o.shape[2]) for o in outs]

            return record

        handles = [cells[st["name"]].register_forward_hook(hook(st["name"])) for st in got["stages"]]
        net.forward_features(ms.Tensor(np.zeros((1, 3, 64, 64), np.float32)))
        for h in handles:
            h.remove()
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    names = [st["name"] for st in got["stages"]]
    assert order == names == ["layer1", "stage2", "stage3", "stage4"]
    assert [branches[n] for n in names] == [[16], [16, 8], [16, 8, 4], [16, 8, 4, 2]]
    neck = ["incre_modules", "downsample_modules", "final_layer"]
    parts = got["stem"] + [p for st in got["stages"] for p in st["paths"]] + neck + ["classifier"]
    for name, _ in net.parameters_and_names():
        holders = [p for p in parts if name == p or name.startswith(p + ".")]
        assert len(holders) == 1, (name, holders)
    assert got == {k: bb.mindcv_models()["hrnet_w32"][k] for k in ("stem", "stages")}


def test_an_unfreeze_leaves_the_model_s_own_constants_out_of_training():
    """Swin builds its attention masks as Parameters with requires_grad=False: a gradual unfreeze
    (train.unfreeze) makes the stage's weights trainable, not those masks."""
    from ascend_finetune.models.net import unfrozen_params

    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        net = TransferNet("swin_tiny", 3, frozen_parts("backbone", "swin_tiny"))
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    masks = [p for p in net.get_parameters() if p.name.endswith("attn_mask")]
    assert masks and all(id(p) in net.constant_ids for p in masks)
    apply_freeze(net)
    back = unfrozen_params(net, 0, net.frozen_upto)
    names = {p.name for p in back}
    assert not any(n.endswith("attn_mask") for n in names), "a mask would train"
    assert any(n.endswith("relative_position_bias_table") for n in names)
    assert len(back) == len([p for p in net.backbone.get_parameters() if id(p) not in net.constant_ids])
    # backbones.json records the same constants (inspect reads them there, without building the model)
    recorded = {bb.MINDCV_PREFIX + n for n in bb.mindcv_models()["swin_tiny"]["constants"]}
    assert recorded == {p.name for p in net.backbone.get_parameters() if id(p) in net.constant_ids}
