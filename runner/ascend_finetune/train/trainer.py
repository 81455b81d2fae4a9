"""The trainer: a resolved spec turned into data, model, AMP, optimizer and compiled steps, plus
eval and resume. The step loop and the run directory's contract are run.py's (`Run`).

Above the ~450-line mark on purpose: its parts share one object's state (the net, the optimizer
rebuilt by unfreezing, the compiled step rebuilt with it, the step count that resume, sinks and
the knobs move), and each knob already lives in its own module (param_groups, accumulate,
unfreeze, knobs, loss), as do the weights it starts from (weights_setup); what is left here is the
wiring between them.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..checkpoints.errors import PretrainedError
from ..checkpoints.scoring import Tally
from ..data import augment
from ..data.folder import DataError
from ..data.pipeline import make_dataset
from ..data.plan import PLAN_FILE, plan_data
from ..data.sampling import balanced_epoch
from ..device.backend import resolve_target, sink_notes, sink_size_for
from ..distributed.strategy import StepStop, join
from ..distributed.world import RANKS_DIR, RankInfo, device_id, local_ranks
from ..rundir import atomic_write_json
from ..spec_types import RunSpec, TrainSpec
from . import param_groups, preflight, unfreeze
from .knobs import Knobs
from .loss import class_counts, make_loss
from .steps import HOST_SINK_ENV, DataWaitMonitor, build_sink, host_sink, normalized, run_step_cell
from .weights_setup import (
    PREPROCESS_FILE,
    StartingWeights,
    check_unchanged,
    checkpoint_lineage,
    read_preprocess_file,
    recorded_weights,
    run_preprocess,
    starting_weights,
)

MAX_INLINE_CLASSES = 256  # above this, eval's confusion matrix goes to a file beside the events


class NonFiniteLoss(Exception):
    """The loss stayed NaN or Inf: `params` are the consecutive `steps` and the last `step`."""

    def __init__(self, message: str, **params: int):
        super().__init__(message)
        self.params = params


def lr_per_step(t: TrainSpec, total_steps: int) -> list[float]:
    """The learning rate of every step (1-based step s is index s-1): schedule after linear warm-up."""
    base, warm = float(t["lr"]), int(t["warmup_steps"])
    out = []
    for i in range(total_steps):
        if i < warm:
            out.append(base * (i + 1) / warm)
            continue
        k, n = i - warm, max(1, total_steps - warm)
        if t["lr_schedule"] == "cosine":
            out.append(0.5 * base * (1 + math.cos(math.pi * k / n)))
        elif t["lr_schedule"] == "step":
            size = t["lr_step_size"] or max(1, n // 3)
            out.append(base * float(t["lr_step_gamma"]) ** (k // size))
        else:
            out.append(base)
    return out


class Trainer:
    def __init__(
        self,
        spec: RunSpec,
        run_dir: str,
        warnings: list[dict[str, Any]],
        rank: RankInfo | None = None,
        resume: str | None = None,
        emit: Callable[..., object] | None = None,
    ):
        """`rank`: this process's rank when msrun started it as one of several, else None. `resume`: the
        checkpoint `resume()` will load (its recorded preprocessing and weights' lineage are kept; model.pretrained
        is not read). `emit`: the event log's, for the `setup` events of a download during set-up (before
        `run_started`)."""
        # MindSpore (and what builds on it) loads here, not at import: the CLI imports this package
        # for commands that must start without it.
        import mindspore as ms

        from ..models import amp as ampmod
        from ..models.net import BackboneFeatures, TransferNet, apply_freeze, frozen_parts, set_train_mode

        self.spec, self.run_dir = spec, run_dir
        # Warnings found while setting up; the run writes them right after run_started, so that
        # readers always meet run_started first.
        self.warnings = warnings
        m, t = spec["model"], spec["train"]
        self.target, fallback = resolve_target(spec["device"]["target"])
        if fallback:
            self.warn("ascend_unavailable", fallback, {"requested": "auto"})
        ms.set_context(mode=ms.GRAPH_MODE)
        self.rank = rank
        self.world = rank.size if rank else 1
        if not rank:  # before this run takes device memory
            self.warnings.extend(preflight.device_warnings(spec, self.target))
        elif rank.rank == 0:  # node 0's launcher checked its NPUs before msrun started any rank
            found = preflight.read_node_warnings(os.path.join(run_dir, RANKS_DIR), 0)
            self.warnings.extend(preflight.device_warnings(spec, self.target) if found is None else found)
        ms.set_device(self.target, device_id(spec, self.target, rank))
        if rank:
            join(rank)
        ms.set_seed(t["seed"])

        # Data: the same plan (scan, split, steps, skipped files) as the pre-flight report's
        # A rank reads the scan its launcher verified before msrun started (distributed/launcher.py).
        plan_file = os.path.join(run_dir, RANKS_DIR, PLAN_FILE) if rank else None
        plan = plan_data(
            spec,
            self.world,
            self.warnings,
            num_classes=m["num_classes"],
            plan_file=plan_file,
            ranks_per_node=local_ranks(spec),
        )
        self.workers = plan.workers
        self.classes = plan.classes
        self.train_samples, self.val_samples = plan.train_samples, plan.val_samples
        self.steps_per_epoch, self.total_steps = plan.steps_per_epoch, plan.total_steps
        self.accumulate = int(t.get("accumulate_steps", 1))
        if self.accumulate > 1:  # a step is an update of `accumulate` micro-batches (accumulate.py)
            from .accumulate import updates_per_epoch

            self.steps_per_epoch = updates_per_epoch(plan.steps_per_epoch, self.accumulate)
            self.total_steps = self.steps_per_epoch * t["epochs"]
        self.global_batch = spec["data"]["batch_size"] * self.world * self.accumulate  # images per update
        atomic_write_json(os.path.join(run_dir, "classes.json"), self.classes)

        # Model
        unfreeze.check(spec)
        self.frozen_upto = frozen_parts(m["freeze"], m["backbone"])
        # The backbone's layout follows the pretrained file's origin (ModelZoo pads and normalises
        # otherwise than mindcv and the runner: models/net.py); checkpoints record it (store.py).
        start = starting_weights(spec, resume, emit)
        variant, origin = start.variant, start.origin
        # The evaluation resize and the normalisation the weights expect (models/preprocess.py);
        # checkpoints record them. A rank takes what its launcher resolved for the node.
        launched = read_preprocess_file(os.path.join(run_dir, RANKS_DIR, PREPROCESS_FILE)) if rank else None
        launched_identity = None  # the weights file the launcher resolved the preprocessing from
        if launched is not None:
            self.preprocess, warnings, launched_identity = launched
            self.warnings.extend(warnings)
        else:
            with start.named():
                self.preprocess = run_preprocess(spec, origin, resume, self.warn, start.read_path)
        head_norm = m.get("head_norm", "auto")
        if resume and head_norm == "auto":  # as the run resolved it (a run from before head_norm: none)
            from ..checkpoints.errors import ToolError
            from ..checkpoints.format import read_index
            from ..models.net import head_norm_in

            try:
                head_norm = head_norm_in(read_index(resume).tensors)
            except ToolError:
                pass  # resume() says what is wrong with the file
        self.net = TransferNet(m["backbone"], len(self.classes), self.frozen_upto, variant, head_norm)
        self.load_report: Any = None  # models.pretrained.LoadReport once weights are loaded
        # run_started's `pretrained`; resumed: the weights' lineage the resumed checkpoint recorded
        self.pretrained_info = recorded_weights(resume, m["pretrained"], origin) if resume else None
        try:
            self._load_weights(start, launched_identity)
        finally:
            start.close()
        apply_freeze(self.net)
        set_train_mode(self.net, True)
        self.amp_plan = ampmod.plan(spec["amp"], self.target)
        for code, msg in self.amp_plan.notes:
            self.warn(code=code, message=msg, details={})
        self.model = ampmod.apply_level(self.net, self.amp_plan.level)

        # Optimizer, schedule, loss scaling, compiled steps
        self.lrs = lr_per_step(t, self.total_steps)
        self.optimizer = param_groups.build_optimizer(t, self.net.trainable_params(), self.lrs, m["backbone"])
        self.scaler = ampmod.make_scaler(spec["amp"], self.amp_plan.loss_scale)
        # Not the recipe's SoftmaxCrossEntropyWithLogits: its CPU kernel returns inf once a logit passes
        # ~88 (exp overflows in fp32). nn.CrossEntropyLoss (log-softmax first) with the spec's label
        # smoothing and class weights (train/loss.py); mixup/cutmix's soft label rows go in as they are.
        self.loss_fn = make_loss(t, class_counts(self.train_samples, len(self.classes)))
        self.features = None
        if t.get("cache_features"):
            # Train the head on backbone features computed once (feature_cache.py); the compiled
            # steps then see only the head.
            if m["freeze"] != "backbone":
                raise DataError(
                    "train.cache_features",
                    f"cache_features needs a frozen backbone, but model.freeze is "
                    f"{m['freeze']!r}: the features would change every step",
                    "set model.freeze to backbone, or train.cache_features to false",
                    "cache_features_unfrozen",
                    freeze=m["freeze"],
                )
            if augment.mixes(spec["data"]["mixup"], spec["data"]["cutmix"]):
                raise DataError(
                    "data.mixup",
                    "mixup and cutmix mix images, but train.cache_features trains on features computed once",
                    "set data.mixup and data.cutmix to 0, or train.cache_features to false",
                    "cache_features_mixup",
                )
            if spec["data"].get("sampling") == "balanced":
                raise DataError(
                    "data.sampling",
                    "balanced sampling draws other images each epoch; the feature cache trains on fixed ones",
                    'set data.sampling to shuffle (and weigh the loss with train.class_weights: "auto"), '
                    "or train.cache_features to false",
                    "cache_features_balanced",
                )
            from .feature_cache import FeatureCache

            self.backbone_features = ampmod.build_eval_step(BackboneFeatures(self.net))
            self.features = FeatureCache(self, t.get("cache_views", 1))
        stepped = self.net.head if self.features else self.model
        # Images come as uint8 and are normalised in the graph (data/pipeline.py, on_device): the
        # feature cache's batches are features already.
        self.normalize_on_device = not self.features
        if self.normalize_on_device:
            stepped = normalized(stepped, self.preprocess.mean, self.preprocess.std)
        self.stepped = stepped
        self._set_train_mode = set_train_mode
        self.build_step()
        self.eval_logits = ampmod.build_eval_step(stepped)
        # Ascend feeds the step through the device queue (build_sink); CPU has none (data_sink raises
        # there) and the feature cache's batches are host arrays: both loop in Python, step by step.
        # Tests of the sink path on CPU put host_sink in the device queue's place (HOST_SINK_ENV).
        on_host = self.target == "CPU" and os.environ.get(HOST_SINK_ENV) == "1"
        self._data_sink = host_sink if on_host else None
        sink_target = "Ascend" if on_host else self.target
        self.sinks = bool(spec["sink"]["enabled"]) and sink_target == "Ascend" and not self.features
        notes = sink_notes(spec["sink"], sink_target, self.steps_per_epoch, bool(self.features))
        if self.sinks and self.accumulate > 1:  # accumulation loops over its micro-batches in Python
            self.sinks = False
            notes = [
                (
                    "sink_unavailable",
                    f"dataset sink mode is not used with train.accumulate_steps {self.accumulate}: the micro-batches "
                    "of an update are fed from the host, step by step, one step event per update; set "
                    "train.accumulate_steps to 1 (with a larger data.batch_size, if it fits) to train in sinks",
                    {"cause": "accumulate", "accumulate_steps": self.accumulate},
                )
            ]
        for code, msg, params in notes:
            self.warn(code=code, message=msg, details={"sink": spec["sink"], "target": self.target, **params})
        self.warnings.extend(preflight.run_warnings(spec, self.total_steps, self.steps_per_epoch, self.target))
        self.sink_size = int(spec["sink"]["size"]) if self.sinks else 1
        self.prefetch = spec["data"].get("prefetch") or max(16, 2 * self.sink_size)
        self.data_monitor = DataWaitMonitor(self.workers, spec["data"]["image_size"], bool(self.features))
        self.step = 0  # global steps done
        # Updates applied so far: the optimizer's schedule index, which skipped (overflow) steps do
        # not advance, as in MindSpore's own loss-scale cell.
        self.applied = 0
        self.knobs = Knobs(self)  # early stopping, plateau, EMA (train/knobs.py)

    def build_step(self) -> None:
        """The compiled train step over the optimizer; built again when the trainable set changes
        (unfreeze.py)."""
        from ..models import amp as ampmod

        distributed = self.rank is not None
        if self.accumulate > 1:
            from .accumulate import build_accumulating

            core, self.train_step = build_accumulating(
                self.stepped, self.loss_fn, self.optimizer, self.scaler, self.accumulate, distributed
            )
        else:
            core = self.train_step = ampmod.build_train_step(
                self.stepped, self.loss_fn, self.optimizer, self.scaler, distributed=distributed
            )
        # Distributed: the stop flag rides in the step's loss AllReduce (strategy.StepStop).
        self.step_stop = StepStop(core) if distributed else None
        # self.train_step: [loss, finite, scale, updated, correct] per call, one device read
        # (accumulating: per k batches)
        self._core_step = core
        self._run_step: Any = None  # RunStep around the same step, built by epoch_steps
        self._set_train_mode(self.net, True)  # the step's set_train(True) reached the frozen BatchNorms too

    def begin_epoch(self, epoch: int) -> dict[str, Any] | None:
        """Before `epoch`'s first step: the trainable set of model.unfreeze's schedule. The unfreeze
        event's fields when it changed, else None."""
        return unfreeze.apply(self, epoch) if self.spec["model"].get("unfreeze") else None

    def epoch_for_step(self) -> int:
        """The (1-based) epoch that the last completed step belongs to."""
        return -(-self.step // self.steps_per_epoch)

    def warn(self, code: str, message: str, details: Any) -> None:
        self.warnings.append({"code": code, "message": message, "details": details})

    # -- state --------------------------------------------------------------------------------
    def scaler_params(self) -> dict[str, Any]:
        if self.scaler is None or not hasattr(self.scaler, "counter"):
            return {"loss_scale.scale_value": self.scaler.scale_value} if self.scaler is not None else {}
        return {"loss_scale.scale_value": self.scaler.scale_value, "loss_scale.counter": self.scaler.counter}

    def _load_weights(self, start: StartingWeights, launched_identity: Any) -> None:
        """model.pretrained into the backbone, read through the descriptor starting_weights opened (so the
        bytes loaded are the bytes hashed and recorded), with run_started's `pretrained` record."""
        weights, fetched, m = start.path, start.fetched, self.spec["model"]
        if not weights:
            return
        from ..models.pretrained import load_backbone

        with start.named():  # read through the pin; its errors name the file as given
            r = load_backbone(self.net.backbone, start.read_path or weights)
        self.load_report = r
        self.pretrained_info = r.describe(weights)
        if fetched:
            self.pretrained_info.update(fetched.describe())
            mismatch = fetched.name_hash_warning()
            if mismatch:
                self.warn(**mismatch)
        else:
            from ..models.download import sha256_of

            with start.named():
                self.pretrained_info.update(source=m["pretrained"], sha256=sha256_of(start.read_path or weights))
        if start.origin == "runner":  # Fine-tune from: the weights that checkpoint grew from, as it recorded them
            parent = checkpoint_lineage(weights, start.read_path)
            if parent is not None:  # the whole chain within run_record's MAX_LINKS, its first weights kept
                from ..checkpoints.run_record import LINEAGE_KEYS, lineage

                top = {k: v for k, v in self.pretrained_info.items() if k in LINEAGE_KEYS}
                self.pretrained_info["from"] = (lineage({**top, "from": parent}) or {}).get("from", parent)
        # Not rewritten in place while it was read, and (a rank) the file its launcher resolved?
        check_unchanged(start, launched_identity)
        partial = r.partial_warning(weights)
        if partial:
            self.warn(**partial)

    def resume(self, ckpt: str) -> None:
        import mindspore as ms

        from ..checkpoints.store import load_state

        state = load_state(ckpt)
        if "step_num" in state:  # the trainable set of the checkpoint's epoch (model.unfreeze), so its state fits
            self.begin_epoch(max(1, -(-int(state["step_num"].asnumpy()) // self.steps_per_epoch)))
        # The learning rate (schedule) and momentum come from this run's spec, not the checkpoint.
        # (per-part rates: learning_rate_group_N, train/param_groups.py)
        spec_owned = {"learning_rate", "momentum"}
        params = {
            p.name: p
            for p in list(self.net.get_parameters()) + list(self.optimizer.get_parameters())
            if p.name not in spec_owned and not p.name.startswith("learning_rate_group_")
        }
        params.update(self.scaler_params())
        saved = {k: int(state[k].asnumpy()) for k in ("steps_per_epoch", "total_steps") if k in state}
        mine = {"steps_per_epoch": self.steps_per_epoch, "total_steps": self.total_steps}
        changed = {k: (v, mine[k]) for k, v in saved.items() if v != mine[k]}
        if changed:
            raise PretrainedError(
                f"{os.path.basename(ckpt)} was saved by a run with other data, batch size or epochs "
                f"({', '.join(f'{k} {a} then, {b} now' for k, (a, b) in changed.items())}): resume with "
                "the run's own spec.json, or start a new run with model.pretrained set to this file",
                "resume_plan_changed",
                file=os.path.basename(ckpt),
                changed={k: [a, b] for k, (a, b) in changed.items()},
            )
        from ..models.backbones import VARIANT_ENTRY, variant_of_code

        saved_variant = variant_of_code(int(state[VARIANT_ENTRY].asnumpy())) if VARIANT_ENTRY in state else "default"
        if saved_variant != self.net.backbone.variant:
            raise PretrainedError(
                f"{os.path.basename(ckpt)} was trained in the {saved_variant} backbone layout, this run builds "
                f"the {self.net.backbone.variant} layout (from model.pretrained): resume with the run's own spec.json",
                "resume_variant_mismatch",
                file=os.path.basename(ckpt),
                saved=saved_variant,
                built=self.net.backbone.variant,
            )
        missing = [n for n in params if n not in state]
        wrong = [n for n, p in params.items() if n in state and tuple(state[n].shape) != tuple(p.shape)]
        if missing or wrong:
            raise PretrainedError(
                f"{os.path.basename(ckpt)} does not fit this run (missing {missing[:5]}, "
                f"wrong shape {wrong[:5]}): resume from a checkpoint of the same spec",
                "resume_does_not_fit",
                file=os.path.basename(ckpt),
                missing=missing[:5],
                wrong=wrong[:5],
            )
        for n, p in params.items():
            p.set_data(ms.Tensor(state[n].asnumpy(), dtype=p.dtype))
        self.step = int(state["step_num"].asnumpy()) if "step_num" in state else 0
        if self.step > self.total_steps:
            raise PretrainedError(
                f"{os.path.basename(ckpt)} is at step {self.step}, past this run's {self.total_steps} steps",
                "resume_steps_mismatch",
                file=os.path.basename(ckpt),
                step=self.step,
                total_steps=self.total_steps,
            )
        self.applied = int(self.optimizer.global_step.asnumpy().reshape(-1)[0])
        self.knobs.load(state, ckpt)

    # -- steps --------------------------------------------------------------------------------
    def train_batches(self, epoch: int) -> Iterator[tuple[Any, Any]]:
        """The epoch's batches; accumulating, groups of k micro-batches (lists), one per step."""
        if self.features:
            batches: Iterator[tuple[Any, Any]] = self.features.train_batches(epoch)
        else:
            batches = self._epoch_dataset(epoch, self.normalize_on_device).create_tuple_iterator(num_epochs=1)
        if self.accumulate > 1:
            from .accumulate import grouped

            return grouped(batches, self.accumulate)
        return batches

    def _train_dataset(self, epoch: int, steps: int) -> Any:
        """The epoch's dataset, `steps` batches long, for the device queue."""
        return self._epoch_dataset(epoch, True).take(steps)

    def _epoch_dataset(self, epoch: int, on_device: bool) -> Any:
        """The epoch's training batches: shuffled by the seed plus the epoch, sharded per rank."""
        d = self.spec["data"]
        samples = self.train_samples
        if d.get("sampling") == "balanced":  # the same list on every rank (one seed); each takes its shard
            samples = balanced_epoch(samples, self.spec["train"]["seed"] + epoch)
        return make_dataset(
            samples,
            d["image_size"],
            d["batch_size"],
            self.workers,
            True,
            d["augment"],
            self.spec["train"]["seed"] + epoch,
            drop_remainder=True,
            num_shards=self.rank.size if self.rank else None,
            shard_id=self.rank.rank if self.rank else None,
            on_device=on_device,
            prefetch=self.prefetch,
            mix=(d["mixup"], d["cutmix"]),  # soft label rows: nn.CrossEntropyLoss takes them as they are
            num_classes=len(self.classes),
            # The weights' normalisation; with data.augment none also their resize and crop, the same
            # images as the eval and the feature cache see (augmenting presets keep their random crops).
            preprocess=self.preprocess,
        )

    def _eval_dataset(self, samples: list[tuple[str, int]]) -> Any:
        """`samples` as the in-run eval sees them: the weights' resize, crop and normalisation, in order."""
        d = self.spec["data"]
        return make_dataset(
            samples,
            d["image_size"],
            d["batch_size"],
            self.workers,
            False,
            False,
            0,
            drop_remainder=False,
            on_device=self.normalize_on_device,
            preprocess=self.preprocess,
        )

    def run_step(self) -> Any:
        """The train step with the loop's bookkeeping in the graph (RunStep), built once."""
        if self._run_step is None and self.accumulate > 1:
            from .accumulate import AccumulatingRunStep

            stop = self.step_stop.cell if self.step_stop is not None else None
            self._run_step = AccumulatingRunStep(self.train_step, stop)
        elif self._run_step is None:
            self._run_step = run_step_cell(self._core_step, self.step_stop)
            self._set_train_mode(self.net, True)
        return self._run_step

    def epoch_steps(
        self, epoch: int, skip: int, wants_stop: Callable[[], bool] = lambda: False
    ) -> Iterator[dict[str, Any]]:
        """Train the rest of `epoch` (its first `skip` steps are done), yielding one record per step,
        or per sink on Ascend with sink.size N > 1: the step event's fields for the last step of the
        call, with `first_step` and `mean_loss` (over the call's finite losses), `overflows` and
        `skipped_updates` (the call's steps that overflowed, that applied no update), `train_acc`,
        `nonfinite` (steps with a NaN/Inf loss), `stop` (the ranks agreed to stop after this call;
        single process: `wants_stop()`) and `warning` (a data_bound warning, once per run).

        `wants_stop` is read before each call (between sinks), as the control inbox and signals
        are: a single process then makes no further call; distributed, the wish travels in the
        call's own AllReduce (strategy.StepStop) and every rank stops after that same call."""
        steps = self.steps_per_epoch - skip
        if steps <= 0:
            return
        batch = self.global_batch
        step_cell = self.run_step()
        if self.sinks:
            size = sink_size_for(steps, self.sink_size)
            call = build_sink(step_cell, self._train_dataset(epoch, steps), size, self._data_sink)
            calls: Iterator[Any] = iter(lambda: None, 0)  # endless; counted below
            measure_data = False
        else:
            size, measure_data = 1, True
            calls = iter(self.train_batches(epoch))
        done, t_prev = 0, time.perf_counter()
        while done < steps:
            stop_wish = wants_stop()
            if self.step_stop is None and stop_wish:
                return  # nobody else to agree with: stop before the call, not after one more
            if self.step_stop is not None:
                self.step_stop.want(stop_wish)
            if size > 1:
                step_cell.reset()  # the sink's sums start at 0 (one step needs none: its own values)
            if measure_data:
                try:
                    x, y = next(calls)
                except StopIteration:
                    return
                t_data = time.perf_counter()
                out = step_cell(x, y).asnumpy()
            else:
                t_data = t_prev
                out = call().asnumpy()
            t_end = time.perf_counter()
            loss, finite, scale, updated, agreed, loss_sum, finite_n, overflows, updates, correct, own = out.tolist()
            if size == 1:
                correct = own
                ok = math.isfinite(loss)
                loss_sum, finite_n, overflows, updates = (loss if ok else 0.0), float(ok), 1.0 - finite, updated
            first = self.step + 1
            self.step += size
            done += size
            lr_used = self.lrs[min(self.applied + int(updates) - int(updated > 0.5), len(self.lrs) - 1)]
            self.applied += int(round(updates))
            if updates > 0.5:  # the weights' EMA: once per call (a sink of N steps averages once per N updates)
                self.knobs.after_update()
            wall = t_end - t_prev
            step_s, data_s, t_prev = wall / size, (t_data - t_prev if measure_data else None), t_end
            rec: dict[str, Any] = {
                "epoch": epoch,
                "step": self.step,
                "first_step": first,
                "loss": loss,
                "mean_loss": loss_sum / finite_n if finite_n else None,
                "lr": lr_used,
                "loss_scale": scale if self.scaler is not None else None,
                "overflow": finite < 0.5,
                "overflows": int(round(overflows)),
                "nonfinite": size - int(round(finite_n)),
                "skipped": updated < 0.5,
                "skipped_updates": size - int(round(updates)),  # overflows and NaN/Inf losses of the call
                "step_ms": round(step_s * 1000, 3),
                "data_ms": round(data_s * 1000, 3) if data_s is not None else None,
                "img_per_s": round(batch / step_s, 2) if step_s > 0 else None,
                # this rank's images of the call, classified by the forward pass of their own step
                "train_acc": correct / (size * self.global_batch // self.world),
                "stop": agreed > 0.5 if self.step_stop is not None else False,
                "warning": None,
            }
            if data_s is not None:
                rec["warning"] = self.data_monitor.observe(step_s * 1000, data_s * 1000)
            yield rec
            if rec["stop"]:
                return

    def evaluate(self) -> dict[str, Any] | None:
        """Loss, top-1 and top-5 accuracy, per-class accuracy and the confusion matrix on the
        validation set. The last batch is padded to the batch size and its padding masked out
        (scoring.py): one compiled shape, every image counted once."""
        if not self.val_samples or (self.rank and self.rank.rank):  # rank 0 evaluates; the others wait in the next step
            return None
        d = self.spec["data"]
        if self.features:
            batches = self.features.val_batches()
        else:
            batches = self._eval_dataset(self.val_samples).create_tuple_iterator(num_epochs=1, output_numpy=True)
        n = len(self.classes)
        tally = Tally(n)
        self._set_train_mode(self.net, False)
        try:
            tally.run(self.eval_logits, batches, d["batch_size"])
        finally:
            self._set_train_mode(self.net, True)
        confusion, class_total = tally.confusion, tally.class_total
        # per class over all its images, like val_acc: an image with NaN logits is a miss
        per_class = [float(confusion[i, i] / class_total[i]) if class_total[i] else None for i in range(n)]
        out = {
            "val_loss": tally.loss_sum / max(1, tally.count),
            "val_acc": tally.accuracy,
            # with 5 classes or fewer, 1.0 by definition (scoring.py)
            "val_top5": tally.top5,
            "per_class_acc": per_class,
            "confusion": confusion.tolist() if n <= MAX_INLINE_CLASSES else None,
            "nonfinite": tally.nonfinite,
        }
        if n > MAX_INLINE_CLASSES:  # an n x n matrix inline would make every eval line megabytes
            out["confusion_file"] = self._write_confusion(confusion)
        return out

    def _write_confusion(self, confusion: np.ndarray) -> str:
        rel = os.path.join("eval", f"confusion-s{self.step}.json")
        os.makedirs(os.path.join(self.run_dir, "eval"), exist_ok=True)
        atomic_write_json(os.path.join(self.run_dir, rel), confusion.tolist())
        return rel
