"""Pretrained ResNets from ModelZoo and mindcv compute, in the runner, the features they compute at home.

ModelZoo's ResNet is written out below from the structure of its published source
(mindspore-ai/models, official/cv/ResNet/src/resnet.py: `_conv3x3`/`_conv1x1`/`_conv7x7`, `_bn`,
`ResidualBlock`, `ResidualBlockBase`, `ResNet`, with `res_base=True` for resnet18/34); mindcv is the
package itself (mindcv==0.3.0). Each gets random weights and BatchNorm statistics far from 0/1, is
saved, loaded the way `model.pretrained` loads it (detect the origin, build that layout, load), and
must give the same pooled features.

Cost, measured on two shared cores: about 140 s for the file, of which about 90 s for the eight
feature comparisons (each network built three times, one 64 px forward each, in PyNative mode) and
about 45 s for the fine-tune + eval + export run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import mindspore as ms
import numpy as np
import pytest
from conftest import ROOT, events, of_type, spec, write_spec
from mindspore import nn, ops

from ascend_finetune.data.demo import CLASSES, make_shapes
from ascend_finetune.models.net import BackboneFeatures, TransferNet
from ascend_finetune.models.pretrained import (
    detect_origin,
    load_backbone,
    origin_of_file,
)

DEPTHS = {
    "resnet18": (2, 2, 2, 2),
    "resnet34": (3, 4, 6, 3),
    "resnet50": (3, 4, 6, 3),
    "resnet101": (3, 4, 23, 3),
}


# -- ModelZoo's ResNet, as its source builds it -----------------------------------------------------
def zoo_conv(cin, cout, k, stride, res_base):
    if res_base:  # resnet18/34: explicit symmetric padding
        return nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, pad_mode="pad")
    return nn.Conv2d(cin, cout, k, stride=stride, padding=0, pad_mode="same")


def zoo_bn(c, res_base=False):
    if res_base:
        return nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)
    return nn.BatchNorm2d(c, eps=1e-4, momentum=0.9)


class ZooBottleneck(nn.Cell):  # ModelZoo's ResidualBlock (expansion 4, stride on the 3x3)
    def __init__(self, cin, cout, stride):
        super().__init__()
        ch = cout // 4
        self.conv1, self.bn1 = zoo_conv(cin, ch, 1, 1, False), zoo_bn(ch)
        self.conv2, self.bn2 = zoo_conv(ch, ch, 3, stride, False), zoo_bn(ch)
        self.conv3, self.bn3 = zoo_conv(ch, cout, 1, 1, False), zoo_bn(cout)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or cin != cout
        self.down_sample_layer = (
            nn.SequentialCell([zoo_conv(cin, cout, 1, stride, False), zoo_bn(cout)]) if self.down_sample else None
        )

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = self.down_sample_layer(x) if self.down_sample else x
        return self.relu(out + identity)


class ZooBasic(nn.Cell):  # ModelZoo's ResidualBlockBase: bn1d/bn2d with _bn()'s eps 1e-4, shortcut _bn(c, True)
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1d = zoo_conv(cin, cout, 3, stride, True), zoo_bn(cout)
        self.conv2, self.bn2d = zoo_conv(cout, cout, 3, 1, True), zoo_bn(cout)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or cin != cout
        self.down_sample_layer = (
            nn.SequentialCell([zoo_conv(cin, cout, 1, stride, True), zoo_bn(cout, True)]) if self.down_sample else None
        )

    def construct(self, x):
        out = self.relu(self.bn1d(self.conv1(x)))
        out = self.bn2d(self.conv2(out))
        identity = self.down_sample_layer(x) if self.down_sample else x
        return self.relu(out + identity)


class ZooResNet(nn.Cell):
    def __init__(self, name, num_classes=1001):
        super().__init__()
        basic = name in ("resnet18", "resnet34")
        self.res_base = basic
        block, widths = (ZooBasic, (64, 128, 256, 512)) if basic else (ZooBottleneck, (256, 512, 1024, 2048))
        self.conv1, self.bn1 = zoo_conv(3, 64, 7, 2, basic), zoo_bn(64, basic)
        self.relu = ops.ReLU()
        if basic:
            self.pad = nn.Pad(paddings=((0, 0), (0, 0), (1, 1), (1, 1)))
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        else:
            self.pad = nn.Identity()
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        cin = 64
        for i, (n, cout) in enumerate(zip(DEPTHS[name], widths)):
            blocks = []
            for j in range(n):
                blocks.append(block(cin, cout, 2 if (i > 0 and j == 0) else 1))
                cin = cout
            setattr(self, f"layer{i + 1}", nn.SequentialCell(blocks))
        self.mean = ops.ReduceMean(keep_dims=False)
        self.end_point = nn.Dense(cin, num_classes)

    def features(self, x):
        x = self.maxpool(self.pad(self.relu(self.bn1(self.conv1(x)))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.mean(x, (2, 3))


def randomize(net, seed):
    """Random weights, and BatchNorm statistics far from their 0/1 start (a small moving variance is
    where eps 1e-4 and 1e-5 part). Each BatchNorm's gamma is a fraction of its sqrt(moving variance),
    so activations stay finite through resnet101's 33 blocks."""
    rng = np.random.default_rng(seed)
    params = dict(net.parameters_and_names())
    for name, p in params.items():
        shape = p.shape
        if name.endswith("moving_variance") or name.endswith("gamma"):
            continue
        if name.endswith("moving_mean"):
            v = rng.normal(0, 0.3, shape)
        elif name.endswith("beta"):
            v = rng.normal(0, 0.2, shape)
        elif len(shape) == 4:  # He normal
            v = rng.normal(0, np.sqrt(2.0 / (shape[1] * shape[2] * shape[3])), shape)
        else:
            v = rng.normal(0, 0.02, shape)
        p.set_data(ms.Tensor(v.astype(np.float32)))
    for name, p in params.items():
        if name.endswith("moving_variance"):
            var = rng.uniform(0.002, 2.0, p.shape)
            p.set_data(ms.Tensor(var.astype(np.float32)))
            gamma = params[name[: -len("moving_variance")] + "gamma"]
            gamma.set_data(ms.Tensor((np.sqrt(var) * rng.uniform(0.3, 0.9, p.shape)).astype(np.float32)))


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE)


def pretrained_features(name, path, x, variant=None):
    """What `model.pretrained` gives: origin detected from the file, backbone built in its layout,
    weights loaded (trainer.py); `variant` forces a layout (the old behaviour builds the default one)."""
    detected = origin_of_file(str(path))[1]
    net = TransferNet(name, 3, 0, variant or detected)
    net.backbone.variant = detected  # let load_backbone load into a forced layout, for the "before" figure
    report = load_backbone(net.backbone, str(path))
    assert not report.missing and not report.unexpected and not report.mismatched, report
    net.set_train(False)
    return BackboneFeatures(net)(x).asnumpy(), report


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("name", list(DEPTHS))
def test_modelzoo_checkpoints_give_modelzoo_features(name, tmp_path, pynative):
    zoo = ZooResNet(name)
    randomize(zoo, 1)
    path = tmp_path / f"zoo_{name}.ckpt"
    ms.save_checkpoint(zoo, str(path))
    assert origin_of_file(str(path)) == ("modelzoo", "modelzoo")
    zoo.set_train(False)
    x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 3, 64, 64)).astype(np.float32))
    want = zoo.features(x).asnumpy()
    got, report = pretrained_features(name, path, x)
    assert report.origin == "modelzoo" and report.head_dropped == [
        "end_point.weight",
        "end_point.bias",
    ]
    diff = float(np.abs(got - want).max())
    old = rel_l2(pretrained_features(name, path, x, variant="default")[0], want)
    print(f"{name} modelzoo: max |diff| {diff:.2e} (default layout: relative L2 {old:.4f})")
    assert diff <= 1e-5
    assert old > 1e-3, "the default layout computes other features: the check above has teeth"


@pytest.mark.parametrize("name", list(DEPTHS))
def test_mindcv_checkpoints_give_mindcv_features(name, tmp_path, pynative):
    from mindcv.models import create_model

    cv = create_model(name, num_classes=1000, pretrained=False)
    randomize(cv, 3)
    path = tmp_path / f"mindcv_{name}.ckpt"
    ms.save_checkpoint(cv, str(path))
    assert origin_of_file(str(path)) == ("mindcv", "default")
    cv.set_train(False)
    x = ms.Tensor(np.random.default_rng(4).standard_normal((2, 3, 64, 64)).astype(np.float32))
    want = cv.pool(cv.forward_features(x)).asnumpy()
    got, report = pretrained_features(name, path, x)
    assert report.origin == "mindcv" and report.head_dropped == [
        "classifier.weight",
        "classifier.bias",
    ]
    diff = float(np.abs(got - want).max())
    print(f"{name} mindcv: max |diff| {diff:.2e}")
    assert diff <= 1e-5


def small_mindcv(kind):
    """mindcv models whose cells are called `downsample`, as PyTorch ResNets' shortcuts are, built small."""
    from mindcv.models import create_model
    from mindcv.models.senet import SENet, SEResNetBlock
    from mindcv.models.swintransformer import SwinTransformer

    if kind == "seresnet":
        return SENet(block=SEResNetBlock, layers=[1, 1, 1, 1], group=1, reduction=16, num_classes=10)
    if kind == "resnest14":
        return create_model("resnest14", num_classes=10)
    return SwinTransformer(  # LayerNorms only: no BatchNorm statistics to tell it by
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=2
    )


@pytest.mark.parametrize("kind", ["seresnet", "resnest14", "swin"])
def test_mindcv_safetensors_with_downsample_cells_get_the_origin_of_their_ckpt(kind, tmp_path):
    """Saved as .safetensors without a backbone_variant entry, they are MindSpore's files as their .ckpt
    is (where the format says so), not PyTorch state dicts to build in the torch layout."""
    net = small_mindcv(kind)
    assert any(".downsample." in name for name, _ in net.parameters_and_names())
    for fmt in ("ckpt", "safetensors"):
        ms.save_checkpoint(net, str(tmp_path / f"w.{fmt}"), format=fmt)
    origin, variant = origin_of_file(str(tmp_path / "w.ckpt"))
    assert origin != "torch" and variant == "default"
    assert origin_of_file(str(tmp_path / "w.safetensors")) == (origin, variant)


def test_a_mindcv_seresnet_safetensors_file_loads_as_mindcvs(tmp_path, pynative):
    from mindcv.models import create_model

    cv = create_model("seresnet18", num_classes=1000, pretrained=False)
    randomize(cv, 6)
    path = tmp_path / "seresnet18.safetensors"
    ms.save_checkpoint(cv, str(path), format="safetensors")
    assert origin_of_file(str(path)) == ("mindcv", "default")
    net = TransferNet("seresnet18", 3, 0, "default")
    report = load_backbone(net.backbone, str(path))
    assert report.origin == "mindcv" and sorted(report.head_dropped) == ["classifier.bias", "classifier.weight"]
    assert not report.missing and not report.unexpected and not report.mismatched, report
    cv.set_train(False)
    net.set_train(False)
    x = ms.Tensor(np.random.default_rng(7).standard_normal((2, 3, 64, 64)).astype(np.float32))
    want = cv.forward_features(x).mean((2, 3)).asnumpy()
    assert float(np.abs(BackboneFeatures(net)(x).asnumpy() - want).max()) <= 1e-5


def test_origin_is_read_from_names_and_from_the_runners_own_record():
    zoo18 = [
        "conv1.weight",
        "layer1.0.bn1d.gamma",
        "layer2.0.down_sample_layer.0.weight",
        "end_point.weight",
    ]
    assert detect_origin(zoo18) == ("modelzoo", "modelzoo")
    assert detect_origin(["conv1.weight", "layer2.0.down_sample_layer.1.gamma", "fc.weight"]) == (
        "modelzoo",
        "modelzoo",
    )
    assert detect_origin(["conv1.weight", "layer2.0.down_sample.0.weight", "classifier.weight"]) == (
        "mindcv",
        "default",
    )
    ours = [
        "backbone.conv1.weight",
        "backbone.layer2.0.down_sample_layer.0.weight",
        "head.weight",
    ]
    assert detect_origin(ours) == (
        "runner",
        "default",
    )  # written before layouts were recorded
    assert detect_origin(ours, 1) == ("runner", "modelzoo")
    assert detect_origin(["conv1.weight"]) == ("unknown", "default")


def test_a_backbone_of_another_layout_is_refused(tmp_path):
    from ascend_finetune.checkpoints.errors import PretrainedError

    path = tmp_path / "zoo.ckpt"
    ms.save_checkpoint(ZooResNet("resnet18"), str(path))
    with pytest.raises(PretrainedError, match="modelzoo layout"):
        load_backbone(TransferNet("resnet18", 3).backbone, str(path))


def test_a_run_trained_with_adamw_loads_as_pretrained_without_a_partial_warning(tmp_path):
    """A run checkpoint holds the optimizer's state beside the weights; AdamW's (adam_m., adam_v.)
    is optimizer state like Momentum's moments., not backbone tensors the load failed to place."""
    net = TransferNet("resnet18", 3)
    opt = nn.AdamWeightDecay(net.trainable_params(), 1e-3)
    ms.save_checkpoint(nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt), str(tmp_path / "r.ckpt"))
    assert any(p.name.startswith("adam_m.backbone.") for p in opt.get_parameters())
    report = load_backbone(TransferNet("resnet18", 3).backbone, str(tmp_path / "r.ckpt"))
    assert report.loaded and not report.unexpected and not report.missing


# -- fine-tune from ModelZoo, then eval and export ----------------------------------------------------
def cli(*args: str, timeout: float = 300) -> tuple[int, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert lines, r.stderr[-2000:]
    return r.returncode, json.loads(lines[-1])


def test_a_run_fine_tuned_from_modelzoo_is_evaluated_and_exported_in_the_modelzoo_layout(
    tmp_path,
):
    zoo = ZooResNet("resnet18")
    randomize(zoo, 5)
    pre = tmp_path / "zoo_resnet18.ckpt"
    ms.save_checkpoint(zoo, str(pre))
    data = tmp_path / "data"
    two = {k: CLASSES[k] for k in ("red circle", "green square")}
    make_shapes(str(data), per_class=20, size=32, seed=7, classes=two)
    s = spec(
        data,
        name="zoo",
        model={"pretrained": str(pre), "freeze": "up_to:layer3"},
        data={"val_split": 0.25},
        train={"epochs": 1, "lr": 0.001},
        amp={"level": "O0", "loss_scale": "none"},
    )
    run = tmp_path / "run"
    code, out = cli("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run))
    assert code == 0, out
    entry = json.loads((run / "checkpoints.json").read_text())[-1]
    assert entry["backbone_variant"] == "modelzoo"
    ckpt = run / entry["file"]
    assert int(ms.load_checkpoint(str(ckpt))["backbone_variant"].asnumpy()) == 1

    # eval rebuilds the ModelZoo layout: the run's own epoch-end figures come back
    code, ev = cli("eval", "--run", str(run), "--ckpt", str(ckpt))
    assert code == 0, ev
    assert ev["num_images"] == of_type(events(run), "run_started")[0]["num_val"]
    assert ev["accuracy"] == pytest.approx(entry["metrics"]["val_acc"])
    assert ev["loss"] == pytest.approx(entry["metrics"]["val_loss"], rel=1e-4)

    # export: the MindIR computes the ModelZoo layout's logits, not the default layout's
    code, ex = cli("export", "--run", str(run), "--ckpt", str(ckpt), "--format", "mindir")
    assert code == 0, ex
    x = ms.Tensor(np.random.default_rng(8).standard_normal((1, 3, 32, 32)).astype(np.float32))
    exported = ms.nn.GraphCell(ms.load(ex["file"]))(x).asnumpy()
    weights = ms.load_checkpoint(str(ckpt))
    logits = {}
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        for variant in ("modelzoo", "default"):
            net = TransferNet("resnet18", 2, 0, variant)
            for p in net.get_parameters():
                p.set_data(weights[p.name])
            net.set_train(False)
            logits[variant] = net(x).asnumpy()
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(exported, logits["modelzoo"], rtol=1e-5, atol=1e-5)
    assert np.abs(logits["modelzoo"] - logits["default"]).max() > 1e-4
