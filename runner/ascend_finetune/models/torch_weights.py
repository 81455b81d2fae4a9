"""PyTorch ResNet state dicts (torchvision's and timm's) as `model.pretrained`.

torchvision's `resnet18/34/50/101` and timm's plain `resnet18/34/50/101` share one naming scheme
(`conv1`, `bn1`, `layerN.i.convK`, `layerN.i.bnK`, `layerN.i.downsample.{0,1}`, `fc`) and one
arithmetic: symmetric convolution padding, BatchNorm eps 1e-5, a max-pool padded by one pixel on
every side, the stride on the bottleneck's 3x3 (v1.5). The runner builds that as the "torch" layout
(net.py). This module reads the file and renames its tensors onto the runner's backbone:

- `.safetensors` with the `safetensors` package's NumPy API: no torch needed (the path for Ascend boxes);
- `.pth`, `.pt`, `.bin` (pickles) only with torch installed, through `torch.load(weights_only=True)`,
  which refuses pickled code. Without torch the error says how to convert the file to .safetensors.

BatchNorm `weight`/`bias`/`running_mean`/`running_var` become `gamma`/`beta`/`moving_mean`/
`moving_variance`; `num_batches_tracked` (a counter) and the `fc` head are dropped and listed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import numpy as np

from ..checkpoints.errors import PretrainedError

PICKLE_SUFFIXES = (".pth", ".pt", ".bin")
# Wrappers a state dict is often saved under (`torch.save({"state_dict": sd})`, training scripts).
_CONTAINERS = ("state_dict", "model", "model_state_dict", "net", "module")
_PREFIXES = ("module.", "model.", "backbone.", "_orig_mod.")
_BN = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}
_BN_NAME = re.compile(r"^(bn1|layer\d\.\d+\.bn\d|layer\d\.\d+\.downsample\.1)\.(weight|bias|running_mean|running_var)$")
TORCH_HEAD = re.compile(r"^fc\.(weight|bias)$")
# Entries that are state, not weights: dropped and listed.
_COUNTER = re.compile(r"\.num_batches_tracked$")

CONVERT_HINT = (
    "convert it to .safetensors where torch is installed: "
    'python -c "import torch, safetensors.torch as st; '
    "sd = torch.load('IN.pth', map_location='cpu', weights_only=True); "
    "st.save_file({k: v.contiguous() for k, v in sd.items()}, 'OUT.safetensors')\""
)


def looks_torch(names: Iterable[str]) -> bool:
    """A PyTorch ResNet state dict's names: BatchNorm `running_mean`/`num_batches_tracked` or
    `downsample.N` shortcuts (MindSpore's files say `moving_mean` and `down_sample`)."""
    return any(n.endswith((".running_mean", ".num_batches_tracked")) or ".downsample." in n for n in names)


def _strip(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def map_torch_name(name: str) -> str | None:
    """The runner's backbone name for a torchvision/timm ResNet tensor, or None for the head and counters."""
    name = _strip(name)
    if TORCH_HEAD.match(name) or _COUNTER.search(name):
        return None
    m = _BN_NAME.match(name)
    if m:
        name = f"{m.group(1)}.{_BN[m.group(2)]}"
    return name.replace(".downsample.", ".down_sample_layer.")


def _to_numpy(value: object, name: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # a torch tensor; bfloat16 has no NumPy type
        t = value.detach().cpu()
        if str(t.dtype) in ("torch.bfloat16", "torch.float16"):
            t = t.float()
        return np.asarray(t.numpy())
    raise PretrainedError(f"entry {name!r} is a {type(value).__name__}, not a tensor")


def _unwrap(obj: object, path: str) -> dict:
    for _ in range(3):
        if isinstance(obj, dict) and not any(hasattr(v, "shape") for v in obj.values()):
            inner = next((obj[k] for k in _CONTAINERS if k in obj and isinstance(obj[k], dict)), None)
            if inner is None:
                break
            obj = inner
    if not isinstance(obj, dict) or not obj:
        raise PretrainedError(f"{os.path.basename(path)} holds no state dict (a dict of tensors)")
    return obj


def read_state_dict(path: str) -> dict[str, np.ndarray]:
    """A PyTorch state dict as NumPy arrays. PretrainedError when the file cannot be read safely."""
    if not os.path.isfile(path):
        raise PretrainedError(f"file not found: {path}")
    base = os.path.basename(path)
    if path.endswith(".safetensors"):
        try:
            from safetensors.numpy import load_file
        except ImportError as e:
            raise PretrainedError(
                f"reading {base} needs the safetensors package (pip install safetensors): it is in the "
                "runner's requirements"
            ) from e
        try:
            state = load_file(path)
        except Exception as e:  # safetensors raises SafetensorError / TypeError (bfloat16) on bad input
            raise PretrainedError(f"{base} is not a readable safetensors file ({type(e).__name__}: {e})") from e
    elif path.endswith(PICKLE_SUFFIXES):
        try:
            import torch  # type: ignore[import-not-found,unused-ignore]  # optional, never a runner dependency
        except ImportError as e:
            raise PretrainedError(
                f"{base} is a PyTorch pickle, which the runner only reads with torch installed (it never "
                f"unpickles without torch's weights_only guard); {CONVERT_HINT}"
            ) from e
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # UnpicklingError for pickled code, RuntimeError for damaged files
            first = str(e).splitlines()[0][:300] if str(e) else ""
            raise PretrainedError(
                f"torch.load(weights_only=True) refused {base} ({type(e).__name__}: {first}); a file "
                f"that needs arbitrary code to load is not read; {CONVERT_HINT}"
            ) from e
        state = _unwrap(obj, path)
    else:
        raise PretrainedError(f"{base}: not a PyTorch weights file (.safetensors, .pth, .pt, .bin)")
    return {k: _to_numpy(v, k) for k, v in state.items()}


def convert(state: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """(runner name -> array, head entries dropped, other entries dropped) for a PyTorch ResNet state dict."""
    out: dict[str, np.ndarray] = {}
    head: list[str] = []
    dropped: list[str] = []
    for name, value in state.items():
        mapped = map_torch_name(name)
        if mapped is None:
            (head if TORCH_HEAD.match(_strip(name)) else dropped).append(name)
            continue
        out[mapped] = value
    return out, sorted(head), sorted(dropped)
