"""Pre-flight and telemetry on every node of a run of several ranks: each node's launcher checks
its own NPUs before msrun starts its ranks and records what it found in its node's run directory,
and a node other than the master samples its own NPUs. A fake `npu-smi` prints recorded outputs
(test/runner/device/fixtures/npu-smi); the two-"node" msrun run is in test_msrun.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import wait_for

from ascend_finetune.distributed.launcher import Launcher
from ascend_finetune.train import preflight

FIXTURES = Path(__file__).parents[1] / "device" / "fixtures" / "npu-smi"


def fake_npu_smi(tmp_path: Path, fixture: str) -> str:
    """A bin folder whose `npu-smi` prints a recorded `npu-smi info`; returns the folder."""
    text = (FIXTURES / fixture).read_text(encoding="utf-8").split("\n", 1)[1]  # without the source line
    (tmp_path / "info.txt").write_text(text, encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "npu-smi"
    exe.write_text(f'#!/bin/sh\n[ "$1" = info ] || exit 2\ncat "{tmp_path / "info.txt"}"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(bindir)


class HeldRun:
    """What the launcher needs of the run it holds (launcher.HeldRun), with the events it writes kept."""

    def __init__(self, run_dir: Path, spec: dict):
        self.spec, self.run_dir, self.resume_from, self.error = spec, str(run_dir), None, None
        self.events: list[dict] = []
        self.log = self

    def emit(self, type_: str, **payload):
        self.events.append({"type": type_, **payload})
        return self.events[-1]


def _spec(target="Ascend", telemetry_s=2.0) -> dict:
    return {"device": {"target": target, "ids": [0, 1], "telemetry_s": telemetry_s}, "train": {}}


def test_each_nodes_launcher_checks_its_own_npus_and_records_them(tmp_path, monkeypatch):
    # 8 x 910B3 with a python process on each NPU holding ~54 GB: busy and short of HBM.
    monkeypatch.setenv(
        "PATH", f"{fake_npu_smi(tmp_path, 'info_910b3_8npu_processes.txt')}{os.pathsep}{os.environ['PATH']}"
    )
    runs = {}
    for node in (0, 1):
        run = runs[node] = HeldRun(tmp_path / f"node{node}", _spec())
        found = Launcher(run, node, master_port=1, checks=preflight.node_warnings).preflight()
        assert [w["code"] for w in found] == ["npu_busy", "npu_low_hbm"]
        doc = json.loads((tmp_path / f"node{node}" / "ranks" / f"preflight-node-{node}.json").read_text())
        assert (doc["node_rank"], doc["ids"]) == (node, [0, 1]) and doc["warnings"] == found
        busy = doc["warnings"][0]["details"]["processes"]
        assert [(b["ids"], b["pid"]) for b in busy] == [([0], 13128), ([1], 13604)]
    # Node 0's are the run's own warning events, written by rank 0 after run_started: the trainer
    # reads them from the file. Another node writes its own, marked with its node rank.
    assert runs[0].events == []
    assert preflight.read_node_warnings(str(tmp_path / "node0" / "ranks"), 0) == found
    assert [(e["code"], e["details"]["node_rank"]) for e in runs[1].events] == [("npu_busy", 1), ("npu_low_hbm", 1)]
    # No record (an older launcher): the trainer checks itself.
    assert preflight.read_node_warnings(str(tmp_path / "node0" / "ranks"), 3) is None


def test_a_cpu_run_and_idle_npus_record_no_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_npu_smi(tmp_path, 'info_910b3_8npu_idle.txt')}{os.pathsep}{os.environ['PATH']}")
    for target in ("Ascend", "CPU"):
        run = HeldRun(tmp_path / target, _spec(target))
        assert Launcher(run, 1, master_port=1, checks=preflight.node_warnings).preflight() == []
        doc = json.loads((tmp_path / target / "ranks" / "preflight-node-1.json").read_text())
        assert doc["warnings"] == [] and run.events == []


def test_a_node_other_than_the_master_samples_its_own_npus(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_npu_smi(tmp_path, 'info_910b3_8npu_idle.txt')}{os.pathsep}{os.environ['PATH']}")
    master = HeldRun(tmp_path / "m", _spec(telemetry_s=0.05))
    assert Launcher(master, 0, master_port=1)._sample_devices() is None, "rank 0 samples the master's NPUs"
    other = HeldRun(tmp_path / "o", _spec(telemetry_s=0.05))
    sampler = Launcher(other, 1, master_port=1)._sample_devices()
    assert sampler is not None
    try:
        wait_for(lambda: len([e for e in other.events if e["type"] == "device"]) >= 2, timeout=60, what="two samples")
    finally:
        sampler.stop()
    dev = [e for e in other.events if e["type"] == "device"]
    assert all(e["node_rank"] == 1 and [d["id"] for d in e["devices"]] == [0, 1] for e in dev)
