"""Telemetry while training: a background thread samples `npu-smi info` and writes `device` events,
or, on a machine without NPUs, reads /proc and writes `host` events (HostSampler, at the end).

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
            self._warn("exec", f"cannot run {self.exe}: {e}", {"program": str(self.exe), "error": str(e)})
            return None
        self._proc = proc  # so that stop() can kill it
        try:
            out, err = proc.communicate(timeout=NPU_SMI_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self._warn(
                "timeout", f"`npu-smi info` took longer than {NPU_SMI_TIMEOUT_S:g} s", {"timeout_s": NPU_SMI_TIMEOUT_S}
            )
            return None
        finally:
            self._proc = None
        if self._stop.is_set():
            return None  # stopped (and maybe killed) mid-sample: no event after the run's end
        if proc.returncode != 0:
            self._warn(
                "exit",
                f"`npu-smi info` exited with {proc.returncode}",
                {"stderr": (err or "").strip()[-300:], "returncode": proc.returncode},
            )
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
            self._warn(
                "no_device", f"`npu-smi info` lists none of the run's devices {self.ids}", {"ids": list(self.ids)}
            )
            return False
        self.emit("device", devices=devices)
        self.samples += 1
        return True

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample_once()
            self._stop.wait(self.interval_s)


# -- the host, where there is no npu-smi ----------------------------------------------------------

MAX_PROC_BYTES = 64 << 10  # /proc/stat of a 512-core box is ~40 KB


def _read_proc(path: str) -> str:
    """A /proc file's text, bounded (procfs files are regular files of size 0: read to EOF or the cap)."""
    with open(path, "rb") as f:
        return f.read(MAX_PROC_BYTES).decode("ascii", "replace")


def cpu_times(stat: str) -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat's first line; iowait counts as idle."""
    fields = [int(v) for v in stat.split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])  # guest time is already inside user and nice
    return total - idle, total


def mem_mb(meminfo: str) -> tuple[float | None, float | None]:
    """(used, total) MB from /proc/meminfo: used is MemTotal - MemAvailable, as `free` counts it."""
    kb: dict[str, int] = {}
    for line in meminfo.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kb[name] = int(parts[0])
    total, avail = kb.get("MemTotal"), kb.get("MemAvailable")
    if total is None:
        return None, None
    return (round((total - avail) / 1024, 1) if avail is not None else None), round(total / 1024, 1)


def rss_mb(status: str) -> float | None:
    """The process's resident set (VmRSS) in MB from /proc/<pid>/status."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def proc_cpu_ticks(stat: str) -> int:
    """utime + stime of a process from /proc/<pid>/stat (fields after the parenthesised name)."""
    rest = stat[stat.rindex(")") + 2 :].split()
    return int(rest[11]) + int(rest[12])


class HostSampler:
    """On a machine without NPUs: the host's CPU use (all cores, %), its memory and the training
    process's RSS and CPU use (% of one core, so 400 is four cores busy), read from /proc every
    `interval_s` and written as `host` events. Reading /proc costs microseconds; no subprocess.
    Where /proc is missing (not Linux) it warns once and stops."""

    def __init__(self, emit: Emit, interval_s: float = DEFAULT_INTERVAL_S, proc: str = "/proc", pid: int | None = None):
        import os

        self.emit, self.interval_s, self.proc = emit, float(interval_s), proc
        self.pid = pid if pid is not None else os.getpid()
        self.ticks_per_s = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.samples = 0
        self._last: tuple[int, int, int, float] | None = None  # busy, total, process ticks, time
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="host-telemetry", daemon=True)

    def start(self) -> HostSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def read(self) -> dict[str, Any]:
        """One sample's fields; the CPU shares are over the time since the previous read (None on the first)."""
        import time

        busy, total = cpu_times(_read_proc(f"{self.proc}/stat"))
        used, mem_total = mem_mb(_read_proc(f"{self.proc}/meminfo"))
        pid_dir = f"{self.proc}/{self.pid}"
        ticks = proc_cpu_ticks(_read_proc(f"{pid_dir}/stat"))
        now = time.monotonic()
        cpu_pct = proc_pct = None
        if self._last is not None:
            b0, t0, p0, w0 = self._last
            if total > t0:
                cpu_pct = round(100.0 * (busy - b0) / (total - t0), 1)
            if now > w0:
                proc_pct = round(100.0 * (ticks - p0) / self.ticks_per_s / (now - w0), 1)
        self._last = (busy, total, ticks, now)
        return {
            "cpu_pct": cpu_pct,
            "mem_used_mb": used,
            "mem_total_mb": mem_total,
            "rss_mb": rss_mb(_read_proc(f"{pid_dir}/status")),
            "proc_cpu_pct": proc_pct,
        }

    def _loop(self) -> None:
        try:
            self.read()  # the baseline for the first sample's CPU shares
        except (OSError, ValueError, IndexError) as e:
            return self._unavailable(e)
        while not self._stop.wait(self.interval_s):
            try:
                fields = self.read()
            except (OSError, ValueError, IndexError) as e:
                return self._unavailable(e)
            self.emit("host", **fields)
            self.samples += 1

    def _unavailable(self, e: Exception) -> None:
        self.emit(
            "warning",
            code="telemetry_unavailable",
            message=f"host telemetry: cannot read {self.proc} ({type(e).__name__}: {e}); training goes on without it",
            details={"kind": "host", "path": self.proc, "error": f"{type(e).__name__}: {e}"},
        )


Sampler = DeviceSampler | HostSampler


def start_sampler(emit: Emit, ids: Sequence[int], interval_s: float) -> Sampler | None:
    """The run's telemetry: the NPUs' through `npu-smi` where it exists, else the host's (CPU, memory,
    the process's RSS); None when telemetry is off (interval 0)."""
    if interval_s <= 0:
        return None
    return DeviceSampler.for_run(emit, ids, interval_s) or HostSampler(emit, interval_s).start()
