"""Gradual unfreezing (`model.unfreeze`): at the start of a named epoch the trainable set grows to what
a `model.freeze` value leaves trainable (the head first, then deeper stages: ULMFiT's and the common
fine-tune recipe's order).

What a change rebuilds, and why:
- the network's stop_gradient cuts (`TransferNet.frozen_upto`, read when a step compiles) and the
  newly trainable parameters' `requires_grad`;
- BatchNorm modes: a part that unfreezes leaves its moving statistics and trains on batch statistics,
  as model.freeze's rule says for a part that is not frozen (models/net.py, set_train_mode);
- the optimizer, over the new trainable set: the state of parameters that trained before (momentum,
  Adam's moments) and the update count (the learning-rate schedule's position) carry over; newly
  trainable parameters start with empty state, as they would in a new optimizer;
- the compiled step (a new cell, so MindSpore compiles the graph with the new cuts).

Schedule: the freeze in effect in epoch E is that of the last entry with `epoch <= E`, else
model.freeze. A resumed run applies the rule of the checkpoint's own epoch before it loads the
checkpoint (so the optimizer state fits), then the loop applies later entries as they come.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..data.folder import DataError
from ..models.backbones import freeze_values, frozen_parts, parts_of
from ..spec_types import RunSpec


def freeze_for(model: dict[str, Any], epoch: int) -> str:
    rule = model["freeze"]
    for entry in model.get("unfreeze") or []:
        if entry["epoch"] <= epoch:
            rule = entry["freeze"]
    return str(rule)


@dataclass(frozen=True)
class OrderIssue:
    """A model.unfreeze step out of order: `field` "epoch" (not after the step before) or "freeze" (freezes
    more than the rule before it). `previous` is that rule's path (model.freeze or model.unfreeze[j]) and
    `previous_epoch`/`previous_freeze` its values (epoch 1 for model.freeze); `allowed` the freeze values of
    the backbone that freeze no more than it."""

    index: int
    field: str
    epoch: int
    freeze: str
    previous: str
    previous_epoch: int
    previous_freeze: str
    allowed: tuple[str, ...]


def order_issues(freeze: str, entries: Sequence[Mapping[str, Any]], backbone: str) -> list[OrderIssue]:
    """Every step of `entries` (model.unfreeze) that does not come in a later epoch than the step before
    it, or that freezes more than it (model.freeze before the first step): the spec check's problems and
    the run's guard, one rule. A step out of order is skipped, so the next is held to the last good one.
    Raises ValueError for a stage `backbone` lacks (the spec check reports those of its own)."""
    issues: list[OrderIssue] = []
    prev_path, prev_epoch, prev_rule = "model.freeze", 1, freeze
    prev = frozen_parts(freeze, backbone)
    for i, e in enumerate(entries):
        now = frozen_parts(e["freeze"], backbone)
        field = "epoch" if e["epoch"] <= prev_epoch else "freeze" if now > prev else None
        if field is None:
            prev_path, prev_epoch, prev_rule, prev = f"model.unfreeze[{i}]", e["epoch"], e["freeze"], now
            continue
        allowed = tuple(v for v in freeze_values(backbone) if frozen_parts(v, backbone) <= prev)
        issues.append(OrderIssue(i, field, e["epoch"], e["freeze"], prev_path, prev_epoch, prev_rule, allowed))
    return issues


def check(spec: RunSpec) -> None:
    """Entries in increasing epochs, each freezing no more than the one before; no feature cache. The spec
    check (spec.py) refuses a schedule out of order already; this guards a spec that did not pass there
    (a spec.json edited by hand, a sweep's trial)."""
    m = spec["model"]
    entries = m.get("unfreeze") or []
    if not entries:
        return
    if spec["train"].get("cache_features"):
        raise DataError(
            "model.unfreeze",
            "unfreezing trains backbone parts, but train.cache_features trains the head on fixed features",
            "remove model.unfreeze, or set train.cache_features to false",
            "cache_features_unfreeze",
        )
    for issue in order_issues(m["freeze"], entries, m["backbone"])[:1]:
        i = issue.index
        raise DataError(
            f"model.unfreeze[{i}]",
            f"entry {i} (epoch {issue.epoch}, freeze {issue.freeze!r}) must come after epoch {issue.previous_epoch} "
            "and freeze no more than the rule before it",
            "list the steps in increasing epochs, each unfreezing more (e.g. backbone, then up_to:layer3, then none)",
            "unfreeze_out_of_order",
            index=i,
            epoch=issue.epoch,
            freeze=issue.freeze,
            previous_epoch=issue.previous_epoch,
        )


def apply(tr: Any, epoch: int) -> dict[str, Any] | None:
    """Make the trainable set the one `epoch` should have (Trainer `tr`); the unfreeze event's fields
    when it changed, else None."""
    from ..models.net import unfrozen_params

    rule = freeze_for(tr.spec["model"], epoch)
    backbone = tr.spec["model"]["backbone"]
    new, old = frozen_parts(rule, backbone), tr.net.frozen_upto
    if new == old:
        return None
    for p in unfrozen_params(tr.net, new, old):  # not BatchNorm's statistics, nor the model's constants
        p.requires_grad = True
    tr.net.frozen_upto = new
    _rebuild_optimizer(tr)
    tr.build_step()  # compiles anew with the new cuts, and sets the BatchNorm modes
    return {
        "epoch": epoch,
        "step": tr.step,
        "freeze": rule,
        "unfrozen": [name for name, _ in parts_of(backbone)[new:old]],
        "trainable_params": len(tr.net.trainable_params()),
    }


def _rebuild_optimizer(tr: Any) -> None:
    """A new optimizer over the trainable set, with the old one's state where names match."""
    from .param_groups import build_optimizer

    old = {p.name: p for p in tr.optimizer.get_parameters()}
    tr.optimizer = build_optimizer(tr.spec["train"], tr.net.trainable_params(), tr.lrs, tr.spec["model"]["backbone"])
    for p in tr.optimizer.get_parameters():
        if p.name in old and tuple(old[p.name].shape) == tuple(p.shape) and not p.name.startswith("learning_rate"):
            p.set_data(old[p.name].data.copy())
