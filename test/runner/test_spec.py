"""The shared spec examples (test/spec-examples) through the runner's validation.

test/unit/specExamples.test.ts runs the same files through the extension's (ajv, same schema): each
invalid example's sidecar `NAME.expected.json` holds the exact problems both must report, so the
Python and TypeScript validators cannot drift apart. YAML examples become JSON through the
extension's own converter (src/core/spec/file.ts), as they do before a launch.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, runner

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
    assert DEFAULTS["model"] == {"backbone": "resnet50", "pretrained": None, "freeze": "backbone", "num_classes": None}
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
    from ascend_finetune.models.backbones import BACKBONES, STAGES

    model = SCHEMA["properties"]["model"]["properties"]
    assert model["backbone"]["enum"] == list(BACKBONES)
    assert model["freeze"]["enum"] == ["none", "backbone"] + [f"up_to:{s}" for s in STAGES]
    for field in (model["backbone"], model["freeze"]):
        assert len(field["x-enumDescriptions"]) == len(field["enum"])


def test_nan_and_infinity_in_a_spec_are_refused(tmp_path, data_a):
    p = tmp_path / "nan.json"
    p.write_text(f'{{"data": {{"train": "{data_a}", "val_split": NaN}}}}')
    code, out = runner("validate", str(p))
    assert code == 2 and "NaN is not valid JSON" in out["problems"][0]["message"]
    from ascend_finetune.spec import check

    problems = check({"data": {"train": str(data_a)}, "train": {"lr": float("inf")}})
    assert [p.path for p in problems] == ["train.lr"]
