"""What every PyTorch state dict shares: wrapper prefixes, BatchNorm's and LayerNorm's tensor names, counters."""

from __future__ import annotations

import re

_PREFIXES = ("module.", "model.", "backbone.", "_orig_mod.")
# PyTorch's norm tensors -> MindSpore's (BatchNorm2d and LayerNorm call their affine gamma/beta)
NORM = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}
# Entries that are state, not weights: dropped and listed.
COUNTER = re.compile(r"(^|\.)num_batches_tracked$")


def strip(name: str) -> str:
    """Without a wrapper's prefix (DataParallel's `module.`, torch.compile's `_orig_mod.`, ...)."""
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def norm(path: str, tensor: str) -> str | None:
    """MindSpore's name of a BatchNorm/LayerNorm tensor `tensor` of the cell at `path`; None for the counter."""
    if tensor == "num_batches_tracked":
        return None
    return f"{path}.{NORM.get(tensor, tensor)}"
