"""`eval`: a checkpoint of a run evaluated on an ImageFolder (by default the run's own validation set),
with the run's preprocessing and AMP level; the result is kept next to the checkpoint as
`<ckpt>.eval.json`."""

from __future__ import annotations

import os
import time
from typing import Any, cast

import numpy as np

from ..data.folder import DataError, list_classes, scan, stratified_split
from ..data.plan import loader_workers
from ..rundir import atomic_write_json
from .errors import ToolError, check_batch_size
from .format import read_index
from .manifest import sha256_file
from .scoring import Tally
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
                    why="eval_classes_differ",
                    params={"folder": folder, "classes": len(run_classes), "missing": missing, "extra": extra},
                )
            s = scan(folder, workers, field, classes=run.classes)
            return os.path.abspath(folder), s.samples, s.skipped
        # No val folder: the run validated on a seeded split of its training folder; take the same split.
        if not d.get("train") or not (d.get("val_split") or 0) > 0:
            raise ToolError(
                "bad_input",
                "the run has no validation set (no data.val and no data.val_split): pass --data DIR",
                field="--data",
                why="no_validation_set",
            )
        s = scan(d["train"], workers, "data.train", classes=run.classes)
        _, val = stratified_split(s.samples, float(d["val_split"]), int(t.get("seed", 1)))
        return os.path.abspath(d["train"]), val, s.skipped
    except DataError as e:
        raise ToolError("bad_input", e.message, field=e.path, fix=e.fix, why=e.why, params=e.params) from e


def evaluate(run_dir: str, ckpt: str, folder: str | None, batch_size: int | None, device: str | None) -> dict[str, Any]:
    run = load_run(run_dir)
    read_index(ckpt)  # a damaged file fails here, before the data is scanned
    if not run.classes:
        raise ToolError(
            "not_a_run",
            f"{run_dir} has no classes.json (the run never started training): nothing to evaluate against",
            run_dir=run.run_dir,
            why="no_classes_json",
            params={"run_dir": run.run_dir},
        )
    d = run.spec.get("data") or {}
    workers = loader_workers(int(d.get("workers") or 0))  # 0: the cores available, as in training
    where, samples, skipped = _samples(run, folder, workers)
    if not samples:
        raise ToolError(
            "bad_input",
            f"no readable images to evaluate in {where}",
            field="--data",
            why="no_images_to_evaluate",
            params={"folder": where},
        )
    check_batch_size(batch_size)
    # MindSpore only now: a wrong folder or checkpoint is answered without its ~10 s import.
    from ..data.pipeline import make_dataset
    from .loading import preprocess_of
    from .predict import build_predictor

    logits_of, target, level = build_predictor(run, ckpt, device)
    n = len(run.classes)
    batch = batch_size or int(d.get("batch_size") or 32)
    ds = make_dataset(
        samples,
        int(d.get("image_size") or 224),
        batch,
        workers,
        False,
        False,
        0,
        drop_remainder=False,
        preprocess=preprocess_of(run, ckpt),
    )
    tally = Tally(n, record=True)
    tally.run(logits_of, ds.create_tuple_iterator(num_epochs=1, output_numpy=True), batch)
    confusion, count, loss_sum = tally.confusion, tally.count, tally.loss_sum
    # The dataset keeps sample order (no shuffle), so row i is samples[i].
    predictions = tally.predictions([os.path.relpath(p, where) for p, _ in samples])
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
        # with 5 classes or fewer, 1.0 by definition (scoring.py)
        "top5": tally.top5,
        "nonfinite": tally.nonfinite,
        "classes": run.classes,
        "per_class": per_class,
        "confusion": confusion.tolist(),
        # per image (file relative to `data`, label and top-5 as class indices), bounded: `predictions_kept`
        "predictions": predictions["records"],
        "predictions_kept": predictions["kept"],
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
