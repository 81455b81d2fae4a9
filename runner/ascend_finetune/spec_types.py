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
    "cait_xxs24_224",
    "cmt_tiny",
    "coat_tiny",
    "convit_tiny",
    "convnext_small",
    "convnext_tiny",
    "crossvit_9",
    "densenet121",
    "dpn92",
    "edgenext_small",
    "efficientnet_b0",
    "efficientnet_b1",
    "ghostnet_050",
    "googlenet",
    "hrnet_w32",
    "inception_v3",
    "inception_v4",
    "mae_b_16_224_finetune",
    "mixnet_s",
    "mlp_mixer_s_p16",
    "mnasnet_050",
    "mobilenet_v1_050",
    "mobilenet_v2_100",
    "mobilenet_v3_large_100",
    "mobilenet_v3_small_100",
    "mobilevit_small",
    "nasnet_a_4x1056",
    "pit_xs",
    "pnasnet",
    "poolformer_s12",
    "pvt_v2_b0",
    "regnet_x_200mf",
    "repmlp_b224",
    "repvgg_b0",
    "res2net50",
    "resnest14",
    "resnetv2_50",
    "seresnet18",
    "shufflenet_v1_g3_05",
    "shufflenet_v2_x0_5",
    "skresnet18",
    "squeezenet1_0",
    "swin_tiny",
    "swinv2_tiny_window8",
    "vgg11",
    "visformer_tiny",
    "vit_b_16_224",
    "vit_b_32_224",
    "xception",
    "xcit_tiny_12_p16_224",
]
HeadNorm = Literal["auto", "none", "batchnorm"]
Freeze = Literal[
    "none",
    "backbone",
    "up_to:layer1",
    "up_to:layer2",
    "up_to:layer3",
    "up_to:layer4",
    "up_to:blocks.23",
    "up_to:blocks_token_only.1",
    "up_to:blocks_a.1",
    "up_to:blocks_b.1",
    "up_to:blocks_c.9",
    "up_to:_bn",
    "up_to:cpe1",
    "up_to:crpe1",
    "up_to:serial_blocks1.1",
    "up_to:cpe2",
    "up_to:crpe2",
    "up_to:serial_blocks2.1",
    "up_to:cpe3",
    "up_to:crpe3",
    "up_to:serial_blocks3.1",
    "up_to:cpe4",
    "up_to:crpe4",
    "up_to:serial_blocks4.1",
    "up_to:parallel_blocks.5",
    "up_to:norm2",
    "up_to:norm3",
    "up_to:norm4",
    "up_to:aggregate",
    "up_to:feature.1",
    "up_to:feature.3",
    "up_to:feature.5",
    "up_to:feature.7",
    "up_to:features.denseblock1",
    "up_to:features.denseblock2",
    "up_to:features.denseblock3",
    "up_to:features.denseblock4",
    "up_to:features.conv2_3",
    "up_to:features.conv3_4",
    "up_to:features.conv4_20",
    "up_to:conv5_x",
    "up_to:stages.0",
    "up_to:stages.1",
    "up_to:stages.2",
    "up_to:stages.3",
    "up_to:features.3",
    "up_to:features.4",
    "up_to:features.5",
    "up_to:features.7",
    "up_to:conv3",
    "up_to:inception3b",
    "up_to:inception4e",
    "up_to:inception5b",
    "up_to:conv2b",
    "up_to:conv3b",
    "up_to:conv4a",
    "up_to:inception5d",
    "up_to:inception6e",
    "up_to:inception7c",
    "up_to:layers.2",
    "up_to:layers.6",
    "up_to:layers.12",
    "up_to:head_conv",
    "up_to:mixer_blocks.1",
    "up_to:mixer_blocks.3",
    "up_to:mixer_blocks.5",
    "up_to:mixer_blocks.7",
    "up_to:features.10",
    "up_to:features.12",
    "up_to:features.16",
    "up_to:features.8",
    "up_to:features.13",
    "up_to:features.18",
    "up_to:features.24",
    "up_to:features.14",
    "up_to:features.20",
    "up_to:layer_2",
    "up_to:layer_3",
    "up_to:layer_4",
    "up_to:conv_1x1_exp",
    "up_to:cell_stem_0",
    "up_to:cell_3",
    "up_to:cell_9",
    "up_to:cell_15",
    "up_to:transformers.0",
    "up_to:transformers.1",
    "up_to:transformers.2",
    "up_to:norm",
    "up_to:cell_2",
    "up_to:cell_5",
    "up_to:cell_8",
    "up_to:network.0",
    "up_to:network.2",
    "up_to:network.4",
    "up_to:network.6",
    "up_to:norm_list.0",
    "up_to:norm_list.1",
    "up_to:norm_list.2",
    "up_to:block_list.3.1",
    "up_to:stages.0.1",
    "up_to:stages.1.1",
    "up_to:stages.2.11",
    "up_to:stages.3.1",
    "up_to:stage1",
    "up_to:stage2",
    "up_to:stage3",
    "up_to:stage4",
    "up_to:features.11",
    "up_to:features.15",
    "up_to:features.22",
    "up_to:layers.0",
    "up_to:layers.1",
    "up_to:layers.3",
    "up_to:stage1.6",
    "up_to:stage2.3",
    "up_to:stage3.3",
    "up_to:bn2",
    "up_to:blocks.0",
    "up_to:blocks.1",
    "up_to:blocks.2",
    "up_to:blocks.4",
    "up_to:blocks.7",
    "up_to:blocks.6",
    "up_to:blocks.5",
    "up_to:blocks.9",
    "up_to:blocks.8",
    "up_to:blocks.11",
    "up_to:blocks.10",
    "up_to:conv4",
    "up_to:cls_attn_blocks.1",
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


class PreprocessFields(TypedDict, total=False):
    """model.preprocess's object form: a preset and the fields it changes (each optional)."""

    preset: PreprocessName
    mean: list[float]  # 0..1 units, R, G, B
    std: list[float]
    crop_pct: float
    crop_mode: Literal["center", "squash"]
    interpolation: Literal["bilinear", "bicubic"]


class ModelSpec(TypedDict):
    backbone: Backbone
    pretrained: str | None  # absolute after resolve
    preprocess: PreprocessName | PreprocessFields
    freeze: Freeze
    num_classes: int | None
    head_norm: HeadNorm
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
