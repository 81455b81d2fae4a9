"""NPU telemetry: `device` events from a background `npu-smi` sampler, on recorded outputs and in a
real (CPU) training run with a fake `npu-smi` first on the PATH."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, events, of_type, spec, write_spec
from test_npu_smi import recorded

from ascend_finetune.device.npu_smi import parse_info
from ascend_finetune.device.telemetry import DeviceSampler, samples


def fake_exe(tmp_path: Path, body: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "npu-smi"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def printing(tmp_path: Path, fixture: str) -> str:
    out = tmp_path / f"{fixture}.out"
    out.write_text(recorded(fixture), encoding="utf-8")
    return f'[ "$1" = info ] || exit 2\ncat "{out}"'


class Recorder:
    def __init__(self):
        self.events: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def __call__(self, type_, **payload):
        with self.lock:
            self.events.append((type_, payload))

    def of(self, t):
        return [p for (ty, p) in self.events if ty == t]


# ---------------------------------------------------------------- which chip is which device id


def test_910b_one_chip_per_npu_maps_npu_id_to_device_id():
    parsed = parse_info(recorded("info_910b3_8npu_processes.txt"))
    got = samples(parsed, [0, 3])
    assert [d["id"] for d in got] == [0, 3]
    npu0 = next(d for d in parsed["devices"] if d["id"] == 0)
    assert got[0] == {
        "id": 0,
        "util": npu0["util"],
        "hbm_used_mb": npu0["hbm_used_mb"],
        "hbm_total_mb": npu0["hbm_total_mb"],
        "temp_c": npu0["temp_c"],
        "power_w": npu0["power_w"],
    }
    assert got[0]["hbm_total_mb"] and got[0]["hbm_total_mb"] > 30000


def test_a3_two_chips_per_npu_use_the_phy_id():
    parsed = parse_info(recorded("info_ascend910_a3_16chip.txt"))
    got = samples(parsed, list(range(16)))
    assert [d["id"] for d in got] == list(range(16)), "all 16 chips of 8 NPUs, by Phy-ID"
    # the second chip of an A3 NPU prints '-' for power: null, not a crash or a zero
    assert any(d["power_w"] is None for d in got)


def test_310p_reports_card_memory_in_the_hbm_fields():
    parsed = parse_info(recorded("info_310p3_duo_multichip.txt"))
    got = samples(parsed, [0, 1])
    assert len(got) == 2
    for d in got:
        assert d["hbm_total_mb"] and d["hbm_total_mb"] > 1000, d
        assert d["power_w"] is None  # 310P prints NA


def test_devices_the_run_does_not_use_are_left_out():
    parsed = parse_info(recorded("info_910b3_8npu_idle.txt"))
    assert samples(parsed, [42]) == []


# ---------------------------------------------------------------- the sampler against a fake npu-smi


def test_sampler_writes_device_events(tmp_path):
    rec = Recorder()
    s = DeviceSampler(rec, [0, 1], exe=str(fake_exe(tmp_path, printing(tmp_path, "info_910b3_8npu_processes.txt"))))
    assert s.sample_once() and s.sample_once()
    dev = rec.of("device")
    assert len(dev) == 2 and [d["id"] for d in dev[0]["devices"]] == [0, 1]
    assert rec.of("warning") == []


def test_unknown_output_gives_one_warning_and_stops(tmp_path):
    rec = Recorder()
    s = DeviceSampler(rec, [0], exe=str(fake_exe(tmp_path, "echo 'dcmi model initialized failed, ret is -8020'")))
    assert not s.sample_once()
    assert s._stop.is_set(), "an output it cannot read will not become readable on the next call"
    (w,) = rec.of("warning")
    assert w["code"] == "telemetry_unavailable" and w["details"]["kind"] == "format"
    assert "dcmi model initialized failed" in w["details"]["raw"]


def test_a_failing_npu_smi_warns_once_and_keeps_trying(tmp_path):
    rec = Recorder()
    s = DeviceSampler(rec, [0], exe=str(fake_exe(tmp_path, "echo 'driver not loaded' >&2; exit 3")))
    for _ in range(3):
        assert not s.sample_once()
    assert not s._stop.is_set()
    (w,) = rec.of("warning")
    assert w["details"]["kind"] == "exit" and "driver not loaded" in w["details"]["stderr"]
    assert s.failures == 3 and rec.of("device") == []


def test_stop_kills_a_hung_npu_smi(tmp_path):
    rec = Recorder()
    marker = tmp_path / "started"
    s = DeviceSampler(rec, [0], interval_s=0.05, exe=str(fake_exe(tmp_path, f"touch '{marker}'; exec sleep 60")))
    s._thread.start()
    while not marker.exists():
        threading.Event().wait(0.02)
    s.stop()
    assert not s._thread.is_alive(), "stop() must not wait for npu-smi's own timeout"
    assert rec.events == []


# ---------------------------------------------------------------- in a real run


def test_a_training_run_writes_device_events_between_its_steps(tmp_path, data_a):
    exe = fake_exe(tmp_path, printing(tmp_path, "info_910b3_8npu_processes.txt"))
    s = spec(data_a, train={"epochs": 2}, device={"target": "CPU", "ids": [0], "telemetry_s": 0.2})
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), PATH=f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    run = tmp_path / "run"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ascend_finetune",
            "train",
            str(write_spec(tmp_path / "s.json", s)),
            "--run-dir",
            str(run),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    evs = events(run)
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1)), "seq stays contiguous with two writers"
    dev = of_type(evs, "device")
    assert len(dev) >= 2, f"expected samples every 0.2 s, got {len(dev)}"
    types = [e["type"] for e in evs]
    assert types.index("run_started") < types.index("device")
    assert types[-1] == "run_finished", "no device event after the run's end"
    expected = samples(parse_info(recorded("info_910b3_8npu_processes.txt")), [0])
    assert all(e["devices"] == expected for e in dev)
    assert of_type(evs, "warning") == [] or all(w["code"] != "telemetry_unavailable" for w in of_type(evs, "warning"))


def test_no_npu_smi_no_device_events(tmp_path, run_a):
    # run_a (conftest) trained on this CPU box without npu-smi on the PATH
    if any(Path(p, "npu-smi").exists() for p in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("this machine has an npu-smi")
    assert of_type(events(run_a), "device") == []


# -- host telemetry (no npu-smi) ------------------------------------------------------------------


def _fake_proc(root: Path, busy: int, idle: int, ticks: int) -> None:
    (root / "42").mkdir(parents=True, exist_ok=True)
    # user nice system idle iowait irq softirq steal
    (root / "stat").write_text(f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\n")
    (root / "meminfo").write_text("MemTotal:       16384000 kB\nMemFree: 1 kB\nMemAvailable:    8192000 kB\n")
    (root / "42" / "status").write_text("Name:\tpython\nVmRSS:\t  524288 kB\n")
    fields = ["S"] + ["0"] * 10 + [str(ticks), "0"]  # state, then utime (14th field) and stime
    (root / "42" / "stat").write_text(f"42 (a (weird) name) {' '.join(fields)} 0 0\n")


def test_the_host_sampler_reads_cpu_memory_and_rss_from_proc(tmp_path):
    from ascend_finetune.device.telemetry import HostSampler

    _fake_proc(tmp_path, busy=1000, idle=1000, ticks=0)
    sampler = HostSampler(lambda *a, **k: None, 1.0, proc=str(tmp_path), pid=42)
    first = sampler.read()
    assert first["cpu_pct"] is None and first["proc_cpu_pct"] is None, "no share before a second read"
    assert (first["mem_used_mb"], first["mem_total_mb"], first["rss_mb"]) == (8000.0, 16000.0, 512.0)
    _fake_proc(tmp_path, busy=1300, idle=1100, ticks=50)  # 300 of 400 jiffies busy
    second = sampler.read()
    assert second["cpu_pct"] == 75.0
    assert second["proc_cpu_pct"] is not None and second["proc_cpu_pct"] > 0


def test_without_proc_the_host_sampler_warns_once_and_stops(tmp_path):
    from ascend_finetune.device.telemetry import HostSampler

    got = []
    sampler = HostSampler(lambda t, **f: got.append((t, f)), 0.05, proc=str(tmp_path / "missing"), pid=1)
    sampler.start()
    sampler._thread.join(timeout=5)
    assert not sampler._thread.is_alive()
    assert [t for t, _ in got] == ["warning"] and got[0][1]["code"] == "telemetry_unavailable"
