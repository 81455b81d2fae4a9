"""timm's arithmetic on a mindcv model: the backbone's "torch" layout (backbones.VARIANTS).

mindcv's MobileNetV3, EfficientNet, ConvNeXt and ViT have timm's parameters but not all of its
arithmetic; these differences change features by more than renaming can fix (measured against timm,
test_timm_mindcv.py). The model is mindcv's own class, built by mindcv; this adjusts the built
instance (no parameter is added, renamed or removed, so mindcv's checkpoints still fit it):

- padding: mindcv's MobileNetV3 depthwise and EfficientNet convolutions use `pad_mode="same"`, which
  at stride 2 on an even input puts the extra row and column at the bottom and right only; timm pads
  ((stride - 1) + (k - 1)) // 2 on every side. ConvNeXt's patchify and downsampling convolutions
  (kernel = stride) are "same" in mindcv (an input not divisible by the stride is padded and rounded
  up) and unpadded in timm (rounded down).
- GELU: MindSpore's nn.GELU() is the tanh approximation; timm's nn.GELU is the exact erf form
  (ConvNeXt's MLP, ViT's MLP).
- LayerNorm eps: MindSpore's nn.LayerNorm defaults to 1e-7, timm's ViT uses 1e-6 (mindcv's ConvNeXt
  already uses 1e-6).
What is the same and needs nothing: BatchNorm eps 1e-5 in all four, hard-swish/hard-sigmoid
(relu6(x + 3) / 6), Swish = SiLU, the SE reductions (the shapes say so), attention's scale and qkv
split, layer scale (`gamma_`), the class token and position embedding layout.
"""

from __future__ import annotations

from typing import Any

from mindspore import nn, ops


def _repad(conv: nn.Conv2d, pad: int) -> None:
    """The convolution with `pad` zeros on every side (pad 0: none), same weights."""
    conv.pad_mode = "pad" if pad else "valid"
    conv.padding = pad
    conv.conv2d = ops.Conv2D(
        out_channel=conv.out_channels,
        kernel_size=conv.kernel_size,
        mode=1,
        pad_mode=conv.pad_mode,
        pad=pad,
        stride=conv.stride,
        dilation=conv.dilation,
        group=conv.group,
        data_format=conv.data_format,
    )


def _timm_pad(conv: nn.Conv2d) -> int:
    """timm's symmetric padding (timm.layers.padding.get_padding) for a square kernel."""
    k, s, d = conv.kernel_size[0], conv.stride[0], conv.dilation[0]
    return ((s - 1) + d * (k - 1)) // 2


def _exact_gelu(model: Any) -> int:
    n = 0
    for _, cell in model.cells_and_names():
        if isinstance(cell, nn.GELU):
            cell.approximate = "none"
            n += 1
    return n


def match_timm(model: Any, family: str) -> None:
    """Makes the mindcv `model` (of `family`) compute what timm's model of that family computes."""
    cells = [c for _, c in model.cells_and_names()]
    if family in ("mobilenetv3", "efficientnet"):
        for c in cells:
            if isinstance(c, nn.Conv2d) and c.pad_mode == "same":
                _repad(c, _timm_pad(c))
    elif family == "convnext":
        for c in cells:
            if isinstance(c, nn.Conv2d) and c.kernel_size == c.stride and c.kernel_size[0] > 1:
                _repad(c, 0)
        _exact_gelu(model)
    elif family == "vit":
        for c in cells:
            if isinstance(c, nn.LayerNorm):
                c.epsilon = 1e-6
                c.layer_norm = ops.LayerNorm(
                    begin_norm_axis=c.begin_norm_axis, begin_params_axis=c.begin_params_axis, epsilon=1e-6
                )
        _exact_gelu(model)
    else:
        raise ValueError(f"timm's arithmetic is not known for the {family} family")
