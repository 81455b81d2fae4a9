"""Which MindSpore backend a run uses, and what that backend changes about the run.

Both the trainer and the pre-flight report (`validate --preflight`, before a launch) need these
answers, and so do eval and export; they live here, below all of them, so that none of them has
to import another.
"""

from __future__ import annotations

import os
from typing import Any

from ..spec_types import SinkSpec

ASCEND_SIGNS = ("/usr/local/Ascend", "/usr/local/bin/npu-smi")


def ascend_available(ms: Any) -> bool:
    """MindSpore can use an NPU here. 2.10 deprecates `ms.hal.is_available` for
    `mindspore.device_context.ascend.is_available()`; older releases have only the former."""
    try:
        from mindspore.device_context import ascend

        return bool(ascend.is_available())
    except ImportError:
        pass
    except Exception:  # no CANN, or a CANN this MindSpore cannot load
        return False
    try:
        return bool(ms.hal.is_available("Ascend"))
    except Exception:  # older MindSpore or no CANN: CPU
        return False


def resolve_target(requested: str) -> tuple[str, str | None]:
    """The backend to use, and a warning when `auto` falls back to CPU on a box that has an Ascend
    install (typically CANN's set_env.sh not sourced in a non-interactive SSH launch)."""
    import mindspore as ms  # deferred: the CLI's fast commands import this package without MindSpore

    if requested != "auto":
        return requested, None
    if ascend_available(ms):
        return "Ascend", None
    if any(os.path.exists(p) for p in ASCEND_SIGNS):
        return "CPU", (
            "device.target auto found an Ascend install but MindSpore cannot use it, so this run trains "
            "on the CPU: source CANN's set_env.sh (e.g. /usr/local/Ascend/ascend-toolkit/set_env.sh) "
            "in the target's environment set-up, or set device.target to Ascend to fail instead"
        )
    return "CPU", None


def sink_size_for(steps: int, size: int) -> int:
    """Steps per sink for an epoch part of `steps` steps: the largest divisor of `steps` not above
    `size`, so that every sink of the part is the same size (one device-queue set-up per epoch)."""
    size = max(1, min(size, steps))
    while steps % size:
        size -= 1
    return size


def sink_notes(
    sink: SinkSpec, target: str, steps_per_epoch: int | None = None, cached: bool = False
) -> list[tuple[str, str, dict[str, Any]]]:
    """Where the run's loop differs from the sink the spec asks for, as (code, message, parameters):
    the parameters let the extension word the message in the user's language. On Ascend the step is
    fed through the device queue (`mindspore.data_sink`), `sink.size` steps per call, one step event
    per call; elsewhere, and with the feature cache, the run trains step by step."""
    if not sink["enabled"]:
        return []
    if target != "Ascend":
        return [
            (
                "sink_unavailable",
                f"dataset sink mode is not available on {target} (MindSpore's data_sink needs a device "
                "queue, which only Ascend and GPU have); training step by step, one step event per step",
                {"cause": "target"},
            )
        ]
    if cached:
        return [
            (
                "sink_unavailable",
                "dataset sink mode is not used with train.cache_features: the cached features are fed from "
                "the host, step by step, one step event per step",
                {"cause": "cache_features"},
            )
        ]
    size = int(sink["size"])
    if size > 1 and steps_per_epoch and steps_per_epoch % size:
        used = sink_size_for(steps_per_epoch, size)
        return [
            (
                "sink_size_reduced",
                f"sink.size {size} does not divide the {steps_per_epoch} steps of an epoch, so each sink runs "
                f"{used} steps (the largest size that does, keeping every sink of an epoch the same size): "
                f"one step event per {used} steps; set sink.size to a divisor of {steps_per_epoch} to choose",
                {"size_used": used, "steps_per_epoch": steps_per_epoch},
            )
        ]
    return []
