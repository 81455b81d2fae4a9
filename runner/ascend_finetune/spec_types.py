"""The resolved run spec's types: what `spec.resolve` returns, every default filled in.

One TypedDict per section of `spec.schema.json`, a Literal per enum, so mypy catches a misspelt
field (`t["lr_schedul"]`) or a value used as the wrong type. Every field is present after resolve
(total TypedDicts); `X | None` is a field the schema allows to be null. The schema stays the one
source of the rules: test/runner/test_spec_types.py fails when the two disagree, so a new schema
field needs its line here too.

Only for specs that went through resolve (or the launcher's spec.json, written from one): a
spec.json read back from an arbitrary run directory may come from an older runner and is read as
a plain dict with `.get`.
"""

from __future__ import annotations

from typing import Literal, TypedDict

Backbone = Literal[
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "convnext_small",
    "convnext_tiny",
    "efficientnet_b0",
    "efficientnet_b1",
    "mobilenet_v2_100",
    "mobilenet_v3_large_100",
    "mobilenet_v3_small_100",
    "resnest14",
    "skresnet18",
    "vit_b_16_224",
    "vit_b_32_224",
]
Freeze = Literal[
    "none",
    "backbone",
    "up_to:layer1",
    "up_to:layer2",
    "up_to:layer3",
    "up_to:layer4",
    "up_to:feature.1",
    "up_to:feature.3",
    "up_to:feature.5",
    "up_to:feature.7",
    "up_to:features.3",
    "up_to:features.4",
    "up_to:features.5",
    "up_to:features.7",
    "up_to:features.12",
    "up_to:features.8",
    "up_to:features.15",
    "up_to:features.22",
    "up_to:features.14",
    "up_to:features.20",
    "up_to:features.10",
    "up_to:features.16",
    "up_to:layer1",
    "up_to:layer2",
    "up_to:layer3",
    "up_to:layer4",
    "up_to:blocks.2",
    "up_to:blocks.5",
    "up_to:blocks.8",
    "up_to:blocks.11",
]
Optimizer = Literal["momentum", "sgd", "adamw"]
LrSchedule = Literal["constant", "cosine", "step", "plateau"]
Sampling = Literal["shuffle", "balanced"]
PlateauMetric = Literal["val_loss", "val_acc", "train_loss"]
EarlyStopMetric = Literal["val_loss", "val_acc"]
AmpLevel = Literal["O0", "O1", "O2", "O3", "auto"]
LossScale = Literal["dynamic", "fixed", "none"]
CheckpointFormat = Literal["ckpt", "safetensors"]
DeviceTarget = Literal["auto", "Ascend", "CPU"]
PreprocessName = Literal["auto", "imagenet", "mindcv", "torchvision", "timm"]
Augment = Literal["basic", "none", "randaugment", "trivialaugment", "autoaugment"]


class DataSpec(TypedDict):
    train: str  # absolute after resolve
    val: str | None  # absolute after resolve
    val_split: float
    image_size: int
    batch_size: int
    workers: int
    prefetch: int | None
    augment: Augment
    mixup: float
    cutmix: float
    sampling: Sampling


class UnfreezeStep(TypedDict):
    epoch: int
    freeze: Freeze


class ModelSpec(TypedDict):
    backbone: Backbone
    pretrained: str | None  # absolute after resolve
    preprocess: PreprocessName
    freeze: Freeze
    num_classes: int | None
    unfreeze: list[UnfreezeStep]


class PlateauSpec(TypedDict):
    metric: PlateauMetric
    factor: float
    patience: int
    min_delta: float
    min_lr: float


class EarlyStoppingSpec(TypedDict):
    metric: EarlyStopMetric
    patience: int
    min_delta: float


class TrainSpec(TypedDict):
    epochs: int
    optimizer: Optimizer
    lr: float
    momentum: float
    weight_decay: float
    lr_schedule: LrSchedule
    warmup_steps: int
    seed: int
    max_nonfinite_steps: int
    lr_step_size: int | None
    lr_step_gamma: float
    cache_features: bool
    cache_views: int
    backbone_lr_mult: float
    layer_decay: float
    accumulate_steps: int
    plateau: PlateauSpec
    early_stopping: EarlyStoppingSpec
    label_smoothing: float
    class_weights: Literal["auto"] | list[float] | None
    ema: float | None


class AmpSpec(TypedDict):
    level: AmpLevel
    loss_scale: LossScale
    init_scale: float
    scale_factor: int
    scale_window: int


class SinkSpec(TypedDict):
    enabled: bool
    size: int


class CheckpointSpec(TypedDict):
    every_steps: int
    keep_max: int
    keep_best: bool
    format: CheckpointFormat


class DeviceSpec(TypedDict):
    target: DeviceTarget
    ids: list[int]
    nodes: list[str]
    master_port: int | None
    telemetry_s: float


class RunSpec(TypedDict):
    name: str
    data: DataSpec
    model: ModelSpec
    train: TrainSpec
    amp: AmpSpec
    sink: SinkSpec
    checkpoint: CheckpointSpec
    device: DeviceSpec
