"""Pre-flight checks at the start of a run, written as `warning` events right after run_started.

Each finds a set-up that will run, but not the way the user probably expects:

- `workers_above_cores`: more data loader threads (data.workers, per rank) than CPU cores (0 is
  "auto": the cores shared out between the ranks, never too many);
- `no_checkpoint_interval`: checkpoint.every_steps longer than the run, so only the epoch-end (and
  final) checkpoints are saved;
- `frozen_random_backbone`: frozen layers (model.freeze) with no pretrained weights, so they keep
  their random initialization and only the head learns, on random features;
- `npu_busy`: another process already uses one of the run's NPUs (npu-smi's process table);
- `npu_low_hbm`: one of the run's NPUs has less than LOW_HBM_FRACTION of its HBM free;
- `cann_mismatch`: the installed CANN (`$ASCEND_HOME_PATH/compiler/version.info`, the file
  MindSpore itself reads) is not one of the versions this MindSpore lists as supported (its
  `AscendEnvChecker.version`, e.g. 8.2 to 9.1 for MindSpore 2.10).

The NPU checks read `npu-smi info` through doctor's reader and run only when the run trains on
Ascend; they run before the run's own processes take device memory.

The trainer calls `run_warnings` and `device_warnings`; `validate --preflight` calls `for_spec`. On a
run of several ranks each node's launcher runs the NPU checks for its own devices (`node_warnings`),
before msrun starts that node's ranks, and records them in the node's run directory
(`ranks/preflight-node-<node rank>.json`); rank 0 writes node 0's as warning events.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Callable

from ..data.plan import plan_data
from ..device.backend import resolve_target, sink_notes
from ..distributed.world import NODE_PREFLIGHT_FILE, world_size
from ..rundir import read_json
from ..spec_types import RunSpec

LOW_HBM_FRACTION = 0.2  # below 20% of the HBM free: a ResNet-50 at batch 32 with O2 needs several GB
CANN_VERSION_FILE = ("compiler", "version.info")


def _warning(code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details}


def frozen_random_backbone(model: Mapping[str, object]) -> bool:
    """Frozen layers (model.freeze) with no pretrained weights: they keep their random initial weights.
    The run's health verdict (verdict.py) reports the same rule after the run (on a spec that may not
    have resolved, hence a Mapping read with .get)."""
    return model.get("pretrained") is None and model.get("freeze", "none") != "none"


def run_warnings(
    spec: RunSpec, total_steps: int, steps_per_epoch: int, target: str, cpu_count: int | None = None
) -> list[dict[str, Any]]:
    """Checks of the spec against this machine and the run's length."""
    out = []
    cores = cpu_count or os.cpu_count() or 1
    workers = spec["data"]["workers"]
    local = len(spec["device"]["ids"])  # ranks on this node, each with its own loader threads
    if workers > 0 and workers * local > cores:  # 0: the cores per rank (data/plan.py's loader_workers)
        asked = f"{workers} x {local} ranks = {workers * local}" if local > 1 else f"{workers}"
        out.append(
            _warning(
                "workers_above_cores",
                f"data.workers asks for {asked} data loader threads but this machine has {cores} CPU cores "
                f"(the runner uses at most {cores} per rank): set data.workers to at most {max(1, cores // local)}",
                {"workers": workers, "ranks_per_node": local, "cpu_count": cores},
            )
        )
    every = spec["checkpoint"]["every_steps"]
    if every > total_steps:
        out.append(
            _warning(
                "no_checkpoint_interval",
                f"checkpoint.every_steps is {every} but the run has {total_steps} steps: no mid-epoch "
                f"checkpoint will be saved, only one at each epoch end ({steps_per_epoch} steps apart); "
                f"lower checkpoint.every_steps to save more often",
                {"every_steps": every, "total_steps": total_steps, "steps_per_epoch": steps_per_epoch},
            )
        )
    model = spec.get("model") or {}
    if frozen_random_backbone(model):
        out.append(
            _warning(
                "frozen_random_backbone",
                f"model.freeze is {model['freeze']!r} but model.pretrained is null: the frozen layers keep "
                "their random initial weights, so only the head learns, on random features (accuracy "
                "stays near chance and the loss can grow); set model.pretrained to a checkpoint, or "
                'model.freeze to "none" to train every layer',
                {"freeze": model["freeze"]},
            )
        )
    if target == "Ascend":
        w = cann_warning()
        if w:
            out.append(w)
    return out


def _run_pids() -> set[int]:
    """This process, its parent and the parent's other children: the ranks msrun started with it."""
    mine = {os.getpid(), os.getppid()}
    try:
        import psutil

        mine |= {c.pid for c in psutil.Process(os.getppid()).children(recursive=True)}
    except Exception:  # psutil missing or the parent gone: our own pids are enough
        pass
    return mine


def device_warnings(
    spec: RunSpec,
    target: str,
    read_npus: Callable[[], dict[str, Any]] | None = None,
    own_pids: set[int] | None = None,
) -> list[dict[str, Any]]:
    """`npu_busy` and `npu_low_hbm` for the run's NPUs of this node, from `npu-smi info`."""
    if target != "Ascend":
        return []
    if read_npus is None:
        from ..device.doctor import _npus

        read_npus = _npus
    npu = read_npus()
    if not npu.get("devices"):
        return []  # no npu-smi, or an output it could not read: doctor reports that, not a run
    from ..device.telemetry import logical_id
    from ..device.visible import to_npu_smi

    # npu-smi's ids of the run's devices -> the run's (MindSpore's) ids: ASCEND_RT_VISIBLE_DEVICES renumbers
    run_id = to_npu_smi(spec["device"]["ids"])
    own = _run_pids() if own_pids is None else own_pids
    chips_of: dict[tuple[int, int | None], list[int]] = {}  # (npu, chip) and (npu, None) -> npu-smi ids
    for d in npu["devices"]:
        chips_of.setdefault((d["id"], d.get("chip")), []).append(logical_id(d))
        chips_of.setdefault((d["id"], None), []).append(logical_id(d))
    out = []
    busy = []
    for p in npu.get("processes") or []:
        # A process row names its chip (Atlas A3: one row per die): only that chip is busy.
        chips = chips_of.get((p.get("npu"), p.get("chip"))) or chips_of.get((p.get("npu"), None)) or [p.get("npu")]
        hit = sorted(run_id[i] for i in chips if i in run_id)
        if hit and p.get("pid") not in own:
            busy.append({"ids": hit, "pid": p.get("pid"), "name": p.get("name"), "memory_mb": p.get("memory_mb")})
    if busy:
        names = ", ".join(f"{b['name'] or 'pid'} {b['pid']} on {b['ids']}" for b in busy[:5])
        out.append(
            _warning(
                "npu_busy",
                f"other processes already use this run's NPUs ({names}): the run will share "
                "their compute and memory; pick free device.ids (doctor lists them) or stop those processes",
                {"processes": busy},
            )
        )
    low = []
    for d in npu["devices"]:
        if logical_id(d) not in run_id:
            continue
        lid = run_id[logical_id(d)]
        used, total = d.get("hbm_used_mb"), d.get("hbm_total_mb")
        if used is None or not total:
            used, total = d.get("memory_used_mb"), d.get("memory_total_mb")  # 310P: on-card memory, no HBM
        if used is not None and total and (total - used) < LOW_HBM_FRACTION * total:
            low.append({"id": lid, "free_mb": total - used, "total_mb": total})
    if low:
        desc = ", ".join(f"{ln['id']}: {ln['free_mb']:.0f} of {ln['total_mb']:.0f} MB free" for ln in low)
        out.append(
            _warning(
                "npu_low_hbm",
                f"little free HBM on this run's NPUs ({desc}): the run may fail with "
                "'Malloc device memory failed'; pick other device.ids or lower data.batch_size",
                {"devices": low, "threshold": LOW_HBM_FRACTION},
            )
        )
    return out


def node_warnings(
    spec: RunSpec, read_npus: Callable[[], dict[str, Any]] | None = None, own_pids: set[int] | None = None
) -> list[dict[str, Any]]:
    """The NPU checks of one node of a run of several ranks, for that node's devices, run by its
    launcher before msrun starts the node's ranks: no process of this run holds an NPU yet, so
    any process on one is another's. Nothing on a CPU run; without npu-smi, nothing to read."""
    if spec["device"]["target"] == "CPU":
        return []
    return device_warnings(spec, "Ascend", read_npus, {os.getpid()} if own_pids is None else own_pids)


def read_node_warnings(ranks_dir: str, node_rank: int) -> list[dict[str, Any]] | None:
    """The warnings a node's launcher recorded (`node_warnings`), or None when it recorded none."""
    doc = read_json(os.path.join(ranks_dir, NODE_PREFLIGHT_FILE.format(node_rank)))  # a regular file only, capped
    if not isinstance(doc, dict) or not isinstance(doc.get("warnings"), list):
        return None
    return [w for w in doc["warnings"] if isinstance(w, dict) and isinstance(w.get("code"), str)]


def cann_version(home: str | None = None) -> str | None:
    """The installed CANN's major.minor from `version.info` (`Version=8.0.RC2` gives `8.0`)."""
    home = home or os.environ.get("ASCEND_HOME_PATH")
    if not home:
        return None
    try:
        with open(os.path.join(home, *CANN_VERSION_FILE), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"\s*Version\s*=\s*(\d+)\.(\d+)", line)
                if m:
                    return f"{m.group(1)}.{m.group(2)}"
    except OSError:
        return None
    return None


def supported_cann() -> list[str]:
    """The CANN versions this MindSpore says it supports (its own import-time check reads the same list)."""
    try:
        from mindspore.run_check._check_version import AscendEnvChecker

        return list(AscendEnvChecker(None).version)
    except Exception:  # another MindSpore layout: nothing to compare with
        return []


def cann_warning(home: str | None = None, supported: list[str] | None = None) -> dict[str, Any] | None:
    found = cann_version(home)
    wanted = supported_cann() if supported is None else supported
    if not found or not wanted or found in wanted:
        return None
    import mindspore as ms

    return _warning(
        "cann_mismatch",
        f"CANN {found} is installed but MindSpore {ms.__version__} supports CANN "
        f"{', '.join(wanted)}: kernels may fail to load or compile; install a matching CANN or MindSpore",
        {"cann": found, "mindspore": ms.__version__, "supported": wanted},
    )


def for_spec(spec: RunSpec) -> dict[str, Any]:
    """Every warning a run of this (resolved) spec would start with, without training: for the
    Start wizard, before it launches (`validate --preflight`). Plans the data as the trainer does (the
    scan cache makes a second look cheap) to count the steps. Raises DataError as a run would."""
    warnings: list[dict[str, Any]] = []
    target, fallback = resolve_target(spec["device"]["target"])
    if fallback:
        warnings.append(_warning("ascend_unavailable", fallback, {"requested": "auto"}))
    warnings.extend(device_warnings(spec, target))
    plan = plan_data(spec, world_size(spec), warnings)
    cached = bool((spec.get("train") or {}).get("cache_features"))
    for code, msg, params in sink_notes(spec["sink"], target, plan.steps_per_epoch, cached):
        warnings.append(_warning(code, msg, {"sink": spec["sink"], "target": target, **params}))
    warnings.extend(run_warnings(spec, plan.total_steps, plan.steps_per_epoch, target))
    return {
        "warnings": warnings,
        "target": target,
        "steps_per_epoch": plan.steps_per_epoch,
        "total_steps": plan.total_steps,
    }
