"""The health verdict of a run: what its recorded events say about the training, beside its status.

A run can complete and still have learned nothing: the loss climbed, most updates were skipped by
loss scaling, the accuracy sits at chance. `run_finished` and status.json carry
`health: {"verdict": "healthy" | "problems", "reasons": [...]}`; each reason has a stable `code`,
an English `message` and `fix`, and named parameters (the numbers in the message), so a reader can
word it in another language from the code and the parameters alone.

One topic, kept whole (over 450 lines): every rule beside its English message and fix, so a rule and
its advice change together.

Pure: `judge` looks only at a `RunRecord` (the spec, and the steps and evals the run recorded) and
the run's status and error. `record_events` builds that record from the run's events.jsonl, which
the run reads once at its end (`judge_log`). The log holds every process of the run: a resume
continues it, and the record then drops the steps after the resumed checkpoint that the resume redid.

The reasons and their thresholds (docs/protocol.md, `run_finished`):

- `run_failed`: the run failed; its error says why.
- `nonfinite_steps`: at least one step had a NaN or Inf loss.
- `loss_rose`: the median train loss of the last window of steps is above LOSS_RISE_RATIO times (and
  LOSS_RISE_MIN above) the median of the first window. The window is a fifth of the finite-loss
  steps, from 3 to 50; medians, so a single spike does not count. Needs MIN_TREND_STEPS such steps.
- `updates_skipped`: more than SKIPPED_SHARE of the steps overflowed under loss scaling (their
  update was skipped). Needs MIN_SKIP_STEPS steps. A sink's event counts its steps (`overflows`).
- `frozen_random_backbone`: the pre-flight rule (frozen layers, no pretrained weights).
- `chance_level`: the best val accuracy is at most chance + margin. Chance is 1/num_classes, or the
  share of the validation set's largest class when that is larger (a model that always answers that
  class gets it). The margin is CHANCE_SIGMAS standard errors of a guesser's accuracy on that many
  images, sqrt(chance * (1 - chance) / num_val), and at least MIN_CHANCE_MARGIN. Not judged when
  the validation set is too small (below), which says so instead.
- `fits_train_only`: beside `chance_level`, when the training loss fell: the median of the last
  window of steps is at most LOSS_FELL_RATIO times that of the first (the windows of `loss_rose`)
  and times ln(num_classes), the loss of a uniform guess (a loss falling from 40 to ln k learnt
  only to guess).
  The network learns its training images and evaluation does not show it: in eval mode BatchNorm
  uses moving statistics that lag in a short run from random weights (mindcv's MnasNet-0.5 at 64 px
  gave one class for every image after 160 steps, 0.58 on its own training images with batch
  statistics), or the validation images differ from the training ones.
- `val_fell`: the best evaluation's accuracy is above the last one's by more than MIN_FALL and by more
  than FALL_SIGMAS standard errors of the difference of two accuracies on that many images,
  sqrt((best * (1 - best) + last * (1 - last)) / num_val). The best is the checkpoint the run stars
  (EMA weights included, `_val_fell`). Judged only where `chance_level` is not (a best at chance is
  not a best to fall from) and the validation set is large enough. The run ended on weights worse
  than the ones it had: the Runs view's rows and the notification show the best accuracy, so
  without this the fall shows only on the charts (mindcv's MobileViT-S at a constant 5e-4: 0.94
  after epoch 7, 0.43 after epoch 8, its training loss rising at the end).
- `val_too_small`: fewer than MIN_VAL_IMAGES validation images, or fewer than MIN_VAL_PER_CLASS in
  one class. At 20 images one image moves the accuracy by 5 points and the chance margin for 4
  classes is +-19 points; a class with fewer than 5 images has a per-class accuracy in steps of 20
  points or more. The fix is worked out from the spec (`_val_fix`): a larger data.val_split, up to
  MAX_SUGGESTED_SPLIT, else the images a class needs, or, with data.val, that folder.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..checkpoints.manifest import best_rank
from ..data.folder import held_out
from .preflight import frozen_random_backbone

MIN_TREND_STEPS = 6
LOSS_RISE_RATIO = 1.5
LOSS_RISE_MIN = 0.1
LOSS_FELL_RATIO = 0.7
SKIPPED_SHARE = 0.5
MIN_SKIP_STEPS = 4
CHANCE_SIGMAS = 2.0
MIN_CHANCE_MARGIN = 0.02
MIN_VAL_IMAGES = 20
MIN_VAL_PER_CLASS = 5
MIN_FALL = 0.1
FALL_SIGMAS = 3.0  # a wider bar than chance's: a dip between two good epochs is not a problem
MAX_SUGGESTED_SPLIT = 0.3  # beyond it, holding out more costs the training set too much: add images


@dataclass
class Step:
    step: int
    loss: float | None  # None: NaN or Inf
    # updates skipped because loss scaling overflowed: 0 or 1 for a step, up to `n` for a sink
    overflow_skipped: int
    n: int = 1  # steps the event covers (a sink's first_step..step)


@dataclass
class Eval:
    step: int
    val_acc: float
    val_loss: float | None
    epoch: int | None = None
    ema_acc: float | None = None  # with train.ema: the EMA weights' evaluation, saved as their own checkpoint
    ema_loss: float | None = None


@dataclass
class RunRecord:
    """What the run recorded that the verdict looks at."""

    spec: Mapping[str, Any]  # a RunSpec, or a spec that failed validation (cli's bad_spec run): read with .get
    num_classes: int | None = None
    num_val: int | None = None
    steps: list[Step] = field(default_factory=list)
    evals: list[Eval] = field(default_factory=list)
    # validation images per class: the row sums of an eval's confusion matrix with no NaN logits
    # (an image with NaN logits is in no cell); the validation set is the same at every eval
    class_counts: list[int] | None = None

    def add(self, ev: dict[str, Any]) -> None:
        t = ev.get("type")
        if t == "run_started":
            resumed = ev.get("resumed_from")
            at = resumed.get("step") if isinstance(resumed, dict) else None
            if isinstance(at, int):  # a resume redoes the steps after its checkpoint
                self.steps = [s for s in self.steps if s.step <= at]
                self.evals = [e for e in self.evals if e.step <= at]
            else:  # a new run in a used directory: only this one counts
                self.steps, self.evals, self.class_counts = [], [], None
            classes, num_val = ev.get("classes"), ev.get("num_val")
            self.num_classes = len(classes) if isinstance(classes, list) else None
            self.num_val = num_val if isinstance(num_val, int) else None
        elif t == "step" and isinstance(ev.get("step"), int):
            loss = ev.get("loss")
            value = float(loss) if isinstance(loss, (int, float)) and math.isfinite(loss) else None
            self.steps.append(_step(ev, value))
        elif t == "eval" and isinstance(ev.get("val_acc"), (int, float)):
            conf = ev.get("confusion")
            if not ev.get("nonfinite") and isinstance(conf, list) and all(isinstance(r, list) for r in conf):
                self.class_counts = [int(sum(x for x in r if isinstance(x, (int, float)))) for r in conf]
            ema = ev.get("ema")
            ema = ema if isinstance(ema, dict) else {}
            self.evals.append(
                Eval(
                    int(ev.get("step") or 0),
                    float(ev["val_acc"]),
                    _finite(ev.get("val_loss")),
                    ev["epoch"] if isinstance(ev.get("epoch"), int) and not isinstance(ev["epoch"], bool) else None,
                    _finite(ema.get("val_acc")),
                    _finite(ema.get("val_loss")),
                )
            )


def _finite(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _count(v: Any, n: int) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= n else None


def _step(ev: dict[str, Any], loss: float | None) -> Step:
    """A step event as the verdict counts it. A sink's event (first_step < step) carries its steps'
    `overflows` and `skipped_updates`; an overflow always skips its update, so the smaller of the
    two is the overflow-skipped count. Without them (one step, or an older runner's sink) the event
    counts as one step with its last step's flags, as before."""
    first = ev.get("first_step")
    n = ev["step"] - first + 1 if isinstance(first, int) and 0 < first <= ev["step"] else 1
    overflows, skipped = _count(ev.get("overflows"), n), _count(ev.get("skipped_updates"), n)
    if n > 1 and overflows is not None:
        return Step(ev["step"], loss, min(overflows, n if skipped is None else skipped), n)
    return Step(ev["step"], loss, int(bool(ev.get("overflow")) and bool(ev.get("skipped"))))


def record_events(spec: Mapping[str, Any], events: Iterable[dict[str, Any]]) -> RunRecord:
    rec = RunRecord(spec)
    for ev in events:
        if isinstance(ev, dict):
            rec.add(ev)
    return rec


def _stream(path: str) -> Iterable[dict[str, Any]]:
    """The log's complete lines, decoded one at a time (a long run's log is not held in memory);
    a torn last line or one that does not decode is passed over."""
    try:
        f = open(path, "rb")
    except OSError:
        return
    with f:
        try:
            for line in f:
                if not line.endswith(b"\n"):
                    break
                try:
                    yield json.loads(line)
                except ValueError:
                    continue
        except OSError:  # a read error part-way: judge what was read
            return


def _reason(code: str, message: str, fix: str, **params: Any) -> dict[str, Any]:
    return {"code": code, "message": message, "fix": fix, **params}


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _val_size(rec: RunRecord) -> tuple[int | None, int | None]:
    """(validation images, images of its smallest class), each None when not recorded."""
    counts = rec.class_counts
    num_val = rec.num_val if rec.num_val is not None else (sum(counts) if counts else None)
    return num_val, (min(counts) if counts else None)


def _val_fix(
    spec: Mapping[str, Any], num_val: int, smallest: int | None, classes: int | None
) -> tuple[str, dict[str, Any]]:
    """`val_too_small`'s fix and its parameters, from how the run chose its validation set, counted with
    the split's own rounding (data.folder.held_out). With data.val: that folder's needs. With no split:
    set one. Else the smallest data.val_split, in steps of 0.05 up to MAX_SUGGESTED_SPLIT, that holds
    out enough of a class as small as the smallest one here can be; if none does (or that class held
    out nothing), the images a class needs at this split. A fixed "raise it to 0.2" was wrong advice
    for a run already at 0.2."""
    data = spec.get("data") if isinstance(spec, Mapping) else None
    data = data if isinstance(data, Mapping) else {}
    split = data.get("val_split")
    folder = (
        f"point data.val at a folder with at least {MIN_VAL_PER_CLASS} images per class and {MIN_VAL_IMAGES} in all"
    )
    params: dict[str, Any] = {
        "val_from": "folder",
        "val_split": None,
        "suggested_split": None,
        "images_per_class": None,
    }
    if data.get("val") or isinstance(split, bool) or not isinstance(split, (int, float)) or not 0 <= split < 1:
        return folder[0].upper() + folder[1:] + ".", params
    params.update(val_from="split", val_split=split)
    if split == 0:
        return f"Set data.val_split (0.2 holds out a fifth of data.train), or {folder}.", params
    k = classes or 1
    # the smallest class: what it held out, else (no eval recorded) an even share
    least = smallest if smallest is not None else num_val // k

    def enough(n: int, f: float) -> bool:
        return held_out(n, f) >= MIN_VAL_PER_CLASS and k * held_out(n, f) >= MIN_VAL_IMAGES

    # the fewest images that class can have had to hold out `least` (a class of one holds out none)
    n_min = next((n for n in range(1, 100_000) if held_out(n, split) >= least), 1)
    steps = [s / 20 for s in range(1, int(MAX_SUGGESTED_SPLIT * 20) + 1) if s / 20 > split]
    need = next((f for f in steps if least > 0 and enough(n_min, f)), None)
    if need is not None:
        params["suggested_split"] = need
        return f"Raise data.val_split from {split:g} to {need:g}, or {folder}.", params
    per = next((n for n in range(2, 100_000) if enough(n, split)), None)
    if per is None:  # a split so small no plausible class holds out enough
        return f"Raise data.val_split, or {folder}.", params
    params["images_per_class"] = per
    return (
        f"Add images: at data.val_split {split:g} a class needs about {per} for enough of them to be held out "
        f"for validation; or {folder}.",
        params,
    )


def _val_fell(rec: RunRecord, num_val: int) -> dict[str, Any] | None:
    """`val_fell` when the last evaluation is clearly below the best. The best is the checkpoint the run
    stars (checkpoints.manifest.best_rank, the order mark_best follows), among the raw and, with
    train.ema, the EMA weights' evaluations; the last is the better of the two at the last evaluation,
    both of which the run saved."""
    # (val_acc, val_loss, eval, ema?) in the order the run saves them: the raw weights, then the EMA's
    scored = [(e.val_acc, e.val_loss, e, False) for e in rec.evals]
    scored += [(e.ema_acc, e.ema_loss, e, True) for e in rec.evals if e.ema_acc is not None]
    scored.sort(key=lambda s: (s[2].step, s[3]))
    acc, _, top, top_ema = max(scored, key=lambda s: best_rank(s[0], s[1], s[2].step))
    last = rec.evals[-1]
    end_acc = max(last.val_acc, last.ema_acc if last.ema_acc is not None else -1.0)
    fall = acc - end_acc
    noise = FALL_SIGMAS * math.sqrt((acc * (1 - acc) + end_acc * (1 - end_acc)) / num_val)
    if fall <= max(MIN_FALL, noise):
        return None
    ckpt = rec.spec.get("checkpoint")
    keep_best = not isinstance(ckpt, Mapping) or ckpt.get("keep_best", True) is not False
    train = rec.spec.get("train")
    schedule = train.get("lr_schedule", "constant") if isinstance(train, Mapping) else "constant"
    schedule = schedule if isinstance(schedule, str) else "constant"
    at = f"epoch {top.epoch}" if top.epoch is not None else f"step {top.step}"
    at += " with the EMA weights" if top_ema else ""
    end = f"epoch {last.epoch}" if last.epoch is not None else f"step {last.step}"
    kept = (
        f"Use the best checkpoint, {at} (starred), not the last."
        if keep_best
        else f"checkpoint.keep_best is off, so the checkpoint of {at} may have been deleted: turn it on."
    )
    # a cosine schedule ends at a low rate; early stopping would not help (it ends after the best, on
    # weights no better, and restores nothing)
    settle = (
        'lower train.lr (try a third) or set train.lr_schedule to "cosine", which lowers the rate towards the end'
        if schedule == "constant"
        else "lower train.lr (try a third)"
    )
    return _reason(
        "val_fell",
        f"The validation accuracy fell from its best, {acc:.1%} at {at}, to {end_acc:.1%} at the last "
        f"evaluation ({end}): the run ended on worse weights than it had.",
        f"{kept} To end on the best, {settle}.",
        best_val_acc=acc,
        last_val_acc=end_acc,
        best_epoch=top.epoch,
        best_step=top.step,
        best_ema=top_ema,
        last_epoch=last.epoch,
        last_step=last.step,
        noise=noise,
        num_val=num_val,
        keep_best=keep_best,
        lr_schedule=schedule,
    )


def judge(rec: RunRecord, status: str, error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The verdict: `{"verdict": "healthy" | "problems", "reasons": [...]}` (order: most severe first)."""
    reasons: list[dict[str, Any]] = []
    if status == "failed":
        err = error or {}
        kind = str(err.get("kind") or "error")
        reasons.append(
            _reason(
                "run_failed",
                f"The run failed ({kind}): {err.get('message') or 'see its error'}",
                str(err.get("fix") or "Read the run's error, fix its cause and start the run again."),
                kind=kind,
                # the error's own words (English, from the exception), for a reworded reason to quote
                error=str(err.get("message") or ""),
                error_fix=str(err["fix"]) if err.get("fix") else None,
                # its code and parameters (docs/protocol.md, "Errors"), for the error to be worded too
                error_code=str(err["code"]) if err.get("code") else None,
                error_params=err["params"] if isinstance(err.get("params"), dict) else None,
            )
        )
    steps = rec.steps
    bad = sum(s.loss is None for s in steps)
    if bad:
        reasons.append(
            _reason(
                "nonfinite_steps",
                f"{bad} of {len(steps)} steps had a NaN or Inf loss; their updates were skipped.",
                "Lower train.lr (try a tenth), and check the data and model.pretrained.",
                count=bad,
                steps=len(steps),
            )
        )
    finite = [s for s in steps if s.loss is not None]
    losses = [s.loss for s in finite if s.loss is not None]
    trend = None  # (window, median loss of the first window, of the last, and the steps each covers)
    if len(losses) >= MIN_TREND_STEPS:
        w = min(50, max(3, len(losses) // 5))
        early, late = _median(losses[:w]), _median(losses[-w:])
        # the window counts step events; a sink's event stands for its `n` steps
        span = {"window": w, "first_steps": sum(s.n for s in finite[:w]), "last_steps": sum(s.n for s in finite[-w:])}
        trend = (early, late, span)
        if late > early * LOSS_RISE_RATIO and late - early > LOSS_RISE_MIN:
            reasons.append(
                _reason(
                    "loss_rose",
                    f"The training loss rose over the run: median {early:.4g} over the first {span['first_steps']} "
                    f"steps, {late:.4g} over the last {span['last_steps']}.",
                    "Lower train.lr (try a tenth) or add train.warmup_steps; the run diverged instead of learning.",
                    early_loss=early,
                    late_loss=late,
                    **span,
                    steps=len(losses),
                )
            )
    # every step counts, a sink's inside ones too
    skipped, ran = sum(s.overflow_skipped for s in steps), sum(s.n for s in steps)
    if ran >= MIN_SKIP_STEPS and skipped > SKIPPED_SHARE * ran:
        reasons.append(
            _reason(
                "updates_skipped",
                f"{skipped} of {ran} updates were skipped because the scaled gradients overflowed "
                f"({skipped / ran:.0%}): the model learned from the other steps only.",
                "Lower amp.init_scale (for example to 1024); on CPU, set amp.level to O0, which needs no "
                "loss scaling (fp16 is not faster there).",
                skipped=skipped,
                steps=ran,
                share=skipped / ran,
            )
        )
    model = rec.spec.get("model")
    model = model if isinstance(model, dict) else {}
    if frozen_random_backbone(model):
        reasons.append(
            _reason(
                "frozen_random_backbone",
                f"model.freeze is {model['freeze']!r} but model.pretrained is null: the frozen layers kept "
                "their random initial weights, so only the head learned, on random features.",
                'Set model.pretrained to a checkpoint, or model.freeze to "none" to train every layer.',
                freeze=model["freeze"],
            )
        )
    num_val, smallest = _val_size(rec)
    too_small = num_val is not None and (
        num_val < MIN_VAL_IMAGES or (smallest is not None and smallest < MIN_VAL_PER_CLASS)
    )
    k = rec.num_classes or len(rec.class_counts or [])
    if rec.evals and not too_small and num_val and k >= 2:
        best = max(e.val_acc for e in rec.evals)
        counts = rec.class_counts
        chance = max(1 / k, max(counts) / num_val if counts else 0.0)
        margin = max(MIN_CHANCE_MARGIN, CHANCE_SIGMAS * math.sqrt(chance * (1 - chance) / num_val))
        if best <= chance + margin:
            reasons.append(
                _reason(
                    "chance_level",
                    f"The best validation accuracy, {best:.1%}, is within {margin:.1%} of chance "
                    f"({chance:.1%} for {k} classes on {num_val} images): the model did not learn to "
                    "tell the classes apart.",
                    "Check that each class folder holds only its own class's images, give a frozen backbone "
                    "pretrained weights, or train longer or with another train.lr.",
                    best_val_acc=best,
                    chance=chance,
                    margin=margin,
                    num_classes=k,
                    num_val=num_val,
                )
            )
            # below a uniform guess's loss (ln k) too: from 40 down to ln k the network learnt only to guess
            if trend and trend[1] <= LOSS_FELL_RATIO * min(trend[0], math.log(k)):
                early, late, span = trend
                reasons.append(
                    _reason(
                        "fits_train_only",
                        f"The training loss fell (median {early:.4g} over the first {span['first_steps']} steps, "
                        f"{late:.4g} over the last {span['last_steps']}) while the validation accuracy stayed at "
                        "chance: the network fits its training images, but not in evaluation.",
                        "In evaluation, BatchNorm layers use their moving statistics, which lag behind in a short "
                        "run from random weights (mindcv's MnasNet and Inception update them slowly): train "
                        "longer or start from pretrained weights. Check too that data.val holds the same "
                        "classes, prepared like the training images.",
                        early_loss=early,
                        late_loss=late,
                        **span,
                        best_val_acc=best,
                    )
                )
        else:
            fell = _val_fell(rec, num_val)
            if fell:
                reasons.append(fell)
    if too_small:
        assert num_val is not None
        fix, fix_params = _val_fix(rec.spec, num_val, smallest, rec.num_classes)
        per = f", {smallest} in its smallest class" if smallest is not None else ""
        reasons.append(
            _reason(
                "val_too_small",
                f"The validation set has {num_val} images{per}: too few to judge the accuracy "
                f"(at least {MIN_VAL_IMAGES}, and {MIN_VAL_PER_CLASS} per class).",
                fix,
                num_val=num_val,
                smallest_class=smallest,
                min_val=MIN_VAL_IMAGES,
                min_per_class=MIN_VAL_PER_CLASS,
                **fix_params,
            )
        )
    return {"verdict": "problems" if reasons else "healthy", "reasons": reasons}


def judge_log(path: str, spec: Mapping[str, Any], status: str, error: dict[str, Any] | None) -> dict[str, Any]:
    """The verdict of the run whose events are at `path` (events.jsonl), read once, line by line."""
    return judge(record_events(spec, _stream(path)), status, error)
