"""The run's facts inside each checkpoint it saves, so they travel with the file.

A run's checkpoints.json records, for every checkpoint, the preprocessing the weights were trained
with and where the pretrained weights came from (store.py's `extra`). A checkpoint copied away from
its run folder (to another box, into a colleague's folder) used to lose both: fine-tuning from it
fell back to ImageNet's preprocessing (`preprocess_not_recorded`). So the same facts are also saved
in the file, as one `run_record` entry: the JSON bytes as a 1-D uint8 tensor, which both `.ckpt` and
`.safetensors` hold (MindSpore saves no strings to `.safetensors`).

The manifest stays the first word: it is the run's own record beside the file. The file's record is
read only when no manifest lists the checkpoint, through format.py's checked index, at most
MAX_RECORD_BYTES, and only a JSON object is used; the reader checks each value (preprocess.from_record).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from .errors import ToolError
from .format import read_index

RECORD_ENTRY = "run_record"
MAX_RECORD_BYTES = 64 << 10  # a record is ~1 KB


def record_tensor(facts: dict[str, Any]) -> Any:
    """The `run_record` entry's data for ms.save_checkpoint."""
    import mindspore as ms

    raw = json.dumps(facts, sort_keys=True, ensure_ascii=True).encode()
    return ms.Tensor(np.frombuffer(raw, dtype=np.uint8).copy())


def read_record(path: str) -> dict[str, Any] | None:
    """The record a checkpoint file carries, or None: none there (an older runner's file, or another
    tool's), a file that cannot be read, or an entry that is not a small JSON object."""
    try:
        index = read_index(path)
        e = index.tensors.get(RECORD_ENTRY)
        if e is None or e.dtype != "UInt8" or len(e.shape) != 1 or not 0 < e.shape[0] <= MAX_RECORD_BYTES:
            return None
        doc = json.loads(index.read(RECORD_ENTRY).tobytes().decode())
    except (ToolError, OSError, ValueError, RecursionError):  # JSONDecodeError is a ValueError; deep nesting
        return None
    return doc if isinstance(doc, dict) else None


ORIGINS = ("runner", "modelzoo", "mindcv", "torch", "unknown")  # origin.origin_of_file's
MAX_TEXT = 1000  # a source or file path in a record


MAX_CHAIN = 8  # `from` links kept: a fine-tune of a fine-tune of ... of the first weights


def lineage(record: object, depth: int = 0) -> dict[str, Any] | None:
    """A record's `weights` (where a run's pretrained weights came from: source, file, origin, sha256,
    and `from`, the same for the weights that checkpoint itself was trained from, when it was a runner's),
    each value checked, as they go on into run_started, new manifest entries and the next record: a
    source and file of at most MAX_TEXT characters, an origin origin.py names, a sha256 of 64 hex
    digits, at most MAX_CHAIN links. None without a usable source."""
    if not isinstance(record, dict):
        return None
    out: dict[str, Any] = {}
    for key in ("source", "file"):
        v = record.get(key)
        if isinstance(v, str) and 0 < len(v) <= MAX_TEXT and v.isprintable():
            out[key] = v
    if record.get("origin") in ORIGINS:
        out["origin"] = str(record["origin"])
    sha = record.get("sha256")
    if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha):
        out["sha256"] = sha
    parent = lineage(record.get("from"), depth + 1) if depth < MAX_CHAIN else None
    if parent is not None:
        out["from"] = parent
    return out if "source" in out else None
