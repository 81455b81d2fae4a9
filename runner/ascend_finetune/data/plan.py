"""The data plan of a run: scan the folders, split off validation, count the steps.

The trainer and the pre-flight report (`validate --preflight`) both call `plan_data`, so a launch is
refused for the same reason, in the same words, as the run it would have started.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .folder import DataError, ImageSet, scan, stratified_split


@dataclass
class DataPlan:
    classes: list[str]
    train_samples: list[tuple[str, int]]
    val_samples: list[tuple[str, int]]
    steps_per_epoch: int
    total_steps: int
    workers: int  # data loader threads per rank: data.workers, at most the CPU cores


def loader_workers(requested: int) -> int:
    return max(1, min(requested, os.cpu_count() or 1))


def skipped_warning(skipped: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "code": "images_skipped",
        "message": f"skipped {len(skipped)} file(s) that are not readable images",
        "details": {"count": len(skipped), "first": [{"path": p, "reason": r} for p, r in skipped[:10]]},
    }


def plan_data(
    spec: dict[str, Any], world: int, warnings: list[dict[str, Any]], num_classes: int | None = None
) -> DataPlan:
    """Scan data.train (and data.val, or split data.val_split off data.train with train.seed) and count
    the steps of a run over `world` ranks. Raises DataError as a run would.

    Skipped files are reported into `warnings` before any DataError, so a run that then fails still
    says which files it left out. With `num_classes` (model.num_classes), the class folders must match it."""
    d, t = spec["data"], spec["train"]
    workers = loader_workers(d["workers"])
    train_set: ImageSet = scan(d["train"], workers, "data.train")
    if d["val"]:
        val_set = scan(d["val"], workers, "data.val", classes=train_set.classes)
        train_samples, val_samples = train_set.samples, val_set.samples
        skipped = train_set.skipped + val_set.skipped
    else:
        train_samples, val_samples = stratified_split(train_set.samples, d["val_split"], t["seed"])
        skipped = train_set.skipped
    if skipped:
        warnings.append(skipped_warning(skipped))
    classes = train_set.classes
    if num_classes is not None and num_classes != len(classes):
        raise DataError(
            "model.num_classes",
            f"num_classes is {num_classes} but {d['train']} has {len(classes)} class folders",
            f"set model.num_classes to {len(classes)} or null",
        )
    # batch_size is per device: one step of all ranks takes batch_size * world images, so the
    # run has as many steps as one process with that global batch.
    steps_per_epoch = len(train_samples) // (d["batch_size"] * world)
    if steps_per_epoch == 0:
        per = f" x {world} devices" if world > 1 else ""
        raise DataError(
            "data.batch_size",
            f"batch_size {d['batch_size']}{per} is larger than the {len(train_samples)} training images",
            f"set data.batch_size to at most {max(1, len(train_samples) // world)}",
        )
    return DataPlan(
        classes=classes,
        train_samples=train_samples,
        val_samples=val_samples,
        steps_per_epoch=steps_per_epoch,
        total_steps=steps_per_epoch * t["epochs"],
        workers=workers,
    )
