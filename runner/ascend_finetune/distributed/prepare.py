"""What the launcher does once per node before msrun starts any rank, so that the ranks need not each
do it: scan and verify the data (ranks/data-plan.json), fetch model.pretrained and resolve its
preprocessing (ranks/preprocess.json). The ranks read both; launcher.py turns their errors into the
run's end.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from ..data.plan import PLAN_FILE, plan_data, write_plan
from ..spec_types import RunSpec
from .world import RANKS_DIR, world_size


def prepare_data(spec: RunSpec, run_dir: str) -> str:
    """Scan and verify the data once, here, before msrun starts the ranks, and leave the plan in
    ranks/data-plan.json for them (each would otherwise decode the whole data set after init()).
    Raises DataError as a rank would."""
    path = os.path.join(run_dir, RANKS_DIR, PLAN_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    world = world_size(spec)
    write_plan(path, spec, world, plan_data(spec, world, [], num_classes=(spec.get("model") or {}).get("num_classes")))
    return path


def prepare_weights(
    spec: RunSpec, run_dir: str, resume: str | None, emit: Callable[..., Any], node_rank: int = 0
) -> str:
    """Fetch model.pretrained into the cache and resolve its preprocessing once, here, before msrun
    starts the ranks (train/weights_setup.py), and leave the preprocessing with its warnings in
    ranks/preprocess.json for them. Rank 0 emits node 0's warnings; another node's launcher emits its
    own into its event log, marked with its node rank (as its pre-flight's are): a node that could not
    read a hub config says so there. Raises PretrainedError as a rank would."""
    from ..models.preprocess import Warnings
    from ..train.weights_setup import PREPROCESS_FILE, run_preprocess, starting_weights, write_preprocess_file

    start = starting_weights(spec, resume, emit)
    warnings = Warnings()
    try:
        with start.named():
            p = run_preprocess(spec, start.origin, resume, warnings, start.read_path)
    finally:
        start.close()  # the ranks open the file themselves, and check it is this one (start.identity)
    path = os.path.join(run_dir, RANKS_DIR, PREPROCESS_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_preprocess_file(path, p, warnings, start.identity)
    if node_rank:
        for w in warnings:
            emit("warning", **{**w, "details": {**w.get("details", {}), "node_rank": node_rank}})
    return path
