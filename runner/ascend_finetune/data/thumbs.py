"""`thumbs ROOT FILE...`: small JPEG thumbnails of image files inside a data folder, for the
checkpoint explorer's predictions gallery (the images of a confusion-matrix cell), read where the
data lives and sent as base64 under a byte budget.

The files are named relative to ROOT (as `<ckpt>.eval.json` names them); each is opened only when
its real path is a regular file inside ROOT (preview.py's `open_inside`), so a name with `..` or a
symlink out of the folder is an error of its own entry, never a read.
"""

from __future__ import annotations

import os
from typing import Any

from .preview import NotRead, original_thumb

MAX_FILES = 200  # entries of one call
DEFAULT_MAX_BYTES = 512 << 10  # base64 characters of all thumbnails of one call


def thumbs(root: str, files: list[str], max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    root_real = os.path.realpath(root)
    if not os.path.isdir(root_real):
        raise NotADirectoryError(root)
    out: list[dict[str, Any]] = []
    spent = 0
    for f in files[:MAX_FILES]:
        entry: dict[str, Any] = {"file": f}
        if spent >= max_bytes:
            entry["left_out"] = True  # over the budget: ask again for the rest
        else:
            try:
                jpeg = original_thumb(os.path.join(root_real, f), root_real)
                entry["jpeg"] = jpeg
                spent += len(jpeg)
            except NotRead as e:
                entry["error"] = str(e)
            except Exception as e:  # Pillow raises many types for a bad file
                entry["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        out.append(entry)
    return {
        "root": root_real,
        "thumbs": out,
        "bytes": spent,
        "max_bytes": max_bytes,
        "left_out": len(files) - len(out) + sum(1 for e in out if e.get("left_out")),
    }
