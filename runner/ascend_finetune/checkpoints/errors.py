"""The checkpoint code's errors, in a module of their own with no numpy or MindSpore import: the CLI
catches ToolError for every command, and `doctor`, `validate`, `ls` and `probe` must start without
loading either (doctor even where numpy is missing)."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """Bad input for a checkpoint tool: `kind` and `extra` become the CLI's error object (exit `code`)."""

    def __init__(self, kind: str, message: str, code: int = 2, **extra: Any):
        super().__init__(message)
        self.kind, self.code, self.extra = kind, code, extra


class PretrainedError(Exception):
    """The file cannot serve as a pretrained backbone (or a --resume checkpoint) at all."""
