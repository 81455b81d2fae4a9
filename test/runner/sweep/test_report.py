"""sweep-status and sweep-ls before a scheduler has run, and the sweep folder's guards (no MindSpore
training here: the real sweeps are in test_sweep_real.py)."""

from __future__ import annotations

import json
import os

from conftest import runner

from ascend_finetune.sweep import folder
from ascend_finetune.sweep.commands import prepare


def _spec(tmp_path, data_a, **over):
    s = {
        "name": "s",
        "base": {"data": {"train": str(data_a), "image_size": 32}, "model": {"backbone": "resnet18"}},
        "space": {"train.lr": {"choices": [0.01, 0.1]}},
        "trials": 2,
        "sampler": "grid",
    }
    s.update(over)
    path = tmp_path / "s.ascend-sweep.json"
    path.write_text(json.dumps(s))
    return path


def test_a_sweep_folder_not_yet_started_reads_as_starting_with_no_trials(tmp_path, data_a):
    sweep_dir, existed = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "my-sweep")
    assert not existed and sweep_dir == str(tmp_path / "runs" / "sweeps" / "my-sweep")
    code, st = runner("sweep-status", sweep_dir)
    assert code == 0, st
    assert st["state"] == "starting" and st["trials"] == [] and st["best"] is None and st["importances"] is None
    assert st["objective"] == {"metric": "best_val_acc", "direction": "maximize"} and st["trials_target"] == 2
    code, ls = runner("sweep-ls", str(tmp_path / "runs"))
    assert [s["sweep_id"] for s in ls["sweeps"]] == ["my-sweep"] and ls["sweeps"][0]["counts"] is None
    code, runs = runner("ls", str(tmp_path / "runs"))
    assert runs["runs"] == []  # the sweeps folder is not a run


def test_the_same_sweep_id_resumes_the_same_spec_and_refuses_another(tmp_path, data_a):
    spec = _spec(tmp_path, data_a)
    first, _ = prepare(str(spec), str(tmp_path / "runs"), "x")
    again, existed = prepare(str(spec), str(tmp_path / "runs"), "x")
    assert again == first and existed
    other = _spec(tmp_path, data_a, trials=1)
    code, out = runner("sweep", str(other), "--root", str(tmp_path / "runs"), "--sweep-id", "x", "--detach")
    assert code == 2 and out["error"]["kind"] == "busy" and "another spec" in out["error"]["message"]


def test_a_folder_that_is_not_a_sweep_is_refused(tmp_path):
    code, out = runner("sweep-status", str(tmp_path))
    assert code == 2 and out["error"]["kind"] == "not_a_sweep"
    code, out = runner("sweep", str(tmp_path))
    assert code == 2 and "not a sweep folder" in out["error"]["message"]


def test_a_second_scheduler_on_one_sweep_is_refused(tmp_path, data_a):
    sweep_dir, _ = prepare(str(_spec(tmp_path, data_a)), str(tmp_path / "runs"), "y")
    held = folder.lock(sweep_dir)  # as a running scheduler holds it
    try:
        code, out = runner("sweep", sweep_dir, "--detach")
        assert code == 2 and out["error"]["kind"] == "busy"
    finally:
        os.close(held)
