"""Reading a sweep spec or a base run spec: JSON (the run spec's own reader, spec.load_file) or YAML.

YAML is read with PyYAML, which Optuna depends on (so it is there wherever sweeps run), in safe mode
and with YAML 1.2's core rules, as the extension's `yaml` package reads run specs: `1e-3` is a number
(PyYAML's YAML 1.1 reads it as a string) and `yes`/`no`/`on`/`off` stay strings. A key written twice
is refused, as in JSON specs. The file is read through rundir.read_bytes (regular file, capped).
"""

from __future__ import annotations

import re
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no types; Optuna brings it

from .. import spec as specmod
from ..rundir import read_bytes
from ..spec import Problem, SpecError


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core booleans and floats, refusing duplicate keys."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:float")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
        |[-+]?[0-9]+[eE][-+]?[0-9]+
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            mark = key_node.start_mark
            raise SpecError(
                [
                    Problem(
                        str(key),
                        f'duplicate key "{key}" at line {mark.line + 1}: it is written more than once',
                        f'keep one "{key}" and delete the others',
                    )
                ]
            )
        seen.add(key)
    return dict(loader.construct_mapping(node, deep=deep))


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def is_yaml(path: str) -> bool:
    return path.lower().endswith((".yaml", ".yml"))


def load(path: str, what: str = "spec") -> Any:
    """The value a JSON or YAML file holds; SpecError with a Problem saying what is wrong with it."""
    if not is_yaml(path):
        return specmod.load_file(path)
    try:
        data = read_bytes(path, specmod.MAX_BYTES)
    except FileNotFoundError:
        raise SpecError([Problem("", f"{what} file not found: {path}", f"pass the path of a {what} file")]) from None
    except OSError as e:
        raise SpecError([Problem("", f"cannot read {path}: {e}", f"pass a readable {what} file")]) from None
    try:
        return yaml.load(data.decode("utf-8"), Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except UnicodeDecodeError:
        raise SpecError([Problem("", f"{path} is not UTF-8 text", f"save the {what} as UTF-8")]) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise SpecError(
            [Problem("", f"not valid YAML{where}: {getattr(e, 'problem', None) or e}", "fix the YAML syntax there")]
        ) from None
