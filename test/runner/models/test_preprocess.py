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

from ascend_finetune.models.backbones import fixed_image_size
from ascend_finetune.models.preprocess import (
    MEAN,
    STD,
    TABLE,
    TORCH_AMBIGUOUS,
    BadValues,
    Preprocess,
    choose,
    from_record,
    from_spec,
    hub_values,
    resolve,
)

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
    p, warnings = choose(setting, pretrained, origin)
    assert p.name == name
    assert (warnings == [("preprocess_assumed", TORCH_AMBIGUOUS, {})]) is warns


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


def test_each_mindcv_weight_carries_its_models_own_cfg():
    """mindcv 0.3.0's default_cfgs name url, classes, first conv, classifier, and for a few models an
    input size or crop of their own: every catalog entry with a backbone is that model's cfg URL, and
    what its cfg sets beside transforms_imagenet_eval's defaults is the entry's `preprocess`, which
    `auto` applies (PoolFormer crops 0.9; EdgeNeXt was trained at 256 px)."""
    import importlib

    from mindcv.models.registry import _model_to_module

    from ascend_finetune.models.catalog import MINDCV, MINDCV_BASE

    seen = 0
    for name, entry in MINDCV.items():
        if entry.backbone is None:
            continue
        cfg = importlib.import_module(f"mindcv.models.{_model_to_module[name]}").default_cfgs[name]
        assert cfg["url"] == f"{MINDCV_BASE}/{entry.path}", name
        keys = {"url", "num_classes", "first_conv", "classifier", "input_size", "crop_pct", "interpolation"}
        # fixed_input_size (PiT's): the model takes one size, which backbones.json's image_size holds too
        assert set(cfg) - {"mean", "std", "pool_size", "fixed_input_size"} <= keys, (name, cfg)
        assert not cfg.get("fixed_input_size") or fixed_image_size(entry.backbone) == cfg["input_size"][1], name
        # A cfg's mean and std (CoaT's) are ImageNet's, the mindcv preset's in 0..1 units.
        for k in ("mean", "std"):
            if k in cfg:
                assert [round(v * 255, 3) for v in cfg[k]] == [round(v, 3) for v in getattr(TABLE["mindcv"], k)], name
        own = {}
        if cfg.get("crop_pct", TABLE["mindcv"].crop_pct) != TABLE["mindcv"].crop_pct:
            own["crop_pct"] = cfg["crop_pct"]
        # The cfg's size, or the only one the model takes (SwinV2's 256, which its cfg omits).
        size = cfg["input_size"][1] if "input_size" in cfg else (fixed_image_size(entry.backbone) or 224)
        if size != 224:
            own["input_size"] = size
        if cfg.get("interpolation", "bilinear") != "bilinear":
            own["interpolation"] = cfg["interpolation"]
        assert dict(entry.preprocess) == own, name
        p, warnings = choose("auto", f"mindcv:{name}", "mindcv")
        assert warnings == [] and p.source == "mindcv_cfg", name
        assert p.interpolation == own.get("interpolation", "bilinear"), name
        assert (p.crop_pct, p.input_size) == (own.get("crop_pct", 0.875), own.get("input_size")), name
        seen += 1
    assert seen >= 30
    assert TABLE["mindcv"].source == "mindcv_cfg"


def test_a_mindcv_weight_trained_at_another_size_says_so():
    warned: list[dict] = []
    p = resolve("auto", "mindcv:edgenext_small", "mindcv", lambda **w: warned.append(w), {}, image_size=224)
    assert p.input_size == 256 and [w["code"] for w in warned] == ["preprocess_input_size"]
    assert resolve("auto", "mindcv:poolformer_s12", "mindcv", lambda **w: pytest.fail(str(w)), {}).crop_pct == 0.9


VIT_CFG = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9, "interpolation": "bicubic"}


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"pretrained_cfg": {**VIT_CFG, "mean": [0.5, 0.5]}}, "mean must be 3 numbers"),
        ({"pretrained_cfg": {**VIT_CFG, "mean": [0.5, 0.5, 255]}}, "mean must be 3 numbers"),
        ({"pretrained_cfg": {**VIT_CFG, "std": [0.5, 0.5, 0]}}, "std must be 3 numbers > 0"),
        ({"pretrained_cfg": {**VIT_CFG, "std": [0.5, True, 0.5]}}, "std must be 3 numbers"),
        ({"pretrained_cfg": {**VIT_CFG, "crop_pct": 0.01}}, "crop_pct must be a number >= 0.25"),
        ({"pretrained_cfg": {**VIT_CFG, "crop_pct": "0.9"}}, "crop_pct must be a number"),
        ({"pretrained_cfg": {**VIT_CFG, "interpolation": "lanczos"}}, "interpolation"),
        ({"pretrained_cfg": {**VIT_CFG, "crop_mode": "border"}}, "crop_mode"),
        ({"pretrained_cfg": {**VIT_CFG, "input_size": [3, 224, 100000]}}, "input_size"),
        ({"pretrained_cfg": {"mean": [0.5, 0.5, 0.5]}}, "has no std, crop_pct, interpolation"),
        ({"pretrained_cfg": [1, 2]}, "no pretrained_cfg object"),
        ([1, 2], "no pretrained_cfg object"),
    ],
)
def test_a_hostile_hub_config_is_refused_saying_what_is_wrong(doc, words):
    with pytest.raises(BadValues, match=words):
        hub_values(json.dumps(doc).encode())


@pytest.mark.parametrize(
    "data, words",
    [
        (b'{"pretrained_cfg": {"mean": [NaN, 0.5, 0.5]}}', "not JSON"),
        (b"[" * 100000 + b"]" * 100000, "larger than 64 KB"),
        (b"[" * 30000 + b"]" * 30000, "not JSON"),  # deep nesting under the size bound: no RecursionError
        (b"\xff\xfe{}", "not JSON"),
        (b'{"pretrained_cfg": {"mean": [0.5, 0.5, 0.5], ' + b" " * 70000 + b"}}", "larger than"),
    ],
)
def test_an_unreadable_hub_config_is_refused(data, words):
    with pytest.raises(BadValues, match=words):
        hub_values(data)


def test_a_hub_config_gives_its_values_and_the_spec_overrides_single_fields():
    class Hub:
        url, problem = "http://h/timm/vit_x.augreg/resolve/main/config.json", None
        data = json.dumps({"architecture": "vit", "pretrained_cfg": {**VIT_CFG, "input_size": [3, 224, 224]}}).encode()

    p, warnings = choose("auto", "hf-hub:timm/vit_x.augreg", "torch", Hub())
    assert warnings == []
    assert (p.mean, p.std, p.crop_pct, p.interpolation) == ((127.5,) * 3, (127.5,) * 3, 0.9, "bicubic")
    assert (p.source, p.config, p.input_size, p.overridden, p.rounding) == ("hub_config", Hub.url, 224, (), "floor")
    assert p.resize(224) == 248  # floor(224 / 0.9), timm's
    # The spec's fields win, the others stay the config's; the record says which.
    q, _ = choose({"crop_pct": 0.8, "interpolation": "bilinear"}, "hf-hub:timm/vit_x.augreg", "torch", Hub())
    assert (q.crop_pct, q.interpolation, q.mean, q.source) == (0.8, "bilinear", (127.5,) * 3, "hub_config")
    assert q.overridden == ("crop_pct", "interpolation")
    # A named preset ignores the weights' config; the object's fields still apply to it.
    r, _ = choose({"preset": "imagenet", "mean": [0.5, 0.5, 0.5]}, "hf-hub:timm/vit_x.augreg", "torch", Hub())
    assert (r.name, r.mean, r.std, r.crop_pct, r.rounding) == ("imagenet", (127.5,) * 3, STD, 0.875, "round256")
    s, _ = choose({"preset": "imagenet", "crop_pct": 0.9}, None, None)
    assert s.rounding == "floor" and s.resize(224) == 248  # a crop of its own resizes as timm does


def test_records_are_read_back_with_their_values_and_old_ones_as_their_preset():
    p = Preprocess("timm", "bicubic", 0.9, "floor", (127.5,) * 3, (127.5,) * 3, "w", "center", 240, "hub_config", "u")
    assert from_record(json.loads(json.dumps(p.describe()))) == p
    # Written before the values were kept: the preset's row (what those runs used).
    old = {"name": "mindcv", "interpolation": "bilinear", "crop_pct": 0.875, "rounding": "floor"}
    assert from_record({**old, "mean": list(MEAN), "std": list(STD), "why": "mindcv: weights"}) == Preprocess(
        "mindcv", "bilinear", 0.875, "floor", why="mindcv: weights", source="mindcv_cfg"
    )
    assert from_record({"name": "timm"}) == TABLE["timm"]
    # A hand-edited record with values out of range: the preset's row, not the values.
    assert from_record({"name": "timm", "mean": [1e9, 0, 0], "std": [1, 1, 1]}) == TABLE["timm"]
    assert from_record({"name": "lanczos"}) is None and from_record("timm") is None
    # Without a record: the spec's preset and fields; `auto` alone says nothing.
    assert from_spec("auto") is None and from_spec("timm") == TABLE["timm"]
    assert from_spec({"preset": "timm", "std": [0.5, 0.5, 0.5]}).std == (127.5,) * 3
    assert from_spec({"preset": "timm", "std": [0, 0, 0]}) == TABLE["timm"]  # an edited spec.json


def test_the_pipeline_normalises_with_the_chosen_mean_and_std(tmp_path):
    """Host normalisation (eval, predict, the feature cache) and the graph's DeviceNormalize (training
    and the run's own eval) both use the weights' mean and std, and agree bit for bit."""
    import mindspore as ms

    from ascend_finetune.data.pipeline import device_normalize, make_dataset

    path = tmp_path / "flat.png"
    Image.fromarray(np.full((40, 40, 3), (10, 128, 250), np.uint8)).save(path)
    half = Preprocess("timm", "bicubic", 0.9, "floor", (127.5,) * 3, (127.5,) * 3)
    x = _pixels(half, path, 32)
    assert np.allclose(x[:, 0, 0], [(10 - 127.5) / 127.5, 0.5 / 127.5, (250 - 127.5) / 127.5], atol=1e-6)
    ds = make_dataset([(str(path), 0)], 32, 1, 1, False, False, 0, drop_remainder=False, preprocess=half)
    raw = make_dataset(
        [(str(path), 0)], 32, 1, 1, False, False, 0, drop_remainder=False, on_device=True, preprocess=half
    )
    u8 = next(raw.create_tuple_iterator(num_epochs=1, output_numpy=True))[0]
    on_device = device_normalize(half.mean, half.std)(ms.Tensor(u8)).asnumpy()
    assert np.array_equal(on_device, next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))[0])
    # ImageNet's stays the default.
    assert not np.allclose(_pixels(TABLE["timm"], path, 32), x)


def test_resume_and_fine_tune_from_a_runners_checkpoint_reuse_its_recorded_values(tmp_path):
    from ascend_finetune.models.preprocess import resolve

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    ckpt = run / "checkpoints" / "e1.ckpt"
    ckpt.write_bytes(b"")
    rec = Preprocess("timm", "bicubic", 0.9, "floor", (127.5,) * 3, (127.5,) * 3, "w", source="hub_config")
    (run / "checkpoints.json").write_text(json.dumps([{"file": "checkpoints/e1.ckpt", "preprocess": rec.describe()}]))

    def never(**w):
        raise AssertionError(w)

    # Resume: the run goes on with what it started with, whatever the spec says now.
    resumed = resolve("imagenet", None, None, never, resume=str(ckpt))
    assert (resumed.mean, resumed.crop_pct, resumed.source) == ((127.5,) * 3, 0.9, "hub_config")
    assert resumed.why == "recorded with the resumed checkpoint e1.ckpt"
    # Fine-tune from (auto, the runner's own checkpoint as model.pretrained), the spec's fields on top.
    tuned = resolve({"crop_pct": 0.8}, str(ckpt), "runner", never)
    assert (tuned.mean, tuned.crop_pct, tuned.overridden) == ((127.5,) * 3, 0.8, ("crop_pct",))
    # A named preset is the preset.
    assert resolve("mindcv", str(ckpt), "runner", never).mean == MEAN


def test_a_runners_checkpoint_away_from_its_run_says_its_preprocessing_is_unknown(tmp_path):
    """Downloaded into the workspace or copied to a target's weights/local/<sha>/, a runner checkpoint
    has no checkpoints.json beside it: `auto` uses imagenet's values and says why and what to do."""
    from ascend_finetune.models.preprocess import resolve

    loose = tmp_path / "weights" / "local" / "0123abcd" / "flowers-e3-s120.ckpt"
    loose.parent.mkdir(parents=True)
    loose.write_bytes(b"")
    warned: list[dict] = []
    p = resolve("auto", str(loose), "runner", lambda **w: warned.append(w))
    assert p.name == "imagenet" and p.mean == MEAN
    assert warned == [
        {
            "code": "preprocess_not_recorded",
            "message": "flowers-e3-s120.ckpt is a checkpoint of this runner, but the checkpoints.json of its run "
            "folder is not beside it, so the preprocessing it was trained with is unknown and imagenet's is used: "
            "copy that checkpoints.json along (FOLDER/checkpoints.json, with the file as "
            "FOLDER/checkpoints/flowers-e3-s120.ckpt), or set model.preprocess to the values its run reported in "
            "run_started.preprocess",
            "details": {"preprocess": "imagenet", "file": "flowers-e3-s120.ckpt"},
        }
    ]
    # Put back in its run folder's layout with that checkpoints.json: its record, no warning.
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    loose.rename(run / "checkpoints" / loose.name)
    rec = Preprocess("timm", "bicubic", 0.9, "floor")
    (run / "checkpoints.json").write_text(
        json.dumps([{"file": f"checkpoints/{loose.name}", "preprocess": rec.describe()}])
    )
    warned.clear()
    assert (
        resolve("auto", str(run / "checkpoints" / loose.name), "runner", lambda **w: warned.append(w)).crop_pct == 0.9
    )
    assert warned == []
    # Set by hand: a preset, or every value (the fix), says nothing; another source's weights neither.
    values = {"mean": [0.5] * 3, "std": [0.5] * 3, "crop_pct": 0.9, "crop_mode": "center", "interpolation": "bicubic"}
    for setting, origin in (("imagenet", "runner"), (values, "runner"), ("auto", "modelzoo")):
        resolve(setting, str(tmp_path / "elsewhere.ckpt"), origin, lambda **w: warned.append(w))
    assert warned == []
    # Some values by hand: the rest is still imagenet's guess.
    resolve({"crop_pct": 0.9}, str(tmp_path / "elsewhere.ckpt"), "runner", lambda **w: warned.append(w))
    assert [w["code"] for w in warned] == ["preprocess_not_recorded"]
