"""`eval`: a checkpoint of a run evaluated on an ImageFolder (by default the run's own validation set),
with the run's preprocessing and AMP level; the result is kept next to the checkpoint as
`<ckpt>.eval.json`."""

from __future__ import annotations

import os
import time
from typing import Any, cast

import numpy as np

from ..data.folder import DataError, list_classes, scan, stratified_split
from ..rundir import atomic_write_json
from .errors import ToolError
from .format import read_index
from .manifest import sha256_file
from .tools import RunInfo, load_run


def _samples(run: RunInfo, folder: str | None, workers: int) -> tuple[str, list, list]:
    """(folder, samples labelled in the run's class order, skipped files)."""
    d = run.spec.get("data") or {}
    t = run.spec.get("train") or {}
    field = "--data" if folder else "data.val"
    folder = folder or d.get("val")
    try:
        if folder:
            found = list_classes(folder, field)
            run_classes = cast(list[str], run.classes)  # load_run read classes.json
            missing = sorted(set(run_classes) - set(found))
            extra = sorted(set(found) - set(run_classes))
            if missing or extra:
                raise ToolError(
                    "bad_input",
                    f"the class folders in {folder} differ from the run's {len(run_classes)} classes: "
                    f"missing {missing} (classes of the run with no folder there), extra {extra} (folders "
                    "the run has no class for): evaluate on a folder with the run's class folders",
                    missing=missing,
                    extra=extra,
                    field=field,
                )
            s = scan(folder, workers, field, classes=run.classes)
            return os.path.abspath(folder), s.samples, s.skipped
        # No val folder: the run validated on a seeded split of its training folder; take the same split.
        if not d.get("train") or not (d.get("val_split") or 0) > 0:
            raise ToolError(
                "bad_input",
                "the run has no validation set (no data.val and no data.val_split): pass --data DIR",
                field="--data",
            )
        s = scan(d["train"], workers, "data.train", classes=run.classes)
        _, val = stratified_split(s.samples, float(d["val_split"]), int(t.get("seed", 1)))
        return os.path.abspath(d["train"]), val, s.skipped
    except DataError as e:
        raise ToolError("bad_input", e.message, field=e.path, fix=e.fix) from e


def evaluate(run_dir: str, ckpt: str, folder: str | None, batch_size: int | None, device: str | None) -> dict[str, Any]:
    run = load_run(run_dir)
    read_index(ckpt)  # a damaged file fails here, before the data is scanned
    if not run.classes:
        raise ToolError(
            "not_a_run",
            f"{run_dir} has no classes.json (the run never started training): nothing to evaluate against",
            run_dir=run.run_dir,
        )
    d = run.spec.get("data") or {}
    workers = max(1, min(int(d.get("workers") or 1), os.cpu_count() or 1))
    where, samples, skipped = _samples(run, folder, workers)
    if not samples:
        raise ToolError("bad_input", f"no readable images to evaluate in {where}", field="--data")
    if batch_size is not None and batch_size < 1:
        raise ToolError("bad_input", f"--batch-size must be at least 1 (got {batch_size})", field="--batch-size")
    # MindSpore only now: a wrong folder or checkpoint is answered without its ~10 s import.
    from ..data.pipeline import make_dataset
    from ..models import amp as ampmod
    from .loading import load_net, preprocess_of, select_device

    target = select_device(run, device)
    net = load_net(run, ckpt)
    level = ampmod.plan(run.spec.get("amp") or {"level": "O0", "loss_scale": "none"}, target).level
    logits_of = ampmod.build_eval_step(ampmod.apply_level(net, level))
    net.set_train(False)
    n = len(run.classes)
    confusion = np.zeros((n, n), np.int64)
    loss_sum, count, nonfinite = 0.0, 0, 0
    ds = make_dataset(
        samples,
        int(d.get("image_size") or 224),
        batch_size or int(d.get("batch_size") or 32),
        workers,
        False,
        False,
        0,
        drop_remainder=False,
        preprocess=preprocess_of(run, ckpt),
    )
    for x, y in ds.create_tuple_iterator(num_epochs=1):
        logits = logits_of(x).asnumpy().astype(np.float64)
        labels = y.asnumpy().astype(np.int64)
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss_sum += float(-logp[np.arange(len(labels)), labels].sum())
        count += len(labels)
        ok = np.isfinite(logits).all(axis=1)  # a NaN row's argmax would "predict" class 0: count it as a miss
        nonfinite += int((~ok).sum())
        np.add.at(confusion, (labels[ok], logits[ok].argmax(axis=1)), 1)
    support = np.bincount([ln for _, ln in samples], minlength=n)
    predicted = confusion.sum(axis=0)
    per_class = [
        {
            "class": c,
            "precision": float(confusion[i, i] / predicted[i]) if predicted[i] else None,
            "recall": float(confusion[i, i] / support[i]) if support[i] else None,
            "support": int(support[i]),
        }
        for i, c in enumerate(run.classes)
    ]
    result = {
        "ckpt": os.path.abspath(ckpt),
        "ckpt_sha256": sha256_file(ckpt),
        "run_dir": run.run_dir,
        "data": where,
        "num_images": count,
        "accuracy": float(np.trace(confusion) / max(1, count)),
        "loss": loss_sum / max(1, count) if np.isfinite(loss_sum) else None,
        "nonfinite": nonfinite,
        "classes": run.classes,
        "per_class": per_class,
        "confusion": confusion.tolist(),
        "skipped": [{"file": p, "reason": r} for p, r in skipped],
        "device": target,
        "amp_level": level,
        "evaluated_at": time.time(),
    }
    try:
        atomic_write_json(os.path.abspath(ckpt) + ".eval.json", result)
        result["saved_to"] = os.path.abspath(ckpt) + ".eval.json"
    except OSError as e:  # a read-only checkpoint folder: the result still comes back
        result["saved_to"], result["save_error"] = None, str(e)
    return result
