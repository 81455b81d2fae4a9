"""Pre-flight warnings: the checks themselves (a fake `npu-smi` printing recorded outputs, a fake
CANN install), and a real CPU run that writes them as `warning` events before its first step."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conftest import events, of_type, runner, spec, write_spec

from ascend_finetune.train import preflight  # noqa: E402

FIXTURES = Path(__file__).parents[1] / "device" / "fixtures" / "npu-smi"  # recorded by device/test_npu_smi.py


def codes(warnings: list[dict]) -> list[str]:
    return [w["code"] for w in warnings]


def base(ids=(0,), workers=2, every_steps=10) -> dict:
    return {
        "data": {"workers": workers},
        "device": {"target": "Ascend", "ids": list(ids)},
        "checkpoint": {"every_steps": every_steps},
    }


# ---------------------------------------------------------------- spec against machine and run


def test_frozen_layers_without_pretrained_weights_are_flagged():
    def with_model(**model):
        return {**base(), "model": {"backbone": "resnet18", **model}}

    w = preflight.run_warnings(with_model(freeze="backbone", pretrained=None), 100, 10, "CPU", cpu_count=8)
    assert codes(w) == ["frozen_random_backbone"]
    assert "model.pretrained" in w[0]["message"] and w[0]["details"] == {"freeze": "backbone"}
    assert codes(
        preflight.run_warnings(with_model(freeze="up_to:layer2", pretrained=None), 100, 10, "CPU", cpu_count=8)
    ) == ["frozen_random_backbone"]
    assert codes(preflight.run_warnings(with_model(freeze="none", pretrained=None), 100, 10, "CPU", cpu_count=8)) == []
    assert (
        codes(
            preflight.run_warnings(with_model(freeze="backbone", pretrained="/w/r18.ckpt"), 100, 10, "CPU", cpu_count=8)
        )
        == []
    )


def test_workers_above_cores_counts_every_rank_of_the_node():
    assert codes(preflight.run_warnings(base(workers=8), 100, 10, "CPU", cpu_count=8)) == []
    w = preflight.run_warnings(base(workers=9), 100, 10, "CPU", cpu_count=8)
    assert codes(w) == ["workers_above_cores"] and w[0]["details"] == {
        "workers": 9,
        "ranks_per_node": 1,
        "cpu_count": 8,
    }
    # 4 ranks on this node, each with its own loader threads: 4 x 4 > 8 cores
    w = preflight.run_warnings(base(ids=(0, 1, 2, 3), workers=4), 100, 10, "CPU", cpu_count=8)
    assert codes(w) == ["workers_above_cores"] and "at most 2" in w[0]["message"]


def test_workers_zero_is_auto_and_never_above_the_cores():
    """data.workers 0 (the default) shares the cores out between the node's ranks: no warning, even
    with 8 ranks on a 2-core machine, where a literal 0 x 8 would pass and 1 x 8 would not."""
    assert codes(preflight.run_warnings(base(workers=0), 100, 10, "CPU", cpu_count=1)) == []
    assert codes(preflight.run_warnings(base(ids=range(8), workers=0), 100, 10, "CPU", cpu_count=2)) == []
    assert codes(preflight.run_warnings(base(ids=range(8), workers=1), 100, 10, "CPU", cpu_count=2)) == [
        "workers_above_cores"
    ]


def test_checkpoint_interval_longer_than_the_run():
    assert codes(preflight.run_warnings(base(every_steps=100), 100, 10, "CPU", cpu_count=8)) == []
    w = preflight.run_warnings(base(every_steps=101), 100, 10, "CPU", cpu_count=8)
    assert codes(w) == ["no_checkpoint_interval"]
    assert w[0]["details"] == {"every_steps": 101, "total_steps": 100, "steps_per_epoch": 10}


# ---------------------------------------------------------------- NPUs, through doctor's npu-smi reading


def fake_npu_smi(tmp_path: Path, monkeypatch, fixture: str) -> None:
    """Puts an `npu-smi` that prints a recorded `npu-smi info` first on PATH."""
    text = (FIXTURES / fixture).read_text(encoding="utf-8").split("\n", 1)[1]  # without the source line
    (tmp_path / "info.txt").write_text(text, encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "npu-smi"
    exe.write_text(f'#!/bin/sh\n[ "$1" = info ] || exit 2\ncat "{tmp_path / "info.txt"}"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_busy_npus_and_low_hbm_on_the_runs_devices(tmp_path, monkeypatch):
    # 8 x 910B3, each with a python process holding ~54 GB: 57895 of 65536 MB used on NPU 0.
    fake_npu_smi(tmp_path, monkeypatch, "info_910b3_8npu_processes.txt")
    w = preflight.device_warnings(base(ids=(0, 1)), "Ascend", own_pids=set())
    assert codes(w) == ["npu_busy", "npu_low_hbm"]
    busy = w[0]["details"]["processes"]
    assert [(b["ids"], b["pid"]) for b in busy] == [([0], 13128), ([1], 13604)]
    low = w[1]["details"]["devices"]
    assert [(d["id"], d["free_mb"]) for d in low] == [(0, 65536 - 57895), (1, 65536 - 57898)]
    assert "Malloc device memory failed" in w[1]["message"]
    # The run's own processes are not "other processes"; a CPU run reads no NPU at all.
    own = preflight.device_warnings(base(ids=(0,)), "Ascend", own_pids={13128})
    assert codes(own) == ["npu_low_hbm"]
    assert preflight.device_warnings(base(ids=(0, 1)), "CPU", own_pids=set()) == []


def test_idle_npus_give_no_warning(tmp_path, monkeypatch):
    fake_npu_smi(tmp_path, monkeypatch, "info_910b3_8npu_idle.txt")  # 3.3 of 64 GB used, no processes
    assert preflight.device_warnings(base(ids=range(8)), "Ascend", own_pids=set()) == []


def test_no_or_unreadable_npu_smi_is_not_a_run_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no npu-smi
    assert preflight.device_warnings(base(), "Ascend") == []
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "npu-smi").write_text("#!/bin/sh\necho 'dcmi model initialized failed, ret is -8020'\n")
    (bindir / "npu-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}/usr/bin:/bin")
    assert preflight.device_warnings(base(), "Ascend") == []  # doctor reports the unknown format


# ---------------------------------------------------------------- CANN against MindSpore


def fake_cann(tmp_path: Path, version_line: str) -> Path:
    home = tmp_path / "ascend-toolkit" / "latest"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text(f"{version_line}\ntimestamp=20240101\n")
    return home


def test_cann_version_outside_mindsporess_list(tmp_path):
    supported = preflight.supported_cann()
    assert supported, "MindSpore lists the CANN versions it supports"
    old = fake_cann(tmp_path, "Version=7.0.0.alpha003")
    w = preflight.cann_warning(str(old))
    assert w["code"] == "cann_mismatch" and w["details"]["cann"] == "7.0" and w["details"]["supported"] == supported
    ok = fake_cann(tmp_path / "ok", f"Version={supported[0]}.RC1")
    assert preflight.cann_warning(str(ok)) is None
    assert preflight.cann_warning(str(tmp_path / "nowhere")) is None  # not detectable: no warning


def test_cann_check_runs_only_on_ascend(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(fake_cann(tmp_path, "Version=6.3.RC2")))
    assert "cann_mismatch" in codes(preflight.run_warnings(base(), 100, 10, "Ascend", cpu_count=64))
    assert "cann_mismatch" not in codes(preflight.run_warnings(base(), 100, 10, "CPU", cpu_count=64))


# ---------------------------------------------------------------- in a real run


def test_a_run_writes_its_preflight_warnings_before_the_first_step(tmp_path, data_b):
    cores = os.cpu_count() or 1
    s = spec(data_b, name="pre", data={"workers": cores + 1}, train={"epochs": 1}, checkpoint={"every_steps": 1000})
    code, out = runner("train", str(write_spec(tmp_path / "pre.json", s)), "--run-dir", str(tmp_path / "run"))
    assert code == 0, out
    evs = events(tmp_path / "run")
    first_step = next(i for i, e in enumerate(evs) if e["type"] == "step")
    early = [e["code"] for e in evs[:first_step] if e["type"] == "warning"]
    assert {"workers_above_cores", "no_checkpoint_interval"} <= set(early), early
    total = of_type(evs, "run_started")[0]["total_steps"]
    w = next(e for e in evs if e.get("code") == "no_checkpoint_interval")
    assert w["details"]["total_steps"] == total and w["details"]["every_steps"] == 1000
    assert len(of_type(evs, "checkpoint")) == 1, "only the epoch-end checkpoint, as the warning said"


# ---------------------------------------------------------------- before launch: validate --preflight


def test_validate_preflight_reports_a_runs_warnings_and_length_without_training(tmp_path, monkeypatch, data_b):
    # On "Ascend" with the fake npu-smi: the run's NPU is busy, its HBM nearly full. Nothing trains:
    # no run directory is made, and the answer comes from the scan (cached) and npu-smi alone.
    fake_npu_smi(tmp_path, monkeypatch, "info_910b3_8npu_processes.txt")
    s = spec(data_b, device={"target": "Ascend", "ids": [0]}, data={"workers": 64})
    code, out = runner("validate", str(write_spec(tmp_path / "s.json", s)), "--preflight")
    assert code == 0 and out["ok"], out
    got = codes(out["warnings"])
    for c in ("npu_busy", "npu_low_hbm", "workers_above_cores", "no_checkpoint_interval"):
        assert c in got, (c, got)
    n_train = sum(1 for _ in data_b.rglob("*.png")) or sum(1 for _ in data_b.rglob("*.jpg"))
    assert out["steps_per_epoch"] > 0 and out["total_steps"] == out["steps_per_epoch"] * s["train"]["epochs"]
    assert out["steps_per_epoch"] <= n_train // 16
    assert not list(tmp_path.glob("runs*"))


def test_validate_preflight_names_the_field_of_data_that_cannot_train(tmp_path, data_b):
    one = tmp_path / "one"
    first = sorted(p for p in data_b.iterdir() if p.is_dir())[0]
    (one / first.name).mkdir(parents=True)
    for f in sorted(first.iterdir())[:4]:
        (one / first.name / f.name).write_bytes(f.read_bytes())
    s = spec(one)
    code, out = runner("validate", str(write_spec(tmp_path / "s.json", s)))
    assert code == 0, "the schema alone cannot see it"
    code, out = runner("validate", str(write_spec(tmp_path / "s.json", s)), "--preflight")
    assert code == 2 and not out["ok"]
    (p,) = out["problems"]
    assert p["path"] == "data.train" and p["fix"]
