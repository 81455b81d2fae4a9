"""The runner's errors, in a module of their own with no numpy or MindSpore import: the CLI
catches ToolError for every command, and `doctor`, `validate`, `ls` and `probe` must start without
loading either (doctor even where numpy is missing).

Every error object the runner prints or records (docs/protocol.md, "Errors") has a broad `kind`
callers branch on, a stable `code` specific to its cause and the named `params` its English
`message` is built from, so the extension can word it in the user's language."""

from __future__ import annotations

import errno
from typing import Any


def error_dict(
    kind: str, message: str, code: str | None = None, params: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """The error object: `kind`, `code` (the kind itself where no cause was named), `params`, `message`, extras."""
    return {"kind": kind, "code": code or kind, "params": dict(params or {}), "message": message, **extra}


def is_disk_full(e: BaseException) -> bool:
    """ENOSPC or EDQUOT, raised directly or wrapped (MindSpore re-raises some as RuntimeError)."""
    seen: BaseException | None = e
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "No space left on device" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full_error(run_dir: str, e: BaseException, trace_tail: str | None) -> dict[str, Any]:
    """A run's end on a full disk (is_disk_full): what to do, and the run directory the disk holds."""
    message = f"the disk holding {run_dir} is full ({e}): free some space, then resume from the last checkpoint"
    params = {"run_dir": run_dir, "text": str(e)}
    return error_dict("disk_full", message[:500], "disk_full", params, trace_tail=trace_tail)


def exception_error(e: BaseException, **extra: Any) -> dict[str, Any]:
    """An exception of a class the runner did not expect: its class and first line, as they are."""
    text = str(e).strip().splitlines()[0][:500] if str(e).strip() else type(e).__name__
    return error_dict(type(e).__name__, text, "exception", {"type": type(e).__name__, "text": text}, **extra)


class ToolError(Exception):
    """Bad input for a checkpoint tool: `kind`, `why` (the error's code), `params` and `extra` become
    the CLI's error object (exit `code`)."""

    def __init__(
        self,
        kind: str,
        message: str,
        code: int = 2,
        *,
        why: str | None = None,
        params: dict[str, Any] | None = None,
        **extra: Any,
    ):
        super().__init__(message)
        self.kind, self.code, self.extra = kind, code, extra
        self.why, self.params = why or kind, dict(params or {})

    def as_dict(self) -> dict[str, Any]:
        return error_dict(self.kind, str(self), self.why, self.params, **self.extra)


class PretrainedError(Exception):
    """The file cannot serve as a pretrained backbone (or a --resume checkpoint) at all. `why` is the
    error's code, `params` the values its message names."""

    def __init__(self, message: str, why: str = "pretrained_unusable", **params: Any):
        super().__init__(message)
        self.why, self.params = why, params


def check_batch_size(batch_size: int | None) -> None:
    """`--batch-size` of eval and predict: absent (the run's own) or at least 1."""
    if batch_size is not None and batch_size < 1:
        raise ToolError(
            "bad_input",
            f"--batch-size must be at least 1 (got {batch_size})",
            field="--batch-size",
            why="bad_batch_size",
            params={"batch_size": batch_size},
        )
