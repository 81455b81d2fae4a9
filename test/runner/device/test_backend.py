"""The backend choice: `device.target: auto` on a machine without a usable NPU."""

from __future__ import annotations

from ascend_finetune.device.backend import resolve_target


def test_device_auto_is_cpu_without_an_npu(monkeypatch, tmp_path):
    from ascend_finetune.device import backend

    monkeypatch.setattr(backend, "ASCEND_SIGNS", (str(tmp_path / "no-ascend-here"),))
    assert resolve_target("auto") == ("CPU", None)
    assert resolve_target("CPU") == ("CPU", None)
    # CANN installed but not usable (set_env.sh not sourced): CPU, with a warning that says so
    monkeypatch.setattr(backend, "ASCEND_SIGNS", (str(tmp_path),))
    target, warning = resolve_target("auto")
    assert target == "CPU" and "set_env.sh" in warning
