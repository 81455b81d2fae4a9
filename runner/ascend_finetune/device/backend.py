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


def sink_notes(sink: SinkSpec, target: str) -> list[tuple[str, str]]:
    """The runner trains step by step on every backend, so every step is reported. Say where that
    differs from what the spec asked for."""
    if not sink["enabled"]:
        return []
    if target != "Ascend":
        return [
            (
                "sink_unavailable",
                f"dataset sink mode is not available on {target} (MindSpore's data_sink "
                "supports Ascend and GPU only); training step by step, per-step telemetry unchanged",
            )
        ]
    if sink["size"] > 1:
        return [
            (
                "sink_size_ignored",
                f"sink.size {sink['size']} is not used yet: the run loop still calls the compiled step once "
                "per batch to report every step (not the same as MindSpore's sink, whose graph scheduler "
                "runs N steps per call and prefetches through the device queue)",
            )
        ]
    return []
