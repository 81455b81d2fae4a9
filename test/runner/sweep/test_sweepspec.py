"""The sweep spec's validation: every problem names its field and the fix; the space is checked
against the run spec's own fields and rules; YAML reads as the editor reads it."""

from __future__ import annotations

import json
import os

import pytest
from conftest import runner

from ascend_finetune import spec as specmod
from ascend_finetune.sweep import sweepspec
from ascend_finetune.sweep.specfile import load
from ascend_finetune.sweep.sweepspec import SCHEMA, check_sweep, trial_spec


@pytest.fixture()
def base(data_a):
    return {"name": "b", "data": {"train": str(data_a), "image_size": 32}, "model": {"backbone": "resnet18"}}


def sweep(base, **over):
    s = {"base": base, "space": {"train.lr": {"low": 0.001, "high": 0.1, "log": True}}, "trials": 4}
    s.update(over)
    return s


def problems(raw, base_dir="/"):
    got, probs = check_sweep(raw, base_dir)
    assert got is None, "expected problems"
    return {p.path: p for p in probs}


def test_a_valid_sweep_resolves_with_defaults_and_a_resolved_base(base):
    got, probs = check_sweep(sweep(base), "/")
    assert probs == []
    assert got["sampler"] == "tpe" and got["pruner"]["kind"] == "median" and got["devices"] == "all free"
    assert got["objective"] == {"metric": "best_val_acc", "direction": "maximize", "field": "val_acc"}
    assert got["base"]["train"]["epochs"] == 10  # the run spec's defaults are filled in
    assert got["space"]["train.lr"] == {"low": 0.001, "high": 0.1, "log": True, "int": False}


def test_a_space_key_that_is_not_a_run_spec_field_is_refused_with_the_closest_field(base):
    p = problems(sweep(base, space={"train.lrate": {"choices": [0.1, 0.01]}}))["space.train.lrate"]
    assert "not a run-spec field" in p.message and '"train.lr"' in p.fix


def test_fields_the_sweep_sets_itself_are_refused_in_the_space(base):
    p = problems(sweep(base, space={"device.ids": {"choices": [[0], [1]]}}))["space.device.ids"]
    assert "set by the sweep" in p.message and "devices" in p.fix


def test_the_grid_sampler_refuses_a_range_and_says_to_use_choices(base):
    raw = sweep(
        base, sampler="grid", space={"train.lr": {"low": 0.001, "high": 0.1}, "model.freeze": {"choices": ["none"]}}
    )
    p = problems(raw)["space.train.lr"]
    assert "grid" in p.message and "choices" in p.fix


def test_the_grid_sampler_refuses_more_trials_than_combinations(base):
    raw = sweep(base, sampler="grid", trials=5, space={"model.freeze": {"choices": ["none", "backbone"]}})
    p = problems(raw)["trials"]
    assert "2 combinations" in p.message and "2" in p.fix


def test_each_value_is_checked_by_the_run_spec_validator(base):
    probs = problems(
        sweep(
            base,
            space={
                "model.freeze": {"choices": ["backbone", "everything"]},
                "train.lr": {"low": 0, "high": 0.1},
                "train.epochs": {"low": 1.5, "high": 4},
            },
        )
    )
    assert "model.freeze" in probs["space.model.freeze.choices[1]"].message
    assert "one of" in probs["space.model.freeze.choices[1]"].fix
    assert "must be >" in probs["space.train.lr.low"].message  # lr's exclusiveMinimum 0
    assert "integer" in probs["space.train.epochs.low"].message  # an integer field takes integer bounds


def test_a_range_over_a_field_that_is_not_a_number_is_refused(base):
    p = problems(sweep(base, space={"model.backbone": {"low": 1, "high": 2}}))["space.model.backbone"]
    assert "not a number field" in p.message and "choices" in p.fix


def test_log_ranges_need_a_positive_low_and_no_step(base):
    probs = problems(sweep(base, space={"train.weight_decay": {"low": 0.0, "high": 0.1, "log": True, "step": 0.01}}))
    assert "low > 0" in probs["space.train.weight_decay.low"].message
    assert "step" in probs["space.train.weight_decay"].message


def test_nested_fields_can_be_swept(base):
    got, probs = check_sweep(sweep(base, space={"train.early_stopping.patience": {"low": 1, "high": 3}}), "/")
    assert probs == [] and got["space"]["train.early_stopping.patience"]["int"] is True


def test_a_direction_against_the_metric_and_unknown_fields_are_named(base):
    probs = problems(
        sweep(
            base,
            objective={"metric": "best_val_loss", "direction": "maximize"},
            sampeler="tpe",
            pruner={"kind": "medain"},
        )
    )
    assert "minimize" in probs["objective.direction"].fix
    assert '"sampler"' in probs["sampeler"].fix
    assert '"median"' in probs["pruner.kind"].fix


def test_problems_of_the_base_spec_carry_the_base_prefix(base, tmp_path):
    base["data"]["train"] = str(tmp_path / "missing")
    base["data"]["val_split"] = 0
    probs = problems(sweep(base))
    assert "base.data.train" in probs and "not found" in probs["base.data.train"].message


def test_a_base_without_validation_images_is_refused(base):
    base["data"]["val_split"] = 0
    p = problems(sweep(base))["base.data.val_split"]
    assert "eval" in p.message and "val_split" in p.fix


def test_required_fields_and_device_slots(base):
    raw = sweep(base, devices={"ids": [0, 1, 2], "per_trial": 2}, concurrency=3)
    del raw["trials"]
    probs = problems(raw)
    assert probs["trials"].message == "is required"
    assert "groups of per_trial=2" in probs["devices.ids"].message


def test_concurrency_above_the_slots_is_refused(base):
    p = problems(sweep(base, devices={"ids": [0, 1]}, concurrency=3))["concurrency"]
    assert "2" in p.fix


def test_a_yaml_sweep_reads_numbers_as_the_editor_does_and_loads_its_base_file(base, tmp_path):
    (tmp_path / "b.ascend.yaml").write_text(
        f"name: b\ndata:\n  train: {base['data']['train']}\n  image_size: 32\nmodel:\n  backbone: resnet18\n"
    )
    (tmp_path / "s.ascend-sweep.yaml").write_text(
        "base: b.ascend.yaml\nspace:\n  train.lr: {low: 1e-4, high: 1e-1, log: true}\n"
        "  model.freeze: {choices: [none, backbone]}\ntrials: 3\n"
    )
    got = sweepspec.load_sweep(str(tmp_path / "s.ascend-sweep.yaml"))
    assert got["space"]["train.lr"]["low"] == 1e-4  # YAML 1.1 would read "1e-4" as a string
    assert got["space"]["model.freeze"]["choices"] == ["none", "backbone"]  # "none" stays a string
    assert got["base"]["data"]["image_size"] == 32


def test_a_yaml_key_written_twice_is_refused(tmp_path):
    (tmp_path / "s.yaml").write_text("trials: 3\ntrials: 4\n")
    with pytest.raises(specmod.SpecError) as e:
        load(str(tmp_path / "s.yaml"))
    assert "duplicate key" in e.value.problems[0].message


def test_a_trial_spec_is_the_base_with_the_params_set_and_passes_the_run_spec_validator(base):
    got, _ = check_sweep(sweep(base), "/")
    t = trial_spec(got["base"], {"train.lr": 0.02, "train.early_stopping.patience": 2}, "b-t3")
    assert t["train"]["lr"] == 0.02 and t["train"]["early_stopping"]["patience"] == 2 and t["name"] == "b-t3"
    assert specmod.check(t, "/") == []
    assert got["base"]["train"]["lr"] == 0.01  # the base is not changed


def test_the_schema_and_the_validator_agree_on_metrics_and_space_keys():
    assert SCHEMA["properties"]["objective"]["properties"]["metric"]["enum"] == list(sweepspec.METRICS)
    assert sweepspec.SPACE_KEYS == ["choices", "low", "high", "log", "step"]
    assert set(SCHEMA["required"]) == {"base", "space", "trials"}


def test_the_sweep_command_refuses_a_bad_spec_with_exit_2_and_every_problem(base, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sweep(base, sampler="grid", space={"train.lr": {"low": 0.01, "high": 0.1}})))
    code, out = runner("sweep", str(path), "--root", str(tmp_path / "runs"), "--detach")
    assert code == 2
    assert out["error"]["kind"] == "bad_spec"
    assert [p["path"] for p in out["error"]["problems"]] == ["space.train.lr"]
    assert not (tmp_path / "runs" / "sweeps").exists()  # nothing made, nothing detached


def test_path_choices_are_relative_to_the_sweep_file_as_run_spec_paths_are(base, data_a, data_b):
    rel = os.path.relpath(data_b, data_a.parent)
    got, probs = check_sweep(sweep(base, space={"data.val": {"choices": [rel, None]}}), str(data_a.parent))
    assert probs == [] and got["space"]["data.val"]["choices"] == [str(data_b), None]
