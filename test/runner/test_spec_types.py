"""spec_types.py (the resolved spec's TypedDicts) against spec.schema.json, so the two cannot drift.

Walks the schema and the TypedDicts side by side: every schema property has a typed field and every
typed field a schema property, and their types agree (integer -> int, number -> float, string -> str,
enum -> Literal of the same values, boolean -> bool, object -> TypedDict, array -> list of the items'
type, nullable -> `X | None`). Then checks that what `resolve` really returns has those types (a JSON
number may come back as an int: `float` accepts it, as mypy does). The checker is tested on a small
pair broken on purpose, so a green run means the real pair agrees, not that the checker is blind.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Literal, Optional, TypedDict, Union, get_args, get_origin, get_type_hints

import pytest

from ascend_finetune import spec as specmod
from ascend_finetune.spec import SCHEMA
from ascend_finetune.spec_types import RunSpec

KINDS: dict[str, type] = {"integer": int, "number": float, "string": str, "boolean": bool}


def _name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else repr(hint).replace("typing.", "")


def _members(hint: Any) -> tuple[Any, ...]:
    return get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,)


def drift(schema: dict[str, Any], typed: type, prefix: str = "", optional: bool = False) -> list[str]:
    """Every disagreement between an object schema and a TypedDict, by field path, with the fix.
    `optional`: an object value of a field (model.preprocess's form), whose keys may be left out."""
    props: dict[str, Any] = schema.get("properties", {})
    hints = get_type_hints(typed)
    where = f"{typed.__name__} in runner/ascend_finetune/spec_types.py"
    out = [
        f"{prefix}{k}: schema property with no typed field: add `{k}: ...` to {where}" for k in props if k not in hints
    ]
    for k, hint in hints.items():
        if k not in props:
            out.append(
                f"{prefix}{k}: typed field with no schema property: remove it from {where} or add it to the schema"
            )
        elif optional and k in typed.__required_keys__:
            out.append(f"{prefix}{k}: a key of an object value may be left out: `total=False` in {where}")
        elif not optional and k not in typed.__required_keys__:
            out.append(f"{prefix}{k}: optional key in {where}: resolve fills every default, make it required")
        else:
            out += _compare(f"{prefix}{k}", props[k], hint)
    return out


def _compare(path: str, rule: dict[str, Any], hint: Any) -> list[str]:
    kinds = rule.get("type", [])
    kinds = kinds if isinstance(kinds, list) else [kinds]
    nullable = "null" in kinds or None in rule.get("enum", [])
    members = _members(hint)
    rest = [m for m in members if m is not type(None)]
    if "anyOf" in rule:  # model.preprocess: a preset name or an object: one member per shape, in order
        if len(rest) != len(rule["anyOf"]):
            return [f"{path}: the schema has {len(rule['anyOf'])} shapes but the type is {_name(hint)}"]
        out = []
        for shape, m in zip(rule["anyOf"], rest):
            if shape.get("type") != "object":
                out += _compare(path, shape, m)
            elif typing.is_typeddict(m):
                out += drift(shape, m, path + ".", optional=True)
            else:
                out.append(f"{path}: the schema has an object but the type is {_name(m)}: write a TypedDict")
        return out
    if nullable != (len(rest) < len(members)):
        return [
            f"{path}: the schema {'allows' if nullable else 'does not allow'} null but the type is {_name(hint)}: "
            + ("write `X | None`" if nullable else "drop `| None`")
        ]
    several = [k for k in kinds if k != "null"]
    if len(several) > 1:  # train.class_weights: "auto" (a string pattern) or a list: one member per type
        if len(rest) != len(several):
            return [f"{path}: the schema has types {several} but the type is {_name(hint)}: one member per type"]
        out = []
        for k in several:
            one = {**rule, "type": k}
            if all(_compare(path, one, m) for m in rest):
                out.append(f"{path}: no member of {_name(hint)} fits the schema's {k}")
        return out
    if len(rest) != 1:
        return [f"{path}: the type {_name(hint)} is a union of several types; the schema has one"]
    t = rest[0]
    if "enum" in rule:
        values = [v for v in rule["enum"] if v is not None]
        if get_origin(t) is not Literal or sorted(map(repr, get_args(t))) != sorted(map(repr, values)):
            return [f"{path}: the schema's enum is {values} but the type is {_name(t)}: write Literal[...] of them"]
        return []
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "object":
        if not typing.is_typeddict(t):
            return [f"{path}: the schema has an object but the type is {_name(t)}: write a TypedDict"]
        return drift(rule, t, path + ".")
    if kind == "array":
        if get_origin(t) is not list or len(get_args(t)) != 1:
            return [f"{path}: the schema has an array but the type is {_name(t)}: write list[...]"]
        return _compare(path + "[]", rule.get("items", {}), get_args(t)[0])
    if kind not in KINDS:
        return [f"{path}: schema type {kinds} has no Python counterpart in this test"]
    if kind == "string" and get_origin(t) is Literal and "pattern" in rule:  # "auto" typed as Literal["auto"]
        if all(isinstance(a, str) and re.search(rule["pattern"], a) for a in get_args(t)):
            return []
        return [f"{path}: {_name(t)} does not match the schema's pattern {rule['pattern']}"]
    if t is not KINDS[kind]:
        return [f"{path}: the schema has {kind} but the type is {_name(t)}: write {KINDS[kind].__name__}"]
    return []


def conforms(value: Any, hint: Any, path: str = "spec") -> list[str]:
    """Where a runtime value does not have the declared type (int accepted for float, not bool for int)."""
    members = _members(hint)
    if len(members) > 1:
        fits = [conforms(value, m, path) for m in members]
        return [] if any(not f for f in fits) else [f"{path}: {value!r} is not {_name(hint)}"]
    if hint is type(None):
        return [] if value is None else [f"{path}: {value!r} is not None"]
    if get_origin(hint) is Literal:
        return [] if value in get_args(hint) else [f"{path}: {value!r} is not one of {get_args(hint)}"]
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object"]
        hints = get_type_hints(hint)
        out = [f"{path}.{k}: missing" for k in hints if k not in value]
        out += [f"{path}.{k}: not a typed field" for k in value if k not in hints]
        return out + [p for k in hints if k in value for p in conforms(value[k], hints[k], f"{path}.{k}")]
    if get_origin(hint) is list:
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        return [p for i, v in enumerate(value) for p in conforms(v, get_args(hint)[0], f"{path}[{i}]")]
    ok = {
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        str: lambda v: isinstance(v, str),
        bool: lambda v: isinstance(v, bool),
    }[hint](value)
    return [] if ok else [f"{path}: {value!r} is not {_name(hint)}"]


def test_every_schema_field_has_its_type_and_every_typed_field_its_schema_property():
    problems = drift(SCHEMA, RunSpec)
    assert problems == [], "spec.schema.json and spec_types.py disagree:\n" + "\n".join(problems)


def _data_root(root: Any) -> str:
    (root / "cat").mkdir(parents=True)
    (root / "dog").mkdir()
    return str(root)


def test_resolve_of_the_defaults_returns_the_declared_types(tmp_path):
    resolved = specmod.resolve({"data": {"train": _data_root(tmp_path / "train")}}, str(tmp_path))
    assert conforms(resolved, RunSpec) == []
    assert resolved["amp"]["init_scale"] == 2**24 and resolved["model"]["pretrained"] is None


def test_resolve_of_a_spec_that_sets_every_nullable_field_returns_the_declared_types(tmp_path):
    (tmp_path / "w.ckpt").write_bytes(b"")
    raw = {
        "name": "typed",
        "data": {"train": _data_root(tmp_path / "train"), "val": "val", "prefetch": 8, "val_split": 0},
        "model": {"backbone": "resnet18", "pretrained": "w.ckpt", "freeze": "up_to:layer2", "num_classes": 2},
        "train": {
            "optimizer": "adamw",
            "lr_schedule": "step",
            "lr_step_size": 3,
            "lr": 1,
            "class_weights": [1, 2.5],
            "ema": 0.99,
            "early_stopping": {"patience": 2},
        },
        "amp": {"level": "O0", "loss_scale": "fixed", "init_scale": 1024.0},
        "device": {"target": "CPU", "ids": [0, 1], "nodes": ["a", "b"], "master_port": 29500, "telemetry_s": 0},
    }
    _data_root(tmp_path / "val")
    resolved = specmod.resolve(raw, str(tmp_path))
    assert conforms(resolved, RunSpec) == []
    assert resolved["data"]["val"] == str(tmp_path / "val") and resolved["train"]["lr"] == 1
    # a nested section written in part keeps the defaults of the rest
    assert resolved["train"]["early_stopping"] == {"metric": "val_loss", "patience": 2, "min_delta": 0.0}
    auto = specmod.resolve({"data": {"train": raw["data"]["train"]}, "train": {"class_weights": "auto"}}, str(tmp_path))
    assert conforms(auto, RunSpec) == []


# A pair broken on purpose: each field below disagrees with its schema property in one way.
BROKEN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "good": {"type": "integer"},
        "only_in_schema": {"type": "string"},
        "count": {"type": "integer"},
        "rate": {"type": "number"},
        "flag": {"type": "boolean"},
        "mode": {"enum": ["a", "b", "c"]},
        "maybe": {"type": ["integer", "null"]},
        "never_null": {"type": "string"},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "section": {
            "type": "object",
            "properties": {"inner": {"type": "number"}, "lost": {"type": "boolean"}},
        },
        "loose": {"type": "object", "properties": {"x": {"type": "integer"}}},
    },
}


class _Section(TypedDict):
    inner: int  # number typed as int


class _Partial(TypedDict, total=False):
    x: int


class _Broken(TypedDict):
    good: int
    lr_schedul: str  # misspelt: no such schema property
    count: float  # integer typed as float
    rate: int  # number typed as int
    flag: int  # boolean typed as int
    mode: Literal["a", "b"]  # one enum value short
    maybe: int  # nullable typed as not
    never_null: Optional[str]  # noqa: UP045 (the old spelling must be read too)
    ids: list[str]  # items are integers
    section: _Section
    loose: _Partial


class _Fine(TypedDict):
    good: int
    mode: Literal["c", "b", "a"]
    maybe: int | None
    section: _Section


def test_the_checker_finds_every_kind_of_disagreement_in_a_broken_pair():
    problems = drift(BROKEN_SCHEMA, _Broken)
    by_path = {p.split(":", 1)[0]: p for p in problems}
    assert sorted(by_path) == sorted(
        [
            "only_in_schema",
            "lr_schedul",
            "count",
            "rate",
            "flag",
            "mode",
            "maybe",
            "never_null",
            "ids[]",
            "section.inner",
            "section.lost",
            "loose.x",
        ]
    )
    assert len(problems) == len(by_path)
    assert "typed field with no schema property" in by_path["lr_schedul"] and "_Broken" in by_path["lr_schedul"]
    assert "add `only_in_schema: ...` to _Broken" in by_path["only_in_schema"]
    assert "write float" in by_path["rate"] and "write int" in by_path["count"] and "write bool" in by_path["flag"]
    assert "['a', 'b', 'c']" in by_path["mode"] and "write `X | None`" in by_path["maybe"]
    assert "drop `| None`" in by_path["never_null"] and "write int" in by_path["ids[]"]
    assert "make it required" in by_path["loose.x"]


def test_the_checker_passes_a_pair_that_agrees_in_any_order_and_spelling():
    schema = {
        "properties": {
            "good": {"type": "integer"},
            "mode": {"enum": ["a", "b", "c"]},
            "maybe": {"type": ["null", "integer"]},
            "section": {"type": "object", "properties": {"inner": {"type": "integer"}}},
        }
    }
    assert drift(schema, _Fine) == []


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"good": 1, "mode": "d", "maybe": None, "section": {"inner": 1}}, "spec.mode"),
        ({"good": True, "mode": "a", "maybe": None, "section": {"inner": 1}}, "spec.good"),
        ({"good": 1, "mode": "a", "maybe": "1", "section": {"inner": 1}}, "spec.maybe"),
        ({"good": 1, "mode": "a", "maybe": 2, "section": {}}, "spec.section.inner"),
        ({"good": 1, "mode": "a", "maybe": 2, "section": {"inner": 1}, "extra": 0}, "spec.extra"),
    ],
)
def test_a_value_of_the_wrong_type_does_not_conform(value, where):
    assert [p.split(":", 1)[0] for p in conforms(value, _Fine)] == [where]
