"""ResNet backbones defined here (no model hub needed) and the transfer network: backbone + new head.

Parameter names follow MindSpore ModelZoo's ResNet (`conv1`, `bn1`, `layerN.i.convK`,
`layerN.i.down_sample_layer.{0,1}`), so ModelZoo checkpoints load by name; `pretrained.py` maps
mindcv's names onto these.

Two layouts (`variant`, see backbones.VARIANTS) with the same parameters: "default" (symmetric
padding, BatchNorm eps 1e-5, max-pool "same"; mindcv's ResNet is this exactly) and "modelzoo", as
ModelZoo's official/cv/ResNet/src/resnet.py builds it:
- ResNet-50/101 (`res_base=False` there): every convolution `pad_mode="same"` (at stride 2 the extra
  row and column of padding go to the bottom and right), every BatchNorm eps 1e-4, max-pool "same";
- ResNet-18/34 (`res_base=True`): symmetric padding, the blocks' BatchNorms (`bn1d`, `bn2d`) eps 1e-4
  but the stem's and the shortcuts' eps 1e-5, and the max-pool on an explicit 1-pixel zero pad
  (`nn.Pad`) with `pad_mode="valid"`.
and "torch", as torchvision and timm build it: the default layout but with the max-pool of PyTorch's
`MaxPool2d(3, stride=2, padding=1)`, one pixel on every side (MindSpore's "same" pads only the bottom
and right at stride 2). After the ReLU every value is >= 0, so the zero pad of `nn.Pad` is the same
as PyTorch's -inf pad.
Weights of one layout load into the other without a missing tensor, yet give other features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mindspore import nn, ops
from mindspore.common.initializer import HeUniform, Normal

from . import backbones as bb
from .backbones import BACKBONES, STAGES, VARIANTS
from .backbones import MINDCV_PREFIX as PREFIX


@dataclass(frozen=True)
class Layout:
    """What a variant changes: convolution padding, BatchNorm eps per place, the max-pool's padding."""

    same_pad: bool = False  # pad_mode "same" (uneven at stride 2) instead of symmetric k//2
    eps_stem: float = 1e-5
    eps_block: float = 1e-5
    eps_shortcut: float = 1e-5
    pool_pad: bool = False  # nn.Pad(1) + "valid" max-pool instead of "same"


def layout(name: str, variant: str) -> Layout:
    if variant not in VARIANTS:
        raise ValueError(f"unknown backbone variant {variant!r} (known: {', '.join(VARIANTS)})")
    if variant == "default":
        return Layout()
    if variant == "torch":
        return Layout(pool_pad=True)
    if BACKBONES[name][0] == "basic":  # ModelZoo's res_base=True: resnet18, resnet34
        return Layout(eps_block=1e-4, pool_pad=True)
    return Layout(same_pad=True, eps_stem=1e-4, eps_block=1e-4, eps_shortcut=1e-4)


def _conv(cin: int, cout: int, k: int, stride: int = 1, same: bool = False) -> nn.Conv2d:
    pad = 0 if same else k // 2
    return nn.Conv2d(
        cin,
        cout,
        k,
        stride=stride,
        pad_mode="same" if same else ("pad" if pad else "valid"),
        padding=pad,
        has_bias=False,
        weight_init=HeUniform(),
    )


def _bn(c: int, eps: float = 1e-5) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(c, eps=eps, momentum=0.9)


def _shortcut(cin: int, cout: int, stride: int, lay: Layout) -> nn.Cell | None:
    """The projection on the identity path (ModelZoo's `down_sample_layer`), where shapes change."""
    if stride == 1 and cin == cout:
        return None
    return nn.SequentialCell([_conv(cin, cout, 1, stride, lay.same_pad), _bn(cout, lay.eps_shortcut)])


class BasicBlock(nn.Cell):
    down_sample_layer: Any  # a Cell or None (set in __init__); for mypy only

    expansion = 1

    def __init__(self, cin: int, width: int, stride: int, lay: Layout = Layout()):
        super().__init__()
        cout = width * self.expansion
        self.conv1, self.bn1 = _conv(cin, width, 3, stride, lay.same_pad), _bn(width, lay.eps_block)
        self.conv2, self.bn2 = _conv(width, cout, 3, 1, lay.same_pad), _bn(cout, lay.eps_block)
        self.relu = nn.ReLU()
        self.down_sample_layer = _shortcut(cin, cout, stride, lay)
        self.down_sample = self.down_sample_layer is not None

    def construct(self, x: Any) -> Any:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.down_sample:
            identity = self.down_sample_layer(x)
        return self.relu(out + identity)


class Bottleneck(nn.Cell):
    down_sample_layer: Any  # a Cell or None (set in __init__); for mypy only

    expansion = 4

    def __init__(self, cin: int, width: int, stride: int, lay: Layout = Layout()):
        super().__init__()
        cout = width * self.expansion
        same, eps = lay.same_pad, lay.eps_block
        self.conv1, self.bn1 = _conv(cin, width, 1, 1, same), _bn(width, eps)
        self.conv2, self.bn2 = _conv(width, width, 3, stride, same), _bn(width, eps)  # stride on the 3x3 (v1.5)
        self.conv3, self.bn3 = _conv(width, cout, 1, 1, same), _bn(cout, eps)
        self.relu = nn.ReLU()
        self.down_sample_layer = _shortcut(cin, cout, stride, lay)
        self.down_sample = self.down_sample_layer is not None

    def construct(self, x: Any) -> Any:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.down_sample:
            identity = self.down_sample_layer(x)
        return self.relu(out + identity)


class ResNetBackbone(nn.Cell):
    """Stem and four stages; outputs globally pooled features of size `num_features`.

    `variant`: the layout (see the module's docstring); the parameters are the same in every one."""

    def __init__(self, name: str, variant: str = "default"):
        super().__init__()
        kind, depths = BACKBONES[name]
        lay = layout(name, variant)
        self.variant = variant
        block = BasicBlock if kind == "basic" else Bottleneck
        self.conv1, self.bn1 = _conv(3, 64, 7, 2, lay.same_pad), _bn(64, lay.eps_stem)
        self.relu = nn.ReLU()
        if lay.pool_pad:
            self.pad = nn.Pad(paddings=((0, 0), (0, 0), (1, 1), (1, 1)))
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        else:
            self.pad = nn.Identity()
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        cin = 64
        for i, (stage, depth) in enumerate(zip(STAGES, depths)):
            width = 64 * 2**i
            blocks = []
            for j in range(depth):
                blocks.append(block(cin, width, 2 if (j == 0 and i > 0) else 1, lay))
                cin = width * block.expansion
            setattr(self, stage, nn.SequentialCell(blocks))
        self.num_features = cin
        self.mean = ops.ReduceMean(keep_dims=False)

    def stem(self, x: Any) -> Any:
        return self.maxpool(self.pad(self.relu(self.bn1(self.conv1(x)))))

    def construct(self, x: Any) -> Any:
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.mean(x, (2, 3))


HEAD_NORMS = ("auto", "none", "batchnorm")  # model.head_norm
NORM_ENTRY = "head.norm.moving_mean"  # in a checkpoint whose head has the feature normalisation


def head_norm_in(tensors: Any) -> Literal["batchnorm", "none"]:
    """The `head_norm` a checkpoint's head was trained with, from its tensor names: what eval, export and
    a resume rebuild (`auto` was resolved when the run started)."""
    return "batchnorm" if NORM_ENTRY in tensors else "none"


class NormedHead(nn.Dense):
    """The head with a feature normalisation in front (`model.head_norm: batchnorm`): BatchNorm1d
    without scale and shift (eps 1e-6), then the Dense, as MAE's linear probe (He et al. 2021) does.
    The normalisation is affine-free, so the head is still linear in the features (after training the
    moving statistics fold into the Dense); it only puts features of any scale on unit variance, so
    one learning rate suits them. A Dense subclass: the weights keep their names (`head.weight`,
    `head.bias`) and the statistics sit under `head.norm.`."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(in_channels, out_channels, weight_init=Normal(0.02))
        self.norm = nn.BatchNorm1d(in_channels, eps=1e-6, momentum=0.9, affine=False)

    def construct(self, x: Any) -> Any:
        return self.bias_add(self.matmul(self.norm(x), self.weight), self.bias)


def unnormalised(backbone: nn.Cell) -> bool:
    """Whether a backbone has no normalisation layer at all (mindcv's VGG, SqueezeNet, GoogLeNet): the
    scale of its pooled features is then whatever training left it, from about 1 (ImageNet weights)
    to the thousands (a network trained briefly from scratch)."""
    from .mindcv_net import _NORMS

    return not any(isinstance(c, _NORMS) for _, c in backbone.cells_and_names())


def resolve_head_norm(head_norm: str, backbone: nn.Cell, frozen: bool) -> bool:
    """Whether the head gets NormedHead's normalisation. `auto`: for a frozen backbone without any
    normalisation layer, where the linear probe otherwise sees features it cannot settle on (the
    transfer test's VGG-11 probe started at a loss of 2,400 and stayed at chance); a backbone that
    trains, or one whose last layers normalise, keeps the plain Dense."""
    if head_norm not in HEAD_NORMS:
        raise ValueError(f"unknown head_norm {head_norm!r} (known: {', '.join(HEAD_NORMS)})")
    if head_norm == "auto":
        return frozen and unnormalised(backbone)
    return head_norm == "batchnorm"


class TransferNet(nn.Cell):
    """Backbone + `Dense(features, classes)` head with Normal(0.02) init (the recipe's head), with a
    feature normalisation in front when `head_norm` says so (NormedHead, resolve_head_norm).

    The backbone is the runner's ResNet or a mindcv model (mindcv_net.py, by name: backbones.py).
    `frozen_upto` is the number of leading parts (backbones.parts_of: stem, stages, neck) that are
    frozen. In a ResNet the output of each frozen part is cut from the gradient with stop_gradient,
    so autodiff computes nothing for them; in a mindcv model, whose forward is mindcv's, only a whole
    frozen backbone is cut (its frozen parameters get no update either way: requires_grad=False).
    """

    def __init__(
        self,
        backbone: str,
        num_classes: int,
        frozen_upto: int = 0,
        variant: str = "default",
        head_norm: str = "none",
    ):
        super().__init__()
        self.backbone_name = backbone
        self.is_mindcv = bb.is_mindcv(backbone)
        self.n_parts = len(bb.parts_of(backbone))
        if self.is_mindcv:
            from .mindcv_net import MindcvBackbone

            self.backbone = MindcvBackbone(backbone, variant)
        else:
            self.backbone = ResNetBackbone(backbone, variant)
        self.head_norm = resolve_head_norm(head_norm, self.backbone, frozen_upto >= self.n_parts)
        width = self.backbone.num_features
        self.head = (
            NormedHead(width, num_classes) if self.head_norm else nn.Dense(width, num_classes, weight_init=Normal(0.02))
        )
        self.frozen_upto = frozen_upto
        # The model's own constants (Swin's attention masks, SwinV2's index tables: Parameters it builds
        # with requires_grad=False), which no unfreeze may make trainable; by identity, as names change.
        self.constant_ids = tuple(id(p) for p in self.backbone.get_parameters() if not p.requires_grad)

    def construct(self, x: Any) -> Any:
        if self.is_mindcv:
            x = self.backbone(x)
            if self.frozen_upto >= self.n_parts:
                x = ops.stop_gradient(x)
            return self.head(x)
        b = self.backbone
        x = b.stem(x)
        if self.frozen_upto >= 1:
            x = ops.stop_gradient(x)
        x = b.layer1(x)
        if self.frozen_upto >= 2:
            x = ops.stop_gradient(x)
        x = b.layer2(x)
        if self.frozen_upto >= 3:
            x = ops.stop_gradient(x)
        x = b.layer3(x)
        if self.frozen_upto >= 4:
            x = ops.stop_gradient(x)
        x = b.layer4(x)
        x = b.mean(x, (2, 3))
        if self.frozen_upto >= 5:
            x = ops.stop_gradient(x)
        return self.head(x)


class BackboneFeatures(nn.Cell):
    """The pooled backbone output of a TransferNet (what its head sees), for the feature cache."""

    def __init__(self, net: TransferNet):
        super().__init__(auto_prefix=False)
        self.backbone = net.backbone
        self.is_mindcv = net.is_mindcv

    def construct(self, x: Any) -> Any:
        b = self.backbone
        if self.is_mindcv:
            return b(x)
        x = b.layer4(b.layer3(b.layer2(b.layer1(b.stem(x)))))
        return b.mean(x, (2, 3))


def frozen_parts(freeze: str, backbone: str = "resnet50") -> int:
    """How many leading parts (backbones.parts_of) a `model.freeze` value freezes."""
    return bb.frozen_parts(freeze, backbone)


def _root(net: TransferNet) -> nn.Cell:
    """The cell the part paths of backbones.parts_of are relative to."""
    return net.backbone.model if net.is_mindcv else net.backbone


def _relative(net: TransferNet, param_name: str) -> str:
    """A backbone parameter's name relative to _root: without the network's `backbone.` (a ResNet's)
    or `backbone.model.` (a mindcv model's, mindcv_net.PREFIX)."""
    prefix = PREFIX if net.is_mindcv else "backbone."
    return param_name[len(prefix) :] if param_name.startswith(prefix) else param_name


def part_cells(net: TransferNet, lo: int, hi: int) -> list[nn.Cell]:
    """The cells of parts lo..hi-1 (paths that name a cell; a bare parameter such as ViT's
    cls_token has none). The neck's cells are those that no other part holds."""
    parts = bb.parts_of(net.backbone_name)
    cells = dict(_root(net).cells_and_names())
    out: list[nn.Cell] = []
    for i in range(lo, min(hi, len(parts))):
        paths = parts[i][1]
        if paths:
            out.extend(cells[p] for p in paths if p in cells)
        else:  # the neck: top-level cells outside every other part
            held = {p.split(".")[0] for _, ps in parts for p in ps}  # their containers too
            out.extend(c for name, c in cells.items() if name and "." not in name and name not in held)
    return out


def part_params(net: TransferNet, lo: int, hi: int) -> list[Any]:
    """The backbone parameters of parts lo..hi-1."""
    name = net.backbone_name
    return [p for p in net.backbone.get_parameters() if lo <= bb.part_index(name, _relative(net, p.name)) < hi]


def unfrozen_params(net: TransferNet, lo: int, hi: int) -> list[Any]:
    """What unfreezing parts lo..hi-1 makes trainable: their parameters, but neither BatchNorm's moving
    statistics nor the model's own constants (`constant_ids`)."""
    constant = set(net.constant_ids)
    return [p for p in part_params(net, lo, hi) if "moving_" not in p.name and id(p) not in constant]


def frozen_cells(net: TransferNet) -> list[nn.Cell]:
    return part_cells(net, 0, net.frozen_upto)


def apply_freeze(net: TransferNet) -> None:
    """Frozen parameters get requires_grad=False; frozen BatchNorms run on their moving statistics."""
    for p in part_params(net, 0, net.frozen_upto):
        p.requires_grad = False


def set_train_mode(net: TransferNet, training: bool) -> None:
    net.set_train(training)
    if training:
        for cell in frozen_cells(net):
            cell.set_train(False)
