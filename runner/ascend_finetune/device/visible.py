"""`ASCEND_RT_VISIBLE_DEVICES`: MindSpore's device ids against the ids `npu-smi` prints.

With `ASCEND_RT_VISIBLE_DEVICES=4,5` the process sees two NPUs and MindSpore numbers them 0 and 1,
while `npu-smi info` (and so telemetry, the pre-flight busy and HBM checks) still shows 4 and 5. A
run's `device.ids` are MindSpore's ids, what `mindspore.set_device` takes; they are mapped to
npu-smi's ids wherever npu-smi's output is read, and back for what the run reports. Without the
variable both are the same. Stdlib only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

ENV = "ASCEND_RT_VISIBLE_DEVICES"


def visible(env: Mapping[str, str] | None = None) -> list[int] | None:
    """The npu-smi ids the variable lists, in MindSpore's order; None when it is unset, empty or not
    a list of numbers (CANN then sees every device)."""
    raw = (os.environ if env is None else env).get(ENV, "").strip()
    if not raw:
        return None
    try:
        return [int(x) for x in raw.split(",") if x.strip()]
    except ValueError:
        return None


def to_npu_smi(ids: Sequence[int], env: Mapping[str, str] | None = None) -> dict[int, int]:
    """{npu-smi id: MindSpore id} for the run's ids; ids beyond the visible list are left out."""
    vis = visible(env)
    if vis is None:
        return {int(i): int(i) for i in ids}
    return {vis[int(i)]: int(i) for i in ids if 0 <= int(i) < len(vis)}


def check_ids(ids: Sequence[int], env: Mapping[str, str] | None = None) -> str | None:
    """Why `ids` cannot be MindSpore ids under the variable (a message naming the fix), else None."""
    vis = visible(env)
    if vis is None:
        return None
    bad = [int(i) for i in ids if not 0 <= int(i) < len(vis)]
    if not bad:
        return None
    hint = ""
    if all(b in vis for b in bad):
        hint = f" ({', '.join(f'{b} is {vis.index(b)}' for b in bad)} there)"
    return (
        f"device.ids {list(ids)} are MindSpore's device ids, which run 0..{len(vis) - 1} under "
        f"{ENV}={','.join(map(str, vis))} (npu-smi's ids {vis}){hint}: set device.ids to MindSpore's "
        f"ids, or unset {ENV}"
    )
