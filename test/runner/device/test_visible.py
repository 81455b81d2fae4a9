"""Device ids under ASCEND_RT_VISIBLE_DEVICES, A3's per-die process rows, and how `auto` asks
MindSpore for an NPU; on recorded `npu-smi` outputs (fixtures/npu-smi/)."""

from __future__ import annotations

import mindspore as ms
import pytest
from test_npu_smi import recorded

from ascend_finetune.device.npu_smi import parse_info
from ascend_finetune.device.telemetry import samples
from ascend_finetune.device.visible import check_ids, to_npu_smi
from ascend_finetune.distributed.world import RankInfo, device_id
from ascend_finetune.train import preflight


def spec_ids(ids):
    return {"device": {"target": "Ascend", "ids": list(ids)}}


def test_mindspore_ids_map_to_npu_smi_ids():
    env = {"ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"}
    assert to_npu_smi([0, 3], env) == {4: 0, 7: 3}
    assert to_npu_smi([0, 3], {}) == {0: 0, 3: 3}
    assert check_ids([0, 1], env) is None and check_ids([4, 5], {}) is None
    msg = check_ids([4, 5], env)
    assert msg and "0..3" in msg and "4 is 0" in msg and "unset ASCEND_RT_VISIBLE_DEVICES" in msg


def test_device_selection_refuses_npu_smi_ids_under_the_variable(monkeypatch):
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "4,5")
    assert device_id({"device": {"ids": [0, 1]}}, "Ascend", RankInfo(1, 2, 1)) == 1
    with pytest.raises(ValueError, match="MindSpore's device ids"):
        device_id({"device": {"ids": [4, 5]}}, "Ascend", RankInfo(0, 2, 0))


def test_telemetry_reports_the_visible_devices_under_the_runs_ids():
    parsed = parse_info(recorded("info_910b3_8npu_processes.txt"))
    plain = {d["id"]: d for d in samples(parsed, [4, 5])}
    mapped = samples(parsed, [0, 1], {"ASCEND_RT_VISIBLE_DEVICES": "4,5"})
    assert [d["id"] for d in mapped] == [0, 1]
    assert mapped[0]["hbm_used_mb"] == plain[4]["hbm_used_mb"] and mapped[1]["temp_c"] == plain[5]["temp_c"]


def test_busy_check_maps_the_visible_devices(monkeypatch):
    parsed = parse_info(recorded("info_910b3_8npu_processes.txt"))  # one process on each of the 8 NPUs
    pid_on = {p["npu"]: p["pid"] for p in parsed["processes"]}
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "5,6")
    w = preflight.device_warnings(spec_ids([0]), "Ascend", read_npus=lambda: parsed, own_pids=set())
    busy = [x for x in w if x["code"] == "npu_busy"][0]["details"]["processes"]
    assert [(b["ids"], b["pid"]) for b in busy] == [([0], pid_on[5])], "MindSpore's 0 is npu-smi's 5"
    low = [x for x in w if x["code"] == "npu_low_hbm"][0]["details"]["devices"]
    assert [d["id"] for d in low] == [0] and low[0]["total_mb"] - low[0]["free_mb"] == parsed["devices"][5][
        "hbm_used_mb"
    ]


def test_a3_busy_check_reads_the_chip_column():
    """Atlas A3 lists a process per die: NPU 0 chip 1 (Phy-ID 1) is busy, its chip 0 (Phy-ID 0) is not."""
    parsed = parse_info(recorded("info_ascend910_a3_processes.txt"))
    assert [(p["npu"], p["chip"]) for p in parsed["processes"]] == [(0, 1), (3, 0)]

    def busy_ids(ids):
        w = preflight.device_warnings(spec_ids(ids), "Ascend", read_npus=lambda: parsed, own_pids=set())
        return sorted(i for x in w if x["code"] == "npu_busy" for p in x["details"]["processes"] for i in p["ids"])

    assert busy_ids([0]) == []
    assert busy_ids([1]) == [1]
    assert busy_ids([6, 7]) == [6]
    assert busy_ids(range(16)) == [1, 6]


def test_auto_asks_the_device_context_api(monkeypatch):
    """2.10 deprecates ms.hal.is_available for mindspore.device_context.ascend.is_available()."""
    from mindspore.device_context import ascend

    from ascend_finetune.device import backend

    monkeypatch.setattr(ascend, "is_available", lambda: True)
    monkeypatch.setattr(ms.hal, "is_available", lambda *_: pytest.fail("the deprecated API was called"))
    assert backend.resolve_target("auto") == ("Ascend", None)
    monkeypatch.setattr(ascend, "is_available", lambda: False)
    assert backend.ascend_available(ms) is False


def test_doctor_asks_the_device_context_api_too(monkeypatch):
    """doctor's backends come from the same call training uses, never the deprecated ms.hal."""
    from mindspore.device_context import ascend

    from ascend_finetune.device import doctor

    monkeypatch.setattr(ms.hal, "is_available", lambda *_: pytest.fail("the deprecated API was called"))
    for answer in (True, False):
        monkeypatch.setattr(ascend, "is_available", lambda a=answer: a)
        assert doctor._mindspore()["backends"] == {"CPU": True, "Ascend": answer}
