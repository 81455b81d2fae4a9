"""A small separable ImageFolder for demos and tests: coloured shapes on noisy backgrounds."""

from __future__ import annotations

import os
import random
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


def draw(shape: str, colour: tuple[int, int, int], size: int, rng: random.Random) -> Any:
    from PIL import Image, ImageDraw

    bg = tuple(rng.randint(0, 90) for _ in range(3))
    im = Image.new("RGB", (size, size), bg)
    d = ImageDraw.Draw(im)
    r = rng.randint(size // 5, size // 3)
    cx, cy = rng.randint(r, size - r), rng.randint(r, size - r)
    c = tuple(max(0, min(255, v + rng.randint(-25, 25))) for v in colour)
    if shape == "circle":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=c)
    elif shape == "square":
        d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=c)
    elif shape == "triangle":
        d.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=c)
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
    classes: dict[str, tuple[str, tuple[int, int, int]]] | None = None,
) -> dict:
    rng = random.Random(seed)
    classes = classes or CLASSES
    for name, (shape, colour) in classes.items():
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            draw(shape, colour, size, rng).save(os.path.join(folder, f"{i:04d}.png"))
    return {"train": os.path.abspath(out), "classes": sorted(classes), "images": per_class * len(classes)}
