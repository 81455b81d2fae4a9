"""Device slots: where the trials run, one trial per slot at a time.

A slot is a group of `per_trial` NPU ids (npu-smi's numbers). A trial on an Ascend (or `auto`) base
spec gets them as ASCEND_RT_VISIBLE_DEVICES, and its spec's device.ids become MindSpore's ids under
that variable, 0..per_trial-1 (device/visible.py). With a CPU base spec a slot is a CPU slot: its ids
only count, and no variable is set.

"all free": the NPUs `npu-smi info` shows without a process on them, read once when the scheduler
starts; on a machine without npu-smi, `concurrency` CPU slots (1 when unset).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from ..device.npu_smi import UnknownFormat, parse_info
from ..device.telemetry import logical_id
from ..device.visible import ENV


def free_npus() -> list[int] | None:
    """Logical ids of the NPUs with no process, or None when there is no npu-smi here."""
    exe = shutil.which("npu-smi")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "info"], capture_output=True, text=True, errors="replace", timeout=20)
        parsed = parse_info(r.stdout) if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, UnknownFormat):
        parsed = None
    if parsed is None:
        return []
    busy = {p["npu"] for p in parsed["processes"]}
    return sorted({logical_id(d) for d in parsed["devices"] if d["id"] not in busy})


class Slots:
    """The sweep's slots and which of them are taken."""

    def __init__(self, sweep: dict[str, Any]):
        devices = sweep["devices"]
        cpu = sweep["base"]["device"]["target"] == "CPU"
        if isinstance(devices, dict):
            ids, per = devices["ids"], devices["per_trial"]
            self.groups = [ids[i : i + per] for i in range(0, len(ids), per)]
            self.npu = not cpu
        else:
            npus = None if cpu else free_npus()
            self.npu = npus is not None
            self.groups = [[i] for i in npus] if npus is not None else [[i] for i in range(sweep["concurrency"] or 1)]
        self.taken: set[int] = set()

    def take(self, slot: int | None = None) -> int | None:
        """A free slot's index (or mark `slot` taken: a trial followed again after a resume)."""
        if slot is not None:
            self.taken.add(slot)
            return slot
        free = next((i for i in range(len(self.groups)) if i not in self.taken), None)
        if free is not None:
            self.taken.add(free)
        return free

    def release(self, slot: int | None) -> None:
        self.taken.discard(slot if slot is not None else -1)

    def env(self, slot: int) -> dict[str, str]:
        """What a trial on this slot adds to the scheduler's environment."""
        return {ENV: ",".join(str(i) for i in self.groups[slot])} if self.npu else {}

    def spec_ids(self, slot: int) -> list[int]:
        """The trial spec's device.ids: MindSpore's ids under ASCEND_RT_VISIBLE_DEVICES (0..n-1)."""
        return list(range(len(self.groups[slot])))
