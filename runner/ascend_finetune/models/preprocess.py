"""Which evaluation preprocessing and normalisation pretrained weights expect: `model.preprocess`.

A network sees its best features on inputs prepared as in its own training recipe: the resize before
the centre crop, its interpolation, and the mean and std. The presets, each from the source's own
definition (all with ImageNet's mean and std):

- `imagenet`: bilinear, crop 0.875, resize to round(size * 256 / 224). The runner's own pipeline (what its
  checkpoints trained with); also ModelZoo ResNet's eval (Resize(256), CenterCrop(224)).
- `mindcv`: bilinear, crop 0.875, resize to floor(size / crop). mindcv 0.3.0 data/transforms_factory.py
  transforms_imagenet_eval's defaults, data/constants.py DEFAULT_CROP_PCT; no offered model's
  `default_cfgs` entry sets other values (test_preprocess.py checks).
- `torchvision`: bilinear, crop 0.875, floor(size / crop). torchvision's ResNet *_Weights.IMAGENET1K_V1:
  ImageClassification(crop_size=224) with resize_size=256, bilinear.
- `timm`: bicubic, crop 0.95, floor(size / crop). timm models/resnet.py `_rcfg` (the a1/a2/a3 tags, which
  resnetN's default tags are), timm data/transforms_factory.py's floor(size / crop_pct).

`auto` takes the weights' own values where they carry them: an `hf-hub:timm/...` repository's
`config.json` (its `pretrained_cfg`: mean, std, crop_pct, crop_mode, interpolation, input_size; timm's
ViT `augreg` tags normalise with mean = std = 0.5), read strictly (`hub_values`) and falling back to
the timm preset with a warning when missing or bad. Otherwise: `mindcv:` names -> mindcv, a MindSpore
file (ModelZoo, mindcv, the runner's) or none -> imagenet; a PyTorch state dict cannot tell timm's
recipe from torchvision's: torchvision's, with a warning. The spec's object form
(`{"preset": ..., "mean": ..., ...}`) then overrides single fields.

Augmented training crops (RandomCropDecodeResize) are not changed; the normalisation is, for training too,
and with `data.augment: none` training takes the evaluation resize and crop as well.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .catalog import OVERRIDABLE, mindcv_cfg, parse
from .download import MAX_CONFIG_BYTES, NOT_CACHED_OFFLINE, fetch_hub_config, offline

# ImageNet's mean and std in 0..255 pixel units: torchvision's transforms._presets.ImageClassification
# and timm's data/constants.py IMAGENET_DEFAULT_MEAN/STD (0..1 units), mindcv's data/constants.py.
MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)
PRESETS = ("auto", "imagenet", "mindcv", "torchvision", "timm")
INTERPOLATIONS = ("bilinear", "bicubic")  # what MindSpore's Resize does as PIL/torchvision do (tested)
CROP_MODES = ("center", "squash")  # timm's `border` mode has no MindSpore op here
# crop_pct's range: below 0.25 the resize would be over 4x the crop (a hostile file's memory bomb);
# timm's published configs use 0.765..1.0.
CROP_MIN, CROP_MAX = 0.25, 1.0
# `why`'s end when a preview left a hub config unread (resolve's fetch=False; Preprocess.pending_config)
PENDING_WHY = ": the run reads their config.json when it starts, which may change these values"


@dataclass(frozen=True)
class Preprocess:
    name: str  # the preset the values start from
    interpolation: str  # "bilinear" | "bicubic"
    crop_pct: float
    rounding: str  # "round256": round(size * 256 / 224), the runner's own; "floor": floor(size / crop_pct)
    mean: tuple[float, ...] = MEAN  # 0..255 pixel units
    std: tuple[float, ...] = STD
    why: str = ""  # how `auto` chose it
    crop_mode: str = "center"  # "center": shorter side to the resize; "squash": both sides (timm's)
    input_size: int | None = None  # the weights' own training size (config.json), for the record
    source: str = "preset"  # where the values come from: "preset", "hub_config", "mindcv_cfg"
    config: str | None = None  # the config.json URL the values were read from
    overridden: tuple[str, ...] = ()  # fields model.preprocess's object set
    # A preview's (resolve's fetch=False): the hub config is not in the cache yet, so these are the
    # preset's values and the run may read others. Not part of the record (describe leaves it out).
    pending_config: bool = field(default=False, compare=False)

    def resize(self, image_size: int) -> int:
        """The shorter side (or, squashed, both sides) to resize to before the centre crop of `image_size`."""
        if self.rounding == "round256":
            return int(round(image_size * 256 / 224))
        return int(math.floor(image_size / self.crop_pct))

    def describe(self) -> dict[str, object]:
        """run_started's and the checkpoint manifest's `preprocess` (from_record reads it back)."""
        d = asdict(self)
        del d["pending_config"]
        d["mean"], d["std"], d["overridden"] = list(self.mean), list(self.std), list(self.overridden)
        return d


TABLE = {
    "imagenet": Preprocess("imagenet", "bilinear", 0.875, "round256"),
    "mindcv": Preprocess("mindcv", "bilinear", 0.875, "floor", source="mindcv_cfg"),
    "torchvision": Preprocess("torchvision", "bilinear", 0.875, "floor"),
    "timm": Preprocess("timm", "bicubic", 0.95, "floor"),
}
TORCH_AMBIGUOUS = (
    "a PyTorch state dict cannot say whether it is torchvision's or timm's: evaluation preprocessing "
    'follows torchvision\'s (bilinear, crop 0.875); set model.preprocess to "timm" for timm weights '
    "(bicubic, crop 0.95)"
)


class BadValues(ValueError):
    """A weights config or a record whose preprocessing values are not usable: the message says why."""


def _triple(name: str, v: Any, lo: float, hi: float, lo_open: bool) -> tuple[float, float, float]:
    ok = isinstance(v, list) and len(v) == 3
    ok = ok and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)
    ok = ok and all((x > lo if lo_open else x >= lo) and x <= hi for x in v)
    if not ok:
        rng = f"{'>' if lo_open else '>='} {lo:g} and <= {hi:g}"
        raise BadValues(f"{name} must be 3 numbers {rng}, got {json.dumps(v)[:80]}")
    return (float(v[0]), float(v[1]), float(v[2]))


def _checked(d: dict[str, Any], scale: float) -> dict[str, Any]:
    """The preprocessing fields of `d` that are present, each checked; mean/std in 0..1 * `scale` units."""
    out: dict[str, Any] = {}
    unit = 255.0 if scale == 1.0 else 1.0  # 0.485 * 255: the same float as MEAN's
    if "mean" in d:
        out["mean"] = tuple(x * unit for x in _triple("mean", d["mean"], 0.0, scale, False))
    if "std" in d:
        out["std"] = tuple(x * unit for x in _triple("std", d["std"], 0.0, scale, True))
    if "crop_pct" in d:
        c = d["crop_pct"]
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not CROP_MIN <= c <= CROP_MAX:
            raise BadValues(f"crop_pct must be a number >= {CROP_MIN} and <= {CROP_MAX}, got {json.dumps(c)[:40]}")
        out["crop_pct"] = float(c)
    for key, known in (("interpolation", INTERPOLATIONS), ("crop_mode", CROP_MODES)):
        if key in d:
            if d[key] not in known:
                raise BadValues(f"{key} {json.dumps(d[key])[:40]} is not one of {', '.join(known)}")
            out[key] = d[key]
    return out


def _no_constants(name: str) -> Any:
    raise BadValues(f"{name} is not a number")


def hub_values(data: bytes) -> dict[str, Any]:
    """The preprocessing a timm hub repository's config.json carries (its `pretrained_cfg`, or the
    top level for configs written before timm nested it), checked as untrusted input: BadValues says
    what is wrong. mean/std come back in 0..255 units."""
    if len(data) > MAX_CONFIG_BYTES:
        raise BadValues(f"config.json is larger than {MAX_CONFIG_BYTES >> 10} KB")
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadValues(f"config.json is not JSON: {str(e)[:120]}") from None
    cfg = doc.get("pretrained_cfg", doc) if isinstance(doc, dict) else None
    if not isinstance(cfg, dict):
        raise BadValues("config.json has no pretrained_cfg object")
    missing = [k for k in ("mean", "std", "crop_pct", "interpolation") if k not in cfg]
    if missing:
        raise BadValues(f"pretrained_cfg has no {', '.join(missing)}")
    out = _checked({k: cfg[k] for k in OVERRIDABLE if k in cfg}, 1.0)
    if "input_size" in cfg:
        s = cfg["input_size"]
        ok = isinstance(s, list) and len(s) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in s)
        if not ok or s[0] != 3 or s[1] != s[2] or not 8 <= s[1] <= 4096:
            raise BadValues(f"input_size must be [3, N, N] with 8 <= N <= 4096, got {json.dumps(s)[:60]}")
        out["input_size"] = s[1]
    return out


def _apply(base: Preprocess, values: dict[str, Any]) -> Preprocess:
    """`base` with `values`; a crop_pct of its own resizes to floor(size / crop_pct), as timm does."""
    p = replace(base, **values)
    return replace(p, rounding="floor") if "crop_pct" in values else p


def preset_of(setting: Any) -> str:
    return str(setting.get("preset", "auto")) if isinstance(setting, dict) else str(setting)


def choose(
    setting: Any, pretrained: str | None, origin: str | None, hub_config: Any = None
) -> tuple[Preprocess, list[tuple[str, str, dict[str, Any]]]]:
    """(preprocessing, warnings as (code, message, parameters)) for `model.preprocess` = setting (a preset name or
    the object form), given model.pretrained as written, the weights' origin (pretrained.origin_of_file:
    runner, modelzoo, mindcv, torch, unknown) and, for hf-hub:timm/ weights under `auto`, what
    download.fetch_hub_config gave (None: not asked). A warning's parameters (its `details` beside the
    English message) let the editor word it in the user's language."""
    warnings: list[tuple[str, str, dict[str, Any]]] = []
    preset = preset_of(setting)
    if preset != "auto":
        p = replace(TABLE[preset], why="model.preprocess")
    elif pretrained and pretrained.startswith("mindcv:"):
        p = replace(TABLE["mindcv"], why="mindcv: weights")
        own = mindcv_cfg(pretrained.split("#")[0][len("mindcv:") :])
        if own:  # the model's default cfg sets these of its own (PoolFormer's crop 0.9, EdgeNeXt's 256 px)
            p = replace(_apply(p, own), why="mindcv: weights, with their model's default cfg")
    elif pretrained and pretrained.startswith("hf-hub:timm/"):
        p = replace(TABLE["timm"], why="timm weights from the hub")
        if hub_config is not None:
            if hub_config.problem is None:
                try:
                    p = _apply(p, {**hub_values(hub_config.data), "source": "hub_config", "config": hub_config.url})
                    p = replace(p, why="timm weights from the hub: their config.json")
                except BadValues as e:
                    warnings.append(
                        ("preprocess_config_invalid", _fallback(hub_config.url, str(e)), {"problem": str(e)})
                    )
            else:
                problem = hub_config.problem
                warnings.append(("preprocess_config_missing", _fallback(hub_config.url, problem), {"problem": problem}))
    elif origin == "torch":
        p = replace(TABLE["torchvision"], why="PyTorch state dict (torchvision assumed)")
        warnings.append(("preprocess_assumed", TORCH_AMBIGUOUS, {}))
    else:
        p = replace(TABLE["imagenet"], why="MindSpore weights" if pretrained else "no pretrained weights")
    if isinstance(setting, dict):
        p = overridden(p, setting)
    return p, warnings


def _fallback(url: str, why: str) -> str:
    return (
        f"the weights' preprocessing config {url} is not usable ({why}): evaluation uses the timm preset "
        "(bicubic, crop 0.95, ImageNet mean and std); set model.preprocess's mean/std/crop_pct/interpolation "
        "to the weights' own if they differ"
    )


def _not_recorded(file: str, name: str) -> str:
    return (
        f"{file} is a checkpoint of this runner, but the checkpoints.json of its run folder is not beside it, so "
        f"the preprocessing it was trained with is unknown and {name}'s is used: copy that checkpoints.json along "
        f"(FOLDER/checkpoints.json, with the file as FOLDER/checkpoints/{file}), or set model.preprocess to the "
        "values its run reported in run_started.preprocess"
    )


def overridden(base: Preprocess, setting: dict[str, Any]) -> Preprocess:
    """`base` with the fields model.preprocess's object sets (validated by the spec: mean/std in 0..1)."""
    values = _checked({k: setting[k] for k in OVERRIDABLE if k in setting}, 1.0)
    if not values:
        return base
    return replace(_apply(base, values), overridden=tuple(k for k in OVERRIDABLE if k in values))


def from_record(record: object) -> Preprocess | None:
    """The preprocessing a manifest entry or run_started recorded: its values as recorded (mean/std in
    0..255), checked; a record written before the values were kept (or with a value out of range) is
    its preset's row, or None when it names none."""
    if not isinstance(record, dict) or not isinstance(record.get("name"), str) or record["name"] not in TABLE:
        return None
    base = TABLE[str(record["name"])]
    try:
        values = _checked({k: record[k] for k in OVERRIDABLE if k in record}, 255.0)
    except BadValues:
        return base
    rounding = record.get("rounding")
    if rounding in ("round256", "floor"):
        values["rounding"] = rounding
    size = record.get("input_size")
    if isinstance(size, int) and not isinstance(size, bool) and 8 <= size <= 4096:
        values["input_size"] = size
    for key in ("why", "source", "config"):
        if isinstance(record.get(key), str):
            values[key] = str(record[key])[:300]
    fields = record.get("overridden")
    if isinstance(fields, list):
        values["overridden"] = tuple(f for f in fields if f in OVERRIDABLE)
    return replace(base, **values)


def from_spec(setting: Any) -> Preprocess | None:
    """What a run's `model.preprocess` names without its weights (a checkpoint whose manifest entry
    records none): a preset with the object's fields, or None for `auto` without fields."""
    preset = preset_of(setting)
    base = TABLE.get(preset, TABLE["imagenet"] if preset == "auto" else None)
    if base is None or not isinstance(setting, dict):
        return TABLE.get(preset)
    try:
        return overridden(base, setting)
    except BadValues:  # a spec.json edited by hand after the run
        return TABLE.get(preset)


def recorded_for(ckpt: str, read: str | None = None) -> Preprocess | None:
    """What the runner's checkpoint `ckpt` recorded: in its run's manifest (`<run>/checkpoints/<file>`),
    if it sits in a run that lists it with a record, else in the file itself (its `run_record`, from
    runners since 0.2.0, so a checkpoint copied out of its run keeps its preprocessing), read at
    `read` when given (the run's pinned link to the file: models/pinned.py)."""
    from ..checkpoints.manifest import entry_for, find_run_of
    from ..checkpoints.run_record import read_record

    run_dir = find_run_of(ckpt)
    listed = (entry_for(run_dir, ckpt) or {}).get("preprocess") if run_dir else None
    return from_record(listed if listed is not None else (read_record(read or ckpt) or {}).get("preprocess"))


class Warnings(list[dict[str, Any]]):
    """resolve()'s `warn` that keeps each warning as `{code, message, details}` (for a file or a document
    that carries them, rather than an event log)."""

    def __call__(self, code: str, message: str, details: dict[str, Any]) -> None:
        self.append({"code": code, "message": message, "details": details})


def resolve(
    setting: Any,
    pretrained: str | None,
    origin: str | None,
    warn: Any,
    env: Any = None,
    resume: str | None = None,
    image_size: int | None = None,
    fetch: bool = True,
    read_path: str | None = None,
) -> Preprocess:
    """choose(), with the hub config fetched when `auto` meets hf-hub:timm/ weights (download.py: the
    cache, HF_ENDPOINT, HF_HUB_OFFLINE) and each warning passed to `warn(code=, message=, details=)`.
    A resumed checkpoint's recorded values win (the run goes on as it started); under `auto`, so do
    those of the runner's own checkpoint as model.pretrained ("Fine-tune from"), with the spec's fields
    on top; such a checkpoint away from its run's checkpoints.json warns (preprocess_not_recorded). With
    `image_size` (data.image_size, the crop), a weight trained at another size says so. Without `fetch`
    (a preview), a hub config is read from the cache only: one not there yet leaves the timm preset,
    and `why` says the run reads the config when it starts. `read_path`: where to read the
    pretrained file itself (the run's pinned link to it)."""
    p = _resolve(setting, pretrained, origin, warn, env, resume, fetch, read_path)
    if image_size and p.input_size and p.input_size != image_size:
        warn(
            code="preprocess_input_size",
            message=f"the weights were trained at {p.input_size} px (their config's input_size) and "
            f"data.image_size is {image_size}: images are cropped to {image_size} px; set data.image_size to "
            f"{p.input_size} to evaluate as their recipe does",
            details={"input_size": p.input_size, "image_size": image_size},
        )
    return p


def _resolve(
    setting: Any,
    pretrained: str | None,
    origin: str | None,
    warn: Any,
    env: Any,
    resume: str | None,
    fetch: bool,
    read_path: str | None,
) -> Preprocess:
    if resume and (rec := recorded_for(resume)) is not None:
        return replace(rec, why=f"recorded with the resumed checkpoint {os.path.basename(resume)}")
    unrecorded = None  # the runner's own checkpoint as model.pretrained, without its run's record
    if preset_of(setting) == "auto" and origin == "runner" and pretrained:
        rec = recorded_for(pretrained, read_path)
        if rec is not None:
            rec = replace(rec, why=f"recorded with the checkpoint {os.path.basename(pretrained)}", overridden=())
            return overridden(rec, setting) if isinstance(setting, dict) else rec
        if not (isinstance(setting, dict) and all(k in setting for k in OVERRIDABLE)):
            unrecorded = os.path.basename(pretrained)
    hub = None
    pending = False  # not fetched (a preview): the run reads the config when it starts
    if preset_of(setting) == "auto" and pretrained and pretrained.startswith("hf-hub:timm/"):
        e = env if env is not None else os.environ
        hub = fetch_hub_config(parse(pretrained), hub_values, e if fetch else {**e, "HF_HUB_OFFLINE": "1"})
        if not fetch and not offline(e) and hub.problem == NOT_CACHED_OFFLINE:
            hub, pending = None, True
    p, warnings = choose(setting, pretrained, origin, hub)
    if pending:
        p = replace(p, why=f"{p.why}{PENDING_WHY}", pending_config=True)
    if unrecorded:
        warnings.append(("preprocess_not_recorded", _not_recorded(unrecorded, p.name), {"file": unrecorded}))
    for code, message, params in warnings:
        details: dict[str, Any] = {"preprocess": p.name, **params}
        if hub is not None:
            details["config"] = hub.url
        warn(code=code, message=message, details=details)
    return p
