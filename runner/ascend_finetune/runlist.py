"""`ls`: one summary per run directory under a root, with `lost` detection and a `problem` for a
run whose files cannot be trusted (rundir.py's rules: regular files only, capped, typed), so one bad
run is listed as bad and never hides the others.

Each entry also carries the run's `summary` (summary.json, which the training process keeps up to
date: train/summary.py writes it, this module reads it) and its spec flattened to dotted keys
(`spec_fields`), which is what the Runs Table shows and diffs. Neither reads the event log."""

from __future__ import annotations

import json
import math
import os
from typing import Any

from .rundir import (
    JSON_MAX_BYTES,
    MANIFEST_MAX_BYTES,
    STATUS_MAX_BYTES,
    UnsafeFile,
    check_status,
    effective_state,
    is_int,
    is_time,
    load_json,
    open_regular,
    read_json,
    short_json,
    status_path,
)


SUMMARY_FILE = "summary.json"
SUMMARY_VERSION = 1
# summary.json's fields that `ls` lists; each is a number or null, except `state` (a string or null).
SUMMARY_FIELDS = (
    "state",
    "started_at",
    "ended_at",
    "duration_s",
    "updated_at",
    "epochs_done",
    "steps_done",
    "total_steps",
    "best_val_acc",
    "best_val_acc_epoch",
    "final_val_acc",
    "best_val_loss",
    "img_per_s",
    "skipped_updates",
)
# Bounds of a flattened spec, the same as the extension's (src/core/runs/specDiff.ts).
FLAT_MAX_KEYS = 400
FLAT_MAX_TEXT = 200
_FLAT_MAX_DEPTH = 8


def read_summary(run_dir: str) -> dict[str, Any] | None:
    """The listed fields of a run's summary.json, each checked (a wrong-typed one reads null); None
    for a run without one (runs from before it existed) or with one that cannot be used (not a
    regular file, too large, not a JSON object)."""
    raw = read_json(os.path.join(run_dir, SUMMARY_FILE), None, JSON_MAX_BYTES)
    if not isinstance(raw, dict):
        return None
    out: dict[str, Any] = {}
    for k in SUMMARY_FIELDS:
        v = raw.get(k)
        if k == "state":
            out[k] = v if isinstance(v, str) and len(v) <= 20 else None
        else:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            out[k] = v if ok else None
    return out


def _flat_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= FLAT_MAX_TEXT else text[: FLAT_MAX_TEXT - 1] + "\u2026"


def flatten_spec(spec: Any) -> dict[str, Any]:
    """Dotted keys of a spec (`train.lr`), in the spec's order; a list is one value, its compact JSON
    text (`device.ids: "[0,1]"`). At most FLAT_MAX_KEYS keys, text cut to FLAT_MAX_TEXT characters."""
    out: dict[str, Any] = {}

    def walk(x: dict[Any, Any], prefix: str, depth: int) -> None:
        for k, v in x.items():
            if len(out) >= FLAT_MAX_KEYS:
                return
            path = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and depth < _FLAT_MAX_DEPTH:
                walk(v, path, depth + 1)
            else:
                out[path] = _flat_value(v)

    if isinstance(spec, dict):
        walk(spec, "", 0)
    return out


def _problem(e: Exception) -> str:
    if isinstance(e, UnsafeFile) or isinstance(e, ValueError):
        return str(e)
    return f"{e.strerror or type(e).__name__}" if isinstance(e, OSError) else str(e)


def _load_spec(run_dir: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        spec = load_json(os.path.join(run_dir, "spec.json"), JSON_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        problems.append(_problem(e))
        return None
    if not isinstance(spec, dict):
        problems.append("spec.json is not a JSON object")
        return None
    return spec


def _spec_fields(spec: dict[str, Any] | None, problems: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": None, "backbone": None, "epochs": None}
    if spec is None:
        return out
    for key, section, field, want, ok in (
        ("name", None, "name", "a string", lambda v: isinstance(v, str)),
        ("backbone", "model", "backbone", "a string", lambda v: isinstance(v, str)),
        ("epochs", "train", "epochs", "an integer", is_int),
    ):
        holder = spec if section is None else spec.get(section)
        if holder is None:
            continue
        if not isinstance(holder, dict):
            problems.append(f"spec.json: {section} must be an object, got {short_json(holder)}")
            continue
        v = holder.get(field)
        where = field if section is None else f"{section}.{field}"
        if v is not None and not ok(v):
            problems.append(f"spec.json: {where} must be {want}, got {short_json(v)}")
        elif v is not None:
            out[key] = v
    return out


def _best_of(run_dir: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        manifest = load_json(os.path.join(run_dir, "checkpoints.json"), MANIFEST_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        problems.append(_problem(e))
        return None
    if not isinstance(manifest, list):
        problems.append("checkpoints.json is not a JSON array")
        return None
    return next(
        (
            {k: e.get(k) for k in ("file", "epoch", "step", "metrics")}
            for e in manifest
            if isinstance(e, dict) and e.get("best") is True and isinstance(e.get("file"), str)
        ),
        None,
    )


def _bad_run(run_dir: str, problem: str) -> dict[str, Any]:
    """The entry of a run whose status.json is unusable: its name, `lost` and the problem."""
    return {
        "run_id": os.path.basename(run_dir),
        "state": "lost",
        "pid": None,
        "host": None,
        "started_at": None,
        "ended_at": None,
        "exit_code": None,
        "run_dir": os.path.abspath(run_dir),
        "name": None,
        "backbone": None,
        "epochs": None,
        "epoch": None,
        "step": None,
        "loss": None,
        "best": None,
        "summary": None,
        "spec_fields": None,
        "problem": problem,
    }


def summarize(run_dir: str) -> dict[str, Any] | None:
    """A run's `ls` entry; None for a folder with no status.json (not a run). A run with unusable
    files gets `problem` (one sentence per problem, joined by "; ") and nulls where it could not
    read, never an exception."""
    try:
        raw = load_json(status_path(run_dir), STATUS_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return _bad_run(run_dir, _problem(e))
    status, problems = check_status(raw)
    if not isinstance(raw, dict):
        return _bad_run(run_dir, problems[0])
    spec = _load_spec(run_dir, problems)
    fields = _spec_fields(spec, problems)
    last_step: dict[str, Any] | None = None
    try:
        last_step = last_event_of(os.path.join(run_dir, "events.jsonl"), "step")
    except FileNotFoundError:
        pass
    except OSError as e:
        problems.append(_problem(e))
    best = _best_of(run_dir, problems)

    def num(key: str, want: Any) -> Any:
        v = last_step.get(key) if last_step else None
        return v if isinstance(v, want) and not isinstance(v, bool) else None

    return {
        **status,
        "state": effective_state(run_dir, raw),
        "run_dir": os.path.abspath(run_dir),
        **fields,
        "epoch": num("epoch", int),
        "step": num("step", int),
        "loss": num("loss", (int, float)),
        "best": best,
        "summary": read_summary(run_dir),
        "spec_fields": flatten_spec(spec) if spec is not None else None,
        "problem": "; ".join(problems) or None,
    }


def last_event_of(path: str, type_: str, window: int = 1 << 16) -> dict[str, Any] | None:
    """The last complete event of a type, read from the end of the log: `ls` must not parse the
    whole history of a million-step run. FileNotFoundError for no log, UnsafeFile for one that is
    not a regular file."""
    fd = open_regular(path)
    try:
        end = os.fstat(fd).st_size
        data = os.pread(fd, window, max(0, end - window))
    finally:
        os.close(fd)
    lines = data[: data.rfind(b"\n") + 1].splitlines()
    if end > window:
        lines = lines[1:]  # the first one may be cut
    for line in reversed(lines):
        try:
            ev = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(ev, dict) and ev.get("type") == type_:
            return ev
    return None


def list_runs(root: str) -> list[dict[str, Any]]:
    """Every run directory under ROOT (a folder with a status.json); other entries are passed over.
    A run whose files cannot be used is listed with its `problem`."""
    runs = []
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if not os.path.isdir(path):
                continue
            try:
                info = summarize(path)
            except (OSError, ValueError) as e:  # e.g. the folder went away meanwhile
                info = _bad_run(path, _problem(e)) if os.path.lexists(status_path(path)) else None
            if info:
                runs.append(info)
    runs.sort(key=lambda r: r["started_at"] if is_time(r.get("started_at")) else 0, reverse=True)
    return runs
