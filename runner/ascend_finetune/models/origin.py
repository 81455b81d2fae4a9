"""Where a checkpoint file's weights come from (the runner, ModelZoo, mindcv, PyTorch), read from its
index alone: the names and the one small `backbone_variant` entry, no weight. Without MindSpore, so a
launcher or a preview can ask it without importing MindSpore (about 400 MB of memory in a launcher
that holds the run for its whole length).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ..checkpoints.errors import PretrainedError
from .backbones import VARIANT_ENTRY, variant_of_code
from .torch_weights import PICKLE_SUFFIXES, looks_torch

PREFIXES = ("backbone.", "network.", "resnet.", "net.", "model.", "_backbone.")

# ModelZoo-only names: its resnet18/34 blocks' `bn1d`/`bn2d`, its older head `end_point`, and its
# shortcut `down_sample_layer` (which the runner's own checkpoints share, under `backbone.`).
_MODELZOO_SIGNS = re.compile(r"(^|\.)(bn1d|bn2d|end_point)\.")
_MINDCV_SIGNS = re.compile(r"(\.down_sample\.\d\.|^classifier\.|^max_pool\.)")


def detect_origin(names: Iterable[str], variant_code: int | None = None) -> tuple[str, str]:
    """(origin, variant) of a checkpoint from its entry names: origin is runner, modelzoo, mindcv or
    unknown; variant is the layout to build the backbone in (backbones.VARIANTS).

    The runner's own files (a `backbone.` + `head.` network) say their variant in `backbone_variant`;
    older ones without it were built in the default layout. Otherwise the names decide: `down_sample`
    shortcuts or a `classifier` head are mindcv's (default layout), `down_sample_layer`, `bn1d` or
    `end_point` are ModelZoo's. Names that match neither load in the default layout."""
    names = list(names)
    if variant_code is not None:
        return "runner", variant_of_code(variant_code)
    if any(n.startswith("backbone.") for n in names) and any(n.startswith("head.") for n in names):
        return "runner", "default"
    stripped = []
    for n in names:
        for prefix in PREFIXES:
            if n.startswith(prefix):
                n = n[len(prefix) :]
                break
        stripped.append(n)
    if any(_MINDCV_SIGNS.search(n) for n in stripped):
        return "mindcv", "default"
    if any(_MODELZOO_SIGNS.search(n) or ".down_sample_layer." in n for n in stripped):
        return "modelzoo", "modelzoo"
    return "unknown", "default"


def origin_of_file(path: str) -> tuple[str, str]:
    """detect_origin for a checkpoint file, from its index (names, and the one small variant entry):
    the weights are not read."""
    from ..checkpoints.errors import ToolError
    from ..checkpoints.format import bad_checkpoint, read_index

    if not os.path.isfile(path):
        raise PretrainedError(f"file not found: {path}", "pretrained_not_found", path=path)
    if path.endswith(PICKLE_SUFFIXES):
        return "torch", "torch"
    try:
        index = read_index(path)
        code = int(index.read(VARIANT_ENTRY).reshape(-1)[0]) if VARIANT_ENTRY in index.tensors else None
    except ToolError as e:
        raise PretrainedError(str(e), e.why, **e.params) from e
    # A file that parses as MindSpore's own .ckpt is MindSpore's, whatever its names (mindcv's SE-ResNet
    # has `downsample.` cells): only a .safetensors file can be either.
    if code is None and index.format == "safetensors" and looks_torch(index.tensors):
        return "torch", "torch"
    try:
        return detect_origin(index.tensors, code)
    except ValueError as e:  # a backbone_variant this runner does not know: a newer runner's file, or damage
        bad = bad_checkpoint(path, str(e))
        raise PretrainedError(str(bad), bad.why, **bad.params) from e
