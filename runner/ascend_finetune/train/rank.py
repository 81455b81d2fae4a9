"""The per-rank entry: what one of msrun's processes (rank_entry.py) runs. A rank reads the
launcher's resolved spec.json, learns its place from msrun's environment, and trains as a Run that
does not hold the run directory (its launcher does), with its rank's strategy, log and inbox."""

from __future__ import annotations

import argparse
import json
import os
import signal

from ..distributed.strategy import RankStrategy
from ..distributed.world import RankInfo, local_ranks, world_size
from ..spec_types import RunSpec
from .run import Run, RunSetup


def rank_main(argv: list[str], early_signals: list[int]) -> int:
    """A rank's (or msrun's scheduler's) life. `early_signals`: SIGTERM/SIGINT that arrived while
    this code was loading (rank_entry.py kept them); each becomes a stop request once the run exists."""
    p = argparse.ArgumentParser(prog="rank_entry.py")
    p.add_argument("--spec", required=True)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--resume")
    a = p.parse_args(argv)
    if os.environ.get("MS_ROLE") == "MS_SCHED":
        # msrun runs the task script as its scheduler too: init() serves the cluster, then exits.
        import mindspore as ms
        from mindspore.communication import init

        ms.set_context(mode=ms.GRAPH_MODE)
        init()
        return 0
    with open(a.spec, encoding="utf-8") as f:
        spec: RunSpec = json.load(f)  # the launcher's resolved spec.json: already validated
    size = int(os.environ.get("MS_WORKER_NUM", world_size(spec)))
    rank = int(os.environ["RANK_ID"])
    info = RankInfo(rank=rank, size=size, local_rank=int(os.environ.get("DEVICE_ID", rank % local_ranks(spec))))
    run_dir = os.path.abspath(a.run_dir)
    strategy = RankStrategy(info, run_dir)
    if info.rank:  # npu-smi telemetry goes to events: rank 0 samples every device of its node
        spec = {**spec, "device": {**spec["device"], "telemetry_s": 0}}
    run = Run(
        spec,
        run_dir,
        a.resume,
        RunSetup(holds_dir=False, log=strategy.event_log(), inbox=strategy.inbox(), rank=strategy),
    )
    # From here a signal reaches the run itself; replay those that came while MindSpore was loading.
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, run.on_signal)
    for signum in list(early_signals):
        run.on_signal(signum, None)
    return run.execute()
