"""A small separable ImageFolder for demos and tests: coloured shapes on noisy backgrounds."""

from __future__ import annotations

import colorsys
import math
import os
import random
from collections.abc import Mapping
from typing import Any

CLASSES = {  # class folder -> (shape, RGB colour)
    "red circle": ("circle", (220, 40, 40)),
    "green square": ("square", (40, 180, 60)),
    "blue triangle": ("triangle", (40, 80, 220)),
    "yellow cross": ("cross", (230, 200, 30)),
}
# Task B: other colours (and one shape fewer), so "pretrained on A, fine-tuned on B" is a real
# transfer: the demo's second run and the transfer tests.
TASK_B = {
    "magenta circle": ("circle", (200, 40, 200)),
    "cyan square": ("square", (40, 200, 200)),
    "white triangle": ("triangle", (235, 235, 235)),
}
TASKS = {"a": CLASSES, "b": TASK_B}
# Shape-only tasks (colour None: a random bright colour per image, so colour says nothing of the class and
# a network has to learn shape): A' to pretrain on, B' of three other shapes to transfer to. The transfer
# test uses them; the demo keeps CLASSES and TASK_B.
SHAPES_A = {s: (s, None) for s in ("circle", "square", "triangle", "cross", "diamond", "ellipse")}
SHAPES_B = {s: (s, None) for s in ("ring", "star", "bar")}


def draw(shape: str, colour: tuple[int, int, int] | None, size: int, rng: random.Random) -> Any:
    from PIL import Image, ImageDraw

    bg = tuple(rng.randint(0, 90) for _ in range(3))
    im = Image.new("RGB", (size, size), bg)
    d = ImageDraw.Draw(im)
    r = rng.randint(size // 5, size // 3)
    cx, cy = rng.randint(r, size - r), rng.randint(r, size - r)
    if colour is None:  # drawn after the fixed-colour path's draws, so those images stay as they were
        h, sat, val = rng.random(), rng.uniform(0.5, 1), rng.uniform(0.75, 1)
        rgb: tuple[int, ...] = tuple(round(255 * v) for v in colorsys.hsv_to_rgb(h, sat, val))
    else:
        rgb = colour
    c = tuple(max(0, min(255, v + rng.randint(-25, 25))) for v in rgb)
    if shape == "circle":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=c)
    elif shape == "square":
        d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=c)
    elif shape == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=c)
    elif shape == "diamond":
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=c)
    elif shape == "ellipse":
        d.ellipse([cx - r, cy - r // 2, cx + r, cy + r // 2], fill=c)
    elif shape == "ring":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=c, width=max(2, r // 3))
    elif shape == "star":  # five points
        pts = [(math.pi / 2 + k * math.pi / 5, r if k % 2 == 0 else r * 0.45) for k in range(10)]
        d.polygon([(cx + q * math.cos(a), cy - q * math.sin(a)) for a, q in pts], fill=c)
    elif shape == "bar":
        w = max(2, r // 3)
        d.rectangle([cx - r, cy - w, cx + r, cy + w], fill=c)
    else:
        w = max(2, r // 3)
        d.rectangle([cx - r, cy - w, cx + r, cy + w], fill=c)
        d.rectangle([cx - w, cy - r, cx + w, cy + r], fill=c)
    return im


def make_shapes(
    out: str,
    per_class: int = 40,
    size: int = 48,
    seed: int = 0,
    classes: Mapping[str, tuple[str, tuple[int, int, int] | None]] | None = None,
) -> dict:
    rng = random.Random(seed)
    chosen = classes or CLASSES
    for name, (shape, colour) in chosen.items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            draw(shape, colour, size, rng).save(os.path.join(folder, f"{i:04d}.png"))
    return {"train": os.path.abspath(out), "classes": sorted(chosen), "images": per_class * len(chosen)}
