"""Device slots: "all free" reads `npu-smi info` (a stand-in script on PATH printing recorded real
outputs), explicit ids are grouped per trial, and a sweep with no free NPU ends failed at once."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import runner

from ascend_finetune.sweep.slots import Slots

FIXTURES = Path(__file__).resolve().parents[1] / "device" / "fixtures" / "npu-smi"


def fake_npu_smi(tmp_path, monkeypatch, fixture: str) -> None:
    text = (FIXTURES / fixture).read_text(encoding="utf-8").split("\n", 1)[1]  # without its source line
    (tmp_path / "out.txt").write_text(text)
    exe = tmp_path / "bin" / "npu-smi"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\ncat '{tmp_path / 'out.txt'}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{exe.parent}:{os.environ['PATH']}")


def sweep(target="Ascend", devices="all free", concurrency=None):
    return {"base": {"device": {"target": target}}, "devices": devices, "concurrency": concurrency}


def test_all_free_takes_the_npus_without_a_process_and_sets_their_visible_devices(tmp_path, monkeypatch):
    fake_npu_smi(tmp_path, monkeypatch, "info_ascend910_a3_processes.txt")  # NPUs 0 and 3 busy, 2 chips each
    s = Slots(sweep())
    assert s.npu and [g[0] for g in s.groups] == [2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15]
    slot = s.take()
    assert s.env(slot) == {"ASCEND_RT_VISIBLE_DEVICES": "2"} and s.spec_ids(slot) == [0]


def test_explicit_ids_are_grouped_per_trial(tmp_path):
    s = Slots(sweep(devices={"ids": [4, 5, 6, 7], "per_trial": 2}))
    assert s.groups == [[4, 5], [6, 7]]
    a, b = s.take(), s.take()
    assert s.take() is None and s.env(b) == {"ASCEND_RT_VISIBLE_DEVICES": "6,7"} and s.spec_ids(b) == [0, 1]
    s.release(a)
    assert s.take() == a


def test_a_cpu_base_spec_gets_cpu_slots_without_visible_devices(tmp_path, monkeypatch):
    fake_npu_smi(tmp_path, monkeypatch, "info_910b3_8npu_idle.txt")
    s = Slots(sweep(target="CPU", concurrency=3))
    assert not s.npu and len(s.groups) == 3 and s.env(s.take()) == {}


def test_a_sweep_with_no_free_npu_ends_failed_without_starting_a_trial(tmp_path, monkeypatch, data_a):
    fake_npu_smi(tmp_path, monkeypatch, "info_910b3_8npu_processes.txt")  # a process on every NPU
    spec = tmp_path / "s.json"
    spec.write_text(
        json.dumps(
            {
                "base": {"data": {"train": str(data_a)}, "device": {"target": "Ascend"}},
                "space": {"train.lr": {"choices": [0.01, 0.1]}},
                "trials": 2,
            }
        )
    )
    code, out = runner("sweep", str(spec), "--root", str(tmp_path / "runs"))
    assert code == 1 and out["state"] == "failed" and out["trials"] == []
    evs = [json.loads(ln) for ln in open(Path(out["sweep_dir"]) / "events.jsonl")]
    assert evs[-1]["type"] == "sweep_finished" and "no free device" in evs[-1]["message"]
