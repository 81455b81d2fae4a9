"""The training run: data, model, AMP, the step loop with per-step telemetry, eval, checkpoints, control.

`Trainer` is built from a resolved spec; `run(spec, run_dir)` wraps it in the run directory's
contract (status.json, events.jsonl, exit codes) and turns every failure into a `run_finished`.
"""
from __future__ import annotations

import fcntl
import math
import os
import platform
import signal
import socket
import time
import traceback
from typing import Any

import numpy as np

from . import __version__
from .control import ControlInbox
from .data.folder import DataError, scan, stratified_split
from .data.pipeline import make_dataset
from .events import EventLog
from .models.pretrained import PretrainedError
from .rundir import atomic_write_json, process_start, write_status
from .device.telemetry import DEFAULT_INTERVAL_S, DeviceSampler
from .spec import SpecError


MAX_INLINE_CLASSES = 256  # above this, eval's confusion matrix goes to a file beside the events


class NonFiniteLoss(Exception):
    pass


class RunBusy(Exception):
    """Another process holds the run directory."""


def lr_per_step(t: dict, total_steps: int) -> list[float]:
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


def sink_notes(sink: dict, target: str) -> list[tuple[str, str]]:
    """The runner trains step by step on every backend, so every step is reported. Say where that
    differs from what the spec asked for."""
    if not sink["enabled"]:
        return []
    if target != "Ascend":
        return [("sink_unavailable", f"dataset sink mode is not available on {target} (MindSpore's data_sink "
                 "supports Ascend and GPU only); training step by step, per-step telemetry unchanged")]
    if sink["size"] > 1:
        return [("sink_size_ignored", f"sink.size {sink['size']} is not used: the runner runs one step per call "
                 "(sink size 1) to report every step; MindSpore 2.3+ executes Ascend graphs kernel by kernel, "
                 "which its documentation describes as equivalent to sink size 1")]
    return []


ASCEND_SIGNS = ("/usr/local/Ascend", "/usr/local/bin/npu-smi")


def resolve_target(requested: str) -> tuple[str, str | None]:
    """The backend to use, and a warning when `auto` falls back to CPU on a box that has an Ascend
    install (typically CANN's set_env.sh not sourced in a non-interactive SSH launch)."""
    import mindspore as ms

    if requested != "auto":
        return requested, None
    try:
        if ms.hal.is_available("Ascend"):
            return "Ascend", None
    except Exception:  # older MindSpore or no CANN: CPU
        pass
    if any(os.path.exists(p) for p in ASCEND_SIGNS):
        return "CPU", ("device.target auto found an Ascend install but MindSpore cannot use it, so this run trains "
                       "on the CPU: source CANN's set_env.sh (e.g. /usr/local/Ascend/ascend-toolkit/set_env.sh) "
                       "in the target's environment set-up, or set device.target to Ascend to fail instead")
    return "CPU", None


class Trainer:
    def __init__(self, spec: dict[str, Any], run_dir: str, warnings: list[dict[str, Any]]):
        import mindspore as ms
        from mindspore import nn

        from .models import amp as ampmod
        from .models.net import BackboneFeatures, TransferNet, apply_freeze, frozen_parts, set_train_mode

        self.spec, self.run_dir = spec, run_dir
        # Warnings found while setting up; the run writes them right after run_started, so that
        # readers always meet run_started first.
        self.warnings = warnings
        d, m, t = spec["data"], spec["model"], spec["train"]
        self.target, fallback = resolve_target(spec["device"]["target"])
        if fallback:
            self.warn("ascend_unavailable", fallback, {"requested": "auto"})
        ms.set_context(mode=ms.GRAPH_MODE)
        from . import distributed
        from . import preflight

        self.rank = distributed.current()  # set when msrun started this process as one rank of several
        self.world = self.rank.size if self.rank else 1
        if not self.rank or self.rank.rank == 0:  # before this run's ranks take device memory
            self.warnings.extend(preflight.device_warnings(spec, self.target))
        ms.set_device(self.target, distributed.device_id(spec, self.target))
        if self.rank:
            distributed.join(self.rank)
        ms.set_seed(t["seed"])
        self.workers = max(1, min(d["workers"], os.cpu_count() or 1))

        # Data
        train_set = scan(d["train"], self.workers, "data.train")
        self.classes = train_set.classes
        if d["val"]:
            val_set = scan(d["val"], self.workers, "data.val", classes=self.classes)
            self.train_samples, self.val_samples = train_set.samples, val_set.samples
            skipped = train_set.skipped + val_set.skipped
        else:
            self.train_samples, self.val_samples = stratified_split(train_set.samples, d["val_split"], t["seed"])
            skipped = train_set.skipped
        if skipped:
            self.warn(code="images_skipped",
                     message=f"skipped {len(skipped)} file(s) that are not readable images",
                     details={"count": len(skipped), "first": [{"path": p, "reason": r} for p, r in skipped[:10]]})
        if m["num_classes"] is not None and m["num_classes"] != len(self.classes):
            raise DataError("model.num_classes", f"num_classes is {m['num_classes']} but {d['train']} has "
                            f"{len(self.classes)} class folders", f"set model.num_classes to {len(self.classes)} or null")
        # batch_size is per device: one step of all ranks takes batch_size * world images, so the
        # run has as many steps as one process with that global batch.
        self.steps_per_epoch = len(self.train_samples) // (d["batch_size"] * self.world)
        if self.steps_per_epoch == 0:
            per = f" x {self.world} devices" if self.world > 1 else ""
            raise DataError("data.batch_size", f"batch_size {d['batch_size']}{per} is larger than the "
                            f"{len(self.train_samples)} training images",
                            f"set data.batch_size to at most {len(self.train_samples) // self.world}")
        self.total_steps = self.steps_per_epoch * t["epochs"]
        atomic_write_json(os.path.join(run_dir, "classes.json"), self.classes)

        # Model
        self.frozen_upto = frozen_parts(m["freeze"])
        self.net = TransferNet(m["backbone"], len(self.classes), self.frozen_upto)
        self.load_report = None
        if m["pretrained"]:
            from .models.pretrained import load_backbone

            self.load_report = load_backbone(self.net.backbone, m["pretrained"])
            r = self.load_report
            if r.missing or r.unexpected or r.mismatched:
                self.warn(code="pretrained_partial",
                         message=f"loaded {len(r.loaded)} backbone tensors from {os.path.basename(m['pretrained'])}; "
                                 f"{len(r.missing)} missing, {len(r.unexpected)} unexpected, {len(r.mismatched)} of the wrong shape",
                         details={"missing": r.missing[:50], "unexpected": r.unexpected[:50], "mismatched": r.mismatched[:50]})
        apply_freeze(self.net)
        set_train_mode(self.net, True)
        self.amp_plan = ampmod.plan(spec["amp"], self.target)
        for code, msg in self.amp_plan.notes:
            self.warn(code=code, message=msg, details={})
        self.model = ampmod.apply_level(self.net, self.amp_plan.level)

        # Optimizer, schedule, loss scaling, compiled steps
        self.lrs = lr_per_step(t, self.total_steps)
        params = [p for p in self.net.trainable_params()]
        lr = ms.Tensor(np.array(self.lrs, np.float32)) if t["lr_schedule"] != "constant" or t["warmup_steps"] else float(t["lr"])
        if t["optimizer"] == "momentum":
            self.optimizer = nn.Momentum(params, lr, t["momentum"], weight_decay=t["weight_decay"])
        elif t["optimizer"] == "sgd":
            self.optimizer = nn.SGD(params, lr, momentum=0.0, weight_decay=t["weight_decay"])
        else:
            self.optimizer = nn.AdamWeightDecay(params, lr, weight_decay=t["weight_decay"])
        self.scaler = ampmod.make_scaler(spec["amp"], self.amp_plan.loss_scale)
        # Not the recipe's SoftmaxCrossEntropyWithLogits: its CPU kernel returns inf once a logit passes
        # ~88 (exp overflows in fp32), which a pretrained backbone's features reach within a few steps.
        # CrossEntropyLoss subtracts the max first (log-softmax) and gives the same value otherwise.
        loss_fn = nn.CrossEntropyLoss(reduction="mean")
        self.features = None
        if t.get("cache_features"):
            # Train the head on backbone features computed once (featurecache.py); the compiled
            # steps then see only the head.
            if m["freeze"] != "backbone":
                raise DataError("train.cache_features", f"cache_features needs a frozen backbone, but model.freeze is "
                                f"{m['freeze']!r}: the features would change every step",
                                "set model.freeze to backbone, or train.cache_features to false")
            from .featurecache import FeatureCache

            self.backbone_features = ampmod.build_eval_step(BackboneFeatures(self.net))
            self.features = FeatureCache(self, t.get("cache_views", 1))
        stepped = self.net.head if self.features else self.model
        self.train_step = ampmod.build_train_step(stepped, loss_fn, self.optimizer, self.scaler,
                                                  distributed=self.rank is not None)
        set_train_mode(self.net, True)  # the step's set_train(True) reached the frozen BatchNorms too
        self.eval_logits = ampmod.build_eval_step(stepped)
        self._set_train_mode = set_train_mode
        for code, msg in sink_notes(spec["sink"], self.target):
            self.warn(code=code, message=msg, details={"sink": spec["sink"], "target": self.target})
        self.warnings.extend(preflight.run_warnings(spec, self.total_steps, self.steps_per_epoch, self.target))
        self.step = 0  # global steps done
        # Updates applied so far: the optimizer's schedule index, which skipped (overflow) steps do
        # not advance, as in MindSpore's own loss-scale cell.
        self.applied = 0

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

    def resume(self, ckpt: str) -> None:
        import mindspore as ms

        from .checkpoints.store import load_state

        state = load_state(ckpt)
        # The learning rate (schedule) and momentum come from this run's spec, not the checkpoint.
        spec_owned = {"learning_rate", "momentum"}
        params = {p.name: p for p in list(self.net.get_parameters()) + list(self.optimizer.get_parameters())
                  if p.name not in spec_owned}
        params.update(self.scaler_params())
        saved = {k: int(state[k].asnumpy()) for k in ("steps_per_epoch", "total_steps") if k in state}
        mine = {"steps_per_epoch": self.steps_per_epoch, "total_steps": self.total_steps}
        changed = {k: (v, mine[k]) for k, v in saved.items() if v != mine[k]}
        if changed:
            raise PretrainedError(f"{os.path.basename(ckpt)} was saved by a run with other data, batch size or epochs "
                                  f"({', '.join(f'{k} {a} then, {b} now' for k, (a, b) in changed.items())}): resume with "
                                  "the run's own spec.json, or start a new run with model.pretrained set to this file")
        missing = [n for n in params if n not in state]
        wrong = [n for n, p in params.items() if n in state and tuple(state[n].shape) != tuple(p.shape)]
        if missing or wrong:
            raise PretrainedError(f"{os.path.basename(ckpt)} does not fit this run (missing {missing[:5]}, "
                                  f"wrong shape {wrong[:5]}): resume from a checkpoint of the same spec")
        for n, p in params.items():
            p.set_data(ms.Tensor(state[n].asnumpy(), dtype=p.dtype))
        self.step = int(state["step_num"].asnumpy()) if "step_num" in state else 0
        if self.step > self.total_steps:
            raise PretrainedError(f"{os.path.basename(ckpt)} is at step {self.step}, past this run's {self.total_steps} steps")
        self.applied = int(self.optimizer.global_step.asnumpy().reshape(-1)[0])

    # -- steps --------------------------------------------------------------------------------
    def train_batches(self, epoch: int):
        if self.features:
            return self.features.train_batches(epoch)
        d = self.spec["data"]
        ds = make_dataset(self.train_samples, d["image_size"], d["batch_size"], self.workers, True, d["augment"],
                          self.spec["train"]["seed"] + epoch, drop_remainder=True,
                          num_shards=self.rank.size if self.rank else None, shard_id=self.rank.rank if self.rank else None)
        return ds.create_tuple_iterator(num_epochs=1)

    def evaluate(self) -> dict[str, Any] | None:
        if not self.val_samples or (self.rank and self.rank.rank):  # rank 0 evaluates; the others wait in the next step
            return None
        d = self.spec["data"]
        if self.features:
            batches = self.features.val_batches()
        else:
            batches = make_dataset(self.val_samples, d["image_size"], d["batch_size"], self.workers, False, False, 0,
                                   drop_remainder=False).create_tuple_iterator(num_epochs=1)
        n = len(self.classes)
        confusion = np.zeros((n, n), np.int64)
        class_total = np.zeros(n, np.int64)
        loss_sum, count, nonfinite = 0.0, 0, 0
        self._set_train_mode(self.net, False)
        try:
            for x, y in batches:
                logits = self.eval_logits(x).asnumpy().astype(np.float64)
                labels = y.asnumpy().astype(np.int64)
                z = logits - logits.max(axis=1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
                loss_sum += float(-logp[np.arange(len(labels)), labels].sum())
                count += len(labels)
                ok = np.isfinite(logits).all(axis=1)  # a NaN row's argmax would "predict" class 0
                nonfinite += int((~ok).sum())
                np.add.at(confusion, (labels[ok], logits[ok].argmax(axis=1)), 1)
                np.add.at(class_total, labels, 1)
        finally:
            self._set_train_mode(self.net, True)
        # per class over all its images, like val_acc: an image with NaN logits is a miss
        per_class = [float(confusion[i, i] / class_total[i]) if class_total[i] else None for i in range(n)]
        out = {"val_loss": loss_sum / max(1, count), "val_acc": float(np.trace(confusion) / max(1, count)),
               "per_class_acc": per_class, "confusion": confusion.tolist() if n <= MAX_INLINE_CLASSES else None,
               "nonfinite": nonfinite}
        if n > MAX_INLINE_CLASSES:  # an n x n matrix inline would make every eval line megabytes
            out["confusion_file"] = self._write_confusion(confusion)
        return out

    def _write_confusion(self, confusion: np.ndarray) -> str:
        rel = os.path.join("eval", f"confusion-s{self.step}.json")
        os.makedirs(os.path.join(self.run_dir, "eval"), exist_ok=True)
        atomic_write_json(os.path.join(self.run_dir, rel), confusion.tolist())
        return rel


def _versions() -> dict[str, str]:
    import mindspore as ms

    return {"runner": __version__, "mindspore": ms.__version__, "python": platform.python_version()}


class Run:
    """One training process's life: events, status, the loop, stop/checkpoint requests, the ending."""

    def __init__(self, spec: dict[str, Any], run_dir: str, resume: str | None = None):
        run_dir = os.path.abspath(run_dir)
        self.spec, self.run_dir = spec, run_dir
        self.resume_from = os.path.abspath(resume) if resume else None
        os.makedirs(run_dir, exist_ok=True)
        # One process per run directory: a second writer would interleave seq numbers and cut the
        # first one's half-written line as "torn". The lock dies with the process.
        self._lock = open(os.path.join(run_dir, ".lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunBusy(f"another process is writing to {run_dir}")
        # MindSpore writes files into the working directory (O1's rewritten_network/, graph dumps,
        # kernel caches): keep them in the run directory, not wherever the runner was started.
        os.chdir(run_dir)
        self.log = EventLog(os.path.join(run_dir, "events.jsonl"))
        self.stop_requested = False
        self.stop_reason = None
        self.inbox = ControlInbox(run_dir)
        self.inbox.clear()  # requests left by an earlier process (a killed run) are not for this one
        self.pending_warnings: list[dict[str, Any]] = []
        self.owns_status = True  # False in msrun's ranks (distributed.RankRun): their launcher owns status.json

    def _flush_warnings(self) -> None:
        for w in self.pending_warnings:
            self.log.emit("warning", **w)
        self.pending_warnings.clear()

    def _on_signal(self, signum, _frame) -> None:
        if self.stop_requested:  # a second signal: the user wants out now
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.stop_requested = True
        self.stop_reason = signal.Signals(signum).name

    def execute(self) -> int:
        if self.owns_status:
            write_status(self.run_dir, run_id=os.path.basename(self.run_dir), state="running", pid=os.getpid(),
                         pid_start=process_start(os.getpid()), host=socket.gethostname(), started_at=time.time(),
                         ended_at=None, exit_code=None)
            atomic_write_json(os.path.join(self.run_dir, "spec.json"), self.spec)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)
        self.trainer = None
        if self.owns_status and len(self.spec["device"]["ids"]) * max(1, len(self.spec["device"].get("nodes") or [])) > 1:
            from .distributed import launch_ranks

            if self.spec["train"].get("cache_features"):  # refused before msrun starts anything
                return self._finish("failed", {
                    "kind": "bad_input", "path": "train.cache_features", "trace_tail": None,
                    "message": "cache_features trains on one device; this spec has "
                               f"{len(self.spec['device']['ids'])} device id(s) on {max(1, len(self.spec['device'].get('nodes') or []))} node(s)",
                    "fix": "use one device id on one machine, or set train.cache_features to false"}, None, None, 2)
            return launch_ranks(self)  # several ranks: this process runs msrun and watches them
        try:
            status, best, final = self._train()
            return self._finish(status, None, best, final, 0)
        except (SpecError, DataError, PretrainedError) as e:
            fields = {"kind": "bad_input", "message": str(e)}
            if isinstance(e, DataError):
                fields.update(path=e.path, message=e.message, fix=e.fix)
            elif isinstance(e, SpecError):
                fields["kind"] = "bad_spec"
                fields["problems"] = [p.as_dict() for p in e.problems]
            return self._finish("failed", {**fields, "trace_tail": None}, None, None, 2)
        except NonFiniteLoss as e:
            return self._finish("failed", {"kind": "nonfinite_loss", "message": str(e), "trace_tail": None}, None, None, 1)
        except Exception as e:
            tail = traceback.format_exc().strip().splitlines()[-15:]
            return self._finish("failed", {"kind": type(e).__name__, "message": str(e).strip().splitlines()[0][:500] if str(e).strip() else type(e).__name__,
                                           "trace_tail": "\n".join(tail)}, None, None, 1)

    def _finish(self, status: str, error, best, final, code: int) -> int:
        store_best = getattr(self, "store", None) and self.store.best()
        if getattr(self, "sampler", None):
            self.sampler.stop()  # no device event after run_finished
        self._flush_warnings()  # found during a set-up that then failed
        if not best and store_best:
            best = {k: store_best[k] for k in ("file", "epoch", "step", "metrics")}
        self.log.emit("run_finished", status=status, error=error, best=best, final=final)
        self.log.close()
        self.inbox.clear()  # a request that came too late must not reach a later resume
        self.error = error
        if self.owns_status:
            write_status(self.run_dir, state=status, ended_at=time.time(), exit_code=code)
        return code

    def _take_requests(self, metrics: dict[str, Any]) -> None:
        tr = self.trainer
        for action, path in self.inbox.poll():
            if action == "stop":
                self.stop_requested, self.stop_reason = True, "control"
            # on an epoch's last step the epoch-end checkpoint (with eval metrics) follows anyway
            elif action == "checkpoint" and self.last_ckpt_step != tr.step and tr.step % tr.steps_per_epoch:
                self._checkpoint({**metrics, "reason": "requested"})
            self.inbox.done(path)

    def _checkpoint(self, metrics: dict[str, Any]) -> dict[str, Any]:
        from .checkpoints.store import state_entries

        tr = self.trainer
        counters = {"steps_per_epoch": tr.steps_per_epoch, "total_steps": tr.total_steps}
        entry = self.store.save(state_entries(tr.net, tr.optimizer, tr.scaler_params()), tr.epoch_for_step(), tr.step,
                                metrics, counters)
        self.log.emit("checkpoint", **entry)
        self.last_ckpt_step = tr.step
        return entry

    def _train(self):
        from .checkpoints.store import CheckpointStore

        spec = self.spec
        tr = self.trainer = Trainer(spec, self.run_dir, self.pending_warnings)
        ck = spec["checkpoint"]
        self.store = CheckpointStore(self.run_dir, spec["name"], ck["format"], ck["keep_max"], ck["keep_best"])
        if self.resume_from:
            tr.resume(self.resume_from)
        self.last_ckpt_step = tr.step
        d = spec["data"]
        self.log.emit("run_started", run_id=os.path.basename(self.run_dir), spec=spec, classes=tr.classes,
                      num_train=len(tr.train_samples), num_val=len(tr.val_samples), steps_per_epoch=tr.steps_per_epoch,
                      total_steps=tr.total_steps, versions=_versions(),
                      device={"target": tr.target, "ids": spec["device"]["ids"], "host": socket.gethostname(),
                              "workers": tr.workers, "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")},
                      global_batch=d["batch_size"] * tr.world,
                      amp={"level": tr.amp_plan.level, "loss_scale": tr.amp_plan.loss_scale},
                      resumed_from={"file": self.resume_from, "step": tr.step} if self.resume_from else None)
        self._flush_warnings()
        # NPU utilisation, HBM, temperature and power as `device` events, where npu-smi exists.
        self.sampler = DeviceSampler.for_run(self.log.emit, spec["device"]["ids"],
                                             float(spec["device"].get("telemetry_s", DEFAULT_INTERVAL_S)))
        if tr.features:
            tr.features.ensure()  # before the first step's clock: compute_s reports its cost, not step 1
        # Ranks run in lock-step (the gradient AllReduce), so the run's throughput is rank 0's times the ranks.
        batch = d["batch_size"] * tr.world
        max_bad = spec["train"]["max_nonfinite_steps"]
        self._take_requests({})  # a stop sent during set-up is honoured before the first step
        bad_run = 0
        last_metrics: dict[str, Any] = {}
        best = None
        while tr.step < tr.total_steps and not self.stop_requested:
            epoch = tr.step // tr.steps_per_epoch + 1
            skip_in_epoch = tr.step - (epoch - 1) * tr.steps_per_epoch
            epoch_t0, losses, overflows = time.perf_counter(), [], 0
            it = tr.train_batches(epoch)
            t_prev = time.perf_counter()
            for i, (x, y) in enumerate(it):
                if i >= tr.steps_per_epoch - skip_in_epoch:
                    break
                t_data = time.perf_counter()
                loss, finite, scale, updated = tr.train_step(x, y).asnumpy().tolist()
                t_end = time.perf_counter()
                tr.step += 1
                overflow = finite < 0.5
                overflows += overflow
                step_s, data_s, t_prev = t_end - t_prev, t_data - t_prev, t_end
                lr_used = tr.lrs[min(tr.applied, len(tr.lrs) - 1)]
                tr.applied += updated > 0.5
                self.log.emit("step", epoch=epoch, step=tr.step, loss=loss, lr=lr_used,
                              loss_scale=scale if tr.scaler is not None else None, overflow=overflow,
                              skipped=updated < 0.5,
                              step_ms=round(step_s * 1000, 3), data_ms=round(data_s * 1000, 3),
                              img_per_s=round(batch / step_s, 2) if step_s > 0 else None)
                if math.isfinite(loss):
                    losses.append(loss)
                    bad_run = 0
                else:
                    bad_run += 1
                    if bad_run >= max_bad:
                        raise NonFiniteLoss(f"the loss was NaN or Inf for {bad_run} consecutive steps (up to step {tr.step}); "
                                            "lower train.lr, or check the data and the pretrained weights")
                last_metrics = {"loss": loss}
                self._take_requests(last_metrics)
                if self.stop_requested:
                    break
                epoch_end = tr.step % tr.steps_per_epoch == 0  # saved after eval, below
                if tr.step % spec["checkpoint"]["every_steps"] == 0 and not epoch_end and self.last_ckpt_step != tr.step:
                    self._checkpoint(last_metrics)
            if self.stop_requested and tr.step % tr.steps_per_epoch:
                break  # mid-epoch: no eval; a stop on an epoch's last step still finishes that epoch
            ev = tr.evaluate()
            metrics = dict(last_metrics)
            if ev:
                self.log.emit("eval", epoch=epoch, step=tr.step, **ev)
                metrics.update(val_loss=ev["val_loss"], val_acc=ev["val_acc"])
            extra = {}
            if tr.features and not tr.features.reported:
                extra["feature_cache"] = tr.features.describe()  # built or found during this epoch
                tr.features.reported = True
            self.log.emit("epoch_end", epoch=epoch, train_loss=float(np.mean(losses)) if losses else None,
                          overflow_count=overflows, epoch_s=round(time.perf_counter() - epoch_t0, 3), **extra)
            entry = self._checkpoint(metrics)
            if entry["best"]:
                best = {k: entry[k] for k in ("file", "epoch", "step", "metrics")}
        final = {"epoch": tr.epoch_for_step(), "step": tr.step, "total_steps": tr.total_steps, **last_metrics}
        if self.stop_requested:
            if self.last_ckpt_step != tr.step:
                self._checkpoint({**last_metrics, "reason": "stopped"})
            final["stop_reason"] = self.stop_reason
            return "stopped", best, final
        return "completed", best, final

