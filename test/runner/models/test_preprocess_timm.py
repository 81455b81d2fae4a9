"""`model.preprocess: auto` on hf-hub:timm/ weights against timm itself: the runner reads the hub
repository's config.json and its eval pipeline gives the pixels timm's own transform gives.

The oracle is timm 1.0 in the test-only venv `.venv-ref`: for four real tags its registry's
`pretrained_cfg` (no network) is written as the repository's config.json in the hub's layout
(`{"architecture", "num_classes", "pretrained_cfg"}`), served by the weights host on 127.0.0.1
(weights_server.py) at `<org>/<repo>/resolve/main/config.json`, and timm's
`create_transform(**resolve_data_config({}, pretrained_cfg=...))` is applied to the same Pillow-made
images. The tags: ViT-B/16 `augreg2` and EfficientNet-B1 `ra4` (mean = std = 0.5, crop 0.9; B1 at
240 px), ConvNeXt-T `in12k_ft_in1k` and ResNet-50 `a1` (ImageNet's, crop 0.95: an odd margin, where
the crop offset's rounding shows).

Mean, std, crop, interpolation and size must match exactly. Pixels: measured max |difference| 4.8e-7
in normalised units (float32 rounding of (x / 255 - m) / s against (x - 255 m) / (255 s)), so the
tolerance is 1e-5; MindSpore's own resize (OpenCV kernels, no antialias) was up to 69 of 255 off,
which is why the runner resizes these recipes with Pillow (data/augment.py). About 15 s.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image
from weights_server import serve

from ascend_finetune.data.pipeline import make_dataset
from ascend_finetune.models.preprocess import TABLE, resolve

REF_PY = ROOT / ".venv-ref" / "bin" / "python"
TAGS = (
    "vit_base_patch16_224.augreg2_in21k_ft_in1k",
    "efficientnet_b1.ra4_e3600_r240_in1k",
    "convnext_tiny.in12k_ft_in1k",
    "resnet50.a1_in1k",
)
TOL = 1e-5
REF = """
import json, sys, numpy as np, timm
from PIL import Image
from timm.data import create_transform, resolve_data_config
out, images = sys.argv[1], sys.argv[3:]
result = {}
for tag in sys.argv[2].split(","):
    cfg = timm.models.get_pretrained_cfg(tag).to_dict()
    for k in ("url", "hf_hub_id", "file", "source", "hf_hub_filename"):  # as timm's push_to_hub leaves it
        cfg.pop(k, None)
    data = resolve_data_config({}, pretrained_cfg=cfg)
    t = create_transform(**data)
    np.save(f"{out}/{tag}.npy", np.stack([t(Image.open(p).convert("RGB")).numpy() for p in images]))
    doc = {"architecture": cfg["architecture"], "num_classes": cfg["num_classes"], "pretrained_cfg": cfg}
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}
    result[tag] = {"config": json.dumps(doc), "data": data}
print(json.dumps(result))
"""

needs_ref = pytest.mark.skipif(
    not REF_PY.exists() and os.environ.get("CI") != "true",
    reason="the reference venv .venv-ref (torch, torchvision, timm) is missing: run scripts/setup-ref-venv.sh",
)


def _images(folder) -> list[str]:
    """Smooth colour fields with noise (interpolation differences show), of sizes whose resize margins
    are odd and even, portrait and landscape; a grayscale PNG and a JPEG (decoded by Pillow on both sides)."""
    rng = np.random.default_rng(0)
    paths = []
    for i, (h, w) in enumerate([(300, 400), (257, 311), (480, 360), (240, 240), (333, 250)]):
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([128 + 100 * np.sin(x / 17 + i), 128 + 100 * np.cos(y / 23), (x + y) * 255 / (h + w)], -1)
        img = Image.fromarray((base + rng.normal(0, 12, (h, w, 3))).clip(0, 255).astype(np.uint8))
        path = folder / f"img{i}.{'jpg' if i == 4 else 'png'}"
        (img.convert("L") if i == 3 else img).save(path, **({"quality": 90} if i == 4 else {}))
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def timm_ref(tmp_path_factory):
    if not REF_PY.exists():  # in CI the venv must be there: fail rather than skip silently
        pytest.fail(".venv-ref is missing in CI: scripts/setup-python.sh must create it (setup-ref-venv.sh)")
    out = tmp_path_factory.mktemp("timm_pre")
    images = _images(out)
    r = subprocess.run(
        [str(REF_PY), "-c", REF, str(out), ",".join(TAGS), *images], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return out, images, json.loads(r.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def hub():
    state, server = serve()
    yield state
    server.shutdown()
    server.server_close()


@needs_ref
@pytest.mark.parametrize("tag", TAGS)
def test_the_hub_configs_preprocessing_gives_timms_own_pixels(tag, timm_ref, hub, tmp_path):
    out, images, ref = timm_ref
    hub.files[f"/timm/{tag}/resolve/main/config.json"] = ref[tag]["config"].encode()
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "HF_ENDPOINT": hub.base}
    warned: list[dict] = []
    p = resolve("auto", f"hf-hub:timm/{tag}", "torch", lambda **w: warned.append(w), env)
    data = ref[tag]["data"]
    assert warned == [] and p.source == "hub_config"
    assert p.mean == tuple(m * 255 for m in data["mean"]) and p.std == tuple(s * 255 for s in data["std"])
    assert (p.crop_pct, p.interpolation, p.crop_mode) == (data["crop_pct"], data["interpolation"], data["crop_mode"])
    assert p.input_size == data["input_size"][1] == data["input_size"][2]
    want = np.load(out / f"{tag}.npy")
    size = p.input_size
    ds = make_dataset(
        [(f, 0) for f in images], size, len(images), 2, False, False, 0, drop_remainder=False, preprocess=p
    )
    got = next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))[0]
    assert got.shape == want.shape == (len(images), 3, size, size)
    diff = float(np.abs(got - want).max())
    print(f"{tag}: max |runner - timm| = {diff:.2e} (normalised units)")
    assert diff <= TOL
    # What the runner gave these weights before (ImageNet's mean/std, MindSpore's resize): far off.
    old = make_dataset(
        [(f, 0) for f in images],
        size,
        len(images),
        2,
        False,
        False,
        0,
        drop_remainder=False,
        preprocess=TABLE["imagenet"],
    )
    assert np.abs(next(old.create_tuple_iterator(num_epochs=1, output_numpy=True))[0] - want).max() > 0.1
