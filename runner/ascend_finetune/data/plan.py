"""The data plan of a run: scan the folders, split off validation, count the steps.

The trainer and the pre-flight report (`validate --preflight`) both call `plan_data`, so a launch is
refused for the same reason, in the same words, as the run it would have started.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from typing import Any

from ..spec_types import RunSpec
from .folder import DataError, ImageSet, scan, stratified_split

# The verified scan the launcher of a multi-rank run writes before msrun starts the ranks
# (distributed/launcher.py), under the run's ranks/ folder; the ranks read it instead of scanning.
PLAN_FILE = "data-plan.json"


@dataclass
class DataPlan:
    classes: list[str]
    train_samples: list[tuple[str, int]]
    val_samples: list[tuple[str, int]]
    steps_per_epoch: int
    total_steps: int
    workers: int  # decode/augment threads per rank: data.workers, or the cores per rank when it is 0
    skipped: list[tuple[str, str]] | None = None  # (path, reason) of the files the scan left out


def _cgroup_v2_cpus(root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> float | None:
    """CPUs that cgroup v2's `cpu.max` (quota period) allows this process, the tightest of its
    cgroup and every ancestor's; None without a limit or without cgroup v2."""
    try:
        with open(proc_cgroup, encoding="utf-8") as f:
            rel = next((ln.strip()[3:] for ln in f if ln.startswith("0::")), None)
    except OSError:
        return None
    if rel is None:
        return None
    best = None
    path = rel.strip("/")
    while True:
        try:
            with open(os.path.join(root, path, "cpu.max"), encoding="utf-8") as f:
                quota, period = f.read().split()[:2]
            if quota != "max":
                cpus = int(quota) / int(period)
                best = cpus if best is None else min(best, cpus)
        except (OSError, ValueError):
            pass
        if not path:
            return best
        path = os.path.dirname(path)


def available_cores(root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> int:
    """The cores this process may run on: its CPU affinity (taskset, msrun --bind_core, a container's
    cpuset), capped by a cgroup v2 CPU quota (docker --cpus, Kubernetes limits)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_v2_cpus(root, proc_cgroup)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


def loader_workers(requested: int, ranks_per_node: int = 1, cores: int | None = None) -> int:
    """Decode/augment threads of one rank. `requested` 0 (data.workers' default): the cores available
    to this node's ranks, shared out between them. Otherwise the request, capped at those cores."""
    cores = cores or available_cores()
    per_rank = max(1, cores // max(1, ranks_per_node))
    return per_rank if requested <= 0 else max(1, min(requested, cores))


def skipped_warning(skipped: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "code": "images_skipped",
        "message": f"skipped {len(skipped)} file(s) that are not readable images",
        "details": {"count": len(skipped), "first": [{"path": p, "reason": r} for p, r in skipped[:10]]},
    }


def _plan_key(spec: RunSpec, world: int) -> dict[str, Any]:
    """What a saved plan depends on: the data section, the split's seed, the epochs and the world."""
    return {"data": spec["data"], "seed": spec["train"]["seed"], "epochs": spec["train"]["epochs"], "world": world}


def write_plan(path: str, spec: RunSpec, world: int, plan: DataPlan) -> None:
    """Save a verified plan for the ranks (plan_data's `plan_file`)."""
    from ..rundir import atomic_write_json

    atomic_write_json(path, {"key": _plan_key(spec, world), "plan": asdict(plan)})


def read_plan(path: str, spec: RunSpec, world: int) -> DataPlan | None:
    """The plan saved at `path` for this spec and world, else None."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != json.loads(json.dumps(_plan_key(spec, world))):
        return None
    p = doc["plan"]
    p["train_samples"] = [(a, int(b)) for a, b in p["train_samples"]]
    p["val_samples"] = [(a, int(b)) for a, b in p["val_samples"]]
    p["skipped"] = [(a, b) for a, b in p.get("skipped") or []]
    return DataPlan(**p)


def plan_data(
    spec: RunSpec,
    world: int,
    warnings: list[dict[str, Any]],
    num_classes: int | None = None,
    plan_file: str | None = None,
    ranks_per_node: int = 1,
) -> DataPlan:
    """Scan data.train (and data.val, or split data.val_split off data.train with train.seed) and count
    the steps of a run over `world` ranks. Raises DataError as a run would.

    Skipped files are reported into `warnings` before any DataError, so a run that then fails still
    says which files it left out. With `num_classes` (model.num_classes), the class folders must match it.
    `plan_file`: a rank's copy of the plan its launcher verified (write_plan), used when it matches
    this spec and world, so that no rank scans (and decodes) the data set again."""
    d, t = spec["data"], spec["train"]
    workers = loader_workers(d["workers"], ranks_per_node)
    saved = read_plan(plan_file, spec, world) if plan_file else None
    if saved is not None:
        if saved.skipped:
            warnings.append(skipped_warning(saved.skipped))
        saved.workers = workers  # this process's cores, not the launcher's
        _check_classes(spec, saved.classes, num_classes)
        return saved
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
    _check_classes(spec, classes, num_classes)
    # batch_size is per device: one step of all ranks takes batch_size * world images, so the
    # run has as many steps as one process with that global batch.
    steps_per_epoch = len(train_samples) // (d["batch_size"] * world)
    if steps_per_epoch == 0:
        per = f" x {world} devices" if world > 1 else ""
        raise DataError(
            "data.batch_size",
            f"batch_size {d['batch_size']}{per} is larger than the {len(train_samples)} training images",
            f"set data.batch_size to at most {max(1, len(train_samples) // world)}",
            "batch_larger_than_train_set",
            batch_size=d["batch_size"],
            ranks=world,
            images=len(train_samples),
            most=max(1, len(train_samples) // world),
        )
    return DataPlan(
        classes=classes,
        train_samples=train_samples,
        val_samples=val_samples,
        steps_per_epoch=steps_per_epoch,
        total_steps=steps_per_epoch * t["epochs"],
        workers=workers,
        skipped=skipped,
    )


def _check_classes(spec: RunSpec, classes: list[str], num_classes: int | None) -> None:
    if num_classes is not None and num_classes != len(classes):
        raise DataError(
            "model.num_classes",
            f"num_classes is {num_classes} but {spec['data']['train']} has {len(classes)} class folders",
            f"set model.num_classes to {len(classes)} or null",
            "num_classes_mismatch",
            num_classes=num_classes,
            folder=spec["data"]["train"],
            found=len(classes),
        )
