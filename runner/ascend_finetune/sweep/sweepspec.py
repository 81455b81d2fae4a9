"""The sweep spec: validation with field paths and fixes (every problem at once, as spec.py does), the
resolved form the scheduler keeps in the sweep folder, and the run spec of one trial.

The rules are sweep.schema.json's (the editor validates against the same file); they are checked by
hand here because a space entry's rules depend on the run-spec field it names: every space key must
be a field of spec.schema.json, a range needs a number field, and every value a space can produce is
put into the base spec and checked by the run spec's own validator before the sweep starts (and each
trial's spec again before its run starts).
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import os
from typing import Any, cast

from .. import spec as specmod
from ..models.catalog import is_named
from ..spec import Problem, SpecError
from ..spec_types import RunSpec
from . import specfile
from .rdb import driver_problem

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sweep.schema.json")
with open(SCHEMA_FILE, encoding="utf-8") as _f:
    SCHEMA: dict[str, Any] = json.load(_f)

TOP = SCHEMA["properties"]
METRICS: dict[str, tuple[str, str]] = {  # metric -> (eval field, direction)
    "best_val_acc": ("val_acc", "maximize"),
    "best_val_loss": ("val_loss", "minimize"),
    "final_val_acc": ("val_acc", "maximize"),
}
SAMPLERS = TOP["sampler"]["enum"]
PRUNERS = TOP["pruner"]["properties"]["kind"]["enum"]
SPACE_KEYS = list(TOP["space"]["additionalProperties"]["properties"])
# Fields the sweep sets itself: a trial's name and the devices of its slot.
MANAGED = {
    "name": "each trial's name is the base name and its number",
    "device.ids": "the sweep gives each trial its devices: use the sweep's devices",
    "device.nodes": "a trial runs on the scheduler's machine: share a database storage for several machines",
}


def _leaf_rules(schema: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, rule in schema.get("properties", {}).items():
        if rule.get("type") == "object":
            out.update(_leaf_rules(rule, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = rule
    return out


FIELDS = _leaf_rules(specmod.SCHEMA)  # every run-spec field by its dotted path


def _types(rule: dict[str, Any]) -> list[str]:
    t = rule.get("type", [])
    return t if isinstance(t, list) else [t]


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _unknown(path: str, key: str, known: list[str]) -> Problem:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return Problem(
        path, "unknown field", f'did you mean "{close[0]}"?' if close else f"known fields: {', '.join(known)}"
    )


def set_field(spec: dict[str, Any], dotted: str, value: Any) -> None:
    *sections, last = dotted.split(".")
    node = spec
    for s in sections:
        node = node.setdefault(s, {})
    node[last] = value


def trial_spec(base: RunSpec, params: dict[str, Any], name: str) -> dict[str, Any]:
    """The base spec with the trial's values set (and its name)."""
    spec = cast(dict[str, Any], copy.deepcopy(base))
    for key, value in params.items():
        set_field(spec, key, value)
    spec["name"] = name
    return spec


def _load_base(raw: Any, base_dir: str, problems: list[Problem]) -> RunSpec | None:
    if isinstance(raw, str) and raw.strip():
        path = os.path.join(base_dir, os.path.expanduser(raw))
        try:
            raw = specfile.load(path, "run spec")
        except SpecError as e:
            problems += [Problem("base" + (f".{p.path}" if p.path else ""), p.message, p.fix) for p in e.problems]
            return None
        base_dir = os.path.dirname(os.path.abspath(path))
    elif not isinstance(raw, dict):
        rule = TOP["base"]
        problems.append(Problem("base", f"must be {rule['x-expect']}, got {json.dumps(raw)}", rule["x-fix"]))
        return None
    base_problems = specmod.check(raw, base_dir)
    if base_problems:
        problems += [Problem(f"base.{p.path}" if p.path else "base", p.message, p.fix) for p in base_problems]
        return None
    spec = specmod.resolve(raw, base_dir)
    if spec["data"]["val"] is None and spec["data"]["val_split"] == 0:
        problems.append(
            Problem(
                "base.data.val_split",
                "the base spec has no validation images, and the objective is read from eval events",
                "set base.data.val_split above 0 (e.g. 0.1) or base.data.val to a validation ImageFolder",
            )
        )
    return spec


def _check_value(base: RunSpec | None, key: str, value: Any, where: str) -> list[Problem]:
    """The base spec with `key` set to `value`, through the run spec's validator."""
    if base is None:
        return []
    spec = copy.deepcopy(cast(dict[str, Any], base))
    set_field(spec, key, value)
    return [Problem(where, f"{key} = {json.dumps(value)}: {p.message}", p.fix) for p in specmod.check(spec, "/")]


def _abs_path(key: str, value: Any, base_dir: str) -> Any:
    """A path choice (data.val, model.pretrained...) made absolute against the sweep file's folder, as a
    run spec's paths are against its own; a named weights source (`mindcv:...`) stays as it is."""
    if key not in specmod.PATHS or not isinstance(value, str) or not value or is_named(value):
        return value
    return os.path.abspath(os.path.join(base_dir, os.path.expanduser(value)))


def _space_entry(
    key: str, entry: Any, base: RunSpec | None, problems: list[Problem], base_dir: str
) -> dict[str, Any] | None:
    path = f"space.{key}"
    if key in MANAGED:
        problems.append(Problem(path, f"{key} is set by the sweep", MANAGED[key]))
        return None
    if key not in FIELDS:
        problems.append(
            Problem(
                path,
                f'"{key}" is not a run-spec field',
                _unknown(path, key, list(FIELDS)).fix + " (a field's dotted path in the run spec, e.g. train.lr)",
            )
        )
        return None
    rule = FIELDS[key]
    if not isinstance(entry, dict):
        problems.append(
            Problem(path, f"must be an object, got {json.dumps(entry)}", "write {choices: [...]} or {low: A, high: B}")
        )
        return None
    bad = [k for k in entry if k not in SPACE_KEYS]
    problems += [_unknown(f"{path}.{k}", k, SPACE_KEYS) for k in bad]
    if bad:
        return None
    if "choices" in entry:
        ch = entry["choices"]
        if [k for k in ("low", "high", "log", "step") if k in entry]:
            problems.append(Problem(path, "has both choices and a range", "keep either choices or low/high"))
            return None
        if not isinstance(ch, list) or not ch:
            problems.append(Problem(f"{path}.choices", "must be a non-empty list", f"e.g. {path}.choices: [a, b]"))
            return None
        n = len(problems)
        ch = [_abs_path(key, v, base_dir) for v in ch]
        for i, v in enumerate(ch):
            if isinstance(v, (list, dict)):
                problems.append(
                    Problem(
                        f"{path}.choices[{i}]",
                        "a choice must be a string, number, true/false or null",
                        f"sweep {key} over scalar values only",
                    )
                )
            else:
                problems += _check_value(base, key, v, f"{path}.choices[{i}]")
        if len({json.dumps(v, sort_keys=True) for v in ch}) != len(ch):
            problems.append(Problem(f"{path}.choices", "lists a value twice", "list each value once"))
        return {"choices": list(ch)} if len(problems) == n else None
    if "low" not in entry or "high" not in entry:
        problems.append(
            Problem(
                path, "needs choices, or both low and high", f"write {path}: {{low: A, high: B}} or {{choices: [...]}}"
            )
        )
        return None
    types = _types(rule)
    kind = "integer" if "integer" in types else "number" if "number" in types else None
    if kind is None:
        problems.append(
            Problem(path, f"{key} is not a number field: a range cannot sample it", f"write {path}: {{choices: [...]}}")
        )
        return None
    lo, hi, log, step = entry["low"], entry["high"], entry.get("log", False), entry.get("step")
    ok = _is_int if kind == "integer" else _is_num
    n = len(problems)
    for k, v in (("low", lo), ("high", hi)):
        if not ok(v):
            want = "an integer" if kind == "integer" else "a number"
            problems.append(
                Problem(f"{path}.{k}", f"must be {want} ({key} is {want}), got {json.dumps(v)}", f"set {path}.{k}")
            )
    if not isinstance(log, bool):
        problems.append(Problem(f"{path}.log", f"must be true or false, got {json.dumps(log)}", f"set {path}.log"))
    if step is not None and (not ok(step) or step <= 0):
        problems.append(
            Problem(f"{path}.step", f"must be a positive {kind}, got {json.dumps(step)}", f"set {path}.step")
        )
    if len(problems) > n:
        return None
    if lo >= hi:
        problems.append(Problem(path, f"low ({lo}) must be below high ({hi})", f"set {path}.low below {path}.high"))
    if log and lo <= 0:
        problems.append(Problem(f"{path}.low", "a log range needs low > 0", f"set {path}.low above 0, or log: false"))
    if log and step is not None:
        problems.append(Problem(path, "log and step cannot go together (Optuna)", f"remove {path}.step or {path}.log"))
    problems += _check_value(base, key, lo, f"{path}.low") + _check_value(base, key, hi, f"{path}.high")
    if len(problems) > n:
        return None
    out: dict[str, Any] = {"low": lo, "high": hi, "log": log, "int": kind == "integer"}
    if step is not None:
        out["step"] = step
    return out


def _int_field(raw: dict[str, Any], path: str, rule: dict[str, Any], problems: list[Problem]) -> Any:
    v = raw.get(path.split(".")[-1], rule.get("default"))
    if v is None and "null" in _types(rule):
        return None
    lo = rule.get("minimum", -math.inf)
    hi = rule.get("maximum", math.inf)
    if not _is_int(v) or not lo <= v <= hi:
        rng = f"from {lo}" + (f" to {hi}" if hi != math.inf else "")
        problems.append(
            Problem(path, f"must be an integer {rng}, got {json.dumps(v)}", f"set {path} to a whole number {rng}")
        )
        return None
    return v


def _enum(raw: dict[str, Any], path: str, rule: dict[str, Any], problems: list[Problem]) -> Any:
    v = raw.get(path.split(".")[-1], rule.get("default"))
    if v not in rule["enum"] or isinstance(v, bool):
        hint = difflib.get_close_matches(str(v), rule["enum"], n=1, cutoff=0.5)
        problems.append(
            Problem(
                path,
                f"unknown value {json.dumps(v)}",
                (f'did you mean "{hint[0]}"? ' if hint else "") + f"one of: {', '.join(rule['enum'])}",
            )
        )
        return None
    return v


def _section(raw: dict[str, Any], key: str, problems: list[Problem]) -> dict[str, Any]:
    v = raw.get(key, {})
    if not isinstance(v, dict):
        problems.append(Problem(key, f"must be an object, got {json.dumps(v)}", f"write {key}: {{...}}"))
        return {}
    known = list(TOP[key]["properties"])
    problems += [_unknown(f"{key}.{k}", k, known) for k in v if k not in known]
    return v


def check_sweep(raw: Any, base_dir: str) -> tuple[dict[str, Any] | None, list[Problem]]:
    """(the resolved sweep, []) or (None, every problem). The resolved sweep has every default filled
    in and `base` as a resolved run spec (absolute paths)."""
    if not isinstance(raw, dict):
        return None, [Problem("", "a sweep spec must be an object", SCHEMA["x-fix"])]
    problems: list[Problem] = []
    problems += [_unknown(k, k, list(TOP)) for k in raw if k not in TOP]
    problems += [
        Problem(k, "is required", f"set {k} ({TOP[k]['description'].split('.')[0]})")
        for k in SCHEMA["required"]
        if k not in raw
    ]
    name = raw.get("name", "sweep")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem("name", f"must be a non-empty string, got {json.dumps(name)}", TOP["name"]["x-fix"]))
    base = _load_base(raw["base"], base_dir, problems) if "base" in raw else None

    space: dict[str, Any] = {}
    raw_space = raw.get("space", {})
    if not isinstance(raw_space, dict) or ("space" in raw and not raw_space):
        problems.append(
            Problem("space", f"must be {TOP['space']['x-expect']}, got {json.dumps(raw_space)}", TOP["space"]["x-fix"])
        )
    else:
        for key, entry in raw_space.items():
            got = _space_entry(key, entry, base, problems, base_dir)
            if got is not None:
                space[key] = got

    obj_raw = _section(raw, "objective", problems)
    metric = _enum(obj_raw, "objective.metric", TOP["objective"]["properties"]["metric"], problems)
    direction = METRICS[metric][1] if metric else None
    if metric and "direction" in obj_raw and obj_raw["direction"] != direction:
        problems.append(
            Problem(
                "objective.direction",
                f"{metric} is to {direction}, got {json.dumps(obj_raw['direction'])}",
                f"remove objective.direction or set it to {direction}",
            )
        )

    trials = _int_field(raw, "trials", TOP["trials"], problems) if "trials" in raw else None
    sampler = _enum(raw, "sampler", TOP["sampler"], problems)
    seed = _int_field(raw, "seed", TOP["seed"], problems)
    if sampler == "grid":
        ranges = [k for k, e in space.items() if "choices" not in e]
        for k in ranges:
            problems.append(
                Problem(
                    f"space.{k}",
                    "the grid sampler needs choices: a range has no grid",
                    f"write space.{k} as {{choices: [...]}}, or use sampler: tpe or random",
                )
            )
        combos = math.prod(len(e["choices"]) for e in space.values()) if space and not ranges else None
        if combos is not None and trials is not None and trials > combos:
            problems.append(
                Problem(
                    "trials",
                    f"the grid has {combos} combinations, fewer than {trials} trials",
                    f"set trials to {combos} or less",
                )
            )

    pr_raw = _section(raw, "pruner", problems)
    pr_rules = TOP["pruner"]["properties"]
    pruner = {"kind": _enum(pr_raw, "pruner.kind", pr_rules["kind"], problems)}
    for k in ("startup_trials", "warmup_epochs", "min_epochs", "reduction_factor"):
        pruner[k] = _int_field(pr_raw, f"pruner.{k}", pr_rules[k], problems)

    devices = raw.get("devices", "all free")
    slots: int | None = None
    if isinstance(devices, dict):
        dev_rules = TOP["devices"]["properties"]
        problems += [_unknown(f"devices.{k}", k, list(dev_rules)) for k in devices if k not in dev_rules]
        ids, per = devices.get("ids"), _int_field(devices, "devices.per_trial", dev_rules["per_trial"], problems)
        if (
            not isinstance(ids, list)
            or not ids
            or not all(_is_int(i) and i >= 0 for i in ids)
            or len(set(ids)) != len(ids)
        ):
            problems.append(
                Problem(
                    "devices.ids",
                    f"must be a list of distinct device numbers, got {json.dumps(ids)}",
                    "e.g. devices.ids: [0, 1, 2, 3]",
                )
            )
        elif per is not None:
            if len(ids) % per:
                problems.append(
                    Problem(
                        "devices.ids",
                        f"{len(ids)} ids do not split into groups of per_trial={per}",
                        f"list a multiple of {per} ids",
                    )
                )
            else:
                slots = len(ids) // per
                devices = {"ids": ids, "per_trial": per}
    elif devices != "all free":
        problems.append(
            Problem(
                "devices", f"must be {TOP['devices']['x-expect']}, got {json.dumps(devices)}", TOP["devices"]["x-fix"]
            )
        )
    concurrency = _int_field(raw, "concurrency", TOP["concurrency"], problems)
    if concurrency is not None and slots is not None and concurrency > slots:
        problems.append(
            Problem(
                "concurrency",
                f"{concurrency} trials at once need {concurrency} device slots; devices gives {slots}",
                f"set concurrency to {slots} or list more devices.ids",
            )
        )

    storage = raw.get("storage")
    if storage is not None and (not isinstance(storage, str) or "://" not in storage):
        problems.append(
            Problem(
                "storage", f"must be {TOP['storage']['x-expect']}, got {json.dumps(storage)}", TOP["storage"]["x-fix"]
            )
        )
    elif storage is not None and (problem := driver_problem(storage)):
        problems.append(Problem("storage", *problem))
    study_name = raw.get("study_name")
    if study_name is not None and (not isinstance(study_name, str) or not study_name.strip()):
        problems.append(
            Problem(
                "study_name",
                f"must be a non-empty string or null, got {json.dumps(study_name)}",
                "set study_name or remove it",
            )
        )

    if problems:
        return None, problems
    return {
        "name": name,
        "base": base,
        "space": space,
        "objective": {"metric": metric, "direction": direction, "field": METRICS[metric][0]},
        "trials": trials,
        "sampler": sampler,
        "seed": seed,
        "pruner": pruner,
        "devices": devices,
        "concurrency": concurrency,
        "storage": storage,
        "study_name": study_name,
    }, []


def load_sweep(path: str) -> dict[str, Any]:
    """Read and resolve a sweep file; SpecError with every problem."""
    raw = specfile.load(path, "sweep spec")
    sweep, problems = check_sweep(raw, os.path.dirname(os.path.abspath(path)))
    if problems:
        raise SpecError(problems)
    assert sweep is not None
    return sweep
