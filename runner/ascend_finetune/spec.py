"""The run spec: defaults (the reference recipe's), validation with field paths and fixes, resolution.

Validation never stops at the first problem: a user fixing a spec wants every problem at once.
"""
from __future__ import annotations

import copy
import difflib
import json
import math
import os
from dataclasses import dataclass
from typing import Any

from .backbones import BACKBONES, STAGES

DEFAULTS: dict[str, Any] = {
    "name": "run",
    "data": {"train": None, "val": None, "val_split": 0.1, "image_size": 224, "batch_size": 32,
             "workers": 8, "augment": True},
    "model": {"backbone": "resnet50", "pretrained": None, "freeze": "backbone", "num_classes": None},
    "train": {"epochs": 10, "optimizer": "momentum", "lr": 0.01, "momentum": 0.9, "weight_decay": 0.0,
              "lr_schedule": "constant", "warmup_steps": 0, "seed": 1, "max_nonfinite_steps": 5,
              "lr_step_size": None, "lr_step_gamma": 0.1},
    "amp": {"level": "O2", "loss_scale": "dynamic", "init_scale": 16777216, "scale_factor": 2,
            "scale_window": 2000},
    "sink": {"enabled": True, "size": 1},
    "checkpoint": {"every_steps": 1000, "keep_max": 5, "keep_best": True, "format": "ckpt"},
    "device": {"target": "auto", "ids": [0]},
}

FREEZE_VALUES = ["none", "backbone"] + [f"up_to:{s}" for s in STAGES]
ENUMS = {
    "model.backbone": list(BACKBONES),
    "model.freeze": FREEZE_VALUES,
    "train.optimizer": ["momentum", "sgd", "adamw"],
    "train.lr_schedule": ["constant", "cosine", "step"],
    "amp.level": ["O0", "O1", "O2", "O3", "auto"],
    "amp.loss_scale": ["dynamic", "fixed", "none"],
    "checkpoint.format": ["ckpt", "safetensors"],
    "device.target": ["auto", "Ascend", "CPU"],
}
# field: (type(s), min, max, min is exclusive) for numbers; None bound = unbounded
NUMBERS = {
    "data.val_split": (float, 0.0, 0.9, False),
    "data.image_size": (int, 16, 4096, False),
    "data.batch_size": (int, 1, 65536, False),
    "data.workers": (int, 1, 1024, False),
    "model.num_classes": (int, 2, 1_000_000, False),
    "train.epochs": (int, 1, 100_000, False),
    "train.lr": (float, 0.0, 100.0, True),
    "train.momentum": (float, 0.0, 1.0, False),
    "train.weight_decay": (float, 0.0, 1.0, False),
    "train.warmup_steps": (int, 0, None, False),
    "train.seed": (int, 0, 2**31 - 1, False),
    "train.max_nonfinite_steps": (int, 1, None, False),
    "train.lr_step_size": (int, 1, None, False),
    "train.lr_step_gamma": (float, 0.0, 1.0, True),
    "amp.init_scale": (float, 1.0, 2.0**32, False),
    "amp.scale_factor": (int, 2, 1024, False),
    "amp.scale_window": (int, 1, None, False),
    "sink.size": (int, 1, None, False),
    "checkpoint.every_steps": (int, 1, None, False),
    "checkpoint.keep_max": (int, 1, None, False),
}
BOOLS = {"data.augment", "sink.enabled", "checkpoint.keep_best"}
NULLABLE = {"data.val", "model.pretrained", "model.num_classes", "train.lr_step_size"}
PATHS = {"data.train", "data.val", "model.pretrained"}


@dataclass
class Problem:
    path: str
    message: str
    fix: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "fix": self.fix}


class SpecError(Exception):
    """Bad input: carries every problem found, each with its field path and a fix."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))
        self.problems = problems


def _did_you_mean(key: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    return f'did you mean "{close[0]}"?' if close else f"known fields: {', '.join(choices)}"


def _check_number(path: str, value: Any, rule: tuple) -> Problem | None:
    kind, lo, hi, lo_exclusive = rule
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int))
            or not math.isfinite(value)):
        return Problem(path, f"must be {'an integer' if kind is int else 'a number'}, got {json.dumps(value)}",
                       f"set {path} to {'a whole number' if kind is int else 'a number'}")
    if (lo is not None and (value <= lo if lo_exclusive else value < lo)) or (hi is not None and value > hi):
        rng = f"{'>' if lo_exclusive else '>='} {lo}" + (f" and <= {hi}" if hi is not None else "")
        return Problem(path, f"must be {rng}, got {value}", f"set {path} to a value {rng}")
    return None


def check(raw: Any, base_dir: str = ".", check_files: bool = True) -> list[Problem]:
    """Every problem in a spec (types, ranges, enums, unknown fields, files that must exist)."""
    if not isinstance(raw, dict):
        return [Problem("", "a run spec must be a JSON object", 'start from {"name": "...", "data": {"train": "DIR"}}')]
    problems: list[Problem] = []
    for key, value in raw.items():
        if key not in DEFAULTS:
            problems.append(Problem(key, "unknown field", _did_you_mean(key, list(DEFAULTS))))
            continue
        if key == "name":
            if not isinstance(value, str) or not value.strip():
                problems.append(Problem("name", "must be a non-empty string", 'set "name" to a short label'))
            continue
        if not isinstance(value, dict):
            problems.append(Problem(key, f"must be an object, got {json.dumps(value)}", f'write "{key}": {{...}}'))
            continue
        for sub, v in value.items():
            path = f"{key}.{sub}"
            if sub not in DEFAULTS[key]:
                problems.append(Problem(path, "unknown field", _did_you_mean(sub, list(DEFAULTS[key]))))
                continue
            if v is None:
                if path not in NULLABLE and path != "data.train":
                    problems.append(Problem(path, "must not be null", f"remove {path} to use the default ({json.dumps(DEFAULTS[key][sub])})"))
                continue
            if path in ENUMS:
                if v not in ENUMS[path]:
                    hint = difflib.get_close_matches(str(v), ENUMS[path], n=1, cutoff=0.5)
                    problems.append(Problem(path, f"unknown value {json.dumps(v)}",
                                            (f'did you mean "{hint[0]}"? ' if hint else "") + f"one of: {', '.join(ENUMS[path])}"))
            elif path in NUMBERS:
                p = _check_number(path, v, NUMBERS[path])
                if p:
                    problems.append(p)
            elif path in BOOLS:
                if not isinstance(v, bool):
                    problems.append(Problem(path, f"must be true or false, got {json.dumps(v)}", f"set {path} to true or false"))
            elif path in PATHS:
                if not isinstance(v, str) or not v:
                    problems.append(Problem(path, f"must be a path, got {json.dumps(v)}", f"set {path} to a path on the target"))
            elif path == "device.ids":
                if not (isinstance(v, list) and v and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in v)
                        and len(set(v)) == len(v)):
                    problems.append(Problem(path, f"must be a list of distinct device numbers, got {json.dumps(v)}", "e.g. [0] or [0, 1, 2, 3]"))
    data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
    if data.get("train") in (None, ""):
        problems.append(Problem("data.train", "is required", "set data.train to an ImageFolder root (one folder per class)"))
    if check_files:
        for path in sorted(PATHS):
            sec, sub = path.split(".")
            v = raw.get(sec, {}).get(sub) if isinstance(raw.get(sec), dict) else None
            if isinstance(v, str) and v:
                full = os.path.join(base_dir, os.path.expanduser(v))
                want_dir = path.startswith("data.")
                if not (os.path.isdir(full) if want_dir else os.path.isfile(full)):
                    problems.append(Problem(path, f"{'folder' if want_dir else 'file'} not found: {v}",
                                            f"point {path} at an existing {'folder' if want_dir else 'file'} on the target"))
    ids = raw.get("device", {}).get("ids") if isinstance(raw.get("device"), dict) else None
    if isinstance(ids, list) and len(ids) > 1:
        problems.append(Problem("device.ids", "more than one device needs the msrun launcher, which this runner version does not have yet",
                                "use one device id, e.g. [0]"))
    return problems


def resolve(raw: dict[str, Any], base_dir: str = ".") -> dict[str, Any]:
    """Defaults filled in and paths made absolute; raises SpecError with every problem."""
    problems = check(raw, base_dir)
    if problems:
        raise SpecError(problems)
    spec = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        if isinstance(value, dict):
            spec[key].update(value)
        else:
            spec[key] = value
    for path in PATHS:
        sec, sub = path.split(".")
        if spec[sec][sub]:
            spec[sec][sub] = os.path.abspath(os.path.join(base_dir, os.path.expanduser(spec[sec][sub])))
    return spec


def _no_constants(name: str):
    raise json.JSONDecodeError(f"{name} is not valid JSON (use a number)", name, 0)


def load_file(path: str) -> dict[str, Any]:
    """Read a JSON spec; a syntax error becomes a Problem with the line and column."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=_no_constants)
    except FileNotFoundError:
        raise SpecError([Problem("", f"spec file not found: {path}", "pass the path of a JSON run spec")])
    except json.JSONDecodeError as e:
        raise SpecError([Problem("", f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg}", "fix the JSON syntax there")])
