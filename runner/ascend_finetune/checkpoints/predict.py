"""`predict`: the classes a checkpoint of a run gives image files, with the run's eval preprocessing.

Each file is checked with Pillow before MindSpore sees it (MindSpore's C++ Decode kills the process
on a truncated JPEG instead of raising, as folder.py notes), so a broken file is an `error` of its
own entry, never the end of the batch. A batch the pipeline still fails on is retried one file at a
time, so only the file at fault gets the error.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Callable, cast

import numpy as np

from ..spec_types import AmpSpec
from .errors import ToolError, check_batch_size, error_dict
from .format import read_index
from .tools import RunInfo, load_run

TOP_K = 5
MAX_FILE_BYTES = 256 << 20  # an image file larger than this is refused, not read


def build_predictor(run: RunInfo, ckpt: str, device: str | None) -> tuple[Callable[[Any], Any], str, str]:
    """(logits function, device target, AMP level): the run's network with the checkpoint's weights,
    in inference mode at the run's AMP level. `eval` (evaluate.py) builds its network here too."""
    from ..models import amp as ampmod
    from .loading import load_net, select_device

    target = select_device(run, device)
    net = load_net(run, ckpt)
    # The amp section the run wrote from its resolved spec; a spec.json without one evaluates at O0.
    amp_spec = cast(AmpSpec, run.spec.get("amp") or {"level": "O0", "loss_scale": "none"})
    level = ampmod.plan(amp_spec, target).level
    logits_of = ampmod.build_eval_step(ampmod.apply_level(net, level))
    net.set_train(False)
    return logits_of, target, level


def run_of(ckpt: str, run_dir: str | None) -> str:
    """--run, else the run a checkpoint sits in (RUN/checkpoints/FILE)."""
    if run_dir:
        return run_dir
    here = os.path.dirname(os.path.abspath(ckpt))
    if os.path.basename(here) == "checkpoints" and os.path.isfile(os.path.join(os.path.dirname(here), "spec.json")):
        return os.path.dirname(here)
    raise ToolError(
        "not_a_run",
        f"{ckpt} is not in a run's checkpoints/ folder: pass --run RUN_DIR (the run it was trained in)",
        run_dir=None,
        why="checkpoint_outside_run",
        params={"file": ckpt},
    )


def check_file(path: str) -> dict[str, Any] | None:
    """None when Pillow decodes the file, else the entry's error {kind, message}. Regular files only:
    a FIFO is refused without waiting for a writer."""
    from PIL import Image

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        text = f"{type(e).__name__}: {e.strerror or e}"
        return error_dict("unreadable", text, "file_unreadable", {"error": text})
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return error_dict("unreadable", "not a regular file", "file_not_regular")
        if st.st_size > MAX_FILE_BYTES:
            message = f"{st.st_size} bytes, above the {MAX_FILE_BYTES >> 20} MiB limit"
            return error_dict(
                "too_large", message, "file_too_large", {"size": st.st_size, "limit_mib": MAX_FILE_BYTES >> 20}
            )
        try:
            with Image.open(f) as im:
                im.load()
        except Exception as e:  # Pillow raises many types for bad files
            return error_dict(
                "not_an_image", f"{type(e).__name__}: {e}", "not_an_image", {"error": f"{type(e).__name__}: {e}"}
            )
    return None


def softmax_top(logits: np.ndarray, classes: list[str]) -> list[dict[str, Any]] | None:
    """The min(5, classes) most probable classes of one row of logits (softmax in float64), or None
    when the logits are not finite."""
    z = logits.astype(np.float64)
    if not np.isfinite(z).all():
        return None
    e = np.exp(z - z.max())
    p = e / e.sum()
    top = np.argsort(-p, kind="stable")[: min(TOP_K, len(classes))]
    return [{"class": classes[i], "prob": float(p[i])} for i in top]


def predict(
    ckpt: str, run_dir: str | None, files: list[str], batch_size: int | None, device: str | None
) -> dict[str, Any]:
    run = load_run(run_of(ckpt, run_dir))
    read_index(ckpt)  # a damaged file fails here, before any image is read
    if not run.classes:
        raise ToolError(
            "not_a_run",
            f"{run.run_dir} has no classes.json (the run never started training): no class names to answer with",
            run_dir=run.run_dir,
            why="no_classes_json",
            params={"run_dir": run.run_dir},
        )
    check_batch_size(batch_size)
    d = run.spec.get("data") or {}
    size = int(d.get("image_size") or 224)
    batch = batch_size or int(d.get("batch_size") or 32)
    entries: list[dict[str, Any]] = []
    for f in files:
        err = check_file(f)
        entries.append({"file": os.path.abspath(f), **({"error": err} if err else {})})
    good = [i for i, e in enumerate(entries) if "error" not in e]
    from ..data.pipeline import make_dataset
    from .loading import preprocess_of

    logits_of, target, level = build_predictor(run, ckpt, device)
    prep = preprocess_of(run, ckpt)
    workers = max(1, min(int(d.get("workers") or 1), os.cpu_count() or 1))

    def logits(idx: list[int]) -> np.ndarray:
        ds = make_dataset(
            [(entries[i]["file"], 0) for i in idx],
            size,
            len(idx),
            workers,
            False,
            False,
            0,
            drop_remainder=False,
            preprocess=prep,
        )
        rows = [logits_of(x).asnumpy() for x, _ in ds.create_tuple_iterator(num_epochs=1)]
        return np.concatenate(rows) if rows else np.zeros((0, len(run.classes or [])))

    for start in range(0, len(good), batch):
        idx = good[start : start + batch]
        try:
            out = {i: row for i, row in zip(idx, logits(idx))}
        except Exception:  # one file the pipeline cannot take (a format Pillow reads and MindSpore does not)
            out = {}
            for i in idx:
                try:
                    out[i] = logits([i])[0]
                except Exception as e:
                    text = f"{type(e).__name__}: {str(e)[:300]}"
                    entries[i]["error"] = error_dict("decode_failed", text, "decode_failed", {"error": text})
        for i, row in out.items():
            top = softmax_top(row, run.classes)
            if top is None:
                entries[i]["error"] = error_dict("nonfinite", "the network's logits are NaN or Inf", "nonfinite_logits")
            else:
                entries[i]["top"] = top
    return {
        "ckpt": os.path.abspath(ckpt),
        "run_dir": run.run_dir,
        "classes": run.classes,
        "image_size": size,
        "device": target,
        "amp_level": level,
        "predictions": entries,
        "ok": sum(1 for e in entries if "top" in e),
        "failed": sum(1 for e in entries if "error" in e),
    }
