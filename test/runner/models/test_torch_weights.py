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
import shlex
import struct
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
from ascend_finetune.models.torch_weights import looks_torch, read_state_dict

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


@needs_ref
def test_a_training_checkpoint_torch_refuses_converts_with_the_errors_command(ref, tmp_path):
    """torch.load(weights_only=True) refuses a checkpoint that keeps its training arguments (an
    argparse.Namespace, as torchvision's reference scripts and timm's train.py save) beside the weights.
    The command the error gives, run with torch, makes a .safetensors file holding those weights."""
    out, _ = ref
    ck, converted = tmp_path / "ck.pth", tmp_path / "ck.safetensors"
    script = """import argparse, json, sys, torch
sys.path.insert(0, sys.argv[1])
from ascend_finetune.models.torch_weights import read_state_dict
sd = torch.load(sys.argv[2], weights_only=True)
torch.save({"model": sd, "epoch": 3, "args": argparse.Namespace(lr=0.1)}, sys.argv[3])
try:
    read_state_dict(sys.argv[3])
except Exception as e:
    print(json.dumps([e.why, str(e)]))
"""
    args = [str(ROOT / "runner"), str(out / "torchvision-resnet18.pth"), str(ck)]
    r = subprocess.run([str(REF_PY), "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    why, message = json.loads(r.stdout.splitlines()[-1])
    assert why == "torch_load_refused" and "trust" in message
    # the command as a shell reads it, with the reference venv's python and this test's files
    argv = shlex.split(message[message.index("python -c ") :])
    code = argv[2].replace("IN.pth", str(ck)).replace("OUT.safetensors", str(converted))
    r = subprocess.run([str(REF_PY), "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    from safetensors.numpy import load_file

    want, got = load_file(str(out / "torchvision-resnet18.safetensors")), read_state_dict(str(converted))
    assert sorted(got) == sorted(want)
    assert all(np.array_equal(got[k], want[k]) for k in want)


@needs_ref
def test_pytorch_state_dicts_are_told_from_mindspore_checkpoints():
    """torchvision's and timm's names, taken from the libraries, read as PyTorch's: ConvNeXt's and DeiT
    III's layer scale `gamma` (without a `beta`) and Swin's `downsample` included."""
    script = """import json, timm, torch, torchvision
names = {"torchvision:resnet18": list(torchvision.models.resnet18().state_dict())}
for arch in ["resnet50", "mobilenetv3_large_100", "efficientnet_b0", "convnext_tiny", "vit_base_patch32_224",
             "deit3_small_patch16_224", "swin_tiny_patch4_window7_224"]:
    with torch.device("meta"):  # names only: no weights allocated
        names[arch] = list(timm.create_model(arch).state_dict())
print(json.dumps(names))
"""
    r = subprocess.run([str(REF_PY), "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    names = json.loads(r.stdout.splitlines()[-1])
    assert len(names) == 8 and any(n.endswith(".gamma") for n in names["convnext_tiny"])
    assert [arch for arch, ns in names.items() if not looks_torch(ns)] == []


# facebookresearch/ConvNeXt-V2's own checkpoints (models/convnextv2.py): its GRN owns a `gamma` beside a
# `beta`, as MindSpore's norms do, while its LayerNorms say `weight`.
CONVNEXT_V2 = [
    "downsample_layers.0.0.weight",
    "downsample_layers.0.1.weight",
    "downsample_layers.0.1.bias",
    "stages.0.0.dwconv.weight",
    "stages.0.0.norm.weight",
    "stages.0.0.norm.bias",
    "stages.0.0.pwconv1.weight",
    "stages.0.0.grn.gamma",
    "stages.0.0.grn.beta",
    "stages.0.0.pwconv2.weight",
    "norm.weight",
    "norm.bias",
    "head.weight",
]


@pytest.mark.parametrize(
    "names, torch",
    [
        (CONVNEXT_V2, True),
        # mindcv's ConvNeXt-V2: the same model, its norms saying gamma/beta.
        ([n.replace("norm.weight", "norm.gamma").replace("norm.bias", "norm.beta") for n in CONVNEXT_V2], False),
        # mindcv's Swin: a `downsample` cell with a LayerNorm's gamma/beta.
        (
            ["layers.0.downsample.reduction.weight", "layers.0.downsample.norm.gamma", "layers.0.downsample.norm.beta"],
            False,
        ),
        # mindcv's SE-ResNet: a `downsample` shortcut with BatchNorm statistics.
        (["layer2.0.downsample.0.weight", "layer2.0.downsample.1.moving_mean", "layer2.0.downsample.1.gamma"], False),
        # A PyTorch ResNet's shortcut alone (its BatchNorm statistics left out of the file).
        (["layer2.0.downsample.0.weight", "layer2.0.downsample.1.weight", "layer2.0.downsample.1.bias"], True),
    ],
    ids=["convnextv2-official", "convnextv2-mindcv", "swin-mindcv", "seresnet-mindcv", "resnet-torch-no-stats"],
)
def test_strong_pytorch_signs_decide_before_mindsporelike_norm_names_and_downsample_cells_last(names, torch):
    assert looks_torch(names) is torch


# -- BF16 .safetensors, written from the format's spec (huggingface/safetensors README): an 8-byte
# little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then the bytes.
def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 values as bfloat16: their top 16 bits (truncation)."""
    return (np.asarray(values, "<f4").view("<u4") >> 16).astype("<u2")


def truncated(values: np.ndarray) -> np.ndarray:
    """The float32 values a bfloat16 file holds for `values`: the low 16 bits zeroed."""
    return (np.asarray(values, "<f4").view("<u4") & 0xFFFF0000).view("<f4")


def write_safetensors(path, tensors: dict[str, np.ndarray]) -> None:
    """float32 arrays as BF16, int64 ones as I64."""
    header, data = {}, b""
    for name, value in tensors.items():
        raw = bf16_bits(value).tobytes() if value.dtype == np.float32 else np.asarray(value, "<i8").tobytes()
        dtype = "BF16" if value.dtype == np.float32 else "I64"
        header[name] = {"dtype": dtype, "shape": list(value.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + data)


def test_bf16_safetensors_read_as_the_float32_values_they_hold(tmp_path):
    w = np.random.default_rng(0).normal(0, 1, (4, 3, 3, 3)).astype(np.float32)
    b = np.array([1 / 3, -2.5e-3, 3.0e38, -7.0], np.float32)
    write_safetensors(tmp_path / "w.safetensors", {"w": w, "b": b, "n": np.array(7, np.int64)})
    state = read_state_dict(str(tmp_path / "w.safetensors"))
    assert state["w"].dtype == np.float32 and state["w"].shape == w.shape
    np.testing.assert_array_equal(state["w"], truncated(w))
    np.testing.assert_array_equal(state["b"], truncated(b))
    assert not np.array_equal(truncated(b), b)  # bfloat16 keeps 8 significant bits: 1/3 is not exact
    assert state["n"].shape == () and int(state["n"]) == 7


@pytest.mark.parametrize("damage", ["header_length", "offsets", "shape"])
def test_a_damaged_safetensors_file_is_refused_not_read_past_its_end(tmp_path, damage):
    header = {"w": {"dtype": "BF16", "shape": [6], "data_offsets": [0, 12]}}
    if damage == "offsets":
        header["w"] = {"dtype": "BF16", "shape": [1 << 39], "data_offsets": [0, 1 << 40]}
    if damage == "shape":
        header["w"]["shape"] = [3, 4]  # 24 bytes' worth, 12 stored
    head = json.dumps(header).encode()
    length = 1 << 40 if damage == "header_length" else len(head)
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", length) + head + bytes(12))
    with pytest.raises(PretrainedError) as e:
        read_state_dict(str(tmp_path / "w.safetensors"))
    assert e.value.why == "bad_safetensors" and e.value.params["file"] == "w.safetensors"


@needs_ref
def test_a_bf16_state_dict_loads_through_model_pretrained(ref, tmp_path):
    """torchvision's resnet18 saved in bfloat16 (the hub's common dtype): origin, layout and loaded
    weights as `model.pretrained` gives them, each the float32 value its bfloat16 stands for."""
    from safetensors.numpy import load_file

    out, _ = ref
    state = load_file(str(out / "torchvision-resnet18.safetensors"))
    path = tmp_path / "tv-resnet18-bf16.safetensors"
    write_safetensors(path, state)
    assert origin_of_file(str(path)) == ("torch", "torch")
    net = TransferNet("resnet18", 3, 0, "torch")
    report = load_backbone(net.backbone, str(path))
    assert not report.missing and not report.unexpected and not report.mismatched, report
    params = dict(net.backbone.parameters_and_names())
    loaded = {map_torch_name(k): v for k, v in state.items() if map_torch_name(k) is not None}
    assert sorted(loaded) == report.loaded
    for name, value in loaded.items():
        np.testing.assert_array_equal(params[name].asnumpy(), truncated(value), err_msg=name)


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
