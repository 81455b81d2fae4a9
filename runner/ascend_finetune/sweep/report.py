"""`sweep-status` (one sweep: its trials, best trial and parameter importances, from the Optuna study)
and `sweep-ls` (the sweeps under a runs root, from their folders only). The JSON shapes are in
docs/protocol.md ("Sweeps") and are what the editor reads: keep them stable.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import optuna

from ..events import last_complete_offset
from ..rundir import STATUS_MAX_BYTES, effective_state, read_json, status_path
from ..runlist import last_event_of
from . import engine, folder
from .scheduler import best_trial, count_states

MAX_REPORTED = 1000  # per trial, the epochs listed (the last ones)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _time(t: Any) -> float | None:
    return t.timestamp() if t is not None else None


def _trial(t: optuna.trial.FrozenTrial) -> dict[str, Any]:
    got = t.user_attrs.get("run")
    run: dict[str, Any] = got if isinstance(got, dict) else {}
    reported = sorted(t.intermediate_values.items())[-MAX_REPORTED:]
    return {
        "number": t.number,
        "state": t.state.name,
        "outcome": t.user_attrs.get("outcome"),
        "params": t.params,
        "value": _num(t.value) if t.state == optuna.trial.TrialState.COMPLETE else None,
        "run_id": run.get("run_id"),
        "run_dir": run.get("run_dir"),
        "host": run.get("host"),
        "pruned_at": t.user_attrs.get("pruned_at"),
        "reported": [[int(e), _num(v)] for e, v in reported],
        "reason": t.user_attrs.get("reason"),
        "reason_code": t.user_attrs.get("reason_code"),
        "error_code": t.user_attrs.get("error_code"),
        "error_params": t.user_attrs.get("error_params"),
        "retry_of": t.user_attrs.get("retry_of"),
        "started_at": _time(t.datetime_start),
        "ended_at": _time(t.datetime_complete),
    }


def importances(study: optuna.Study) -> dict[str, float] | None:
    """Optuna's parameter importances (its default evaluator, PED-ANOVA: no scikit-learn needed),
    from 2 completed trials on; None before, or when Optuna cannot tell (every trial the same)."""
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(done) < 2:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "experimental" and few-trials notes
            return {k: float(v) for k, v in optuna.importance.get_param_importances(study).items()}
    except (ValueError, RuntimeError, ZeroDivisionError):
        return None


def _status(sweep_dir: str, doc: dict[str, Any]) -> dict[str, Any]:
    st = read_json(status_path(sweep_dir), {}, STATUS_MAX_BYTES)
    st = st if isinstance(st, dict) else {}
    if not st:  # its start time is when the folder was made, so it sorts among the newest
        made = doc.get("created_at")
        made = made if isinstance(made, (int, float)) and not isinstance(made, bool) else None
        return {"state": folder.unstarted_state(doc), "pid": None, "host": None, "started_at": made, "ended_at": None}
    return {
        "state": effective_state(sweep_dir, st),
        "pid": st.get("pid"),
        "host": st.get("host"),
        "started_at": st.get("started_at"),
        "ended_at": st.get("ended_at"),
    }


def status(sweep_dir: str) -> dict[str, Any]:
    sweep_dir = os.path.abspath(sweep_dir)
    doc = folder.read(sweep_dir)
    sweep = doc["spec"]
    try:
        study: optuna.Study | None = engine.open_study(
            sweep, sweep_dir, sweep["study_name"] or doc["sweep_id"], create=False
        )
    except KeyError:  # a scheduler just detached has not made its study yet
        study = None
    trials = study.get_trials(deepcopy=False) if study else []
    return {
        "sweep_id": doc["sweep_id"],
        "sweep_dir": sweep_dir,
        "root": doc["root"],
        "name": sweep["name"],
        **_status(sweep_dir, doc),
        "study_name": sweep["study_name"] or doc["sweep_id"],
        "storage": engine.safe_url(sweep["storage"]) or folder.JOURNAL,
        "objective": {"metric": sweep["objective"]["metric"], "direction": sweep["objective"]["direction"]},
        "sampler": sweep["sampler"],
        "pruner": sweep["pruner"]["kind"],
        "space": sweep["space"],
        "trials_target": sweep["trials"],
        "counts": count_states(trials),
        "trials": [_trial(t) for t in trials],
        "best": best_trial(study) if study else None,
        "importances": importances(study) if study else None,
        "last_seq": last_complete_offset(os.path.join(sweep_dir, folder.EVENTS))[1],
    }


def list_sweeps(root: str) -> list[dict[str, Any]]:
    """The sweeps under ROOT/sweeps, newest first, without opening their studies: counts and the
    best value come from the last sweep_finished event (null while a sweep runs)."""
    base = os.path.join(root, folder.SWEEPS)
    out = []
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.join(base, name)
        try:
            doc = folder.read(d)
        except ValueError:
            continue
        try:
            last = last_event_of(os.path.join(d, folder.EVENTS), "sweep_finished")
        except OSError:
            last = None
        sweep = doc["spec"]
        state = _status(d, doc)
        if state["state"] == "running":
            last = None  # a resumed sweep: its last sweep_finished is an earlier scheduler's
        out.append(
            {
                "sweep_id": doc["sweep_id"],
                "sweep_dir": os.path.abspath(d),
                "name": sweep["name"],
                **state,
                "objective": {"metric": sweep["objective"]["metric"], "direction": sweep["objective"]["direction"]},
                "trials_target": sweep["trials"],
                "counts": last.get("counts") if last else None,
                "best": last.get("best") if last else None,
            }
        )
    out.sort(key=lambda s: s["started_at"] if isinstance(s["started_at"], (int, float)) else 0, reverse=True)
    return out
