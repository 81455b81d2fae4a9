"""PyTorch state dicts (torchvision's and timm's) as `model.pretrained`: reading the file, telling
a PyTorch state dict from a MindSpore checkpoint, and renaming its tensors (torch_map/, per family).

- `.safetensors` through checkpoints/format.py's bounded reader: no torch needed (the path for Ascend
  boxes), and BF16 (PyTorch's and the hub's common dtype, which NumPy lacks) widened to float32;
- `.pth`, `.pt`, `.bin` (pickles) only with torch installed, through `torch.load(weights_only=True)`,
  which refuses pickled code. Without torch the error says how to convert the file to .safetensors.

Which files load where: torchvision's and timm's ResNets into the runner's ResNets, timm's MobileNetV3,
EfficientNet, ConvNeXt and ViT into the mindcv model of the same architecture (torch_map.TIMM_MODELS),
each built in the "torch" layout (timm's arithmetic). Norm `weight`/`bias`/`running_mean`/
`running_var` become `gamma`/`beta`/`moving_mean`/`moving_variance`; `num_batches_tracked` (a
counter) and the classifier are dropped and listed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import numpy as np

from ..checkpoints.errors import PretrainedError
from . import torch_map

PICKLE_SUFFIXES = (".pth", ".pt", ".bin")
# Wrappers a state dict is often saved under (`torch.save({"state_dict": sd})`, training scripts).
_CONTAINERS = ("state_dict", "model", "model_state_dict", "net", "module")
# A PyTorch state dict's strong signs, which MindSpore's files never carry (they say moving_mean and
# gamma/beta): BatchNorm statistics and counters, LayerNorms' `weight` (ViT, ConvNeXt-V2).
_TORCH_SIGNS = re.compile(r"(\.running_mean|\.num_batches_tracked|(^|\.)(norm|norm1|norm2|fc_norm)\.weight)$")
# A weak one: ResNet's `downsample.N` shortcuts, a cell name mindcv uses too (SE-ResNet, ResNeSt, Swin).
_TORCH_DOWNSAMPLE = ".downsample."
# MindSpore's BatchNorm statistics (PyTorch's are running_mean/running_var).
_MINDSPORE_STATS = re.compile(r"\.moving_(mean|variance)$")
# Each family's tell-tale tensor, to name the family of a file that does not fit the backbone.
_FAMILY_SIGNS = (
    ("resnet", re.compile(r"^layer1\.0\.conv1\.weight$")),
    ("mobilenetv3", re.compile(r"^conv_head\.bias$")),  # timm's pre-logits conv has a bias, EfficientNet's none
    ("efficientnet", re.compile(r"^bn2\.running_var$")),
    ("convnext", re.compile(r"^stages\.0\.blocks\.0\.conv_dw\.weight$")),
    ("vit", re.compile(r"^blocks\.0\.attn\.qkv\.weight$")),
)


def convert_command(weights_only: bool) -> str:
    """A command that saves IN.pth's weights as OUT.safetensors where torch is installed: the tensors of
    the dict a training checkpoint keeps them under (`state_dict`: timm's train.py, `model`:
    torchvision's references), beside its other objects (epoch, optimizer, argparse arguments)."""
    return (
        'python -c "import torch, safetensors.torch as st; '
        f"ck = torch.load('IN.pth', map_location='cpu', weights_only={weights_only}); "
        "sd = ck.get('state_dict') or ck.get('model') or ck; "
        "st.save_file({k: v.contiguous() for k, v in sd.items() if torch.is_tensor(v)}, 'OUT.safetensors')\""
    )


def _mindspore_norms(names: set[str]) -> bool:
    """BatchNorm statistics, or a norm's `gamma` beside its `beta` (Swin's LayerNorms): MindSpore's names.
    PyTorch's norms say weight/bias, but its modules may own a gamma/beta pair too (ConvNeXt-V2's GRN),
    so this decides only where no strong PyTorch sign does."""
    return any(
        _MINDSPORE_STATS.search(n) or (n.endswith(".gamma") and n[: -len("gamma")] + "beta" in names) for n in names
    )


def looks_torch(names: Iterable[str]) -> bool:
    """Whether the names are a PyTorch state dict's rather than a MindSpore checkpoint's: a strong
    PyTorch sign decides, then MindSpore's norm names, then a `downsample` cell (weak: mindcv has some)."""
    unique = set(names)
    if any(_TORCH_SIGNS.search(n) for n in unique):
        return True
    return not _mindspore_norms(unique) and any(_TORCH_DOWNSAMPLE in n for n in unique)


def family_of(names: Iterable[str]) -> str | None:
    """The backbone family a PyTorch state dict is of, from its tensor names (None: none we know)."""
    stripped = [torch_map.strip(n) for n in names]
    for family, sign in _FAMILY_SIGNS:
        if any(sign.match(n) for n in stripped):
            return family
    return None


def _to_numpy(value: object, name: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # a torch tensor; bfloat16 has no NumPy type
        t = value.detach().cpu()
        if str(t.dtype) in ("torch.bfloat16", "torch.float16"):
            t = t.float()
        return np.asarray(t.numpy())
    raise PretrainedError(
        f"entry {name!r} is a {type(value).__name__}, not a tensor",
        "not_a_tensor",
        entry=name,
        type=type(value).__name__,
    )


def _unwrap(obj: object, path: str) -> dict:
    for _ in range(3):
        if isinstance(obj, dict) and not any(hasattr(v, "shape") for v in obj.values()):
            inner = next((obj[k] for k in _CONTAINERS if k in obj and isinstance(obj[k], dict)), None)
            if inner is None:
                break
            obj = inner
    if not isinstance(obj, dict) or not obj:
        raise PretrainedError(
            f"{os.path.basename(path)} holds no state dict (a dict of tensors)",
            "no_state_dict",
            file=os.path.basename(path),
        )
    return obj


def read_state_dict(path: str) -> dict[str, np.ndarray]:
    """A PyTorch state dict as NumPy arrays. PretrainedError when the file cannot be read safely."""
    if not os.path.isfile(path):
        raise PretrainedError(f"file not found: {path}", "pretrained_not_found", path=path)
    base = os.path.basename(path)
    if path.endswith(".safetensors"):
        from ..checkpoints.errors import ToolError
        from ..checkpoints.format import read_index

        try:  # every offset checked against the file's size, every byte count against its shape
            index = read_index(path)
            state = {name: index.read(name) for name in index.tensors}
        except ToolError as e:
            # the parser's reason, without the ToolError's "not a MindSpore file" (this one is PyTorch's)
            reason = str(e.__cause__ or e.params.get("reason", e))
            raise PretrainedError(
                f"{base} is not a readable safetensors file ({reason})", "bad_safetensors", file=base, error=reason
            ) from e
    elif path.endswith(PICKLE_SUFFIXES):
        try:
            import torch  # type: ignore[import-not-found,unused-ignore]  # optional, never a runner dependency
        except ImportError as e:
            raise PretrainedError(
                f"{base} is a PyTorch pickle, which the runner only reads with torch installed (it never "
                "unpickles without torch's weights_only guard); convert it to .safetensors where torch is "
                f"installed: {convert_command(True)}; if torch refuses it and you trust the file, "
                "use weights_only=False",
                "torch_missing",
                file=base,
            ) from e
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # UnpicklingError for pickled code, RuntimeError for damaged files
            first = str(e).splitlines()[0][:300] if str(e) else ""
            raise PretrainedError(
                f"torch.load(weights_only=True) refused {base} ({type(e).__name__}: {first}): the runner does "
                "not unpickle objects other than tensors, such as the arguments a training checkpoint keeps "
                "beside its weights. Only if you trust the file (weights_only=False runs any code it holds), "
                f"convert it to .safetensors: {convert_command(False)}",
                "torch_load_refused",
                file=base,
                error=f"{type(e).__name__}: {first}",
            ) from e
        state = _unwrap(obj, path)
    else:
        raise PretrainedError(
            f"{base}: not a PyTorch weights file (.safetensors, .pth, .pt, .bin)", "not_torch_weights", file=base
        )
    return {k: _to_numpy(v, k) for k, v in state.items()}


def convert(family: str, state: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """(backbone name -> array, head entries dropped, other entries dropped) for a PyTorch state dict
    of `family` (backbones.family of the backbone it loads into)."""
    if family not in torch_map.FAMILIES:
        raise PretrainedError(
            f"PyTorch state dicts load into {', '.join(torch_map.FAMILIES)} backbones, not {family} ones",
            "torch_family_unsupported",
            family=family,
            families=list(torch_map.FAMILIES),
        )
    return torch_map.convert(family, state)
