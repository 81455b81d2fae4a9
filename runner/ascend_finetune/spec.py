"""The run spec: defaults (the reference recipe's), validation with field paths and fixes, resolution.

The rules live in one JSON Schema, `spec.schema.json`, next to this file: the extension and its
language server validate against the same file. Ascend boxes may lack the `jsonschema` package,
so the small subset the schema uses is interpreted here (`_walk`); the TypeScript side does the
same with ajv and must give the same problems (test/spec-examples runs both). About 630 lines: the
schema interpreter, the checks the schema cannot say (stages, sizes, files, named sources), resolution
and the spec-file loader share the problem type and the field paths.

Validation never stops at the first problem: a user fixing a spec wants every problem at once.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import os
import re
from dataclasses import dataclass
from typing import Any, NoReturn, cast

from .data.folder import IMAGE_EXTENSIONS
from .models.backbones import fixed_image_size, freeze_values
from .models.catalog import HF_HUB, MINDCV, SourceError, is_named
from .models.catalog import parse as parse_source
from .spec_types import RunSpec

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.schema.json")
with open(SCHEMA_FILE, encoding="utf-8") as _f:
    SCHEMA: dict[str, Any] = json.load(_f)


def _defaults(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in schema["properties"].items():
        out[key] = _defaults(sub) if sub.get("type") == "object" else copy.deepcopy(sub.get("default"))
    return out


DEFAULTS: dict[str, Any] = _defaults(SCHEMA)
ENUMS = {
    f"{sec}.{k}": f["enum"]
    for sec, s in SCHEMA["properties"].items()
    if s.get("type") == "object"
    for k, f in s["properties"].items()
    if "enum" in f
}
FREEZE_VALUES = ENUMS["model.freeze"]
# A model.pretrained that is no file but reads like a named source with a mistyped prefix (mindvc:,
# hf_hub:, hf:): two characters at least, so a Windows drive (C:) is a path.
SOURCE_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]+:")
PATHS = {
    f"{sec}.{k}": f["x-path"]
    for sec, s in SCHEMA["properties"].items()
    if s.get("type") == "object"
    for k, f in s["properties"].items()
    if "x-path" in f
}


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


def _types(rule: dict[str, Any]) -> list[str]:
    t = rule.get("type", [])
    return t if isinstance(t, list) else [t]


def _bound(kind: str, b: float) -> str:
    return str(float(b)) if kind == "number" else str(int(b))


def _check_number(path: str, value: Any, rule: dict[str, Any]) -> Problem | None:
    kind = "integer" if "integer" in _types(rule) else "number"
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (kind == "integer" and not isinstance(value, int))
        or not math.isfinite(value)
    ):
        return Problem(
            path,
            f"must be {'an integer' if kind == 'integer' else 'a number'}, got {json.dumps(value)}",
            f"set {path} to {'a whole number' if kind == 'integer' else 'a number'}",
        )
    lo_ex = "exclusiveMinimum" in rule
    lo, hi = rule.get("exclusiveMinimum", rule.get("minimum")), rule.get("maximum")
    if (lo is not None and (value <= lo if lo_ex else value < lo)) or (hi is not None and value > hi):
        rng = (f"{'>' if lo_ex else '>='} {_bound(kind, lo)}" if lo is not None else "") + (
            f"{' and ' if lo is not None else ''}<= {_bound(kind, hi)}" if hi is not None else ""
        )
        return Problem(path, f"must be {rng}, got {value}", f"set {path} to a value {rng}")
    return None


def _check_value(path: str, value: Any, rule: dict[str, Any]) -> Problem | None:
    """One field against its rule: enum, number, boolean, string (path or text) or array."""
    types = _types(rule)
    if "enum" in rule:
        if value not in rule["enum"] or isinstance(value, bool):
            hint = difflib.get_close_matches(str(value), rule["enum"], n=1, cutoff=0.5)
            return Problem(
                path,
                f"unknown value {json.dumps(value)}",
                (f'did you mean "{hint[0]}"? ' if hint else "") + f"one of: {', '.join(rule['enum'])}",
            )
        return None
    if "integer" in types or "number" in types:
        return _check_number(path, value, rule)
    if "boolean" in types:
        if not isinstance(value, bool):
            return Problem(path, f"must be true or false, got {json.dumps(value)}", f"set {path} to true or false")
        return None
    # a field of several types (train.class_weights: "auto" or a list) is checked as its value's type
    if "string" in types and (isinstance(value, str) or "array" not in types):
        ok = (
            isinstance(value, str)
            and len(value) >= rule.get("minLength", 0)
            and ("pattern" not in rule or re.search(rule["pattern"], value) is not None)
        )  # JSON Schema's pattern: a search, not anchored (as ajv does)
        if ok:
            return None
        if "x-path" in rule:
            return Problem(path, f"must be a path, got {json.dumps(value)}", f"set {path} to a path on the target")
        return Problem(
            path,
            f"must be {rule.get('x-expect', 'a string')}, got {json.dumps(value)}",
            rule.get("x-fix", f"set {path} to a string"),
        )
    if "array" in types:
        item = rule.get("items", {})

        def item_ok(i: Any) -> bool:
            if "object" in _types(item):  # model.unfreeze's steps: known keys, all required ones, each valid
                props = item.get("properties", {})
                return (
                    isinstance(i, dict)
                    and set(i) <= set(props)
                    and all(k in i for k in item.get("required", []))
                    and all(_check_value(k, v, props[k]) is None for k, v in i.items())
                )
            if "string" in _types(item):
                return isinstance(i, str) and len(i) >= item.get("minLength", 0)
            if "number" in _types(item):
                return _check_number("", i, item) is None
            return isinstance(i, int) and not isinstance(i, bool) and i >= item.get("minimum", -math.inf)

        ok = (
            isinstance(value, list)
            and rule.get("minItems", 0) <= len(value) <= rule.get("maxItems", math.inf)
            and all(item_ok(i) for i in value)
            and (not rule.get("uniqueItems") or len(set(value)) == len(value))
        )
        return (
            None
            if ok
            else Problem(
                path, f"must be {rule.get('x-expect', 'a list')}, got {json.dumps(value)}", rule.get("x-fix", "")
            )
        )
    return None


def _check_shapes(path: str, value: Any, rule: dict[str, Any]) -> list[Problem]:
    """A field of several shapes (model.preprocess: a preset name or an object of fields): checked as
    the branch of the value's type, an object's fields each by its own path."""
    for branch in rule["anyOf"]:
        if "object" in _types(branch) and isinstance(value, dict):
            return _walk(value, branch, path + ".")
        if "string" in _types(branch) and isinstance(value, str):
            p = _check_value(path, value, branch)
            return [p] if p else []
    return [Problem(path, f"must be {rule['x-expect']}, got {json.dumps(value)}", rule["x-fix"])]


def _missing(path: str, rule: dict[str, Any]) -> list[Problem]:
    """A required field that is absent, null or empty; a required section names its required fields."""
    if rule.get("type") == "object" and rule.get("required"):
        return [p for k in rule["required"] for p in _missing(f"{path}.{k}", rule["properties"][k])]
    fix = {"data.train": "set data.train to an ImageFolder root (one folder per class)"}.get(path, f"set {path}")
    return [Problem(path, "is required", fix)]


def _walk(obj: dict[str, Any], schema: dict[str, Any], prefix: str) -> list[Problem]:
    problems: list[Problem] = []
    props = schema["properties"]
    for key, value in obj.items():
        path = f"{prefix}{key}"
        if key not in props:
            problems.append(Problem(path, "unknown field", _did_you_mean(key, list(props))))
            continue
        rule = props[key]
        if rule.get("type") == "object":
            if isinstance(value, dict):
                problems += _walk(value, rule, path + ".")
            elif not (value is None and key in schema.get("required", [])):
                problems.append(Problem(path, f"must be an object, got {json.dumps(value)}", f'write "{key}": {{...}}'))
            continue
        if key in schema.get("required", []) and value in (None, ""):
            continue  # reported once, as "is required", below
        if value is None:
            if "null" not in _types(rule):
                problems.append(
                    Problem(
                        path,
                        "must not be null",
                        f"remove {path} to use the default ({json.dumps(rule.get('default'))})",
                    )
                )
            continue
        if "anyOf" in rule:
            problems += _check_shapes(path, value, rule)
            continue
        p = _check_value(path, value, rule)
        if p:
            problems.append(p)
    for key in schema.get("required", []):
        if obj.get(key) in (None, ""):
            problems += _missing(f"{prefix}{key}", props[key])
    return problems


def check(raw: Any, base_dir: str = ".", check_files: bool = True, resume: bool = False) -> list[Problem]:
    """Every problem in a spec (types, ranges, enums, unknown fields, files that must exist). `resume`: for
    a run resumed from a checkpoint, which replaces model.pretrained's weights and records the
    preprocessing: that file need not exist any more (a pruned parent run, a cleared cache)."""
    if not isinstance(raw, dict):
        return [Problem("", "a run spec must be a JSON object", SCHEMA["x-fix"])]
    problems = _walk(raw, SCHEMA, "")
    bad = {p.path for p in problems}
    problems += _stage_problems(raw.get("model"), bad)
    problems += _unfreeze_order_problems(raw.get("model"), bad | {p.path for p in problems})
    problems += _size_problems(raw, bad)
    if check_files:
        for path, kind in sorted(PATHS.items()):
            sec, sub = path.split(".")
            v = raw.get(sec, {}).get(sub) if isinstance(raw.get(sec), dict) else None
            if isinstance(v, str) and v and path not in bad:
                if path == "model.pretrained" and is_named(v):
                    problems += _named_source_problems(v, raw.get("model", {}), bad)
                    continue
                if path == "model.pretrained" and resume:
                    continue
                full = os.path.join(base_dir, os.path.expanduser(v))
                want_dir = kind == "folder"
                if not want_dir and os.path.isdir(full):
                    problems.append(
                        Problem(
                            path,
                            f"is a folder, not a file: {v}",
                            f"point {path} at a file in it (a .ckpt, .safetensors, .pth, .pt or .bin file), "
                            "not the folder",
                        )
                    )
                elif not (os.path.isdir(full) if want_dir else os.path.isfile(full)):
                    what = "folder" if want_dir else "file"
                    fix = f"point {path} at an existing {what} on the target"
                    if path == "model.pretrained" and SOURCE_LIKE.match(v):  # mindvc:…, hf_hub:…, hf:…
                        fix += ", or name weights to download as mindcv:<model> or hf-hub:<org>/<repo>"
                    problems.append(Problem(path, f"{what} not found: {v}", fix))
                elif want_dir:
                    p = _no_class_folders(path, v, full)
                    if p:
                        problems.append(p)
    return problems


def _stage_problems(model: Any, bad: set[str]) -> list[Problem]:
    """model.freeze and model.unfreeze's stages must be stages of model.backbone: the schema's enum holds
    every backbone's stages (models/backbones.py)."""
    if not isinstance(model, dict) or "model.backbone" in bad:
        return []
    backbone = model.get("backbone", DEFAULTS["model"]["backbone"])
    valid = freeze_values(backbone)
    rules = [("model.freeze", model.get("freeze", DEFAULTS["model"]["freeze"]))]
    steps = model.get("unfreeze")
    if isinstance(steps, list):
        rules += [(f"model.unfreeze[{i}].freeze", s.get("freeze")) for i, s in enumerate(steps) if isinstance(s, dict)]
    return [
        Problem(
            path,
            f"{backbone} has no stage {value[6:]!r}: its freeze values are {', '.join(valid)}",
            f"set {path} to one of: {', '.join(valid)}",
        )
        for path, value in rules
        if isinstance(value, str)
        and value.startswith("up_to:")
        and value not in valid
        and path not in bad
        and not any(b.startswith(path) for b in bad)
    ]


def _unfreeze_order_problems(model: Any, bad: set[str]) -> list[Problem]:
    """model.unfreeze's steps come in increasing epochs, each freezing no more than the rule before it
    (train/unfreeze.py's order_issues, which the run checks again): a step that freezes more is the
    problem of its `freeze`, one out of order that of its `epoch`. Checked once the freeze values are
    all stages of the backbone."""
    if not isinstance(model, dict) or any(
        b.startswith(("model.backbone", "model.freeze", "model.unfreeze")) for b in bad
    ):
        return []
    steps = model.get("unfreeze")
    if not isinstance(steps, list) or not steps:
        return []
    from .train.unfreeze import order_issues

    backbone = model.get("backbone", DEFAULTS["model"]["backbone"])
    freeze = model.get("freeze", DEFAULTS["model"]["freeze"])
    valid = freeze_values(backbone)
    if freeze not in valid or any(s["freeze"] not in valid for s in steps):
        return []
    out = []
    for issue in order_issues(freeze, steps, backbone):
        path = f"model.unfreeze[{issue.index}].{issue.field}"
        before = issue.previous if issue.previous == "model.freeze" else f"{issue.previous}.freeze"
        if issue.field == "epoch":
            out.append(
                Problem(
                    path,
                    f"epoch {issue.epoch} does not come after epoch {issue.previous_epoch} of {issue.previous}: "
                    "the steps of model.unfreeze take effect in increasing epochs",
                    f"set {path} to an epoch after {issue.previous_epoch}, or list the steps in increasing epochs",
                )
            )
        else:
            out.append(
                Problem(
                    path,
                    f'"{issue.freeze}" freezes more of {backbone} than {before} "{issue.previous_freeze}": '
                    "each step of model.unfreeze freezes no more than the rule before it",
                    f'set {path} to a rule that freezes no more than "{issue.previous_freeze}": '
                    f"{', '.join(issue.allowed)}",
                )
            )
    return out


def _size_problems(raw: dict[str, Any], bad: set[str]) -> list[Problem]:
    """A mindcv backbone with a fixed input size (ViT's position embedding) takes images of that size."""
    model, data = raw.get("model"), raw.get("data")
    if not isinstance(model, dict) or "model.backbone" in bad or "data.image_size" in bad:
        return []
    backbone = model.get("backbone", DEFAULTS["model"]["backbone"])
    fixed = fixed_image_size(backbone)
    size = (data if isinstance(data, dict) else {}).get("image_size", DEFAULTS["data"]["image_size"])
    if fixed is None or size == fixed:
        return []
    return [
        Problem(
            "data.image_size",
            f"{backbone} takes {fixed} px images only (its position embedding is fixed), not {size}",
            f"set data.image_size to {fixed}, or pick another backbone",
        )
    ]


def _named_source_problems(value: str, model: dict[str, Any], bad: set[str]) -> list[Problem]:
    """A `mindcv:`/`hf-hub:` model.pretrained: a name the catalog knows, for the spec's backbone. The
    fixes offer the backbone's own sources, never another backbone's weights (a mindcv name it has
    no file for got the nearest name, of another architecture, which validate then refused)."""
    backbone = model.get("backbone", DEFAULTS["model"]["backbone"])
    known = "model.backbone" not in bad
    try:
        src = parse_source(value)
    except SourceError as e:
        if e.why in ("mindcv_not_backbone", "timm_arch_unmapped") and known:  # a real name, not a backbone
            return [Problem("model.pretrained", str(e), _weights_for(backbone))]
        if e.why != "unknown_mindcv_model" or not known:
            return [Problem("model.pretrained", str(e), e.fix)]
        name = e.params["name"]
        own = [n for n, entry in MINDCV.items() if entry.backbone == backbone]
        near = difflib.get_close_matches(name, own, n=1, cutoff=0.5)
        fix = f'did you mean "mindcv:{near[0]}"?' if near else _weights_for(backbone)
        said = f"mindcv publishes no {backbone} weights" if name == backbone else str(e)
        return [Problem("model.pretrained", said, fix)]
    if src.backbone == backbone or not known:  # an unknown backbone has its own problem
        return []
    return [
        Problem(
            "model.pretrained",
            f"{src.text} holds {src.backbone} weights but model.backbone is {backbone}",
            f'set model.backbone to "{src.backbone}", or {_weights_for(backbone)}',
        )
    ]


def _weights_for(backbone: str, show: int = 3) -> str:
    """What to write for `backbone`'s weights: its named sources (mindcv's first), or a local file."""
    sources = [f"mindcv:{n}" for n, e in MINDCV.items() if e.backbone == backbone]
    sources += [f"hf-hub:{repo}" for repo, b in HF_HUB.items() if b == backbone]
    if not sources:
        return f"point model.pretrained at a file of {backbone} weights: no named source has them"
    more = f" ({len(sources)} in all: completion and `weights-status` list them)" if len(sources) > show else ""
    return f"pick {backbone} weights: {', '.join(sources[:show])}{more}"


def _no_class_folders(path: str, value: str, full: str) -> Problem | None:
    """An ImageFolder root without any class sub-folder (images straight in it, or nothing): a run
    would fail at its start, so validation says so. One listing, stopped at the first class folder."""
    images = 0
    try:
        with os.scandir(full) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                if e.is_dir():  # follows symlinks, as the data scan does
                    return None
                if os.path.splitext(e.name)[1].lower() in IMAGE_EXTENSIONS:
                    images += 1
    except OSError as e:
        return Problem(path, f"cannot list {value}: {e.strerror or e}", f"make {path} a folder this user can read")
    held = f"it holds {images} image file(s) directly" if images else "it is empty"
    return Problem(
        path,
        f"no class folders in {value} ({held}): an ImageFolder root has one sub-folder per class",
        f"put the images in one folder per class under {value} (e.g. {value}/cat/, {value}/dog/)",
    )


def resolve(raw: dict[str, Any], base_dir: str = ".", resume: bool = False) -> RunSpec:
    """Defaults filled in and paths made absolute; raises SpecError with every problem. The result has
    spec_types.RunSpec's types: check() has held every field to the schema, which test_spec_types keeps
    in step with RunSpec. `resume`: as check()'s (the CLI's `train --resume` and `launch --resume`)."""
    problems = check(raw, base_dir, resume=resume)
    if problems:
        raise SpecError(problems)
    spec = copy.deepcopy(DEFAULTS)
    _merge(spec, raw)
    for path in PATHS:
        sec, sub = path.split(".")
        if spec[sec][sub] and not (path == "model.pretrained" and is_named(spec[sec][sub])):
            spec[sec][sub] = os.path.abspath(os.path.join(base_dir, os.path.expanduser(spec[sec][sub])))
    return cast(RunSpec, spec)


def _merge(into: dict[str, Any], over: dict[str, Any]) -> None:
    """`over` written onto the defaults, section by section: a nested section (train.early_stopping)
    keeps the defaults of the fields it leaves out."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _no_constants(name: str) -> NoReturn:
    raise json.JSONDecodeError(f"{name} is not valid JSON (use a number)", name, 0)


MAX_DEPTH = 32  # nesting the reader accepts; a spec has 2 (section, field), the editor refuses past 32 too
MAX_BYTES = 1 << 20  # a spec is a few KB; the editor reads 16 KB at most


class _Keys(dict[str, Any]):
    """A JSON object that remembers the keys it saw more than once (the JSON reader's object_pairs_hook)."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> _Keys:
    obj, seen = _Keys(), []
    for k, v in pairs:
        if k in obj and k not in seen:
            seen.append(k)
        obj[k] = v
    obj.duplicates = seen
    return obj


def _duplicate_problems(value: Any, prefix: str = "") -> list[Problem]:
    """Every key written twice in one object, by its field path: JSON readers disagree on which one
    counts (Python's and the extension's take the last, silently), so the spec is refused, as a
    YAML spec is."""
    out: list[Problem] = []
    if isinstance(value, dict):
        where = prefix.rstrip(".") or "the top level"
        for k in getattr(value, "duplicates", []):
            out.append(
                Problem(
                    f"{prefix}{k}",
                    f'duplicate key "{k}" in {where}: it is written more than once',
                    f'keep one "{k}" in {where} and delete the others',
                )
            )
        for k, v in value.items():
            out += _duplicate_problems(v, f"{prefix}{k}.")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _duplicate_problems(v, f"{prefix.rstrip('.')}[{i}].")
    return out


def _too_deep(text: str) -> tuple[int, int] | None:
    """(line, column) where bracket nesting passes MAX_DEPTH outside strings, else None: Python's JSON
    reader recurses once per level and would raise RecursionError on deep input."""
    depth, in_str, esc, line, col = 0, False, False, 1, 0
    for c in text:
        col += 1
        if c == "\n":
            line, col = line + 1, 0
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line, col
        elif c in "]}":
            depth -= 1
    return None


def _decode(data: bytes) -> str:
    """The file's text; a file that is not UTF-8 is a Problem saying what it is instead."""
    fix = "save the spec as UTF-8 text (a JSON run spec)"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError([Problem("", "the spec file is UTF-16 (it starts with a UTF-16 byte-order mark)", fix)])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise SpecError(
            [
                Problem(
                    "",
                    f"not a UTF-8 text file: invalid byte 0x{data[e.start]:02x} at offset {e.start} (line {line})",
                    fix,
                )
            ]
        ) from None
    bad = next((i for i, c in enumerate(text) if c < " " and c not in "\t\n\r"), None)
    if bad is not None:
        line = text.count("\n", 0, bad) + 1
        raise SpecError([Problem("", f"not a text file: control character U+{ord(text[bad]):04X} at line {line}", fix)])
    return text


def load_file(path: str) -> dict[str, Any]:
    """Read a JSON spec; a syntax error becomes a Problem with the line and column. So do a file that
    is not UTF-8 text, nesting deeper than MAX_DEPTH, and a key written twice in one object."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise SpecError([Problem("", f"spec file not found: {path}", "pass the path of a JSON run spec")]) from None
    except OSError as e:
        raise SpecError(
            [
                Problem(
                    "",
                    f"cannot read the spec file {path}: {e.strerror or e}",
                    "pass the path of a readable JSON run spec",
                )
            ]
        ) from None
    if len(data) > MAX_BYTES:
        raise SpecError(
            [
                Problem(
                    "",
                    f"the spec file is larger than {MAX_BYTES >> 20} MB: a run spec is a few KB",
                    "pass a JSON run spec",
                )
            ]
        )
    text = _decode(data)
    deep = _too_deep(text)
    if deep:
        raise SpecError(
            [
                Problem(
                    "",
                    f"nested more than {MAX_DEPTH} levels deep at line {deep[0]} column {deep[1]}: "
                    "a run spec has 2 levels (section, field)",
                    'write the spec as sections of fields, e.g. {"data": {"train": "DIR"}}',
                )
            ]
        )
    try:
        raw = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise SpecError(
            [Problem("", f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg}", "fix the JSON syntax there")]
        ) from e
    except RecursionError:  # _too_deep stops this first; kept so that no input gives a traceback
        raise SpecError([Problem("", "nested too deeply to read", "write the spec as sections of fields")]) from None
    dups = _duplicate_problems(raw)
    if dups:
        raise SpecError(dups)
    return _plain(raw)


def _plain(value: Any) -> Any:
    """The parsed spec with plain dicts (the reader's _Keys carry only the duplicate bookkeeping)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
