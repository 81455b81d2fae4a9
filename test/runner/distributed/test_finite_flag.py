"""Loss-scale overflow on one rank only: every rank skips that step (the finite flag is all-reduced).

On Ascend in saturation mode `amp.all_finite` reads the device's own overflow status, so one rank can
see an overflow that the others do not. On CPU all_finite reads the gradients (averaged across ranks
already), so the test injects the rank-local overflow into TrainStep.local_finite on rank 1 and runs
the runner's real TrainStep under msrun with two CPU workers. Mode "local" bypasses the agreement:
the step as it was before, which the test shows drifting apart. About 40 s (two msrun launches).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from ascend_finetune.distributed import world

WORKER = Path(__file__).with_name("finite_worker.py")

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "msrun").exists()
    and subprocess.run([sys.executable, "-c", "import mindspore.parallel.cluster.run"], capture_output=True).returncode
    != 0,
    reason="needs MindSpore's msrun",
)


def two_ranks(tmp_path: Path, mode: str) -> dict[int, dict]:
    out = tmp_path / mode
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "runner") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # msrun starts `python`
    argv = world.msrun_program(sys.executable) + [
        "--worker_num=2",
        "--local_worker_num=2",
        "--master_addr=127.0.0.1",
        f"--master_port={world.free_port()}",
        f"--log_dir={tmp_path / (mode + '-logs')}",
        "--join=True",
        str(WORKER),
        str(out),
        mode,
    ]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    logs = "".join(p.read_text()[-2000:] for p in sorted((tmp_path / (mode + "-logs")).glob("worker_*.log")))
    assert r.returncode == 0, logs or r.stderr[-3000:]
    return {rank: json.loads((out / f"rank-{rank}.json").read_text()) for rank in (0, 1)}


def test_ranks_agree_to_skip_a_step_that_overflowed_on_one_rank(tmp_path):
    ranks = two_ranks(tmp_path, "agree")
    for r in ranks.values():
        first, second = r["steps"]
        assert (first["finite"], first["updated"]) == (0.0, 0.0), "rank 1's overflow skips the step everywhere"
        assert first["scale"] == 512.0, "and lowers every rank's scale"
        assert (second["finite"], second["updated"]) == (1.0, 1.0)
    assert ranks[0]["weight"] == ranks[1]["weight"], "the ranks hold the same weights"


def test_without_agreement_the_ranks_drift_apart(tmp_path):
    ranks = two_ranks(tmp_path, "local")
    assert ranks[0]["steps"][0]["updated"] == 1.0 and ranks[1]["steps"][0]["updated"] == 0.0
    assert ranks[0]["weight"] != ranks[1]["weight"]
