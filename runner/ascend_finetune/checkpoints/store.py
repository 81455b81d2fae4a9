"""Checkpoints: atomic save (temporary name, then rename), the checkpoints.json manifest, retention.

A checkpoint holds the network, the optimizer state (moments, global_step), the loss-scaler state and
the epoch/step counters, so `--resume` continues from that step with the same weights, optimizer and
scale (a partly done epoch re-draws its shuffle and takes as many batches as the epoch has left).

It also records the backbone's layout (`backbone_variant`, an integer entry; models/backbones.py):
ModelZoo's and the runner's ResNets share parameter names but not padding and BatchNorm eps, so
fine-tune-from, resume, eval and export rebuild the layout the weights were trained in. The
manifest entry names it in words. And it carries the run's facts of its manifest entry (preprocessing,
the weights' lineage) as `run_record` (run_record.py), for when the file leaves its run folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

import mindspore as ms

from ..events import sanitize
from ..models.backbones import VARIANT_CODES, VARIANT_ENTRY, variant_of_code
from ..rundir import MANIFEST_MAX_BYTES, atomic_write_json, fsync_dir, open_regular, read_json, replace_file, slug
from .manifest import manifest_lock, mark_best, read_manifest, sha256_file
from .run_record import RECORD_ENTRY, record_tensor


def state_entries(net: ms.nn.Cell, optimizer: ms.nn.Cell, extra: dict[str, Any]) -> list[dict]:
    """Every parameter to save: network first, then optimizer state and loss-scaler state.

    Saved under each Parameter's own name: AMP wraps cells (`bn1._backbone.gamma` in the cell tree)
    but leaves Parameter.name as built (`bn1.gamma`), which is what load_param_into_net matches.
    """
    seen, entries = set(), []
    for p in list(net.get_parameters()) + list(optimizer.get_parameters()):
        if p.name not in seen:
            seen.add(p.name)
            entries.append({"name": p.name, "data": p})
    for name, p in extra.items():
        entries.append({"name": name, "data": p})
    variant = getattr(getattr(net, "backbone", None), "variant", None)
    if variant is not None:
        entries.append({"name": VARIANT_ENTRY, "data": ms.Tensor(VARIANT_CODES[variant], ms.int32)})
    return entries


def entries_variant(entries: list[dict]) -> str | None:
    """The backbone layout that state_entries recorded, if any."""
    for e in entries:
        if e["name"] == VARIANT_ENTRY:
            return variant_of_code(int(e["data"].asnumpy()))
    return None


class CheckpointStore:
    def __init__(self, run_dir: str, prefix: str, fmt: str, keep_max: int, keep_best: bool):
        self.run_dir, self.prefix, self.fmt = run_dir, slug(prefix), fmt
        self.keep_max, self.keep_best = keep_max, keep_best
        self.dir = os.path.join(run_dir, "checkpoints")
        self.manifest_path = os.path.join(run_dir, "checkpoints.json")
        # Facts of the run every entry carries (the trainer's `preprocess` and `weights`): eval and
        # predict reuse the preprocessing, the explorer shows where the weights came from.
        self.extra: dict[str, Any] = {}
        os.makedirs(self.dir, exist_ok=True)
        entries = read_json(self.manifest_path, [], MANIFEST_MAX_BYTES)
        self.entries: list[dict[str, Any]] = (
            [e for e in entries if isinstance(e, dict) and isinstance(e.get("file"), str)]
            if isinstance(entries, list)
            else []
        )

    def best(self) -> dict[str, Any] | None:
        return next((e for e in self.entries if e.get("best")), None)

    def save(
        self,
        entries: list[dict],
        epoch: int,
        step: int,
        metrics: dict[str, Any],
        counters: dict[str, int] | None = None,
        kind: str | None = None,
    ) -> dict[str, Any]:
        """`kind`: None for the run's weights (with optimizer state); "ema" for the weights' moving
        average (train.ema), saved as `<name>-ema.<ext>` and listed with `kind: "ema"`."""
        ext = "safetensors" if self.fmt == "safetensors" else "ckpt"
        name = f"{self.prefix}-e{epoch}-s{step}{'-' + kind if kind else ''}.{ext}"
        final = os.path.join(self.dir, name)
        # MindSpore writes to a path, not a descriptor: give it one inside a folder of our own (mkdtemp:
        # a random name, mode 0700), where nobody else can plant a symlink for it to write through.
        # A failed save (a full disk) leaves no partial file behind.
        tmpdir = tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=self.dir)
        if self.extra:
            entries = [*entries, {"name": RECORD_ENTRY, "data": record_tensor(self.extra)}]
        try:
            tmp = os.path.join(tmpdir, name)
            ms.save_checkpoint(
                entries, tmp, append_dict={"epoch_num": epoch, "step_num": step, **(counters or {})}, format=self.fmt
            )
            fd = open_regular(tmp)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            replace_file(tmp, final)  # a folder planted under its name: unsafe_file
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
        fsync_dir(self.dir)  # the rename itself survives a power loss
        entry = {
            "file": f"checkpoints/{name}",
            "epoch": epoch,
            "step": step,
            "metrics": sanitize(metrics),
            "bytes": os.path.getsize(final),
            "sha256": sha256_file(final),
            "created_at": time.time(),
            "best": False,
            **self.extra,
        }
        variant = entries_variant(entries)
        if variant is not None:
            entry[VARIANT_ENTRY] = variant
        if kind:
            entry["kind"] = kind
        with manifest_lock(self.run_dir):
            # From the file, not memory: `delete-checkpoints` may have dropped entries since the last save.
            current = read_manifest(self.run_dir) if os.path.exists(self.manifest_path) else self.entries
            self.entries = [e for e in current if e["file"] != entry["file"]] + [entry]
            self._mark_best()
            victims = self._retain()
            atomic_write_json(self.manifest_path, self.entries)  # the manifest never names a deleted file
        for v in victims:
            try:
                os.remove(os.path.join(self.run_dir, v["file"]))
            except FileNotFoundError:
                pass
        return entry

    def _mark_best(self) -> None:
        mark_best(self.entries, self.keep_best)

    def _retain(self) -> list[dict[str, Any]]:
        """Entries beyond keep_max to drop, oldest first; never the best, never the one just saved."""
        victims = []
        while len(self.entries) > self.keep_max:
            victim = next((e for e in self.entries[:-1] if not e["best"]), None)
            if victim is None:
                break
            self.entries.remove(victim)
            victims.append(victim)
        return victims


def load_state(path: str) -> dict[str, Any]:
    """A --resume checkpoint's tensors. The file is checked first (format.py): MindSpore's loader
    reports a damaged file with unrelated errors, or loads a short tensor without a word."""
    from .errors import PretrainedError, ToolError
    from .format import read_index

    try:
        read_index(path)
    except ToolError as e:
        raise PretrainedError(f"--resume: {e}", e.why, **e.params) from e
    fmt = "safetensors" if path.endswith(".safetensors") else "ckpt"
    return ms.load_checkpoint(path, format=fmt)
