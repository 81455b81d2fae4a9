"""The preview's images as the run's pipeline hands them to the network: the run's preprocessing,
worked out as the trainer does but without downloading anything (preview_preprocess), the train
augmentation or eval transform through pipeline.make_dataset, denormalised back to small JPEGs.
preview.py builds the data set's document around them.
"""

from __future__ import annotations

import base64
import io
import os
from typing import Any

from ..spec_types import RunSpec

THUMB_PX = 96  # longest side of a thumbnail
THUMB_QUALITY = 80


def jpeg_b64(im: Any) -> str:
    im = im.convert("RGB")
    im.thumbnail((THUMB_PX, THUMB_PX))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=THUMB_QUALITY)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def transformed_thumbs(
    paths: list[str], image_size: int, train: bool, augment: bool | str, seed: int, preprocess: Any = None
) -> list[str]:
    """The images as the run's pipeline hands them to the network (pipeline.make_dataset: train
    augmentation, or the eval resize and centre crop, with `preprocess`, the run's Preprocess),
    denormalised back to pixels with the mean and std they were normalised with."""
    import numpy as np
    from PIL import Image

    from .pipeline import MEAN, STD, make_dataset

    ds = make_dataset(
        [(p, 0) for p in paths],
        image_size,
        1,
        1,
        train,
        augment,
        seed,
        drop_remainder=False,
        shuffle=False,
        preprocess=preprocess,
    )
    m, s = (preprocess.mean, preprocess.std) if preprocess is not None else (MEAN, STD)
    mean, std = np.array(m, np.float32), np.array(s, np.float32)
    out = []
    for x, _ in ds.create_tuple_iterator(num_epochs=1, output_numpy=True):
        hwc = x[0].transpose(1, 2, 0) * std + mean
        out.append(jpeg_b64(Image.fromarray(np.clip(np.rint(hwc), 0, 255).astype(np.uint8), "RGB")))
    return out


def preview_preprocess(spec: RunSpec) -> tuple[Any, dict[str, Any]]:
    """The resize, crop and normalisation the run will use (models/preprocess.py, as the trainer resolves
    it), without downloading anything: mindcv: and hf-hub:timm/ names are judged by name, a hub config is
    read from the cache only, a local or cached file's origin from its index. Returns it with
    `thumbnails.preprocess` (protocol.md): its record, the eval resize, the warnings the run will give,
    whether the hub config is still to be read (`pending_config`), whether the weights are
    (`pending_weights`: an hf-hub: repository outside timm/, whose file's origin picks the preprocessing),
    and `unresolved`, why it could not be worked out here (a file train would refuse: then the runner's
    own is shown, and validate or train says what is wrong)."""
    from ..models.origin import origin_of_file
    from ..models.preprocess import TABLE, Warnings, from_spec, resolve

    m = spec["model"]
    pretrained = m["pretrained"]
    warnings = Warnings()
    unresolved = None
    pending_weights = False
    try:
        origin = None
        if pretrained and not pretrained.startswith(("mindcv:", "hf-hub:")) and os.path.isfile(pretrained):
            origin, _ = origin_of_file(pretrained)
        elif pretrained and _origin_picks(pretrained, m["preprocess"]):
            origin, pending_weights = _cached_origin(pretrained)
        p = resolve(m["preprocess"], pretrained, origin, warnings, image_size=spec["data"]["image_size"], fetch=False)
    except Exception as e:  # noqa: BLE001 (a preview shows the data whatever the weights file holds)
        unresolved = f"{type(e).__name__}: {str(e).strip()[:300]}"
        p, warnings = from_spec(m["preprocess"]) or TABLE["imagenet"], Warnings()
    doc = {
        **p.describe(),
        "resize": p.resize(spec["data"]["image_size"]),
        "warnings": warnings,
        "pending_config": p.pending_config,
        "pending_weights": pending_weights,
        "unresolved": unresolved,
    }
    return p, doc


def _origin_picks(pretrained: str, setting: Any) -> bool:
    """Whether the run picks the preprocessing by a downloaded file's origin: `auto` with an hf-hub:
    repository outside timm/ (a PyTorch state dict gets torchvision's; timm/ and mindcv: go by name)."""
    from ..models.preprocess import preset_of

    hub = pretrained.startswith("hf-hub:") and not pretrained.startswith("hf-hub:timm/")
    return hub and preset_of(setting) == "auto"


def _cached_origin(pretrained: str) -> tuple[str | None, bool]:
    """(origin, pending) of a named source's file as the run would find it in the cache: read by
    weights-status's rules (no symlink another user made, regular files only, the record's size and a
    pin checked). Not cached: (None, True), the run downloads it, unless HF_HUB_OFFLINE keeps it from
    doing so. A file the run would refuse or download over raises, for `unresolved`."""
    from ..models.cache_status import source_status
    from ..models.catalog import parse
    from ..models.download import offline
    from ..models.origin import origin_of_file

    st = source_status(parse(pretrained), os.environ)
    if st["state"] == "cached":
        return origin_of_file(str(st["path"]))[0], False
    if st["state"] == "missing":
        if offline(os.environ):
            raise ValueError(f"HF_HUB_OFFLINE is set and {pretrained} is not in the cache ({st['path']})")
        return None, True
    raise ValueError(f"the cached file for {pretrained} is {st['state']}: {st.get('why', '')} ({st['path']})")
