"""The CLI's error line: `{"error": {kind, code, params, message, ...}}` (docs/protocol.md, "Errors")
for every error a command ends with, and its exit code."""

from __future__ import annotations

import json
import sys
from typing import Any

from . import spec as specmod
from .checkpoints.errors import ToolError, error_dict
from .rundir import UnsafeFile


class CliError(Exception):
    """A command's refusal: exit `code`, the broad `kind`, the cause's code `why` and its `params`."""

    def __init__(
        self,
        code: int,
        kind: str,
        message: str,
        *,
        why: str | None = None,
        params: dict[str, Any] | None = None,
        **extra: Any,
    ):
        super().__init__(message)
        self.code, self.payload = code, error_dict(kind, message, why, params, **extra)

    @classmethod
    def of(cls, code: int, kind: str, e: Exception, message: str | None = None, **extra: Any) -> CliError:
        """A CliError for an error another module raised, keeping its code (`why`) and `params`."""
        return cls(code, kind, str(e) if message is None else message, why=getattr(e, "why", None),
                   params=getattr(e, "params", None), **extra)  # fmt: skip


def out(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def bad_spec(e: specmod.SpecError, **extra: Any) -> dict[str, Any]:
    """A spec's problems (each worded by the extension from its own fields): code `bad_spec`, `{count}`."""
    problems = [p.as_dict() for p in e.problems]
    return error_dict("bad_spec", str(e), "bad_spec", {"count": len(problems)}, problems=problems, **extra)


def report(e: BaseException) -> int | None:
    """Print the error line for an error the CLI knows and return the exit code; None for any other."""
    if isinstance(e, specmod.SpecError):
        out({"error": bad_spec(e)})
        return 2
    if isinstance(e, CliError):
        out({"error": e.payload})
        return e.code
    if isinstance(e, ToolError):
        out({"error": e.as_dict()})
        return e.code
    if isinstance(e, UnsafeFile):  # a symlink, FIFO or device where the runner reads or writes a run's file
        out({"error": e.as_dict()})
        return 2
    return None
