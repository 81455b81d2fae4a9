"""model.preprocess: the table checked against the sources' own definitions, `auto`'s choice per
weight source, and the pipeline doing what the row says.

mindcv is in the runner's venv, so its eval transform is the reference itself. torch, torchvision and
timm are not (the test-only `.venv-ref` of test_torch_weights.py may be absent): the constants below
are cited from their files, and `test_the_table_matches_timm_and_torchvision` asks the libraries
themselves when `.venv-ref` exists.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image

from ascend_finetune.models.preprocess import MEAN, STD, TABLE, TORCH_AMBIGUOUS, choose

REF_PY = ROOT / ".venv-ref" / "bin" / "python"

# timm 1.0 timm/models/resnet.py: `_rcfg(...)` = `_cfg(..., interpolation='bicubic', crop_pct=0.95,
# test_input_size=(3, 288, 288), test_crop_pct=1.0)`, the config of the a1/a2/a3 tags that
# resnet18/34/50/101's default tags (`resnetN.a1_in1k`) use; timm/data/transforms_factory.py
# transforms_imagenet_eval: `scale_size = math.floor(img_size / crop_pct)`.
TIMM_RESNET = {"interpolation": "bicubic", "crop_pct": 0.95}
# torchvision 0.2x torchvision/models/resnet.py ResNet50_Weights.IMAGENET1K_V1:
# `transforms=partial(ImageClassification, crop_size=224)`; torchvision/transforms/_presets.py
# ImageClassification: resize_size=256, interpolation=BILINEAR, mean=(0.485, 0.456, 0.406),
# std=(0.229, 0.224, 0.225).
TORCHVISION_V1 = {"interpolation": "bilinear", "resize": 256, "crop": 224}
IMAGENET_MEAN_01 = (0.485, 0.456, 0.406)
IMAGENET_STD_01 = (0.229, 0.224, 0.225)


def test_the_table_matches_the_cited_definitions():
    timm = TABLE["timm"]
    assert (timm.interpolation, timm.crop_pct) == (TIMM_RESNET["interpolation"], TIMM_RESNET["crop_pct"])
    assert timm.resize(224) == 235  # floor(224 / 0.95)
    tv = TABLE["torchvision"]
    assert tv.interpolation == TORCHVISION_V1["interpolation"]
    assert tv.resize(TORCHVISION_V1["crop"]) == TORCHVISION_V1["resize"]
    assert TABLE["imagenet"].resize(224) == 256 and TABLE["imagenet"].resize(32) == 37  # the runner's own, unchanged
    for p in TABLE.values():
        assert np.allclose(np.array(p.mean) / 255, IMAGENET_MEAN_01) and np.allclose(
            np.array(p.std) / 255, IMAGENET_STD_01
        )


def test_the_mindcv_row_is_mindcvs_own_eval_transform():
    from mindcv.data.constants import DEFAULT_CROP_PCT, IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
    from mindcv.data.transforms_factory import transforms_imagenet_eval

    row = TABLE["mindcv"]
    assert (
        row.crop_pct == DEFAULT_CROP_PCT
        and list(row.mean) == IMAGENET_DEFAULT_MEAN
        and list(row.std) == IMAGENET_DEFAULT_STD
    )
    # mindcv's Resize to floor(size / crop_pct): its transform list says the size.
    for size in (224, 64, 32):
        resize = transforms_imagenet_eval(image_resize=size)[1]
        assert resize.c_size == (row.resize(size),), size
        assert resize.interpolation.name == "BILINEAR"


@pytest.mark.skipif(not REF_PY.exists(), reason=".venv-ref (torch, torchvision, timm) is not on this machine")
def test_the_table_matches_timm_and_torchvision():
    code = """
import json, timm, torchvision.models as tvm
from timm.data import resolve_data_config
cfgs = {n: resolve_data_config({}, pretrained_cfg=timm.models.get_pretrained_cfg(n).to_dict())
        for n in ("resnet18.a1_in1k", "resnet50.a1_in1k")}
t = tvm.ResNet50_Weights.IMAGENET1K_V1.transforms()
rows = {n: [c["interpolation"], c["crop_pct"], list(c["mean"]), list(c["std"])] for n, c in cfgs.items()}
print(json.dumps({"timm": rows,
                  "tv": [t.resize_size[0], t.crop_size[0], t.interpolation.value, list(t.mean), list(t.std)]}))
"""
    out = json.loads(subprocess.run([str(REF_PY), "-c", code], capture_output=True, text=True, check=True).stdout)
    for interp, crop, mean, std in out["timm"].values():
        assert (interp, crop) == (TABLE["timm"].interpolation, TABLE["timm"].crop_pct)
        assert np.allclose(mean, IMAGENET_MEAN_01) and np.allclose(std, IMAGENET_STD_01)
    resize, crop, interp, mean, std = out["tv"]
    assert TABLE["torchvision"].resize(crop) == resize and interp == "bilinear"
    assert np.allclose(mean, IMAGENET_MEAN_01) and np.allclose(std, IMAGENET_STD_01)


@pytest.mark.parametrize(
    "setting, pretrained, origin, name, warns",
    [
        ("auto", "mindcv:resnet50", "mindcv", "mindcv", False),
        ("auto", "hf-hub:timm/resnet50.a1_in1k", "torch", "timm", False),
        ("auto", "/w/resnet50.safetensors", "torch", "torchvision", True),
        ("auto", "/w/zoo.ckpt", "modelzoo", "imagenet", False),
        ("auto", None, None, "imagenet", False),
        ("timm", "/w/resnet50.safetensors", "torch", "timm", False),
    ],
)
def test_auto_chooses_from_the_weights_source(setting, pretrained, origin, name, warns):
    p, warning = choose(setting, pretrained, origin)
    assert p.name == name
    assert (warning == TORCH_AMBIGUOUS) is warns


def _pixels(preset, path, size):
    from ascend_finetune.data.pipeline import make_dataset

    ds = make_dataset([(str(path), 0)], size, 1, 1, False, False, 0, drop_remainder=False, preprocess=preset)
    return next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))[0][0]


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = np.linspace(0, 255, 300)
    img = (np.add.outer(x, x)[:, :, None] / 2 + rng.integers(0, 60, (300, 300, 3))).clip(0, 255).astype(np.uint8)
    path = tmp_path_factory.mktemp("img") / "p.jpg"
    Image.fromarray(img).save(path, quality=95)
    return path


def test_the_pipeline_gives_mindcvs_own_pixels_for_the_mindcv_row(photo):
    import mindspore.dataset as ds
    from mindcv.data.transforms_factory import transforms_imagenet_eval

    size = 64
    ref = ds.NumpySlicesDataset({"image": [np.fromfile(photo, np.uint8)]}, shuffle=False)
    ref = ref.map(operations=transforms_imagenet_eval(image_resize=size), input_columns="image")
    want = next(ref.create_tuple_iterator(num_epochs=1, output_numpy=True))[0]
    got = _pixels(TABLE["mindcv"], photo, size)
    assert got.shape == want.shape == (3, size, size)
    assert np.array_equal(got, want)
    # The timm row computes other pixels (bicubic, a tighter resize): the check above has teeth.
    assert np.abs(_pixels(TABLE["timm"], photo, size) - want).max() > 0.1


def test_none_keeps_the_runners_own_pixels(photo):
    assert np.array_equal(_pixels(None, photo, 32), _pixels(TABLE["imagenet"], photo, 32))


def test_mean_and_std_are_the_pipelines():
    from ascend_finetune.data.pipeline import MEAN as PIPE_MEAN
    from ascend_finetune.data.pipeline import STD as PIPE_STD

    assert list(MEAN) == PIPE_MEAN and list(STD) == PIPE_STD
