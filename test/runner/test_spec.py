"""The shared spec examples (test/spec-examples) through the runner's validation.

test/unit/specExamples.test.ts runs the same files through the extension's (ajv, same schema): each
invalid example's sidecar `NAME.expected.json` holds the exact problems both must report, so the
Python and TypeScript validators cannot drift apart. YAML examples become JSON through the
extension's own converter (src/core/spec/file.ts), as they do before a launch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, runner, write_spec

from ascend_finetune.spec import DEFAULTS, SCHEMA, check

EXAMPLES = ROOT / "test" / "spec-examples"
FILES = sorted(p for p in EXAMPLES.iterdir() if p.name.endswith((".ascend.json", ".ascend.yaml", ".ascend.yml")))


def _expected(spec_file: Path) -> list[dict[str, str]]:
    sidecar = spec_file.parent / (spec_file.name.split(".ascend.")[0] + ".expected.json")
    if not sidecar.exists():
        return []
    return [{k: p[k] for k in ("path", "message", "fix")} for p in json.loads(sidecar.read_text())["problems"]]


@pytest.fixture(scope="module")
def yaml_as_json() -> dict[str, object]:
    yamls = [str(p) for p in FILES if p.suffix in (".yaml", ".yml")]
    r = subprocess.run(
        ["node", "--import", "tsx", str(EXAMPLES / "yaml-to-json.ts"), *yamls],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return json.loads(r.stdout)


def _raw(p: Path, yaml_as_json: dict[str, object]) -> object:
    return yaml_as_json[str(p)] if p.suffix in (".yaml", ".yml") else json.loads(p.read_text())


def test_there_are_valid_and_invalid_examples_of_both_kinds():
    assert {p.suffix for p in FILES} >= {".json", ".yaml"}
    assert any(not _expected(p) for p in FILES) and sum(bool(_expected(p)) for p in FILES) >= 5


@pytest.mark.parametrize("spec_file", FILES, ids=[p.name for p in FILES])
def test_example_gives_exactly_its_expected_problems(spec_file: Path, yaml_as_json):
    got = [p.as_dict() for p in check(_raw(spec_file, yaml_as_json), str(spec_file.parent))]
    assert sorted(got, key=json.dumps) == sorted(_expected(spec_file), key=json.dumps)


@pytest.mark.parametrize("spec_file", [p for p in FILES if p.suffix == ".json"], ids=lambda p: p.name)
def test_the_validate_command_reports_the_same(spec_file: Path):
    code, out = runner("validate", str(spec_file))
    want = _expected(spec_file)
    assert code == (2 if want else 0)
    assert sorted(out["problems"], key=json.dumps) == sorted(want, key=json.dumps)


def test_defaults_come_from_the_schema_and_are_the_recipes():
    assert DEFAULTS["model"] == {
        "backbone": "resnet50",
        "pretrained": None,
        "preprocess": "auto",
        "freeze": "backbone",
        "num_classes": None,
        "head_norm": "auto",
        "unfreeze": [],
    }
    assert DEFAULTS["amp"]["level"] == "O2" and DEFAULTS["amp"]["loss_scale"] == "dynamic"
    assert (DEFAULTS["train"]["optimizer"], DEFAULTS["train"]["lr"], DEFAULTS["train"]["momentum"]) == (
        "momentum",
        0.01,
        0.9,
    )
    assert DEFAULTS["checkpoint"]["every_steps"] == 1000 and DEFAULTS["checkpoint"]["keep_max"] == 5
    # Every field documents itself (hover text in the editor).
    for sec, s in SCHEMA["properties"].items():
        for k, f in s.get("properties", {}).items():
            assert len(f.get("description", "")) > 20, f"{sec}.{k}"


def test_the_schema_knows_every_backbone_and_stage_the_model_builds():
    from ascend_finetune.models.backbones import BACKBONES, STAGES, all_names, freeze_values

    model = SCHEMA["properties"]["model"]["properties"]
    assert model["backbone"]["enum"] == all_names() and all_names()[:4] == list(BACKBONES)
    # every backbone's stages (mindcv's after the ResNets'); spec.py checks them per backbone
    assert model["freeze"]["enum"][:6] == ["none", "backbone"] + [f"up_to:{s}" for s in STAGES]
    assert set(model["freeze"]["enum"]) == {v for n in all_names() for v in freeze_values(n)}
    from ascend_finetune.models.preprocess import PRESETS

    preset_name, fields = model["preprocess"]["anyOf"]  # a preset's name, or an object of fields
    assert preset_name["enum"] == fields["properties"]["preset"]["enum"] == list(PRESETS)
    assert len(model["preprocess"]["x-enumDescriptions"]) == len(PRESETS)
    from ascend_finetune.models.preprocess import CROP_MODES, INTERPOLATIONS, OVERRIDABLE

    assert set(fields["properties"]) == {"preset", *OVERRIDABLE}
    assert fields["properties"]["interpolation"]["enum"] == list(INTERPOLATIONS)
    assert fields["properties"]["crop_mode"]["enum"] == list(CROP_MODES)
    from ascend_finetune.models.net import HEAD_NORMS

    assert model["head_norm"]["enum"] == list(HEAD_NORMS) and model["head_norm"]["default"] == "auto"
    for field in (model["backbone"], model["freeze"], model["head_norm"]):
        assert len(field["x-enumDescriptions"]) == len(field["enum"])


def test_nan_and_infinity_in_a_spec_are_refused(tmp_path, data_a):
    p = tmp_path / "nan.json"
    p.write_text(f'{{"data": {{"train": "{data_a}", "val_split": NaN}}}}')
    code, out = runner("validate", str(p))
    assert code == 2 and "NaN is not valid JSON" in out["problems"][0]["message"]
    from ascend_finetune.spec import check

    problems = check({"data": {"train": str(data_a)}, "train": {"lr": float("inf")}})
    assert [p.path for p in problems] == ["train.lr"]


def _validate_file(path):
    r = subprocess.run(
        [sys.executable, "-m", "ascend_finetune", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "runner")),
    )
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stdout
    return r.returncode, json.loads(lines[0])


@pytest.mark.parametrize(
    "content, message",
    [
        (
            b"\x00\x01\x02\xff\xfe binary \x89PNG\r\n\x1a\n",
            "not a UTF-8 text file: invalid byte 0xff at offset 3 (line 1)",
        ),
        ('{"data": {"train": "d"}}'.encode("utf-16"), "UTF-16"),
        (
            b'{"name": "caf\xe9", "data": {"train": "d"}}',
            "not a UTF-8 text file: invalid byte 0xe9 at offset 13 (line 1)",
        ),
        (b'{"name": "x\x00", "data": {"train": "d"}}', "not a text file: control character U+0000 at line 1"),
        (b"[" * 100_000 + b"]" * 100_000, "nested more than 32 levels deep at line 1 column 33"),
        (b'{"data": {"train": "d", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}}", "nested more than 32 levels"),
    ],
    ids=["binary", "utf16-bom", "latin1-byte", "nul", "deep-100k", "deep-in-a-field"],
)
def test_a_spec_file_that_is_not_utf8_json_text_is_a_problem_not_a_traceback(tmp_path, content, message):
    p = tmp_path / "s.ascend.json"
    p.write_bytes(content)
    code, out = _validate_file(p)
    assert code == 2 and out["ok"] is False
    [problem] = out["problems"]
    assert set(problem) == {"path", "message", "fix"} and problem["path"] == ""
    assert message in problem["message"], problem
    assert problem["fix"]


def test_a_key_written_twice_is_refused_naming_the_key_and_its_path(tmp_path, data_a):
    p = tmp_path / "dup.ascend.json"
    p.write_text(
        '{"name": "a", "data": {"train": "DATA", "batch_size": 8, "batch_size": 64},\n'
        ' "train": {"lr": 0.1, "epochs": 2, "lr": 100}, "name": "b"}'.replace("DATA", str(data_a))
    )
    code, out = _validate_file(p)
    assert code == 2 and out["ok"] is False
    got = {pr["path"]: pr for pr in out["problems"]}
    assert set(got) == {"name", "data.batch_size", "train.lr"}
    assert got["data.batch_size"]["message"] == 'duplicate key "batch_size" in data: it is written more than once'
    assert got["data.batch_size"]["fix"] == 'keep one "batch_size" in data and delete the others'
    assert got["name"]["message"] == 'duplicate key "name" in the top level: it is written more than once'
    # train refuses it the same way, before anything trains
    code, doc = runner("train", str(p), "--run-dir", str(tmp_path / "run"))
    assert code == 2 and doc["error"]["kind"] == "bad_spec"
    assert {pr["path"] for pr in doc["error"]["problems"]} == {"name", "data.batch_size", "train.lr"}
    # a key written once in each of two objects is no duplicate
    p.write_text('{"data": {"train": "DATA", "val_split": 0.2}, "train": {"seed": 3}}'.replace("DATA", str(data_a)))
    assert _validate_file(p) == (0, {"ok": True, "problems": []})


@pytest.mark.parametrize("layout", ["images-only", "empty"])
def test_a_data_folder_without_class_folders_is_a_problem_with_the_fix(tmp_path, layout):
    flat = tmp_path / "flat"
    flat.mkdir()
    if layout == "images-only":
        from PIL import Image

        for i in range(4):
            Image.new("RGB", (8, 8), (i * 40, 0, 0)).save(flat / f"{i}.png")
        (flat / ".hidden").mkdir()  # dot-folders are not classes, as in the data scan
    p = write_spec(tmp_path / "s.ascend.json", {"data": {"train": "flat"}})
    code, out = _validate_file(p)
    assert code == 2
    [problem] = out["problems"]
    assert problem["path"] == "data.train"
    held = "it holds 4 image file(s) directly" if layout == "images-only" else "it is empty"
    assert problem["message"] == f"no class folders in flat ({held}): an ImageFolder root has one sub-folder per class"
    assert problem["fix"] == "put the images in one folder per class under flat (e.g. flat/cat/, flat/dog/)"
    # a data.val folder gets the same check; a root with class folders passes
    (tmp_path / "ok" / "a").mkdir(parents=True)
    (tmp_path / "ok" / "b").mkdir()
    p = write_spec(tmp_path / "s.ascend.json", {"data": {"train": "ok", "val": "flat"}})
    code, out = _validate_file(p)
    assert code == 2 and [pr["path"] for pr in out["problems"]] == ["data.val"]


def test_an_unfreeze_schedule_out_of_order_is_a_problem_of_validate_and_train(tmp_path, data_a):
    """The order the run needs (train/unfreeze.py) is the spec check's: validate and the editor say it,
    and train refuses the spec before it starts, naming the step's field and the values that fit."""
    s = {
        "data": {"train": str(data_a)},
        "model": {
            "backbone": "resnet18",
            "freeze": "up_to:layer2",
            "unfreeze": [{"epoch": 2, "freeze": "up_to:layer4"}],
        },
        "device": {"target": "CPU"},
    }
    code, out = _validate_file(write_spec(tmp_path / "s.ascend.json", s))
    assert code == 2
    assert out["problems"] == [
        {
            "path": "model.unfreeze[0].freeze",
            "message": '"up_to:layer4" freezes more of resnet18 than model.freeze "up_to:layer2": each step of '
            "model.unfreeze freezes no more than the rule before it",
            "fix": 'set model.unfreeze[0].freeze to a rule that freezes no more than "up_to:layer2": '
            "none, up_to:layer1, up_to:layer2",
        }
    ]
    code, err = runner("train", str(tmp_path / "s.ascend.json"), "--run-dir", str(tmp_path / "run"))
    assert code == 2 and err["error"]["kind"] == "bad_spec", err
    assert not (tmp_path / "run" / "classes.json").exists(), "refused before the data scan, not after launch"
    # Steps in the same epoch, and a later step held to the last good one (not to model.freeze).
    steps = [
        {"epoch": 3, "freeze": "up_to:layer1"},
        {"epoch": 3, "freeze": "none"},
        {"epoch": 5, "freeze": "up_to:layer2"},
    ]
    problems = check({**s, "model": {**s["model"], "unfreeze": steps}}, check_files=False)
    assert [(p.path, p.message.split(": ")[0]) for p in problems] == [
        ("model.unfreeze[1].epoch", "epoch 3 does not come after epoch 3 of model.unfreeze[0]"),
        (
            "model.unfreeze[2].freeze",
            '"up_to:layer2" freezes more of resnet18 than model.unfreeze[0].freeze "up_to:layer1"',
        ),
    ]
    # In order: none. A mindcv model's `backbone` freezes its neck too, so after its last stage it is more;
    # a ResNet's freezes what up_to:layer4 does.
    ok = [{"epoch": 2, "freeze": "up_to:layer1"}, {"epoch": 4, "freeze": "none"}]
    assert check({**s, "model": {**s["model"], "unfreeze": ok}}, check_files=False) == []
    after_last = {"freeze": "up_to:features.16", "unfreeze": [{"epoch": 2, "freeze": "backbone"}]}
    mindcv = {**s, "model": {"backbone": "mobilenet_v3_small_100", **after_last}}
    assert [p.path for p in check(mindcv, check_files=False)] == ["model.unfreeze[0].freeze"]
    resnet = {**s, "model": {"backbone": "resnet50", "freeze": "up_to:layer4", "unfreeze": after_last["unfreeze"]}}
    assert check(resnet, check_files=False) == []
    # A stage the backbone lacks is that problem alone, not an order problem as well.
    lacks = {**s, "model": {**s["model"], "unfreeze": [{"epoch": 2, "freeze": "up_to:blocks.2"}]}}
    assert [p.path for p in check(lacks, check_files=False)] == ["model.unfreeze[0].freeze"]
    assert "has no stage" in check(lacks, check_files=False)[0].message


def test_a_resumed_run_does_not_need_model_pretrained_on_disk(tmp_path, data_a):
    """--resume loads every weight from the resumed checkpoint: a pruned or cleared model.pretrained file
    is no problem then, and still one for a new run. A named source keeps its catalog check."""
    s = {"data": {"train": str(data_a)}, "model": {"backbone": "resnet18", "pretrained": str(tmp_path / "gone.ckpt")}}
    assert [p.path for p in check(s)] == ["model.pretrained"]
    assert check(s, resume=True) == []
    named = {**s, "model": {"backbone": "resnet18", "pretrained": "mindcv:resnet50"}}
    assert [p.path for p in check(named, resume=True)] == ["model.pretrained"]
