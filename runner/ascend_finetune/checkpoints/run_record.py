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
    """The `run_record` entry's data for ms.save_checkpoint: the facts as UTF-8 JSON, within
    MAX_RECORD_BYTES (a reader refuses more): a chain of fine-tunes too long for it loses its `from`
    links first, then the weights' lineage, never the preprocessing."""
    import mindspore as ms

    def encoded(d: dict[str, Any]) -> bytes:
        return json.dumps(d, sort_keys=True, ensure_ascii=False).encode()

    raw = encoded(facts)
    weights = facts.get("weights")
    if len(raw) > MAX_RECORD_BYTES and isinstance(weights, dict):
        raw = encoded({**facts, "weights": {k: v for k, v in weights.items() if k != "from"}})
    if len(raw) > MAX_RECORD_BYTES:
        raw = encoded({k: v for k, v in facts.items() if k != "weights"})
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
LINEAGE_KEYS = ("source", "file", "origin", "sha256")  # one link of `weights`, beside its `from`


MAX_LINKS = 8  # `from` links kept: a fine-tune of a fine-tune of ... of the first weights
MAX_READ = 64  # `from` links read at most from a record someone else wrote


def _weights(record: object) -> dict[str, Any] | None:
    """One link's values, checked: a source and file of at most MAX_TEXT printable characters, an origin
    origin.py names, a sha256 of 64 hex digits. None without a usable source."""
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
    return out if "source" in out else None


def lineage(record: object) -> dict[str, Any] | None:
    """A record's `weights` (where a run's pretrained weights came from: source, file, origin, sha256,
    and `from`, the same for the weights that checkpoint itself was trained from, when it was a runner's),
    each link checked (_weights; the chain ends at the first unusable one), as they go on into
    run_started, new manifest entries and the next record. At most MAX_LINKS links: a longer chain keeps
    its newest links and its first weights (where it began) and says how many it left out between them
    (`skipped` on the first weights' link). None without a usable source."""
    chain: list[dict[str, Any]] = []
    node, skipped = record, 0
    while len(chain) <= MAX_READ and (link := _weights(node)) is not None:
        chain.append(link)
        if isinstance(node, dict) and isinstance(node.get("skipped"), int) and not isinstance(node["skipped"], bool):
            skipped += max(0, min(int(node["skipped"]), 1 << 20))
        node = node.get("from") if isinstance(node, dict) else None
    if not chain:
        return None
    if len(chain) > MAX_LINKS + 1:
        skipped += len(chain) - (MAX_LINKS + 1)
        chain = chain[:MAX_LINKS] + [chain[-1]]
    if skipped:
        chain[-1]["skipped"] = skipped
    out = chain[-1]
    for link in reversed(chain[:-1]):
        out = {**link, "from": out}
    return out
