"""backbones.json and the spec: mindcv names and their stages, checked per backbone without MindSpore."""

from __future__ import annotations

import pytest

from ascend_finetune.models import backbones as bb
from ascend_finetune.models.catalog import MINDCV, parse
from ascend_finetune.models.preprocess import TABLE
from ascend_finetune.spec import SCHEMA, check


def _spec(tmp_path, **model):
    (tmp_path / "d" / "a").mkdir(parents=True, exist_ok=True)
    return {"data": {"train": str(tmp_path / "d")}, "model": model}


def test_every_offered_model_has_stages_and_mindcv_s_default_preprocessing():
    models = bb.mindcv_models()
    assert models
    for name, e in models.items():
        assert len(e["stages"]) >= 3 and e["num_features"] > 0, name
        paths = [p for s in e["stages"] for p in s["paths"]] + e["stem"]
        assert len(paths) == len(set(paths)), f"{name}: a path in two parts"
        assert bb.freeze_values(name)[2:] == [f"up_to:{s['name']}" for s in e["stages"]]
        # mindcv's weights for a backbone are read with the `mindcv` preset (models/preprocess.py) and
        # what the catalog says the model's cfg sets of its own (PoolFormer's crop 0.9): its cfg's transform.
        if name not in MINDCV or MINDCV[name].backbone != name:
            continue
        pre, table, own = e["preprocess"], TABLE["mindcv"], dict(MINDCV[name].preprocess)
        want = (own.get("crop_pct", table.crop_pct), own.get("interpolation", table.interpolation))
        assert (pre["crop_pct"], pre["interpolation"]) == want, name
        assert pre["input_size"] == own.get("input_size", 224), name
        assert pre["mean"] == [round(v, 4) for v in table.mean] and pre["std"] == [round(v, 4) for v in table.std]


def test_the_schema_offers_the_surveyed_models_and_every_stage():
    model = SCHEMA["properties"]["model"]["properties"]
    assert model["backbone"]["enum"] == bb.all_names()
    stages = {v for n in bb.all_names() for v in bb.freeze_values(n)}
    assert set(model["freeze"]["enum"]) == stages
    assert model["unfreeze"]["items"]["properties"]["freeze"]["enum"] == model["freeze"]["enum"]
    failed = [f for f, r in bb.catalog()["families"].items() if r["status"] != "ok"]
    assert not {bb.family(n) for n in bb.mindcv_models()} & set(failed)


def test_a_stage_of_another_backbone_is_refused_listing_the_valid_ones(tmp_path):
    problems = check(_spec(tmp_path, backbone="convnext_tiny", freeze="up_to:layer3"), str(tmp_path))
    assert [p.path for p in problems] == ["model.freeze"]
    assert "convnext_tiny has no stage 'layer3'" in problems[0].message
    assert "up_to:feature.5" in problems[0].fix and "up_to:layer3" not in problems[0].fix
    ok = check(_spec(tmp_path, backbone="convnext_tiny", freeze="up_to:feature.5"), str(tmp_path))
    assert ok == []
    steps = [{"epoch": 2, "freeze": "up_to:blocks.5"}]
    problems = check(_spec(tmp_path, backbone="resnet18", freeze="backbone", unfreeze=steps), str(tmp_path))
    assert [p.path for p in problems] == ["model.unfreeze[0].freeze"]


def test_frozen_parts_count_the_stem_stages_and_neck():
    assert bb.frozen_parts("backbone", "resnet50") == 5 == bb.frozen_parts("up_to:layer4", "resnet50")
    n = len(bb.stages_of("convnext_tiny"))
    assert bb.frozen_parts("backbone", "convnext_tiny") == n + 2  # stem, stages, neck (the final norm)
    assert bb.frozen_parts("up_to:feature.1", "convnext_tiny") == 2
    assert bb.frozen_param("convnext_tiny", "norm.gamma", "backbone")
    assert not bb.frozen_param("convnext_tiny", "norm.gamma", "up_to:feature.7")
    assert bb.frozen_param("vit_b_32_224", "cls_token", "up_to:blocks.2")
    with pytest.raises(ValueError, match="its stages: layer1"):
        bb.frozen_parts("up_to:feature.1", "resnet18")


@pytest.mark.parametrize("name", ["mobilenet_v3_small_100", "efficientnet_b0", "convnext_tiny", "vit_b_32_224"])
def test_mindcv_weights_of_offered_families_are_named_for_their_backbone(name, tmp_path):
    assert parse(f"mindcv:{name}").backbone == name
    assert check(_spec(tmp_path, backbone=name, pretrained=f"mindcv:{name}"), str(tmp_path)) == []
    problems = check(_spec(tmp_path, backbone="resnet50", pretrained=f"mindcv:{name}"), str(tmp_path))
    assert problems and f'set model.backbone to "{name}"' in problems[0].fix
