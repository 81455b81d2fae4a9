"""NPU telemetry while training: a background thread samples `npu-smi info` and writes `device` events.

One `npu-smi info` call reads every chip, so a sample costs one short subprocess whatever the number
of devices. The thread spends its time blocked in that subprocess or sleeping, both outside the GIL,
so the training loop is not slowed (bench/telemetry_overhead.py measures it with a slow fake
`npu-smi`). Samples are sequential: the next one starts `interval_s` after the previous one ended,
so a slow `npu-smi` lowers the rate instead of piling up processes.

Device ids: a run's `device.ids` are MindSpore's device ids (under ASCEND_RT_VISIBLE_DEVICES, 0..n-1
over the visible devices: device/visible.py maps them to npu-smi's). `npu-smi info` prints, per chip,
the NPU id and, on cards with several chips, a second number: the `Phy-ID` (Atlas A3) or `Device`
(310P). The logical id is that second number when present, else the NPU id (one chip per NPU).
310P cards have no HBM: their on-card `Memory-Usage` is reported in the `hbm_*` fields instead.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Callable, cast

from .npu_smi import UnknownFormat, parse_info
from .visible import to_npu_smi

DEFAULT_INTERVAL_S = 2.0
NPU_SMI_TIMEOUT_S = 10.0

Emit = Callable[..., Any]  # EventLog.emit(type_, **payload)


def logical_id(dev: dict[str, Any]) -> int:
    for key in ("device_id", "phy_id"):
        if dev.get(key) is not None:
            return int(dev[key])
    return int(dev["id"])


def samples(parsed: dict[str, Any], ids: Sequence[int], env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The `device` event's `devices` list for the run's ids (MindSpore's: with ASCEND_RT_VISIBLE_DEVICES
    set they are mapped to npu-smi's, device/visible.py), from `parse_info` output."""
    wanted = to_npu_smi(ids, env)
    out = []
    for dev in parsed.get("devices", []):
        if logical_id(dev) not in wanted:
            continue
        lid = wanted[logical_id(dev)]
        used, total = dev.get("hbm_used_mb"), dev.get("hbm_total_mb")
        if used is None and total is None:  # 310/310P: no HBM, report the card's memory
            used, total = dev.get("memory_used_mb"), dev.get("memory_total_mb")
        out.append(
            {
                "id": lid,
                "util": dev.get("util"),
                "hbm_used_mb": used,
                "hbm_total_mb": total,
                "temp_c": dev.get("temp_c"),
                "power_w": dev.get("power_w"),
            }
        )
    return sorted(out, key=lambda d: d["id"])


class DeviceSampler:
    """Samples `npu-smi info` every `interval_s` and emits `device` events until `stop()`.

    Failures never reach the training loop: the first failure of each kind becomes one `warning`
    event (`telemetry_unavailable`), later ones are counted silently. An output the parser does not
    know stops the sampler after its warning (it will not start to parse on the next call).
    """

    def __init__(self, emit: Emit, ids: Sequence[int], interval_s: float = DEFAULT_INTERVAL_S, exe: str | None = None):
        self.emit = emit
        self.ids = list(ids)
        self.interval_s = float(interval_s)
        self.exe = exe or shutil.which("npu-smi")
        self.samples = 0
        self.failures = 0
        self._warned: set[str] = set()
        self._stop = threading.Event()
        self._proc: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._loop, name="npu-telemetry", daemon=True)

    @classmethod
    def for_run(cls, emit: Emit, ids: Sequence[int], interval_s: float) -> DeviceSampler | None:
        """A started sampler, or None when telemetry is off (interval 0) or there is no `npu-smi`."""
        if interval_s <= 0 or not shutil.which("npu-smi"):
            return None
        sampler = cls(emit, ids, interval_s)
        sampler._thread.start()
        return sampler

    def stop(self) -> None:
        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()  # a hung npu-smi must not delay the end of the run
        self._thread.join(timeout=NPU_SMI_TIMEOUT_S + 1)

    def _warn(self, kind: str, message: str, details: dict[str, Any]) -> None:
        self.failures += 1
        if kind in self._warned:
            return
        self._warned.add(kind)
        self.emit(
            "warning",
            code="telemetry_unavailable",
            message=f"NPU telemetry: {message}; training goes on without it",
            details={"kind": kind, **details},
        )

    def _read(self) -> str | None:
        try:
            proc = subprocess.Popen(
                [cast(str, self.exe), "info"],  # set whenever the sampler runs
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
            )
        except OSError as e:
            self._warn("exec", f"cannot run {self.exe}: {e}", {})
            return None
        self._proc = proc  # so that stop() can kill it
        try:
            out, err = proc.communicate(timeout=NPU_SMI_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self._warn("timeout", f"`npu-smi info` took longer than {NPU_SMI_TIMEOUT_S:g} s", {})
            return None
        finally:
            self._proc = None
        if self._stop.is_set():
            return None  # stopped (and maybe killed) mid-sample: no event after the run's end
        if proc.returncode != 0:
            self._warn("exit", f"`npu-smi info` exited with {proc.returncode}", {"stderr": (err or "").strip()[-300:]})
            return None
        return out

    def sample_once(self) -> bool:
        """One sample; True when a `device` event was written."""
        text = self._read()
        if text is None:
            return False
        try:
            devices = samples(parse_info(text), self.ids)
        except UnknownFormat as e:
            self._warn("format", f"unrecognised `npu-smi info` output ({e})", {"raw": text[:500]})
            self._stop.set()
            return False
        except Exception as e:  # a parser bug must not take the run down
            self._warn("parser", f"`npu-smi info` could not be parsed: {type(e).__name__}: {e}", {"raw": text[:500]})
            self._stop.set()
            return False
        if not devices:
            self._warn("no_device", f"`npu-smi info` lists none of the run's devices {self.ids}", {})
            return False
        self.emit("device", devices=devices)
        self.samples += 1
        return True

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample_once()
            self._stop.wait(self.interval_s)
