"""A failed trial's reason carries its run's error `code` and `params` beside the English, from the
run's `run_finished` to sweep-status (no training here: the error objects are the runner's own,
recorded in test/runner/fixtures/runner_codes.json)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from ascend_finetune.sweep.report import _trial
from ascend_finetune.sweep.scheduler import failed_run_reason

CODES = json.loads((Path(__file__).parent.parent / "fixtures" / "runner_codes.json").read_text())


def _finished(code: str, kind: str) -> dict:
    e = CODES[f"error:{code}"]
    error = {"kind": kind, "code": code, "params": e["params"], "message": e["message"], "trace_tail": None}
    return {"type": "run_finished", "status": "failed", "error": error}


def test_a_failed_runs_error_code_and_params_go_beside_the_english_reason():
    got = failed_run_reason(_finished("too_few_classes", "bad_input"))
    params = CODES["error:too_few_classes"]["params"]
    assert got == {
        "reason": f"bad_input: {CODES['error:too_few_classes']['message']}",
        "error_code": "too_few_classes",
        "error_params": params,
    }
    json.dumps(got)  # an Optuna user attr: JSON only


def test_a_run_without_an_error_or_a_code_keeps_the_english_reason_alone():
    assert failed_run_reason(None) == {"reason": "the run failed", "reason_code": "run_failed"}
    assert failed_run_reason({"status": "failed", "error": None})["reason_code"] == "run_failed"
    old = {"status": "failed", "error": {"kind": "RuntimeError", "message": "boom"}}
    assert failed_run_reason(old) == {"reason": "RuntimeError: boom"}
    no_params = _finished("nonfinite_loss", "nonfinite_loss")
    no_params["error"]["params"] = None
    assert failed_run_reason(no_params)["error_params"] == {}


def test_sweep_status_reports_the_code_and_params_the_scheduler_kept_on_the_trial():
    attrs = {"outcome": "failed", **failed_run_reason(_finished("nonfinite_loss", "nonfinite_loss"))}
    frozen = optuna.trial.create_trial(
        state=optuna.trial.TrialState.FAIL, params={}, distributions={}, user_attrs=attrs
    )
    row = _trial(frozen)
    assert row["reason"].startswith("nonfinite_loss: ")
    assert row["error_code"] == "nonfinite_loss"
    assert row["error_params"] == CODES["error:nonfinite_loss"]["params"]
    plain = _trial(optuna.trial.create_trial(state=optuna.trial.TrialState.FAIL, params={}, distributions={}))
    assert plain["error_code"] is None and plain["error_params"] is None and plain["reason_code"] is None


def test_a_reason_of_the_schedulers_own_carries_its_code_to_sweep_status():
    attrs = {"outcome": "pruned", "reason": "its run was stopped", "reason_code": "run_stopped"}
    row = _trial(
        optuna.trial.create_trial(state=optuna.trial.TrialState.PRUNED, params={}, distributions={}, user_attrs=attrs)
    )
    assert (row["reason"], row["reason_code"], row["error_code"]) == ("its run was stopped", "run_stopped", None)
