"""Loading a pretrained backbone from a .ckpt or .safetensors file, whatever ResNet it came from.

Names from MindSpore ModelZoo, mindcv and the MindSpore tutorial are mapped onto ours; the old
head and optimizer state are never loaded. Problems come back as a report, not an exception,
unless nothing at all loads.

Where a checkpoint comes from also decides the backbone's layout (net.py's `variant`): ModelZoo's
ResNet pads and normalises differently from mindcv's and the runner's, with the same parameter
names, so loading by name alone computes other features without a warning. `detect_origin` reads
the origin from the names (or, for the runner's own checkpoints, from their `backbone_variant`
entry), and the trainer builds the backbone in that layout before loading.

PyTorch state dicts (`.safetensors`, or `.pth`/`.pt`/`.bin` where torch is installed) are the origin
"torch": torchvision's and timm's ResNets, timm's MobileNetV3, EfficientNet, ConvNeXt and ViT. The
backbone is built in the "torch" layout (timm's arithmetic) and torch_weights.py renames the tensors.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import numpy as np

from ..checkpoints.errors import PretrainedError
from .backbones import VARIANT_ENTRY
from .origin import PREFIXES, detect_origin, origin_of_file  # noqa: F401 (origin_of_file: the callers' old home)
from .torch_weights import convert, family_of, looks_torch, read_state_dict

# Checkpoint entries that are not network weights (optimizer and loss-scale state, counters);
# adam_m./adam_v. are AdamWeightDecay's (train.optimizer "adamw"), as in checkpoints/tools.py.
NON_WEIGHT = re.compile(
    r"^(moments\.|adam_m\.|adam_v\.|ema\.|accum\.|moment1\.|moment2\.|learning_rate|global_step$|momentum$|"
    r"epoch_num$|step_num$|steps_per_epoch$|total_steps$|scale_sense$|current_iterator_step$|last_overflow_iterator_step$|"
    r"updates$|beta1_power$|beta2_power$|loss_scale\.|backbone_variant$|run_record$)"
)
HEAD = re.compile(r"^(end_point|fc|classifier|head)\.")
RENAMES = [  # (pattern, replacement) applied in order, after the prefixes are gone
    (re.compile(r"\.bn1d\."), ".bn1."),
    (re.compile(r"\.bn2d\."), ".bn2."),  # ModelZoo resnet18/34
    (re.compile(r"\.down_sample\.(\d)\."), r".down_sample_layer.\1."),  # mindcv, tutorial
    (re.compile(r"^norm\."), "bn1."),
    (re.compile(r"\.norm(\d)\."), r".bn\1."),  # tutorial
]


def checkpoint_variant(params: dict) -> int | None:
    """The `backbone_variant` entry of a loaded checkpoint, if it has one."""
    v = params.get(VARIANT_ENTRY)
    if v is None:
        return None
    return int(v.asnumpy().reshape(-1)[0]) if hasattr(v, "asnumpy") else int(v)


@dataclass
class LoadReport:
    loaded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # backbone params the file did not have
    unexpected: list[str] = field(default_factory=list)  # file entries with no backbone param
    mismatched: list[str] = field(default_factory=list)  # "name: file shape vs net shape"
    head_dropped: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # other entries not loaded: counters (num_batches_tracked)
    origin: str = "unknown"  # runner | modelzoo | mindcv | torch | unknown (detect_origin, origin_of_file)
    variant: str = "default"  # the layout the file's weights were trained in

    def describe(self, path: str) -> dict:
        """run_started's `pretrained` (docs/protocol.md): what was loaded, and what was not and why."""
        return {
            "file": path,
            "origin": self.origin,
            "variant": self.variant,
            "loaded": len(self.loaded),
            "missing": self.missing[:50],
            "unexpected": self.unexpected[:50],
            "mismatched": self.mismatched[:50],
            "head_dropped": self.head_dropped,
            "dropped": self.dropped[:200],
        }

    def partial_warning(self, path: str) -> dict | None:
        """The `pretrained_partial` warning when a tensor was missing, unexpected or of the wrong
        shape; its details carry the message's numbers and file name, so it can be reworded."""
        if not (self.missing or self.unexpected or self.mismatched):
            return None
        file, counts = os.path.basename(path), (len(self.missing), len(self.unexpected), len(self.mismatched))
        return {
            "code": "pretrained_partial",
            "message": f"loaded {len(self.loaded)} backbone tensors from {file}; "
            f"{counts[0]} missing, {counts[1]} unexpected, {counts[2]} of the wrong shape",
            "details": {
                "missing": self.missing[:50],
                "unexpected": self.unexpected[:50],
                "mismatched": self.mismatched[:50],
                "file": file,
                "loaded": len(self.loaded),
                "missing_count": counts[0],
                "unexpected_count": counts[1],
                "mismatched_count": counts[2],
            },
        }


def map_name(name: str) -> str | None:
    """Our backbone-relative name for a checkpoint entry, or None for heads and optimizer state."""
    for prefix in PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    if NON_WEIGHT.match(name) or HEAD.match(name):
        return None
    for pat, rep in RENAMES:
        name = pat.sub(rep, name)
    return name


def read_checkpoint(path: str) -> dict:
    """Every tensor of a .ckpt or .safetensors file, each read when asked for (`_Stored`: the old head
    and optimizer state are never read); PretrainedError when it is not a checkpoint. Read by
    checkpoints/format.py, not MindSpore's loader: that one opens the realpath of the name, where a
    run reads its weights through a link to the file it pinned (models/pinned.py), and it takes some
    damaged files without a word (a tensor whose bytes are missing loads as zeros), where each
    tensor's bytes are checked against its shape here."""
    if not os.path.isfile(path):
        raise PretrainedError(f"file not found: {path}", "pretrained_not_found", path=path)
    from ..checkpoints.errors import ToolError
    from ..checkpoints.format import read_index

    try:
        index = read_index(path)
        # One open for every tensor: 300 opens of a name (where there is no pinned link) could meet
        # as many files.
        file = open(path, "rb")  # noqa: SIM115 (closed with the last _Stored that reads it)
    except ToolError as e:
        raise PretrainedError(str(e), e.why, **e.params) from e
    except OSError as e:
        raise PretrainedError(f"cannot read {path}: {e.strerror or e}", "pretrained_not_found", path=path) from e
    params = {name: _Stored(index, name, file) for name in index.tensors}
    if not params:
        raise PretrainedError(f"checkpoint holds no parameters: {path}", "checkpoint_empty", path=path)
    return params


class _Stored:
    """A tensor of a checkpoint file as load_backbone handles it (`shape`, `asnumpy`), read on asnumpy."""

    def __init__(self, index: Any, name: str, file: Any):
        self.index, self.name, self.file = index, name, file
        self.shape = tuple(index.tensors[name].shape)

    def asnumpy(self) -> np.ndarray:
        from ..checkpoints.errors import ToolError
        from ..checkpoints.format import bad_checkpoint

        try:
            try:
                return self.index.read(self.name, self.file)
            except OSError as e:
                raise bad_checkpoint(self.index.path, f"cannot read it: {e.strerror or e}") from e
        except ToolError as e:
            raise PretrainedError(str(e), e.why, **e.params) from e


class _Array:
    """A NumPy array dressed as the MindSpore tensors load_backbone handles (`shape`, `asnumpy`)."""

    def __init__(self, value: np.ndarray):
        self.value = value
        self.shape = value.shape

    def asnumpy(self) -> np.ndarray:
        return self.value


def _mindcv_name(name: str, head: tuple[str, ...]) -> str | None:
    """A mindcv model's own name for a checkpoint entry (mindcv's files, or the runner's under
    `backbone.`), or None for its classifier and optimizer state. No ResNet renames: mindcv's
    `norm`/`norm1` are LayerNorms of its own."""
    from .backbones import MINDCV_PREFIX

    if name.startswith(MINDCV_PREFIX):  # the runner's own checkpoint of a mindcv backbone
        name = name[len(MINDCV_PREFIX) :]
    if NON_WEIGHT.match(name) or HEAD.match(name) or name.split(".")[0] in head:
        return None
    return name


def _check_family(path: str, found: str | None, family: str) -> None:
    """A PyTorch state dict of another family than the backbone's: say which backbones take it."""
    if found is None or found == family:
        return
    from .backbones import BACKBONES, mindcv_models

    fits = list(BACKBONES) if found == "resnet" else [n for n, e in mindcv_models().items() if e["family"] == found]
    raise PretrainedError(
        f"{os.path.basename(path)} is a PyTorch {found} state dict, but model.backbone is a {family} backbone: "
        f"set model.backbone to the architecture it was saved from ({', '.join(fits)})",
        "torch_family_mismatch",
        file=os.path.basename(path),
        found=found,
        family=family,
        fits=fits,
    )


def load_backbone(backbone: ms.nn.Cell, path: str) -> LoadReport:
    """Loads the file's backbone weights into `backbone`, which must be built in the file's layout
    (see origin_of_file): a backbone of another layout is refused, not loaded into. A mindcv
    backbone (mindcv_net.py) takes mindcv's names as they are."""
    origin, variant = origin_of_file(path)
    head: list[str] = []
    dropped: list[str] = []
    mindcv_head: tuple[str, ...] | None = None
    family = "resnet"
    if hasattr(backbone, "model"):  # a MindcvBackbone: names relative to mindcv's model
        from .backbones import family as family_of_backbone
        from .backbones import mindcv_models

        mindcv_head = tuple(mindcv_models()[backbone.name_]["head"])
        family = family_of_backbone(backbone.name_)
    if origin == "torch":
        state = read_state_dict(path)
        if not looks_torch(state):
            raise PretrainedError(
                f"{os.path.basename(path)} is not a torchvision or timm state dict",
                "not_a_state_dict",
                file=os.path.basename(path),
            )
        _check_family(path, family_of(state), family)
        converted, head, dropped = convert(family, state)
        params: dict = {name: _Array(value) for name, value in converted.items()}
    else:
        params = read_checkpoint(path)
        origin, variant = detect_origin(params, checkpoint_variant(params))
    built = getattr(backbone, "variant", "default")
    if built != variant:
        raise PretrainedError(
            f"{os.path.basename(path)} holds a {origin} ResNet ({variant} layout) but the backbone was "
            f"built in the {built} layout: its features would differ; build it with variant={variant!r}",
            "pretrained_variant_mismatch",
            file=os.path.basename(path),
            origin=origin,
            variant=variant,
            built=built,
        )
    root = backbone.model if mindcv_head is not None else backbone
    ours = {name: p for name, p in root.parameters_and_names()}
    # mindcv's own names where they are not the cell path (mindcv_net.MindcvBackbone.published_names_)
    aliases: dict[str, str] = getattr(backbone, "published_names_", {}) if mindcv_head is not None else {}
    report = LoadReport(origin=origin, variant=variant, head_dropped=head, dropped=dropped)
    to_load = {}
    for name, value in params.items():
        if origin == "torch":  # renamed by torch_map already
            mapped = name
        elif mindcv_head is not None:
            mapped = _mindcv_name(name, mindcv_head)
            if mapped is not None and mapped not in ours:
                mapped = aliases.get(mapped, mapped)
        else:
            mapped = map_name(name)
        if mapped is None:
            bare = name.split(".", 1)[-1] if name.startswith(PREFIXES) else name
            if HEAD.match(bare) or (mindcv_head is not None and bare.split(".")[0] in mindcv_head):
                report.head_dropped.append(name)
            continue
        if mapped not in ours:
            report.unexpected.append(name)
            continue
        if tuple(value.shape) != tuple(ours[mapped].shape):
            report.mismatched.append(f"{name}: {tuple(value.shape)} in file, {tuple(ours[mapped].shape)} in {mapped}")
            continue
        to_load[mapped] = value
    # Fewer than half of the backbone's conv weights from the file is not a pretrained backbone: most
    # likely another architecture (a resnet50 file matches a resnet18 only in its stem conv and some
    # BatchNorm widths). Fail rather than warn. BatchNorm vectors are not counted: their shapes
    # match across depths by accident.
    weights = [n for n, p in ours.items() if len(p.shape) >= 2]
    fitting = [n for n in weights if n in to_load]
    if len(fitting) < len(weights) / 2:
        raise PretrainedError(
            f"only {len(fitting)} of {len(weights)} backbone conv weights in {os.path.basename(path)} "
            "fit this backbone "
            f"({len(report.mismatched)} shape mismatches, {len(report.unexpected)} unknown names): "
            "is it a checkpoint of another architecture? Pick the backbone it was trained with",
            "pretrained_wrong_architecture",
            file=os.path.basename(path),
            fitting=len(fitting),
            weights=len(weights),
            mismatched=len(report.mismatched),
            unexpected=len(report.unexpected),
        )
    # set_data by our own cell-relative names: load_param_into_net matches Parameter.name, which
    # carries the enclosing network's prefix and would silently load nothing here.
    for name, value in to_load.items():
        ours[name].set_data(ms.Tensor(value.asnumpy(), dtype=ours[name].dtype))
    report.loaded = sorted(to_load)
    report.missing = sorted(set(ours) - set(to_load))
    return report
