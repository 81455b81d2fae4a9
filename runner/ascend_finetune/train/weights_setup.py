"""Which weights a run starts from, and the preprocessing they bring: resolved once per node.

A single process resolves them in Trainer.__init__. A run of several ranks resolves them in its
launcher, before msrun starts any rank (distributed/launcher.py, `prepare_weights`): one download, its
progress in the run's events; one fetch of a hub `config.json`; and the node's ranks then read the
same preprocessing from `ranks/preprocess.json`. Each rank used to resolve its own, so a rank whose
config fetch failed trained on the timm preset and said nothing (only rank 0's warnings are emitted).
The ranks still load the weights themselves, from the cache the launcher filled.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from typing import Any, Callable

from ..checkpoints.errors import PretrainedError
from ..models.pinned import PinnedFile
from ..models.preprocess import Preprocess, from_record
from ..models.preprocess import resolve as resolve_preprocess
from ..rundir import atomic_write_json, read_json
from ..spec_types import RunSpec

PREPROCESS_FILE = "preprocess.json"  # in the run's ranks/ folder, written by the launcher
PREPROCESS_FILE_MAX_BYTES = 1 << 20


@dataclass
class StartingWeights:
    variant: str  # the backbone layout to build (models/backbones.py)
    path: str | None  # the local file as named: None without model.pretrained, and on resume
    fetched: Any  # download.Fetched for a mindcv:/hf-hub: name, else None
    origin: str | None  # origin.origin_of_file's
    # The identity (download.identity_of) of the file this process opened and reads: for a named
    # source, the one that was hashed (checked when it is opened).
    identity: tuple[int, int, int, int] | None = None
    pin: PinnedFile | None = None  # the open file every read goes through (models/pinned.py)

    @property
    def read_path(self) -> str | None:
        """Where to read the weights: the pinned file's link, else the name."""
        return self.pin.read_path if self.pin else self.path

    def named(self) -> Any:
        """Errors of a reader of read_path name `path` (models/pinned.py PinnedFile.named)."""
        return self.pin.named() if self.pin else contextlib.nullcontext()

    def close(self) -> None:
        if self.pin:
            self.pin.close()


def starting_weights(spec: RunSpec, resume: str | None, emit: Callable[..., Any] | None) -> StartingWeights:
    """model.pretrained as a local file, opened once and read through that descriptor (close() it once
    loaded), with its origin and layout; a mindcv:/hf-hub: name is fetched into the cache first
    (progress as `setup` events through `emit`). On resume the checkpoint replaces every weight and
    records the preprocessing: model.pretrained is neither read nor needed (its file may be pruned,
    or a cache cleared on an offline target)."""
    weights = spec["model"]["pretrained"]
    if resume:
        variant, origin = resumed_layout(resume, weights)
        return StartingWeights(variant, None, None, origin)
    if not weights:
        return StartingWeights("default", None, None, None)
    from ..models.download import local_weights, setup_progress
    from ..models.origin import origin_of_file

    progress = setup_progress(emit, weights) if emit else None
    path, fetched = local_weights(weights, progress)
    try:
        pin: PinnedFile | None = PinnedFile(path)  # raises OSError only when the file cannot be opened
    except OSError:
        pin = None  # missing or unreadable: origin_of_file says so
    start = StartingWeights("default", path, fetched, None, pin.identity if pin else None, pin)
    try:
        if fetched and pin and pin.identity != fetched.identity:  # another file since it was hashed
            raise changed(path, "changed (another file was put in its place, or it was rewritten)")
        with start.named():
            start.origin, start.variant = origin_of_file(start.read_path or path)
    except BaseException:
        start.close()
        raise
    return start


def changed(path: str, how: str) -> PretrainedError:
    return PretrainedError(
        f"{path} {how} while the run loaded it: the weights loaded may not be the ones checked; start the run "
        "again once nothing writes it",
        "pretrained_changed",
        path=path,
    )


def check_unchanged(start: StartingWeights, was: Any = None) -> None:
    """PretrainedError (pretrained_changed) when the file the run read was rewritten in place while it
    was loaded, or (`was`: the identity a run's launcher recorded in ranks/preprocess.json) is not
    the file the launcher resolved the preprocessing from. Without a pin (no /proc: not Linux) the
    name is checked instead: another file renamed into place, or this one removed, while the run read
    it. Pinned, what is renamed into the name later does not matter: every read was of the open file."""
    if start.identity is None or start.path is None:
        return
    now = start.pin.identity_now() if start.pin else _identity(start.path)
    if now == start.identity and (was is None or list(was) == list(start.identity)):
        return
    raise changed(
        start.path, "was removed" if now is None else "changed (another file was put in its place, or it was rewritten)"
    )


def _identity(path: str) -> tuple[int, int, int, int] | None:
    from ..models.download import identity_of

    try:
        return identity_of(os.stat(path))
    except OSError:
        return None


def run_preprocess(
    spec: RunSpec, origin: str | None, resume: str | None, warn: Callable[..., None], read_path: str | None = None
) -> Preprocess:
    """The evaluation resize and normalisation the weights expect (models/preprocess.py resolve); a
    runner checkpoint's own record is read at `read_path` (StartingWeights.read_path) when given."""
    m = spec["model"]
    return resolve_preprocess(
        m["preprocess"],
        m["pretrained"],
        origin,
        warn,
        resume=resume,
        image_size=spec["data"]["image_size"],
        read_path=read_path,
    )


def write_preprocess_file(
    path: str, p: Preprocess, warnings: list[dict[str, Any]], identity: tuple[int, ...] | None = None
) -> None:
    """What the launcher resolved, for its node's ranks: the preprocessing and its warnings, and the
    identity of the weights file it resolved them from on this host (each rank there checks it loads
    that file; a run folder shared by several nodes holds the last launcher's, which another host's
    ranks leave unchecked)."""
    ident = {"host": socket.gethostname(), "file": list(identity)} if identity else None
    atomic_write_json(path, {"preprocess": p.describe(), "warnings": warnings, "identity": ident})


def read_preprocess_file(path: str) -> tuple[Preprocess, list[dict[str, Any]], list[int] | None] | None:
    """The launcher's resolution (bounded, checked as a record is), or None: not there (a launcher of
    an older runner) or not usable, when the rank resolves its own."""
    doc = read_json(path, None, PREPROCESS_FILE_MAX_BYTES)
    if not isinstance(doc, dict):
        return None
    p = from_record(doc.get("preprocess"))
    if p is None:
        return None
    listed = doc.get("warnings")
    warnings: list[dict[str, Any]] = []
    if isinstance(listed, list):
        warnings = [w for w in listed if isinstance(w, dict) and isinstance(w.get("code"), str)]
    ident = doc.get("identity")
    file = ident.get("file") if isinstance(ident, dict) and ident.get("host") == socket.gethostname() else None
    ok = isinstance(file, list) and len(file) == 4 and all(type(v) is int for v in file)
    return p, warnings, file if ok else None


def resumed_layout(resume: str, pretrained: str | None) -> tuple[str, str | None]:
    """(backbone variant, origin of model.pretrained) for a resumed run, which loads no pretrained file:
    the layout is the one the resumed checkpoint was trained in (its `backbone_variant`; resume() says what
    is wrong with an unreadable file). The origin only picks the preprocessing of a checkpoint that
    recorded none (an older run's): read from model.pretrained's index while that file is still there."""
    from ..checkpoints.errors import ToolError
    from ..checkpoints.format import read_index
    from ..models.backbones import VARIANT_ENTRY, variant_of_code
    from ..models.catalog import is_named
    from ..models.origin import origin_of_file

    variant = "default"
    try:
        index = read_index(resume)
        if VARIANT_ENTRY in index.tensors:
            variant = variant_of_code(int(index.read(VARIANT_ENTRY).reshape(-1)[0]))
    except (ToolError, ValueError):
        pass
    origin = None
    if pretrained and not is_named(pretrained) and os.path.isfile(pretrained):
        try:
            origin = origin_of_file(pretrained)[0]
        except PretrainedError:
            pass
    return variant, origin


def checkpoint_lineage(ckpt: str, read: str | None = None) -> dict[str, Any] | None:
    """The weights a runner checkpoint was trained from (run_record.lineage: source, file, origin, sha256,
    `from`), as its run's manifest entry records them, else as the file's own record does (read at
    `read` when given: the run's pinned link to it); None when neither does (an older runner's file,
    or a run from random weights)."""
    from ..checkpoints.manifest import entry_for, find_run_of
    from ..checkpoints.run_record import lineage, read_record

    try:
        run_dir = find_run_of(ckpt)
        entry = entry_for(run_dir, ckpt) if run_dir else None
    except (OSError, ValueError):
        entry = None
    weights = lineage((entry or {}).get("weights"))
    return weights if weights is not None else lineage((read_record(read or ckpt) or {}).get("weights"))


def recorded_weights(resume: str, pretrained: str | None, origin: str | None) -> dict[str, Any] | None:
    """The pretrained weights' lineage (source, file, origin, sha256) that the resumed checkpoint's
    manifest entry recorded (or, out of its run, the file's run_record), each value checked
    (run_record.lineage), kept for run_started and this run's checkpoints. A checkpoint of an older
    runner recorded none: then what the spec names (with the file's origin and sha256 while it is still
    there), so a run that started from weights is not shown as one from random initialisation. None
    without model.pretrained."""
    from ..checkpoints.manifest import sha256_file
    from ..models.catalog import is_named

    weights = checkpoint_lineage(resume)
    if weights is not None:
        return weights
    if not pretrained:
        return None
    info: dict[str, Any] = {"source": pretrained}
    if not is_named(pretrained) and os.path.isfile(pretrained):
        try:
            info.update(file=pretrained, sha256=sha256_file(pretrained), **({"origin": origin} if origin else {}))
        except OSError:
            pass
    return info
