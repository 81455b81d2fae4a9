"""Checkpoint tools that need no MindSpore: inspect, compare, verify, delete-checkpoints.

They read checkpoints through format.py (an index first, then one tensor at a time), so a
damaged file is a clear error and a large one never sits in memory twice.
"""

from __future__ import annotations

import fcntl
import math
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..models.backbones import MINDCV_PREFIX, freeze_values, frozen_parts, is_mindcv, mindcv_models, parts_of, under
from ..rundir import CLASSES_MAX_BYTES, atomic_write_json, effective_state, open_regular, read_json
from .errors import ToolError
from .format import CheckpointIndex, read_index
from .manifest import entry_for, inside, manifest_lock, manifest_path, mark_best, read_manifest, sha256_file
from .run_record import RECORD_ENTRY

COUNTERS = {"epoch_num", "step_num", "steps_per_epoch", "total_steps"}
# backbone_variant: the layout the run built (models/backbones.py VARIANT_ENTRY), recorded in each checkpoint;
# run_record: the run's facts of the manifest entry (run_record.py).
META_NAMES = {"scale_sense", "current_iterator_step", "last_overflow_iterator_step", "backbone_variant", "run_record"}
OPTIMIZER_PREFIXES = ("moments.", "adam_m.", "adam_v.", "moment1.", "moment2.", "accum.", "ema.")
OPTIMIZER_NAMES = {"global_step", "learning_rate", "momentum", "beta1_power", "beta2_power", "updates"}
INSPECT_HASH_MAX_BYTES = 1 << 30  # inspect hashes files up to 1 GiB (a resnet101 with its moments is ~0.5 GB)
COMPARE_BLOCK = 1 << 22  # compare holds 4M elements (32 MB in float64) of each tensor at a time
HEAD_WEIGHTS = ("head.weight", "fc.weight", "classifier.weight", "end_point.weight")


@dataclass
class RunInfo:
    run_dir: str
    spec: dict[str, Any]
    classes: list[str] | None

    @property
    def freeze(self) -> str:
        return (self.spec.get("model") or {}).get("freeze") or "none"

    @cached_property
    def frozen_paths(self) -> tuple[str, ...]:
        """The frozen parts' cells and parameters, as checkpoint names; the same parts as
        model.frozen_parts/frozen_cells (backbones.parts_of: a ResNet's stem = conv1 + bn1, then
        layer1..layer4), without importing MindSpore. A frozen mindcv neck (freeze "backbone") is all of
        `backbone`. Once per run: inspect and compare ask for every tensor."""
        backbone = self.backbone
        parts = parts_of(backbone)
        n = frozen_parts(self.freeze, backbone)
        if n >= len(parts) and not parts[-1][1]:
            return ("backbone",)
        root = MINDCV_PREFIX if is_mindcv(backbone) else "backbone."
        return tuple(f"{root}{p}" for _, ps in parts[:n] for p in ps)

    @cached_property
    def constants(self) -> frozenset[str]:
        """The Parameters the model builds as constants (backbones.json `constants`: Swin's masks)."""
        if not is_mindcv(self.backbone):
            return frozenset()
        return frozenset(MINDCV_PREFIX + c for c in mindcv_models()[self.backbone].get("constants", ()))

    def frozen(self, name: str) -> bool:
        """Whether a tensor is in a frozen part: a path names a cell (its tensors follow a dot) or one
        parameter (ViT's `cls_token`, CrossViT's `cls_token.0`)."""
        return under(name, self.frozen_paths)

    @property
    def backbone(self) -> str:
        return (self.spec.get("model") or {}).get("backbone") or "resnet50"


def load_run(run_dir: str) -> RunInfo:
    spec = read_json(os.path.join(run_dir, "spec.json"))
    if not isinstance(spec, dict):
        raise ToolError(
            "not_a_run",
            f"no run at {run_dir} (spec.json missing or unreadable): pass --run the run's "
            "directory, the folder that holds spec.json and checkpoints.json",
            run_dir=os.path.abspath(run_dir),
            why="no_run_spec",
            params={"run_dir": run_dir},
        )
    freeze = (spec.get("model") or {}).get("freeze") or "none"
    backbone = (spec.get("model") or {}).get("backbone") or "resnet50"
    try:
        known = freeze_values(backbone)
    except KeyError:
        raise ToolError(
            "bad_input",
            f"{run_dir}/spec.json has an unknown model.backbone {backbone!r}",
            run_dir=run_dir,
            why="unknown_backbone",
            params={"run_dir": run_dir, "backbone": str(backbone)},
        ) from None
    if freeze not in known:
        raise ToolError(
            "bad_input",
            f"{run_dir}/spec.json has an unknown model.freeze {freeze!r}",
            run_dir=run_dir,
            why="unknown_freeze",
            params={"run_dir": run_dir, "freeze": str(freeze)},
        )
    classes = read_json(os.path.join(run_dir, "classes.json"), None, CLASSES_MAX_BYTES)
    return RunInfo(os.path.abspath(run_dir), spec, classes if isinstance(classes, list) else None)


def kind_of(name: str) -> str:
    """meta (counters, loss scale), optimizer (its state, as MindSpore's optimizers name it) or param
    (network weights and BatchNorm statistics, ours or those of a ModelZoo/mindcv file)."""
    if name in COUNTERS or name.startswith("loss_scale.") or name in META_NAMES:
        return "meta"
    if name.startswith(OPTIMIZER_PREFIXES) or name in OPTIMIZER_NAMES:
        return "optimizer"
    return "param"


# NormedHead's BatchNorm is affine-free: MindSpore still stores its scale and shift, as constants.
HEAD_NORM_CONSTANTS = ("head.norm.gamma", "head.norm.beta")
# BatchNorm's moving statistics: the forward pass averages them in a trained part; no optimizer does.
STATISTICS = (".moving_mean", ".moving_variance")


def trainable(name: str, run: RunInfo | None) -> bool | None:
    """For this model's parameters with a run: False in the spec's frozen part (and for the head norm's
    constants), else True; None otherwise."""
    if run is None or not name.startswith(("backbone.", "head.")):
        return None
    if name in HEAD_NORM_CONSTANTS or name in run.constants:
        return False
    return not run.frozen(name)


def optimized(name: str, run: RunInfo | None) -> bool:
    """What MindSpore's trainable_params() holds: trainable, and not a BatchNorm statistic."""
    return bool(trainable(name, run)) and not name.endswith(STATISTICS)


def head_out(index: CheckpointIndex) -> int | None:
    for n in HEAD_WEIGHTS:
        e = index.tensors.get(n)
        if e and len(e.shape) == 2:
            return e.shape[0]
    return None


def manifest_check(run_dir: str, path: str, sha: str | None) -> dict[str, Any] | None:
    """How the file compares with its checkpoints.json entry; None when the manifest does not list it."""
    e = entry_for(run_dir, path)
    if e is None:
        return None
    size = os.path.getsize(path)
    return {
        "file": e["file"],
        "best": bool(e.get("best")),
        "epoch": e.get("epoch"),
        "step": e.get("step"),
        "metrics": e.get("metrics"),
        "bytes_ok": size == e["bytes"] if "bytes" in e else None,
        "sha256_ok": (sha == e["sha256"]) if (sha and "sha256" in e) else None,
    }


def inspect(ckpt: str, run_dir: str | None) -> dict[str, Any]:
    run = load_run(run_dir) if run_dir else None
    index = read_index(ckpt)
    # Hashing reads the whole file (about 0.3-2 GB/s, CPU-bound): above INSPECT_HASH_MAX_BYTES inspect
    # leaves it to `verify`, which a user runs knowing it reads everything, and says so.
    skipped = None
    if index.size > INSPECT_HASH_MAX_BYTES:
        sha = None
        skipped = (
            f"the file is {index.size} bytes, above inspect's {INSPECT_HASH_MAX_BYTES >> 20} MiB hashing "
            "limit: `verify --run RUN_DIR` checks it against checkpoints.json, or hash it with sha256sum"
        )
    else:
        sha = sha256_file(ckpt)
    tensors = []
    for t in index.tensors.values():
        tensors.append(
            {
                "name": t.name,
                "shape": t.shape,
                "dtype": t.dtype,
                "elements": t.elements,
                "module": t.name.rsplit(".", 1)[0] if "." in t.name else "",
                "trainable": trainable(t.name, run),
                "kind": kind_of(t.name),
            }
        )
    out: dict[str, Any] = {
        "file": index.path,
        "format": index.format,
        "bytes": index.size,
        "sha256": sha,
        "sha256_skipped": skipped,
        "tensors": tensors,
        "total_elements": sum(t["elements"] for t in tensors),
        "param_elements": sum(t["elements"] for t in tensors if t["kind"] == "param"),
        "trainable_elements": sum(e.elements for n, e in index.tensors.items() if optimized(n, run)) if run else None,
        "head_out": head_out(index),
    }
    if run:
        n = len(run.classes) if run.classes is not None else (run.spec.get("model") or {}).get("num_classes")
        out.update(
            run_dir=run.run_dir,
            freeze=run.freeze,
            num_classes=n,
            head_matches_classes=(out["head_out"] == n) if n is not None and out["head_out"] is not None else False,
            manifest=manifest_check(run.run_dir, ckpt, sha),
        )
    else:
        out.update(head_matches_classes=None)
    return out


def _order(t: dict[str, Any]) -> float:
    if t["rel_change"] is not None:
        return t["rel_change"]
    return math.inf if t["l2_diff"] > 0 else -1.0  # moved from exact zero: an unbounded relative change


def compare(ckpt_a: str, ckpt_b: str, run_dir: str | None) -> dict[str, Any]:
    run = load_run(run_dir) if run_dir else None
    a, b = read_index(ckpt_a), read_index(ckpt_b)
    # The run's record (run_record.py) is facts of the run, not a tensor of the model: two runs' records
    # differ in length, which would read as an architecture's shape mismatch.
    only_a = [n for n in a.tensors if n not in b.tensors and n != RECORD_ENTRY]
    only_b = [n for n in b.tensors if n not in a.tensors and n != RECORD_ENTRY]
    mismatch: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for name, ta in a.tensors.items():
        tb = b.tensors.get(name)
        if tb is None or name == RECORD_ENTRY:
            continue
        if ta.shape != tb.shape:
            mismatch.append({"name": name, "shape_a": ta.shape, "shape_b": tb.shape})
            continue
        if "str" in (ta.dtype, tb.dtype):
            continue
        # In float64, so that tiny fp32 updates still count; a block of COMPARE_BLOCK elements of each
        # file at a time, so that memory stays bounded however large a tensor is.
        sq_d = sq_a = 0.0
        for ba, bb in zip(a.blocks(name, COMPARE_BLOCK), b.blocks(name, COMPARE_BLOCK)):
            xa = ba.astype(np.float64)
            d = xa - bb.astype(np.float64)
            sq_d += float(np.sum(d * d))
            sq_a += float(np.sum(xa * xa))
        l2, norm_a = math.sqrt(sq_d), math.sqrt(sq_a)
        t = trainable(name, run)
        rows.append(
            {
                "name": name,
                "shape": ta.shape,
                "l2_diff": l2,
                "rel_change": l2 / norm_a if norm_a > 0 else None,
                "frozen": None if t is None else not t,
                "kind": kind_of(name),
            }
        )
    rows.sort(key=lambda r: (-_order(r), r["name"]))
    frozen = [r["l2_diff"] for r in rows if r["frozen"]]
    changed = sum(1 for r in rows if r["l2_diff"] > 0)
    return {
        "a": a.path,
        "b": b.path,
        "tensors": rows,
        "only_in_a": only_a,
        "only_in_b": only_b,
        "shape_mismatch": mismatch,
        "summary": {
            "tensors": len(rows),
            "changed": changed,
            "unchanged": len(rows) - changed,
            "frozen_max_l2": max(frozen) if frozen else None,
        },
    }


def _need_manifest(run_dir: str) -> list[dict[str, Any]]:
    if not os.path.isfile(manifest_path(run_dir)):
        raise ToolError(
            "not_a_run",
            f"no checkpoints.json in {run_dir}: pass the run's directory",
            run_dir=os.path.abspath(run_dir),
            why="no_manifest",
            params={"run_dir": run_dir},
        )
    return read_manifest(run_dir)


def verify(run_dir: str) -> dict[str, Any]:
    rows = []
    for e in _need_manifest(run_dir):
        row: dict[str, Any] = {
            "file": e["file"],
            "exists": False,
            "bytes_ok": False,
            "sha256_ok": False,
            "bytes": None,
            "best": bool(e.get("best")),
            "problem": None,
        }
        # Lexical check only: reading through a symlinked checkpoints/ (a scratch disk) is fine here.
        rel = os.path.normpath(e["file"])
        path = None if os.path.isabs(rel) or rel.split(os.sep)[0] == ".." else os.path.join(run_dir, rel)
        if path is None:
            row["problem"] = "the manifest names a file outside the run directory"
        elif not os.path.isfile(path):
            row["problem"] = "missing: the file is gone"
        else:
            row["exists"], row["bytes"] = True, os.path.getsize(path)
            row["bytes_ok"] = row["bytes"] == e.get("bytes")
            if not row["bytes_ok"]:
                row["problem"] = (
                    f"size {row['bytes']} bytes, checkpoints.json says {e.get('bytes')} (truncated or replaced)"
                )
            else:
                row["sha256_ok"] = sha256_file(path) == e.get("sha256")
                if not row["sha256_ok"]:
                    row["problem"] = "sha256 differs from checkpoints.json (the file changed after it was saved)"
        rows.append(row)
    return {"run_dir": os.path.abspath(run_dir), "ok": all(r["problem"] is None for r in rows), "checkpoints": rows}


def _train_lock_held(run_dir: str) -> bool:
    """Whether a train process holds the run's .lock (train/run.py takes it, exclusive, for its lifetime)."""
    path = os.path.join(run_dir, ".lock")
    try:
        fd = open_regular(path)  # a FIFO planted here would block a plain open forever
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the lock taken just now
    return False


def delete_checkpoints(run_dir: str, files: list[str], allow_best: bool) -> dict[str, Any]:
    """Remove checkpoints listed in the manifest; every file is checked before anything is deleted."""
    entries = _need_manifest(run_dir)
    by_file = {os.path.normpath(e["file"]): e for e in entries}
    live = _train_lock_held(run_dir) or effective_state(run_dir) == "running"
    newest = os.path.normpath(entries[-1]["file"]) if entries else None
    chosen: list[str] = []
    for f in files:
        rel = inside(run_dir, f)
        if rel is None:
            raise ToolError(
                "outside_run",
                f"{f} is outside the run directory {run_dir} (after resolving '..' and "
                "symlinks): only the run's own checkpoints can be deleted",
                file=f,
                why="outside_run",
                params={"file": f, "run_dir": run_dir},
            )
        if rel not in by_file:
            raise ToolError(
                "not_in_manifest",
                f"{f} is not a checkpoint listed in {run_dir}/checkpoints.json: pass a "
                "`file` value from the manifest, e.g. checkpoints/<name>.ckpt",
                file=f,
                why="not_in_manifest",
                params={"file": f, "run_dir": run_dir},
            )
        if by_file[rel].get("best") and not allow_best:
            raise ToolError(
                "best_protected",
                f"{rel} is the run's best checkpoint: pass --allow-best to delete it",
                file=rel,
                why="best_protected",
                params={"file": rel},
            )
        if live and rel == newest:
            raise ToolError(
                "run_live",
                f"{rel} is the newest checkpoint of a run that is still training: wait for the "
                "run to end, or stop it first",
                file=rel,
                why="run_live",
                params={"file": rel},
            )
        if rel not in chosen:
            chosen.append(rel)
    with manifest_lock(run_dir):
        current = read_manifest(run_dir)  # as of now: a live run may have saved since the checks
        had_best = any(e.get("best") for e in current)
        kept = [e for e in current if os.path.normpath(e["file"]) not in chosen]
        if had_best and not any(e.get("best") for e in kept):
            mark_best(kept, True)  # the next best by the same rule the run uses
        atomic_write_json(manifest_path(run_dir), kept)  # first: the manifest never names a deleted file
    for rel in chosen:
        for p in (os.path.join(run_dir, rel), os.path.join(run_dir, rel) + ".eval.json"):
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
    return {"run_dir": os.path.abspath(run_dir), "deleted": chosen, "kept": [e["file"] for e in kept]}
