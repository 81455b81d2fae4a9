"""PyTorch ResNet weights (torchvision, timm) as `model.pretrained` compute, in the runner, the features
they compute in PyTorch.

The reference is the libraries themselves, in the test-only venv `.venv-ref` (scripts/setup-ref-venv.sh;
torch never enters the runner's venv): torch_ref.py builds each ResNet with random weights and moved
BatchNorm statistics, saves its state dict as `.safetensors` and `.pth`, and its pooled features. Here
each file goes through the runner's `model.pretrained` path (origin from the file, backbone built in
that layout, weights renamed and loaded) and must give the same pooled features within 1e-4.

The `.pth` files are read through torch only where torch is importable: in the runner's venv it is
not, and the error must say how to convert. The feature comparison of `.pth` files therefore runs
torch's loader inside .venv-ref (see test_pth_state_dicts_load_where_torch_is_installed).
"""

from __future__ import annotations

import json
import os
import subprocess

import mindspore as ms
import numpy as np
import pytest
from conftest import CLASSES, ROOT, events, of_type, runner, spec, write_spec

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.data.demo import make_shapes
from ascend_finetune.models.net import BackboneFeatures, TransferNet
from ascend_finetune.models.pretrained import load_backbone, origin_of_file
from ascend_finetune.models.torch_map.resnet import rename_one as map_torch_name
from ascend_finetune.models.torch_weights import read_state_dict

REF_PY = ROOT / ".venv-ref" / "bin" / "python"
HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = ("torchvision:resnet18", "torchvision:resnet50", "timm:resnet18", "timm:resnet50")
# The other two depths the runner maps, with ASCEND_FINETUNE_SLOW_TESTS=1 (all eight in 56 s here, and
# about 1 GB more files; the mapping is the same code per block type, which 18 and 50 cover).
if os.environ.get("ASCEND_FINETUNE_SLOW_TESTS") == "1":
    PAIRS += ("torchvision:resnet34", "torchvision:resnet101", "timm:resnet34", "timm:resnet101")
SIZE = 64
TOL = 1e-4

needs_ref = pytest.mark.skipif(
    not REF_PY.exists() and os.environ.get("CI") != "true",
    reason="the reference venv .venv-ref (torch, torchvision, timm) is missing: run scripts/setup-ref-venv.sh",
)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """The reference files and features of every PAIRS entry, made once in .venv-ref."""
    if not REF_PY.exists():  # in CI the venv must be there: fail rather than skip silently
        pytest.fail(".venv-ref is missing in CI: scripts/setup-python.sh must create it (setup-ref-venv.sh)")
    out = tmp_path_factory.mktemp("torch_ref")
    r = subprocess.run(
        [str(REF_PY), os.path.join(HERE, "torch_ref.py"), str(out), str(SIZE), *PAIRS],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.loads(r.stdout.splitlines()[-1])


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE)


def runner_features(arch: str, path: str, x: np.ndarray):
    """What `model.pretrained` gives (trainer.py): layout from the file, backbone built in it, loaded."""
    origin, variant = origin_of_file(path)
    net = TransferNet(arch, 3, 0, variant)
    report = load_backbone(net.backbone, path)
    net.set_train(False)
    return BackboneFeatures(net)(ms.Tensor(x)).asnumpy(), report, origin, variant


@needs_ref
@pytest.mark.parametrize("pair", PAIRS)
def test_safetensors_state_dicts_give_the_reference_features(pair, ref, pynative):
    out, info = ref
    source, arch = pair.split(":")
    x = np.load(out / "input.npy")
    want = np.load(out / f"{source}-{arch}.features.npy")
    got, report, origin, variant = runner_features(arch, str(out / f"{source}-{arch}.safetensors"), x)
    assert (origin, variant) == ("torch", "torch")
    assert not report.missing and not report.unexpected and not report.mismatched, report
    assert report.head_dropped == ["fc.bias", "fc.weight"]
    assert report.dropped and all(n.endswith("num_batches_tracked") for n in report.dropped)
    assert len(report.loaded) + len(report.head_dropped) + len(report.dropped) == info[pair]["tensors"]
    diff = float(np.abs(got - want).max())
    print(f"{pair}: max |diff| {diff:.2e} (features up to {info[pair]['feature_abs_max']:.2f})")
    assert diff <= TOL, f"{pair}: max |diff| {diff}"
    # the layout matters: the runner's default layout (MindSpore's "same" max-pool) is measurably off
    net = TransferNet(arch, 3, 0, "default")
    net.backbone.variant = "torch"  # force the load into the other layout, for the comparison only
    load_backbone(net.backbone, str(out / f"{source}-{arch}.safetensors"))
    net.set_train(False)
    assert float(np.abs(BackboneFeatures(net)(ms.Tensor(x)).asnumpy() - want).max()) > 10 * TOL


@needs_ref
def test_pth_state_dicts_load_where_torch_is_installed(ref):
    """The `.pth` path runs `torch.load(weights_only=True)`, so it is checked inside .venv-ref: the
    runner's reader gives there exactly the arrays the .safetensors file holds."""
    out, _ = ref
    script = (
        "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); "
        "from safetensors.numpy import load_file; "
        "import ascend_finetune.models.torch_weights as tw; "
        "a = tw.read_state_dict(sys.argv[2]); b = load_file(sys.argv[3]); "
        "assert sorted(a) == sorted(b), (sorted(a)[:5], sorted(b)[:5]); "
        "assert all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a); print(len(a))"
    )
    for pair in PAIRS:
        stem = out / pair.replace(":", "-")
        r = subprocess.run(
            [str(REF_PY), "-c", script, str(ROOT / "runner"), f"{stem}.pth", f"{stem}.safetensors"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr[-3000:]


@needs_ref
def test_pth_without_torch_says_how_to_convert(ref):
    out, _ = ref
    try:
        import torch  # noqa: F401

        pytest.skip("torch is importable in the runner's venv")
    except ImportError:
        pass
    with pytest.raises(PretrainedError, match="convert it to .safetensors"):
        read_state_dict(str(out / "torchvision-resnet18.pth"))


def test_names_map_onto_the_runners_resnet():
    assert map_torch_name("layer1.0.downsample.1.running_var") == "layer1.0.down_sample_layer.1.moving_variance"
    assert map_torch_name("layer3.5.bn2.weight") == "layer3.5.bn2.gamma"
    assert map_torch_name("bn1.bias") == "bn1.beta"
    assert map_torch_name("module.layer4.1.conv3.weight") == "layer4.1.conv3.weight"
    assert map_torch_name("fc.weight") is None
    assert map_torch_name("layer1.0.bn1.num_batches_tracked") is None


@needs_ref
def test_a_frozen_backbone_from_torchvision_weights_fine_tunes(ref, data_a, tmp_path):
    """The transfer: torchvision's resnet18 trained in PyTorch on task A (the shapes), saved as
    .safetensors, then a runner fine-tune with those weights as model.pretrained and a frozen backbone
    on a new two-class task: the loss goes down, and run_started says what was loaded and dropped."""
    pre = tmp_path / "tv-resnet18-task-a.safetensors"
    r = subprocess.run(
        [str(REF_PY), os.path.join(HERE, "torch_ref.py"), "--pretrain", str(data_a), str(pre)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    data = tmp_path / "data"
    two = {k: CLASSES[k] for k in ("red circle", "green square")}
    make_shapes(str(data), per_class=32, size=32, seed=3, classes=two)
    s = spec(
        data,
        name="tv",
        model={"pretrained": str(pre), "freeze": "backbone"},
        data={"val_split": 0.25, "batch_size": 8, "augment": "none"},
        train={"epochs": 2, "lr": 0.01},
        amp={"level": "O0", "loss_scale": "none"},
    )
    run = tmp_path / "run"
    code, res = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run))
    assert code == 0, res
    evs = events(run)
    info = of_type(evs, "run_started")[0]["pretrained"]
    assert info["origin"] == "torch" and info["variant"] == "torch"
    assert info["head_dropped"] == ["fc.bias", "fc.weight"]
    assert info["missing"] == [] and info["unexpected"] == [] and info["mismatched"] == []
    assert not [w for w in of_type(evs, "warning") if w["code"] == "pretrained_partial"]
    losses = [e["loss"] for e in of_type(evs, "step")]
    k = max(1, len(losses) // 3)
    print("pretrain", r.stdout.strip(), "fine-tune losses", [round(v, 3) for v in losses])
    assert np.mean(losses[-k:]) < 0.8 * np.mean(losses[:k]), losses
    entry = json.loads((run / "checkpoints.json").read_text())[-1]
    assert entry["backbone_variant"] == "torch"
