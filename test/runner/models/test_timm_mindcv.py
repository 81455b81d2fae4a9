"""timm's MobileNetV3, EfficientNet, ConvNeXt and ViT state dicts as `model.pretrained` on the mindcv
backbone of the same architecture compute, in the runner, the features timm computes.

The oracle is timm itself in the test-only venv `.venv-ref` (scripts/setup-ref-venv.sh): torch_ref.py
builds each model with random weights (norm statistics measured on a batch, affines, biases and
layer scales moved off their initial values), saves its state dict as `.safetensors` (and `.pth` for
two), and its pooled features: timm's `forward_head(forward_features(x), pre_logits=True)`, eval mode
(MobileNetV3: its global pool; its pre-logits conv is head, see torch_ref.pooled). Here each file
goes through the runner's `model.pretrained` path (origin from the file, backbone built in the
"torch" layout, renamed, loaded): max |difference| <= 1e-4 in fp32 and every tensor accounted for.

Sizes: 72 px for the convolutional families (not a multiple of 32, so ConvNeXt's rounding of the
downsampling shows; even, so the stride-2 padding shows), 224 px for ViT (its only size). Cost on
the 2-core box (idle / with a CI run beside it): the reference files 50 s / 140 s, the eight
comparisons 1.7 / 3.8 min (ViT-B/16 30 / 66 s), the four mindcv-arithmetic ones 1 / 1.4 min, the
training run with eval 45 s; the file 4 / 8.7 min. Each test prints its time. About 1.1 GB of
temporary files while it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import mindspore as ms
import numpy as np
import pytest
from conftest import CLASSES, ROOT, events, of_type, runner, spec, write_spec
from weights_server import serve

from ascend_finetune.checkpoints.errors import PretrainedError
from ascend_finetune.data.demo import make_shapes
from ascend_finetune.models import catalog
from ascend_finetune.models.backbones import family
from ascend_finetune.models.net import BackboneFeatures, TransferNet
from ascend_finetune.models.pretrained import load_backbone, origin_of_file
from ascend_finetune.models.torch_map import TIMM_MODELS
from ascend_finetune.spec import check

REF_PY = ROOT / ".venv-ref" / "bin" / "python"
HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 72
TOL = 1e-4
ARCHS = [a for a, b in TIMM_MODELS.items() if not a.startswith("resnet")]  # ResNets: test_torch_weights.py
PTH = ("mobilenetv3_small_100", "efficientnet_b0")  # the .pth reader is the same for every family
HEADS = {
    "mobilenetv3": ["classifier.bias", "classifier.weight", "conv_head.bias", "conv_head.weight"],
    "efficientnet": ["classifier.bias", "classifier.weight"],
    "convnext": ["head.fc.bias", "head.fc.weight"],
    "vit": ["head.bias", "head.weight"],
}

needs_ref = pytest.mark.skipif(
    not REF_PY.exists() and os.environ.get("CI") != "true",
    reason="the reference venv .venv-ref (torch, torchvision, timm) is missing: run scripts/setup-ref-venv.sh",
)


def _size(arch: str) -> int:
    return 224 if arch.startswith("vit") else SIZE


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """timm's files and features for every ARCHS entry, made once in .venv-ref."""
    if not REF_PY.exists():  # in CI the venv must be there: fail rather than skip silently
        pytest.fail(".venv-ref is missing in CI: scripts/setup-python.sh must create it (setup-ref-venv.sh)")
    out = tmp_path_factory.mktemp("timm_ref")
    pairs = [f"timm:{a}@{_size(a)}" for a in ARCHS]
    t = time.monotonic()
    r = subprocess.run(
        [str(REF_PY), os.path.join(HERE, "torch_ref.py"), str(out), str(SIZE), f"--pth={','.join(PTH)}", *pairs],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"timm reference files: {time.monotonic() - t:.0f} s")
    return out, json.loads(r.stdout.splitlines()[-1])


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE)


def _features(backbone: str, path: str, x: np.ndarray, variant: str):
    net = TransferNet(backbone, 3, 0, variant)
    net.backbone.variant = "torch"  # for the "default" comparison only: load into mindcv's arithmetic
    report = load_backbone(net.backbone, path)
    net.set_train(False)
    return BackboneFeatures(net)(ms.Tensor(x)).asnumpy(), report


@needs_ref
@pytest.mark.parametrize("arch", ARCHS)
def test_timm_state_dicts_give_timms_features_on_the_mindcv_backbone(arch, ref, pynative):
    out, info = ref
    t = time.monotonic()
    backbone = TIMM_MODELS[arch]
    path = str(out / f"timm-{arch}.safetensors")
    assert origin_of_file(path) == ("torch", "torch")
    x = np.load(out / f"input-{_size(arch)}.npy")
    want = np.load(out / f"timm-{arch}.features.npy")
    got, report = _features(backbone, path, x, "torch")
    assert not report.missing and not report.unexpected and not report.mismatched, report
    assert report.head_dropped == HEADS[family(backbone)]
    assert all(n.endswith("num_batches_tracked") for n in report.dropped)
    assert len(report.loaded) + len(report.head_dropped) + len(report.dropped) == info[f"timm:{arch}"]["tensors"]
    assert got.shape == want.shape
    diff = float(np.abs(got - want).max())
    scale = float(np.abs(want).max())
    print(f"{arch} -> {backbone}: max |diff| {diff:.2e} (features up to {scale:.2f}), {time.monotonic() - t:.0f} s")
    assert diff <= TOL, f"{arch}: max |diff| {diff}"


@needs_ref
@pytest.mark.parametrize("arch", ["mobilenetv3_small_100", "efficientnet_b0", "convnext_tiny", "vit_base_patch32_224"])
def test_mindcvs_own_arithmetic_computes_other_features_from_the_same_weights(arch, ref, pynative):
    """Why the "torch" layout exists: the same tensors in mindcv's arithmetic ("same" padding at
    stride 2, tanh GELU, LayerNorm eps 1e-7) are measurably off timm's features, one model per family."""
    out, _ = ref
    t = time.monotonic()
    x = np.load(out / f"input-{_size(arch)}.npy")
    want = np.load(out / f"timm-{arch}.features.npy")
    got, report = _features(TIMM_MODELS[arch], str(out / f"timm-{arch}.safetensors"), x, "default")
    assert not report.missing and not report.unexpected
    diff = float(np.abs(got - want).max())
    print(f"{arch} in mindcv's arithmetic: max |diff| {diff:.2e}, {time.monotonic() - t:.0f} s")
    assert diff > 10 * TOL


@needs_ref
def test_timm_pth_files_read_as_their_safetensors_where_torch_is_installed(ref):
    """The `.pth` path runs torch.load(weights_only=True), so it is checked inside .venv-ref: the
    runner's reader gives there exactly the arrays of the .safetensors file of the same model."""
    out, _ = ref
    script = (
        "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); "
        "from safetensors.numpy import load_file; "
        "import ascend_finetune.models.torch_weights as tw; "
        "a = tw.read_state_dict(sys.argv[2]); b = load_file(sys.argv[3]); "
        "assert sorted(a) == sorted(b); assert all(np.array_equal(a[k], b[k]) for k in a); print(len(a))"
    )
    for arch in PTH:
        stem = out / f"timm-{arch}"
        r = subprocess.run(
            [str(REF_PY), "-c", script, str(ROOT / "runner"), f"{stem}.pth", f"{stem}.safetensors"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr[-3000:]


@needs_ref
def test_a_tag_published_without_a_head_loads_the_same(ref, pynative, tmp_path):
    """timm publishes some ViT tags with no classifier (orig_in21k, dino, mae: num_classes 0 in the
    catalog): the same state dict without `head.*` gives the same features, and nothing is missing."""
    from safetensors.numpy import load_file, save_file

    out, _ = ref
    arch = "vit_base_patch32_224"
    full = load_file(str(out / f"timm-{arch}.safetensors"))
    path = tmp_path / "headless.safetensors"
    save_file({k: v for k, v in full.items() if not k.startswith("head.")}, str(path))
    x = np.load(out / f"input-{_size(arch)}.npy")
    got, report = _features(TIMM_MODELS[arch], str(path), x, "torch")
    assert not report.missing and not report.unexpected and not report.head_dropped, report
    diff = float(np.abs(got - np.load(out / f"timm-{arch}.features.npy")).max())
    assert diff <= TOL, diff


@needs_ref
def test_a_timm_file_of_another_family_is_refused_naming_the_backbones_it_fits(ref, pynative):
    out, _ = ref
    net = TransferNet("mobilenet_v3_small_100", 3, 0, "torch")
    with pytest.raises(
        PretrainedError, match=r"convnext state dict.*mobilenetv3 backbone.*\(convnext_small, convnext_tiny\)"
    ):
        load_backbone(net.backbone, str(out / "timm-convnext_tiny.safetensors"))


def test_hub_repositories_pick_the_backbone_by_timms_architecture(tmp_path):
    for arch, backbone in TIMM_MODELS.items():
        src = catalog.parse(f"hf-hub:timm/{arch}.some_tag")
        assert (src.backbone, src.file) == (backbone, "model.safetensors")
    data = tmp_path / "d"
    (data / "a").mkdir(parents=True)
    s = spec(data, model={"backbone": "efficientnet_b0", "pretrained": "hf-hub:timm/convnext_tiny.in12k_ft_in1k"})
    problems = [p for p in check(s, str(tmp_path)) if p.path == "model.pretrained"]
    assert problems and "convnext_tiny" in problems[0].message and '"convnext_tiny"' in problems[0].fix
    s["model"]["backbone"] = "convnext_tiny"
    assert not [p for p in check(s, str(tmp_path)) if p.path == "model.pretrained"]


@pytest.fixture
def hub():
    state, server = serve()
    yield state
    server.shutdown()
    server.server_close()


@needs_ref
def test_a_run_from_timm_weights_trains_and_its_checkpoints_keep_timms_arithmetic(ref, tmp_path, hub, monkeypatch):
    """Through the CLI in GRAPH mode: timm's MobileNetV3 weights from a hub on 127.0.0.1, with a
    config.json that normalises with mean = std = 0.5, as model.pretrained, a frozen backbone;
    run_started says what loaded and which preprocessing from where, checkpoints record the "torch"
    layout and the values, `eval` of a checkpoint (which rebuilds the network from the checkpoint
    alone) gives the accuracy the run reported, and a run fine-tuned from the checkpoint keeps them."""
    out, _ = ref
    t = time.monotonic()
    repo = "/timm/mobilenetv3_small_100.test_tag/resolve/main"
    hub.files[f"{repo}/model.safetensors"] = (out / "timm-mobilenetv3_small_100.safetensors").read_bytes()
    cfg = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9, "interpolation": "bicubic"}
    hub.files[f"{repo}/config.json"] = json.dumps({"pretrained_cfg": cfg}).encode()
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", hub.base)
    data = tmp_path / "data"
    make_shapes(
        str(data), per_class=16, size=32, seed=3, classes={k: CLASSES[k] for k in ("red circle", "green square")}
    )
    s = spec(
        data,
        model={
            "backbone": "mobilenet_v3_small_100",
            "pretrained": "hf-hub:timm/mobilenetv3_small_100.test_tag",
            "freeze": "backbone",
            "preprocess": {"crop_pct": 0.875},  # the spec's field over the config's 0.9
        },
        data={"val_split": 0.25, "batch_size": 8, "augment": "none"},
        train={"epochs": 1, "lr": 0.01},
        amp={"level": "O0", "loss_scale": "none"},
    )
    run = tmp_path / "run"
    code, res = runner("train", str(write_spec(tmp_path / "s.json", s)), "--run-dir", str(run), timeout=600)
    assert code == 0, res
    evs = events(run)
    info = of_type(evs, "run_started")[0]["pretrained"]
    assert (info["origin"], info["variant"]) == ("torch", "torch")
    assert info["missing"] == [] and info["unexpected"] == [] and info["mismatched"] == []
    assert info["head_dropped"] == HEADS["mobilenetv3"]
    pre = of_type(evs, "run_started")[0]["preprocess"]
    assert (pre["source"], pre["config"], pre["overridden"]) == (
        "hub_config",
        f"{hub.base}{repo}/config.json",
        ["crop_pct"],
    )
    assert (pre["mean"], pre["std"], pre["crop_pct"]) == ([127.5] * 3, [127.5] * 3, 0.875)
    assert not [w for w in of_type(evs, "warning") if w["code"].startswith("preprocess")]
    entry = json.loads((run / "checkpoints.json").read_text())[-1]
    assert entry["backbone_variant"] == "torch" and entry["preprocess"] == pre
    ckpt = str(run / entry["file"])
    code, res = runner("eval", "--run", str(run), "--ckpt", ckpt)
    assert code == 0, res
    assert isinstance(res, dict)
    assert res["accuracy"] == pytest.approx(of_type(evs, "eval")[-1]["val_acc"], abs=1e-6), res
    # eval/predict and "Fine-tune from" (auto on the runner's own checkpoint) reuse the recorded values.
    from ascend_finetune.checkpoints.loading import preprocess_of
    from ascend_finetune.checkpoints.tools import load_run
    from ascend_finetune.models.preprocess import resolve

    assert preprocess_of(load_run(str(run)), ckpt).describe() == pre
    again = resolve("auto", ckpt, "runner", lambda **w: pytest.fail(str(w)))
    assert (again.mean, again.crop_pct, again.source) == ((127.5,) * 3, 0.875, "hub_config")
    assert again.why.startswith("recorded with the checkpoint")
    print(f"train + eval from timm weights: {time.monotonic() - t:.0f} s")
