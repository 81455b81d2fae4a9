"""Named weight sources for `model.pretrained`: `mindcv:<model>` and `hf-hub:<org>/<repo>[:<file>]`.

No MindSpore and no network here: `validate` checks a name against this table in well under a second.
download.py fetches what `resolve_url` names.

mindcv's URLs are the `default_cfgs` of mindcv 0.3.0 (mindcv/models/<module>.py of each offered model
that has one, and ResNet/ResNeXt), kept as paths under mindcv's download base so a mirror
(`ASCEND_FINETUNE_WEIGHTS_URL`) serves the same layout. mindcv publishes no checksum (its own loader
checks none), so `sha256` is None for them: the download's sha256 is recorded in run_started and the
checkpoint manifest instead, and a value pinned in the spec (`...#sha256=<hex>`) is checked.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .torch_map import TIMM_MODELS

MINDCV_BASE = "https://download.mindspore.cn/toolkits/mindcv"
HF_BASE = "https://huggingface.co"
WEIGHTS_URL_ENV = "ASCEND_FINETUNE_WEIGHTS_URL"  # a mirror of MINDCV_BASE's layout
HF_DEFAULT_FILE = "model.safetensors"
HF_REVISION = "main"
# The fields model.preprocess's object sets (preprocess.py); here, beside the mindcv cfgs that set some
# of them, so that download.py can name them without importing preprocess.py (which imports it).
OVERRIDABLE = ("mean", "std", "crop_pct", "crop_mode", "interpolation")


@dataclass(frozen=True)
class Entry:
    path: str  # under the mindcv base
    family: str
    backbone: str | None  # the runner's backbone these weights load into; None: not supported yet
    sha256: str | None = None
    # The hex in the file's name: by mindcv's naming rule (its configs/README.md, since mindcv 0.2.0)
    # the first digits of the file's sha256; None where the name has none.
    file_hash: str | None = None
    # What the model's default cfg sets of its own beside mindcv's eval defaults (crop_pct, input_size,
    # interpolation: CoaT's bicubic, which its training recipe evaluates with too)
    preprocess: tuple[tuple[str, float | int | str], ...] = ()


def _doc() -> dict[str, Any]:
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "weights_catalog.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _load(doc: dict[str, Any]) -> dict[str, Entry]:
    return {
        n: Entry(
            e["path"],
            e["family"],
            e["backbone"],
            e.get("sha256"),
            e.get("file_hash"),
            tuple(sorted(e.get("preprocess", {}).items())),
        )
        for n, e in doc["mindcv"].items()
    }


# In weights_catalog.json, beside the spec schema: the language server and the Start wizard list it too.
_CATALOG = _doc()
MINDCV: dict[str, Entry] = _load(_CATALOG)
# timm's hub repositories the editor offers (`timm/resnet50.a1_in1k` -> its backbone). Any other
# `hf-hub:timm/<arch>.<tag>` of a mapped architecture loads as well: this list is what is offered.
HF_HUB: dict[str, str] = {repo: e["backbone"] for repo, e in _CATALOG["hf_hub"].items()}
# timm's repositories on the Hugging Face hub are `timm/<architecture>.<tag>` (`timm/resnet50.a1_in1k`,
# `timm/convnext_tiny.in12k_ft_in1k`): the architecture before the dot picks the backbone and the
# mapping (torch_map.TIMM_MODELS). torchvision's weights are not on the hub under one org; use a local
# file for those.
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HF_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_HF_FILE = re.compile(r"^[A-Za-z0-9_.-][A-Za-z0-9_./-]*$")


class SourceError(ValueError):
    """A named source that cannot be used: `fix` says what to write instead."""

    def __init__(self, message: str, fix: str, why: str = "bad_source", **params: Any):
        super().__init__(message)
        self.fix, self.why, self.params = fix, why, params


@dataclass(frozen=True)
class Source:
    text: str  # as written, without the #sha256 pin
    kind: str  # "mindcv" | "hf-hub"
    name: str  # mindcv model, or "<org>/<repo>"
    file: str  # file name in the repository (hf-hub) or on the mindcv base
    backbone: str  # the runner's backbone the weights load into
    sha256: str | None  # expected, from the catalog or the spec's pin
    name_hash: str | None = None  # a mindcv file name's hex: the start of its sha256 (Entry.file_hash)

    def cache_relpath(self) -> str:
        """Where the file sits under the cache's `weights/` folder."""
        if self.kind == "mindcv":
            return os.path.join("mindcv", os.path.basename(self.file))
        org, repo = self.name.split("/", 1)
        return os.path.join("hf-hub", org, repo, HF_REVISION, *self.file.split("/"))


def mindcv_cfg(name: str) -> dict[str, Any]:
    """What mindcv model `name`'s default cfg sets of its own (crop, interpolation, input size); {} for
    none or a name the catalog does not know."""
    entry = MINDCV.get(name)
    return dict(entry.preprocess) if entry else {}


def is_named(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("mindcv:", "hf-hub:"))


def parse(value: str) -> Source:
    """The source a `model.pretrained` value names; SourceError with a fix when it names none we load."""
    text, _, pin = value.partition("#")
    sha: str | None = None
    if pin:
        if not pin.startswith("sha256=") or not _HEX64.match(pin[7:].lower()):
            raise SourceError(
                f"bad pin {pin!r} in {value!r}",
                "pin a file with #sha256=<64 hex digits> after the source",
                "bad_pin",
                value=value,
                pin=pin,
            )
        sha = pin[7:].lower()
    if text.startswith("mindcv:"):
        name = text[len("mindcv:") :]
        entry = MINDCV.get(name)
        if entry is None:
            usable = [n for n, e in MINDCV.items() if e.backbone]  # not the ones refused below
            near = difflib.get_close_matches(name, usable, n=1, cutoff=0.5)
            raise SourceError(
                f"mindcv has no model {name!r} in the catalog",
                (f'did you mean "mindcv:{near[0]}"? ' if near else "")
                + f"known: {', '.join('mindcv:' + n for n in usable)}",
                "unknown_mindcv_model",
                name=name,
                near=f"mindcv:{near[0]}" if near else None,
                known=["mindcv:" + n for n in usable],
            )
        if entry.backbone is None:
            raise SourceError(
                f"mindcv:{name} is a {entry.family} model the runner does not offer as a backbone "
                "(docs/weights.md lists which mindcv families train here and why the others do not)",
                f"use one of {', '.join('mindcv:' + n for n, e in MINDCV.items() if e.backbone)}",
                "mindcv_not_backbone",
                name=name,
                family=entry.family,
                usable=["mindcv:" + n for n, e in MINDCV.items() if e.backbone],
            )
        return Source(text, "mindcv", name, entry.path, entry.backbone, sha or entry.sha256, entry.file_hash)
    if text.startswith("hf-hub:"):
        rest = text[len("hf-hub:") :]
        repo_id, _, file = rest.partition(":")
        parts = repo_id.split("/")
        if len(parts) != 2 or not all(_HF_PART.match(p) for p in parts):
            raise SourceError(
                f"{text!r} does not name a hub repository",
                "write hf-hub:<org>/<repo>, e.g. hf-hub:timm/resnet50.a1_in1k",
                "not_a_hub_repo",
                value=text,
            )
        file = file or HF_DEFAULT_FILE
        if not _HF_FILE.match(file) or ".." in file.split("/"):
            raise SourceError(
                f"bad file name {file!r} in {text!r}",
                "name a file inside the repository, e.g. :model.safetensors",
                "bad_hub_file",
                file=file,
                value=text,
            )
        arch = parts[1].split(".", 1)[0]
        backbone = TIMM_MODELS.get(arch)
        if backbone is None:
            raise SourceError(
                f"{repo_id} is not a timm architecture the runner maps onto a backbone ({arch!r})",
                f"use a timm repository of {', '.join(TIMM_MODELS)} (e.g. hf-hub:timm/resnet50.a1_in1k), "
                "or a local file",
                "timm_arch_unmapped",
                repo=repo_id,
                arch=arch,
                known=list(TIMM_MODELS),
            )
        return Source(text, "hf-hub", repo_id, file, backbone, sha)
    raise SourceError(
        f"{value!r} is not a named source", "write mindcv:<model> or hf-hub:<org>/<repo>", "not_a_source", value=value
    )


def resolve_url(src: Source, env: Mapping[str, str] | None = None) -> str:
    """The download URL: mindcv's base (or the mirror in ASCEND_FINETUNE_WEIGHTS_URL), or the hub's
    resolve URL under HF_ENDPOINT."""
    e: Mapping[str, str] = os.environ if env is None else env
    if src.kind == "mindcv":
        return f"{(e.get(WEIGHTS_URL_ENV) or MINDCV_BASE).rstrip('/')}/{src.file}"
    base = (e.get("HF_ENDPOINT") or HF_BASE).rstrip("/")
    return f"{base}/{src.name}/resolve/{HF_REVISION}/{src.file}"
