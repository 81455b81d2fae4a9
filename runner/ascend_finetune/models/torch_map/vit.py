"""timm's ViT state dicts onto mindcv's ViT: mindcv's VisionTransformer follows timm's names, so only
the LayerNorms' weight/bias (MindSpore's gamma/beta) change. qkv stays one (3*dim, dim) matrix in the
same q, k, v order and head split; the class token and the position embedding (class token first)
have timm's shapes. The head is timm's `head`."""

from __future__ import annotations

import re

from .common import norm, strip

HEAD = re.compile(r"^head\.")
_NORM = re.compile(r"^(.*\b(?:norm|norm1|norm2|fc_norm|norm_pre))\.(weight|bias)$")


def rename_one(name: str) -> str | None:
    name = strip(name)
    if HEAD.match(name):
        return None
    if m := _NORM.match(name):
        return norm(m.group(1), m.group(2))
    return name


def rename(names: list[str]) -> dict[str, str | None]:
    return {n: rename_one(n) for n in names}
