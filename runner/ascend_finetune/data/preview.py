"""`preview`: what a data set holds before a run trains on it.

Class counts and the train/val split come from the trainer's own data plan (plan.py), so the preview
shows the split a run would make. On top of it, one pass reads every image the plan kept: a content
hash (exact duplicates within train, and across train and val: leakage), and its header (size, mode;
Pillow's `Image.open` reads the header only). Then a few images per class are shown as small JPEG
thumbnails: the original, and the same image after the run's train augmentation and eval transform
(pipeline.py's own MindSpore ops, denormalised), until a byte budget is spent.

The preview reads only inside the data folder: a file whose real path is outside it (a symlink out)
is counted, never opened. It opens regular files only (`O_NONBLOCK`, then `fstat`), so a FIFO does
not hang it. (The scan that the plan runs, folder.py, follows such links itself: see the caveat in
protocol.md.)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import stat
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from ..checkpoints.errors import error_dict
from ..spec_types import RunSpec
from .folder import DataError, scan
from .plan import plan_data
from .preview_pipeline import THUMB_PX, jpeg_b64, preview_preprocess, transformed_thumbs

DEFAULT_SAMPLES = 4  # thumbnails per class
DEFAULT_MAX_BYTES = 1 << 20  # base64 characters of all thumbnails together
TINY_CLASS = 20  # a class with fewer training images than this is "tiny"
IMBALANCE_HINT_RATIO = 3.0  # from this largest:smallest ratio on, the preview suggests the imbalance knobs


def imbalance_hint(big: str, n_big: int, small: str, n_small: int) -> str | None:
    """What to do about imbalanced classes, or None when they are balanced enough."""
    if n_small and n_big / n_small < IMBALANCE_HINT_RATIO:
        return None
    ratio = f"{n_big / n_small:.1f}:1" if n_small else "with an empty class"
    return (
        f"the classes are imbalanced ({big!r} {n_big} to {small!r} {n_small} training images, {ratio}): "
        'a model can score well by favouring the large classes; set data.sampling to "balanced" '
        '(every class equally often per epoch) or train.class_weights to "auto" (a rarer class weighs more in the loss)'
    )


PROGRESS_MIN = 1000  # images: a smaller set gets no progress lines
PROGRESS_EVERY_S = 0.25
MAX_LISTED = 100  # entries of each list (skipped files, duplicate groups, files not read)
CHUNK = 256  # images per progress/cancel step of the read pass
GRAYSCALE_MODES = {"1", "L", "LA", "I", "I;16", "I;16B", "I;16L", "I;16N", "F"}
ALPHA_MODES = {"RGBA", "LA", "PA", "RGBa", "La"}


class NotRead(Exception):
    """A file the preview will not open (outside the data folder, not a regular file)."""


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def open_inside(path: str, root_real: str) -> int:
    """A read-only fd for `path` when its real path is a regular file inside `root_real`; else NotRead.

    Links inside the folder are followed (as the scan follows them); a link out of it is not. The
    real path is opened with O_NOFOLLOW, and /proc/self/fd says what was opened (a folder swapped for
    a link in between is caught there)."""
    real = os.path.realpath(path)
    if not _inside(real, root_real):
        raise NotRead(f"a symlink out of the data folder (to {real}): not read")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise NotRead(f"{type(e).__name__}: {e.strerror or e}") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRead("not a regular file: not read")
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = real  # no /proc: the realpath check stands
        if not _inside(opened, root_real):
            raise NotRead(f"changed into a path out of the data folder ({opened}) while read: not read")
        return fd
    except BaseException:
        os.close(fd)
        raise


@dataclass
class ImageFacts:
    sha256: str
    width: int
    height: int
    mode: str
    format: str | None
    alpha: bool


def read_facts(path: str, root_real: str) -> ImageFacts | str:
    """Hash and header of one image, or why it was not read."""
    from PIL import Image

    try:
        fd = open_inside(path, root_real)
    except NotRead as e:
        return str(e)
    with os.fdopen(fd, "rb") as f:
        h = hashlib.sha256()
        try:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
            f.seek(0)
            with Image.open(f) as im:  # the header only: no pixel is decoded
                alpha = im.mode in ALPHA_MODES or "transparency" in im.info
                return ImageFacts(h.hexdigest(), im.width, im.height, im.mode, im.format, alpha)
        except Exception as e:  # the scan decoded it a moment ago; a file changed since is not read
            return f"{type(e).__name__}: {e}"


def percentiles(values: list[int]) -> dict[str, int] | None:
    """min, p5, p50, p95, max (nearest rank); None for no values."""
    if not values:
        return None
    v = sorted(values)

    def at(q: float) -> int:
        return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]

    return {"min": v[0], "p5": at(0.05), "p50": at(0.5), "p95": at(0.95), "max": v[-1]}


def original_thumb(path: str, root_real: str) -> str:
    from PIL import Image

    with os.fdopen(open_inside(path, root_real), "rb") as f, Image.open(f) as im:
        im.draft("RGB", (THUMB_PX * 2, THUMB_PX * 2))  # JPEG: decode at a reduced scale
        return jpeg_b64(im)


class Cancel:
    """SIGINT/SIGTERM end a preview at once: one `{"error": {"kind": "cancelled", ...}}` line, then exit
    128 + the signal's number. The data scan runs in a thread pool that cannot be stopped half way,
    so the process ends hard (os._exit); a preview only reads, so nothing is left half written (the
    scan cache is saved atomically, or not at all). Once the final document is being written, a
    signal waits for it."""

    def __init__(self) -> None:
        self.phase = "start"
        self.done = 0
        self.total = 0
        self.finishing = False
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        """Take SIGINT and SIGTERM (again, when something replaced the handlers since)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            old = signal.signal(sig, self._handle)
            self._old.setdefault(sig, old)

    @property
    def installed(self) -> bool:
        return bool(self._old)

    def restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.finishing:
            return
        name = signal.Signals(signum).name
        line = {
            "error": error_dict(
                "cancelled",
                f"preview cancelled by {name} during {self.phase}",
                "cancelled",
                {"signal": name, "phase": self.phase},
                signal=name,
                phase=self.phase,
                done=self.done,
                total=self.total,
            )
        }
        try:
            os.write(sys.stdout.fileno(), (json.dumps(line) + "\n").encode())
        finally:
            os._exit(128 + signum)


def preview_spec(train_dir: str, val_dir: str | None, spec_path: str | None) -> RunSpec:
    """The resolved spec whose data plan is previewed: SPEC's settings (or the defaults) with
    data.train set to DIR, and data.val to --val when given. Raises SpecError, or DataError for a
    folder that is not there."""
    from .. import spec as specmod

    for field, d in (("DIR", train_dir), ("--val", val_dir)):
        if d is not None and not os.path.isdir(d):
            raise DataError(
                field,
                f"folder not found: {d}",
                f"point {field} at an ImageFolder root",
                "folder_not_found",
                field=field,
                folder=d,
            )
    raw: dict[str, Any] = specmod.load_file(spec_path) if spec_path else {}
    base = os.path.dirname(os.path.abspath(spec_path)) if spec_path else os.getcwd()
    data = dict(raw.get("data") or {}) if isinstance(raw.get("data"), dict) else {}
    data["train"] = os.path.abspath(train_dir)
    if val_dir is not None:
        data["val"] = os.path.abspath(val_dir)
    raw = {**raw, "data": data}
    return specmod.resolve(raw, base)


def _reason_kind(reason: str) -> str:
    head = reason.split(":", 1)[0]
    return head if head.isidentifier() else reason


def preview(
    spec: RunSpec,
    samples: int = DEFAULT_SAMPLES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[dict[str, Any]], None] | None = None,
    cancel: Cancel | None = None,
) -> dict[str, Any]:
    """The preview document of a resolved spec's data (protocol.md, section 4, `preview`)."""
    t0 = time.monotonic()
    cancel = cancel or Cancel()
    d, t = spec["data"], spec["train"]
    # The trainer's plan: the same scan, split and refusals. The batch size is not checked here
    # (`validate --preflight` does): a preview shows the data whatever the batch.
    cancel.phase = "scan"
    plan = plan_data({**spec, "data": {**d, "batch_size": 1}, "model": {**spec["model"], "num_classes": None}}, 1, [])
    workers = plan.workers
    # The plan keeps only the first skipped files; a second scan (every verdict now cached) lists them all.
    skipped = scan(d["train"], workers, "data.train").skipped
    if d["val"]:
        skipped += scan(d["val"], workers, "data.val", classes=plan.classes).skipped
    classes = plan.classes
    n = len(classes)
    parts = [("train", plan.train_samples), ("val", plan.val_samples)]
    counts = {part: [0] * n for part, _ in parts}
    for part, items in parts:
        for _, label in items:
            counts[part][label] += 1

    # One pass over every kept image: hash and header, inside the data folder only.
    roots = {"train": os.path.realpath(d["train"]), "val": os.path.realpath(d["val"] or d["train"])}
    todo = [(part, p, label) for part, items in parts for p, label in items]
    facts: list[ImageFacts | str] = []
    cancel.phase, cancel.total = "read", len(todo)
    report = progress if progress is not None and len(todo) >= PROGRESS_MIN else None
    last = 0.0
    if report:
        report({"progress": {"done": 0, "total": len(todo)}})
        last = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for i in range(0, len(todo), CHUNK):
            chunk = todo[i : i + CHUNK]
            facts += pool.map(lambda s: read_facts(s[1], roots[s[0]]), chunk)
            cancel.done = len(facts)
            if report and (time.monotonic() - last >= PROGRESS_EVERY_S or len(facts) == len(todo)):
                report({"progress": {"done": len(facts), "total": len(todo)}})
                last = time.monotonic()

    not_read = [(s[1], f) for s, f in zip(todo, facts) if isinstance(f, str)]
    good = [(s, f) for s, f in zip(todo, facts) if isinstance(f, ImageFacts)]
    modes: dict[str, int] = {}
    formats: dict[str, int] = {}
    for _, f in good:
        modes[f.mode] = modes.get(f.mode, 0) + 1
        formats[f.format or "unknown"] = formats.get(f.format or "unknown", 0) + 1

    # Exact duplicates: the same bytes twice in train, or in train and val (the model sees val images).
    by_hash: dict[str, list[tuple[str, str, int]]] = {}
    for (part, p, label), f in good:
        by_hash.setdefault(f.sha256, []).append((part, p, label))
    groups = []
    for h, same in by_hash.items():
        tr = sorted((x for x in same if x[0] == "train"), key=lambda x: x[1])
        va = sorted((x for x in same if x[0] == "val"), key=lambda x: x[1])
        if len(tr) >= 2 or (tr and va):
            groups.append((h, tr, va))
    groups.sort(key=lambda g: (not g[2], g[1][0][1]))  # leaks first, then by first file
    within = [g for g in groups if len(g[1]) >= 2]
    across = [g for g in groups if g[1] and g[2]]

    def member(x: tuple[str, str, int]) -> dict[str, Any]:
        return {"file": x[1], "class": classes[x[2]]}

    duplicates = {
        "within_train": {"groups": len(within), "extra_files": sum(len(g[1]) - 1 for g in within)},
        "train_val": {"groups": len(across), "val_files": sum(len(g[2]) for g in across)},
        "conflicting_labels": sum(1 for g in groups if len({x[2] for x in g[1] + g[2]}) > 1),
        "groups": [
            {"sha256": h, "train": [member(x) for x in tr], "val": [member(x) for x in va]}
            for h, tr, va in groups[:MAX_LISTED]
        ],
        "left_out": max(0, len(groups) - MAX_LISTED),
    }

    train_counts = counts["train"]
    big = max(range(n), key=lambda i: train_counts[i])
    small = min(range(n), key=lambda i: train_counts[i])
    by_reason: dict[str, int] = {}
    for _, r in skipped:
        by_reason[_reason_kind(r)] = by_reason.get(_reason_kind(r), 0) + 1

    doc: dict[str, Any] = {
        "train": os.path.abspath(d["train"]),
        "val": os.path.abspath(d["val"]) if d["val"] else None,
        "val_split": None if d["val"] else d["val_split"],
        "seed": t["seed"],
        "image_size": d["image_size"],
        "augment": d["augment"],
        "num_train": len(plan.train_samples),
        "num_val": len(plan.val_samples),
        "classes": [
            {
                "name": c,
                "train": counts["train"][i],
                "val": counts["val"][i],
                "images": counts["train"][i] + counts["val"][i],
            }
            for i, c in enumerate(classes)
        ],
        "imbalance": {
            "ratio": train_counts[big] / train_counts[small] if train_counts[small] else None,
            "largest": {"class": classes[big], "train": train_counts[big]},
            "smallest": {"class": classes[small], "train": train_counts[small]},
            "hint": imbalance_hint(classes[big], train_counts[big], classes[small], train_counts[small]),
        },
        "tiny": {
            "threshold": TINY_CLASS,
            "classes": [c for i, c in enumerate(classes) if train_counts[i] < TINY_CLASS],
        },
        "duplicates": duplicates,
        "skipped": {
            "count": len(skipped),
            "by_reason": by_reason,
            "first": [{"path": p, "reason": r} for p, r in skipped[:MAX_LISTED]],
        },
        "not_read": {"count": len(not_read), "first": [{"path": p, "reason": r} for p, r in not_read[:MAX_LISTED]]},
        "images": {
            "count": len(good),
            "width": percentiles([f.width for _, f in good]),
            "height": percentiles([f.height for _, f in good]),
            "modes": dict(sorted(modes.items())),
            "formats": dict(sorted(formats.items())),
            "grayscale": sum(1 for _, f in good if f.mode in GRAYSCALE_MODES),
            "alpha": sum(1 for _, f in good if f.alpha),
        },
    }

    # Thumbnails: `samples` training images per class (seeded), taken round-robin over the classes so
    # every class shows one before any shows two; the ones past the byte budget are left out.
    cancel.phase = "thumbnails"
    readable = {s[1] for s, _ in good}
    rng = random.Random(t["seed"])
    picks: list[list[tuple[str, int]]] = []
    for i in range(n):
        mine = [s for s in plan.train_samples if s[1] == i and s[0] in readable]
        picks.append(sorted(rng.sample(mine, min(samples, len(mine)))))
    order = [picks[i][k] for k in range(max((len(x) for x in picks), default=0)) for i in range(n) if k < len(picks[i])]
    per_class: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    pre, pre_doc = None, None
    if order:
        pre, pre_doc = preview_preprocess(spec)
    used, shown = 0, 0
    full = False
    for i in range(0, len(order), 32):
        few = order[i : i + 32]
        reals = [os.path.realpath(p) for p, _ in few]  # checked inside the folder by the read pass
        origs = [original_thumb(p, roots["train"]) for p, _ in few]
        evals = transformed_thumbs(reals, d["image_size"], False, False, t["seed"], pre)
        augment = d["augment"]  # a data.augment preset
        trains = (
            transformed_thumbs(reals, d["image_size"], True, augment, t["seed"], pre) if augment != "none" else None
        )
        if cancel.installed:
            cancel.install()  # MindSpore's dataset may have set handlers of its own
        for k, (p, label) in enumerate(few):
            train_thumb = trains[k] if trains else None
            size = len(origs[k]) + len(evals[k]) + len(train_thumb or "")
            if used + size > max_bytes:
                full = True
                break
            used += size
            shown += 1
            per_class[label].append({"file": p, "original": origs[k], "train": train_thumb, "eval": evals[k]})
        if full:
            break
    doc["thumbnails"] = {
        "max_px": THUMB_PX,
        "max_bytes": max_bytes,
        "bytes": used,
        "shown": shown,
        "left_out": len(order) - shown,
        "preprocess": pre_doc,
        "classes": [{"class": c, "samples": per_class[i]} for i, c in enumerate(classes)],
    }
    doc["elapsed_s"] = round(time.monotonic() - t0, 3)
    return doc
