"""A run's network rebuilt from its spec, with a checkpoint's weights: what eval and export run.

The weights come from format.py's checked index, not MindSpore's load_checkpoint, so a damaged or
foreign file fails with a message naming what does not fit instead of an odd error or a crash.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .errors import ToolError
from .format import CheckpointIndex, read_index
from .manifest import entry_for
from .tools import RunInfo, head_out


def select_device(run: RunInfo, requested: str | None) -> str:
    """The backend to evaluate on: --device, else the run's device.target (`auto` as training resolves it)."""
    import mindspore as ms

    from ..device.backend import resolve_target

    target, _ = resolve_target(requested or (run.spec.get("device") or {}).get("target") or "auto")
    ms.set_context(mode=ms.GRAPH_MODE)
    ids = (run.spec.get("device") or {}).get("ids") or [0]
    try:
        ms.set_device(target, ids[0] if target == "Ascend" else 0)
    except Exception as e:  # no CANN, no NPU, or a device id that does not exist
        raise ToolError(
            "device_unavailable",
            f"cannot use {target} here ({type(e).__name__}: "
            f"{str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}): pass --device CPU",
            code=1,
            device=target,
            why="device_unavailable",
            params={
                "device": target,
                "error": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}",
            },
        ) from e
    return target


def variant_of(run: RunInfo, ckpt: str, index: CheckpointIndex) -> str:
    """The backbone layout the checkpoint was trained in: its own `backbone_variant` entry, else its
    manifest entry's, else the default layout (what every run built before layouts were recorded)."""
    from ..models.backbones import VARIANT_ENTRY, VARIANTS, variant_of_code

    try:
        if VARIANT_ENTRY in index.tensors:
            return variant_of_code(int(index.read(VARIANT_ENTRY).reshape(-1)[0]))
        named = (entry_for(run.run_dir, ckpt) or {}).get(VARIANT_ENTRY)
    except ValueError as e:
        raise ToolError(
            "bad_checkpoint",
            f"{os.path.basename(ckpt)}: {e}",
            file=os.path.abspath(ckpt),
            why="bad_variant",
            params={"file": os.path.basename(ckpt), "error": str(e)},
        ) from e
    return named if named in VARIANTS else "default"


def preprocess_of(run: RunInfo, ckpt: str) -> Any:
    """The evaluation preprocessing and normalisation the checkpoint was trained with
    (models/preprocess.py): its manifest entry's recorded values, else those the file carries (its
    run_record: a copy out of the run), else the run's `model.preprocess` when it names a preset (with
    the object form's fields), else None (the runner's own)."""
    from ..models.preprocess import from_record, from_spec
    from .run_record import read_record

    recorded = from_record((entry_for(run.run_dir, ckpt) or {}).get("preprocess"))
    if recorded is None:
        recorded = from_record((read_record(ckpt) or {}).get("preprocess"))
    if recorded is not None:
        return recorded
    return from_spec((run.spec.get("model") or {}).get("preprocess"))


def load_net(run: RunInfo, ckpt: str) -> Any:
    """TransferNet(run's backbone, run's classes, the checkpoint's layout and head) in inference mode
    with the checkpoint's parameters."""
    import mindspore as ms

    from ..models.net import TransferNet, head_norm_in

    index = read_index(ckpt)
    m = run.spec.get("model") or {}
    n = len(run.classes) if run.classes else m.get("num_classes") or head_out(index)
    if not n:
        raise ToolError(
            "not_a_run",
            f"{run.run_dir} has no classes.json and the checkpoint has no head: cannot tell the number of classes",
            run_dir=run.run_dir,
            why="no_classes_no_head",
            params={"run_dir": run.run_dir},
        )
    backbone = m.get("backbone") or "resnet50"
    variant = variant_of(run, ckpt, index)
    # The head as the checkpoint has it: with the feature normalisation's statistics or without (what
    # model.head_norm resolved to in training, which `auto` decided on the freeze and the backbone).
    net = TransferNet(backbone, n, 0, variant, head_norm_in(index.tensors))
    params = {p.name: p for p in net.get_parameters()}
    missing = [k for k in params if k not in index.tensors]
    wrong = [
        f"{k}: {index.tensors[k].shape} in the file, {list(params[k].shape)} in the model"
        for k in params
        if k in index.tensors and index.tensors[k].shape != list(params[k].shape)
    ]
    if missing or wrong:
        raise ToolError(
            "bad_checkpoint",
            f"{os.path.basename(ckpt)} does not fit this run's model ({backbone}, {n} classes): "
            f"{len(missing)} of its {len(params)} parameters missing, {len(wrong)} of the wrong shape"
            f"{' (' + '; '.join(wrong[:3]) + ')' if wrong else ''}"
            f"{' (missing ' + ', '.join(missing[:3]) + ')' if missing else ''}: "
            "is it a checkpoint of another architecture, or of another run?",
            file=os.path.abspath(ckpt),
            missing=missing[:50],
            mismatched=wrong[:50],
            why="checkpoint_does_not_fit",
            params={
                "file": os.path.basename(ckpt),
                "backbone": backbone,
                "classes": n,
                "missing_count": len(missing),
                "params_count": len(params),
                "wrong_count": len(wrong),
            },
        )
    for k, p in params.items():
        arr = index.read(k)
        if not np.issubdtype(arr.dtype, np.number):
            raise ToolError(
                "bad_checkpoint",
                f"{k} in {os.path.basename(ckpt)} is not numeric ({index.tensors[k].dtype})",
                file=os.path.abspath(ckpt),
                why="tensor_not_numeric",
                params={"file": os.path.basename(ckpt), "tensor": k, "dtype": str(index.tensors[k].dtype)},
            )
        p.set_data(ms.Tensor(arr, dtype=p.dtype))
    net.set_train(False)
    return net
