"""npu_smi.py's parsers on recorded `npu-smi` outputs, and `doctor` on a fake `npu-smi`.

Each fixture in fixtures/npu-smi/ is a real output copied from a public source, named on its first
line ("# source: ..."); the tests strip that line so the parser sees only what npu-smi printed.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "runner"))

from ascend_finetune.device.npu_smi import UnknownFormat, parse_info, parse_usages  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "npu-smi"
PYTHON = ROOT / ".venv" / "bin" / "python"
DEVICE_KEYS = {
    "id",
    "chip",
    "phy_id",
    "device_id",
    "name",
    "health",
    "power_w",
    "temp_c",
    "util",
    "hbm_used_mb",
    "hbm_total_mb",
    "memory_used_mb",
    "memory_total_mb",
    "bus_id",
}


def recorded(name: str) -> str:
    """A fixture without its source line."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines and lines[0].startswith("# source: "), f"{name} must name its source on line 1"
    return "".join(lines[1:])


def info(name: str) -> dict:
    return parse_info(recorded(name))


# ---------------------------------------------------------------- fixtures themselves


def test_every_fixture_names_its_source():
    names = sorted(p.name for p in FIXTURES.iterdir())
    assert len(names) >= 8
    for n in names:
        first = (FIXTURES / n).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# source: ") and len(first) > 20, n


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("info_*.txt")))
def test_every_info_fixture_parses_with_all_fields(name):
    r = info(name)
    assert r["devices"], name
    for d in r["devices"]:
        assert set(d) == DEVICE_KEYS
        assert isinstance(d["id"], int) and isinstance(d["chip"], int)
        assert d["health"] == "OK"
        assert d["temp_c"] is not None and 20 <= d["temp_c"] <= 90
        assert d["util"] is not None and 0 <= d["util"] <= 100
        assert d["memory_total_mb"] is not None
        assert d["bus_id"] is not None and len(d["bus_id"]) == 12
    # The source line is only a comment: parsing with it gives the same result.
    assert parse_info((FIXTURES / name).read_text(encoding="utf-8")) == r


# ---------------------------------------------------------------- npu-smi info


def test_910b3_eight_npus_with_processes_and_lost_space_before_slash():
    r = info("info_910b3_8npu_processes.txt")
    assert r["version"] == "24.1.rc2.1"
    devs = r["devices"]
    assert [d["id"] for d in devs] == list(range(8))
    assert {d["chip"] for d in devs} == {0} and {d["name"] for d in devs} == {"910B3"}
    d0 = devs[0]
    assert d0 == {
        "id": 0,
        "chip": 0,
        "phy_id": None,
        "device_id": None,
        "name": "910B3",
        "health": "OK",
        "power_w": 121.6,
        "temp_c": 40.0,
        "util": 10.0,
        "hbm_used_mb": 57895.0,
        "hbm_total_mb": 65536.0,  # printed "57895/ 65536"
        "memory_used_mb": 0.0,
        "memory_total_mb": 0.0,
        "bus_id": "0000:C1:00.0",
    }
    assert [d["hbm_used_mb"] for d in devs] == [57895, 57898, 57856, 57898, 58114, 57856, 57948, 57855]
    assert [d["util"] for d in devs] == [10, 10, 13, 10, 10, 9, 15, 14]
    assert devs[7]["bus_id"] == "0000:42:00.0"
    procs = r["processes"]
    assert len(procs) == 8
    assert procs[0] == {"npu": 0, "chip": 0, "pid": 13128, "name": "python", "memory_mb": 54601.0}
    assert [p["npu"] for p in procs] == list(range(8))
    assert procs[-1]["pid"] == 13616 and procs[-1]["memory_mb"] == 54561


def test_910b3_idle_without_process_table():
    r = info("info_910b3_8npu_idle.txt")
    assert r["version"] == "24.1.rc1.b030"
    assert len(r["devices"]) == 8 and r["processes"] == []
    assert r["devices"][1]["power_w"] == 92.0
    assert [d["hbm_used_mb"] for d in r["devices"]] == [3318, 3314, 3314, 3314, 3314, 3314, 3314, 3315]
    assert {d["hbm_total_mb"] for d in r["devices"]} == {65536}


def test_910prob_no_running_processes_and_both_memories():
    r = info("info_910prob_8npu_no_processes.txt")
    assert r["version"] == "24.1.0"
    assert r["processes"] == []
    devs = r["devices"]
    assert len(devs) == 8 and {d["name"] for d in devs} == {"910ProB"}
    # The first-generation 910 reports its DDR ("Memory-Usage") and its HBM separately.
    assert (devs[0]["memory_used_mb"], devs[0]["memory_total_mb"]) == (2387, 13553)
    assert (devs[0]["hbm_used_mb"], devs[0]["hbm_total_mb"]) == (18, 32768)  # printed "18   / 32768"
    assert (devs[3]["memory_used_mb"], devs[3]["memory_total_mb"]) == (1645, 15567)
    assert devs[6]["power_w"] == 83.0 and devs[6]["temp_c"] == 40


def test_310p3_duo_lists_two_chips_of_one_card():
    r = info("info_310p3_duo_multichip.txt")
    assert r["version"] == "25.2.0"
    assert r["processes"] == []
    a, b = r["devices"]
    assert (a["id"], a["chip"], a["device_id"]) == (2, 0, 0)
    assert (b["id"], b["chip"], b["device_id"]) == (2, 1, 1)
    assert a["name"] == b["name"] == "310P3"
    assert a["power_w"] is None and b["power_w"] is None  # printed "NA"
    assert (a["memory_used_mb"], a["memory_total_mb"]) == (1529, 44280)
    assert (b["memory_used_mb"], b["memory_total_mb"]) == (1411, 43693)
    assert a["hbm_used_mb"] is None and a["hbm_total_mb"] is None  # 310P: no HBM column
    assert a["bus_id"] == b["bus_id"] == "0000:01:00.0"
    assert a["phy_id"] is None


def test_310p3_older_layout_without_version_line():
    r = info("info_310p3_two_cards.txt")
    assert r["version"] is None
    assert [(d["id"], d["chip"], d["device_id"]) for d in r["devices"]] == [(0, 0, 0), (1, 0, 1)]
    assert r["devices"][0]["power_w"] == 15.8 and r["devices"][1]["temp_c"] == 43
    assert r["devices"][1]["memory_used_mb"] == 1070


def test_a3_two_chips_per_npu_with_phy_ids():
    r = info("info_ascend910_a3_16chip.txt")
    assert r["version"] == "24.1.rc3.7"
    devs = r["devices"]
    assert len(devs) == 16
    assert [(d["id"], d["chip"]) for d in devs[:4]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [d["phy_id"] for d in devs] == list(range(16))
    assert {d["name"] for d in devs} == {"Ascend910"}
    # Power is per NPU: the second chip prints "-".
    assert devs[0]["power_w"] == 178.9 and devs[1]["power_w"] is None
    assert all(d["power_w"] is None for d in devs[1::2])
    assert devs[15] == {
        "id": 7,
        "chip": 1,
        "phy_id": 15,
        "device_id": None,
        "name": "Ascend910",
        "health": "OK",
        "power_w": None,
        "temp_c": 37.0,
        "util": 0.0,
        "hbm_used_mb": 3188.0,
        "hbm_total_mb": 65536.0,
        "memory_used_mb": 0.0,
        "memory_total_mb": 0.0,
        "bus_id": "0000:83:00.0",
    }
    assert r["processes"] == []


def test_26x_wide_columns_and_container_pid_column():
    r = info("info_910b4_26rc1_wide.txt")
    assert r["version"] == "26.0.rc1"
    (d,) = r["devices"]
    assert (d["name"], d["power_w"], d["temp_c"], d["util"]) == ("910B4", 82.6, 32, 0)
    assert (d["hbm_used_mb"], d["hbm_total_mb"]) == (2871, 32768)
    assert r["processes"] == []


def test_process_rows_with_the_26x_container_column():
    # The 26.x process header from the recorded fixture, with rows laid out under it.
    header = recorded("info_910b4_26rc1_wide.txt").splitlines()[9:12]
    # Rows as wide as the recorded table: the parser reads columns by position, so they stay one line each.
    rows = [
        "| 0       0                 | 4021          | python3            | 61234                 | 77                      |",  # noqa: E501
        "| No running processes found in NPU 1                                                                              |",  # noqa: E501
    ]
    r = parse_info(recorded("info_910b4_26rc1_wide.txt") + "\n".join(header + rows) + "\n")
    assert r["processes"] == [{"npu": 0, "chip": 0, "pid": 4021, "name": "python3", "memory_mb": 61234.0}]


def test_partial_output_keeps_what_it_can():
    text = recorded("info_910b3_8npu_processes.txt")
    # Cut after NPU 1's name row: NPU 1 has no chip row, its chip fields are None.
    lines = text.splitlines()
    cut = next(i for i, ln in enumerate(lines) if ln.startswith("| 1     910B3")) + 1
    r = parse_info("\n".join(lines[:cut]))
    assert len(r["devices"]) == 2
    assert r["devices"][0]["hbm_used_mb"] == 57895
    one = r["devices"][1]
    assert (one["id"], one["name"], one["power_w"]) == (1, "910B3", 116.4)
    assert one["chip"] is None and one["hbm_used_mb"] is None and one["bus_id"] is None
    # Only the two data rows, no header: the default column meaning is used.
    r = parse_info("\n".join(lines[6:8]))
    assert r["devices"][0]["hbm_total_mb"] == 65536 and r["version"] is None


def test_header_only_means_no_devices_not_an_error():
    r = parse_info("\n".join(recorded("info_910b3_8npu_idle.txt").splitlines()[:6]))
    assert r == {"devices": [], "processes": [], "version": "24.1.rc1.b030"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "dcmi model initialized failed, because the device is used. ret is -8020\n",
        "command not found\n",
        "| a | b |\n| c | d |\n",
        "NPU ID : 0\nHBM Usage Rate(%) : 5\n",  # a -t usages output is not an info table
    ],
)
def test_unknown_format_raises(text):
    with pytest.raises(UnknownFormat):
        parse_info(text)


def test_unknown_format_is_a_value_error_and_names_the_text():
    with pytest.raises(ValueError, match="ret is -8020"):
        parse_info("dcmi model initialized failed, because the device is used. ret is -8020")
    with pytest.raises(UnknownFormat):
        parse_info(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- npu-smi info -t usages


def test_usages_910b_newer_driver_keys():
    u = parse_usages(recorded("usages_910b_25.5.1.txt"))
    assert u["npu"] == 0 and u["chip_count"] == 1 and u["chip"] == 0
    assert u["hbm_util"] == 5 and u["hbm_total_mb"] == 65536
    assert u["aicore_util"] == 0 and u["vector_util"] == 0 and u["aicube_util"] == 0
    assert u["ctrlcpu_util"] == 6 and u["npu_util"] == 0 and u["hbm_bw_util"] == 0
    assert u["ddr_total_mb"] == 0 and u["hugepages_total"] == 0
    assert len(u["chips"]) == 1 and u["chips"][0]["hbm_util"] == 5


def test_usages_910b_older_driver_keys():
    u = parse_usages(recorded("usages_910b_gpustack.txt"))
    assert (u["npu"], u["chip"]) == (0, 0)
    assert u["hbm_total_mb"] == 32768 and u["hbm_util"] == 0
    assert u["ddr_total_mb"] == 15171 and u["ddr_util"] == 3 and u["ctrlcpu_util"] == 9
    assert "npu_util" not in u and "vector_util" not in u  # this driver has neither key


def test_usages_310p_has_no_hbm_and_keeps_dvpp_keys():
    u = parse_usages(recorded("usages_310p_gpustack.txt"))
    assert (u["npu"], u["chip"]) == (1, 0)
    assert "hbm_util" not in u and "hbm_total_mb" not in u
    assert u["ddr_total_mb"] == 21534 and u["ddr_util"] == 4 and u["ddr_bw_util"] == 51
    assert u["vector_util"] == 0  # "Vectorcore Usage Rate(%)" on 310P
    assert u["dvpp_vdec_util"] == 0 and u["dvpp_jpegd_util"] == 0


def test_usages_two_chip_blocks_and_unknown_keys_kept_raw():
    # Two chips' blocks as a multi-chip card prints them (the recorded 910B block, twice).
    block = recorded("usages_910b_gpustack.txt").split("Chip ID")[0]
    text = block + "Some New Key(x)                : 7 A\nChip ID : 0\n" + block.split("\n\n", 1)[1] + "Chip ID : 1\n"
    u = parse_usages(text)
    assert [c["chip"] for c in u["chips"]] == [0, 1]
    assert u["chip"] == 0 and u["Some New Key(x)"] == "7 A"
    assert u["chips"][1]["hbm_total_mb"] == 32768 and "Some New Key(x)" not in u["chips"][1]


def test_usages_unknown_format():
    for text in ("", "no colon here\n"):
        with pytest.raises(UnknownFormat):
            parse_usages(text)


# ---------------------------------------------------------------- doctor with a fake npu-smi


def fake_npu_smi(tmp_path: Path, script_body: str) -> dict:
    """Puts an `npu-smi` script first on PATH and returns doctor's JSON."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "npu-smi"
    exe.write_text(f"#!/bin/sh\n{script_body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    r = subprocess.run(
        [str(PYTHON), "-m", "ascend_finetune", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(tmp_path),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    doc = json.loads(lines[-1])
    assert doc["npu"]["npu_smi"] == str(exe)
    return doc


def printing(tmp_path: Path, fixture: str) -> str:
    out = tmp_path / "npu-smi-info.txt"
    out.write_text(recorded(fixture), encoding="utf-8")
    return f'[ "$1" = info ] || exit 2\ncat "{out}"'


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the project's .venv")
def test_doctor_parses_910b_devices_and_processes(tmp_path):
    npu = fake_npu_smi(tmp_path, printing(tmp_path, "info_910b3_8npu_processes.txt"))["npu"]
    assert "error" not in npu and "raw" not in npu
    assert npu["version"] == "24.1.rc2.1"
    assert len(npu["devices"]) == 8
    d = npu["devices"][3]
    assert (d["id"], d["name"], d["hbm_used_mb"], d["hbm_total_mb"], d["util"]) == (3, "910B3", 57898, 65536, 10)
    assert len(npu["processes"]) == 8 and npu["processes"][0]["pid"] == 13128


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the project's .venv")
def test_doctor_parses_multi_chip_310p(tmp_path):
    npu = fake_npu_smi(tmp_path, printing(tmp_path, "info_310p3_duo_multichip.txt"))["npu"]
    assert [(d["id"], d["chip"]) for d in npu["devices"]] == [(2, 0), (2, 1)]
    assert npu["devices"][1]["memory_total_mb"] == 43693 and npu["processes"] == []


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the project's .venv")
def test_doctor_reports_garbage_without_crashing(tmp_path):
    doc = fake_npu_smi(tmp_path, "echo 'dcmi model initialized failed, because the device is used. ret is -8020'")
    npu = doc["npu"]
    assert npu["devices"] == [] and npu["processes"] == []
    assert "unrecognised" in npu["error"] and "-8020" in npu["error"]
    assert npu["raw"].startswith("dcmi model initialized failed")
    assert doc["python"]["ok"] is True  # the rest of doctor is still there


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the project's .venv")
def test_doctor_reports_a_failing_npu_smi(tmp_path):
    npu = fake_npu_smi(tmp_path, "echo 'Error: driver not loaded' >&2\nexit 3")["npu"]
    assert npu["devices"] == []
    assert "exited with 3" in npu["error"] and "driver not loaded" in npu["error"]


@pytest.mark.skipif(not PYTHON.exists(), reason="needs the project's .venv")
def test_doctor_truncates_raw_output(tmp_path):
    npu = fake_npu_smi(tmp_path, "i=0; while [ $i -lt 2000 ]; do echo 'not a table line'; i=$((i+1)); done")["npu"]
    assert "error" in npu and len(npu["raw"]) == 4000
