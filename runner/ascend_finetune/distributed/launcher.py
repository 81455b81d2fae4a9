"""The launcher: the process that holds a run of several ranks starts msrun for its node's ranks,
forwards SIGTERM/SIGINT to them, watches them, cleans up every process msrun left, and writes
`run_finished` (and status.json) when rank 0 could not, e.g. because a rank died.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import time
import traceback
from types import FrameType
from typing import Any, Callable, Protocol

from ..checkpoints.errors import PretrainedError, disk_full_error, error_dict, exception_error, is_disk_full
from ..control import ControlInbox
from ..data.folder import DataError
from ..device.telemetry import DEFAULT_INTERVAL_S, DeviceSampler
from ..events import EventLog, read_events
from ..logfilter import popen_filtered
from ..rundir import MANIFEST_MAX_BYTES, UnsafeFile, atomic_write_json, open_append, read_json, write_status
from ..spec_types import RunSpec
from .prepare import prepare_data, prepare_weights
from .strategy import NullLog
from .world import (
    NODE_PREFLIGHT_FILE,
    RANKS_DIR,
    bind_core_argv,
    free_port,
    local_ranks,
    msrun_argv,
    node_count,
)

# After a rank failed, msrun kills the other local ranks at once but then waits for its
# scheduler, which only gives up on the dead ranks after its node timeout (about 30 s here).
SCHEDULER_GRACE_S = 3.0
POLL_S = 0.2
LOG_TAIL_LINES = 15
FILTER_DRAIN_S = 5.0


def _log_tail(path: str, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last lines of a rank's log, without MindSpore's own [INFO]/[WARNING] lines."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    keep = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not re.match(r"\[(INFO|WARNING|DEBUG)\]", ln)]
    return keep[-lines:]


def _read_json(path: str) -> Any:
    return read_json(path, None, MANIFEST_MAX_BYTES)  # regular files only, capped (rundir.py)


def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _catches_sigterm(pid: int) -> bool:
    """Whether the rank has installed its handler yet (rank_entry does it first thing): a signal
    sent before that would kill it instead of asking it to stop. SigCgt is the caught-signal mask."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except (OSError, ValueError):
        pass
    return False


class HeldRun(Protocol):
    """What the launcher needs of the run that holds the directory (train/run.py's Run): its spec,
    event log and inbox, and its way of writing the run's end. A protocol, so that the launcher,
    below the trainer, never imports it."""

    spec: RunSpec
    run_dir: str
    resume_from: str | None
    log: EventLog | NullLog
    inbox: ControlInbox
    error: dict[str, Any] | None
    stop_requested: bool  # a SIGTERM/SIGINT that came before the launcher took the signals
    stop_reason: str | None

    def begin(self) -> None: ...

    def finish(
        self,
        status: str,
        error: dict[str, Any] | None,
        best: dict[str, Any] | None,
        final: dict[str, Any] | None,
        code: int,
    ) -> int: ...


NodeChecks = Callable[[RunSpec], list[dict[str, Any]]]  # spec -> warnings (train/preflight.node_warnings)


class Launcher:
    """Runs msrun for one node of the run and turns its outcome into the run's ending."""

    def __init__(
        self, run: HeldRun, node_rank: int = 0, master_port: int | None = None, checks: NodeChecks | None = None
    ):
        self.run, self.spec, self.run_dir = run, run.spec, run.run_dir
        self.node_rank = node_rank
        self.checks = checks
        self.master_port = master_port or self.spec["device"].get("master_port") or free_port()
        self.ranks_dir = os.path.join(self.run_dir, RANKS_DIR)
        self.workers: dict[int, int] = {}  # pid -> global rank
        self.worker_pgids: set[int] = set()
        self.forwarded: dict[int, set[int]] = {}  # signal -> pids it reached
        self.stop_signal: int | None = None
        self.proc: Any = None  # msrun's subprocess.Popen, once start() ran

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.stop_signal is not None:  # a second signal: the user wants out now
            self._kill_everything()
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.stop_signal = signum

    def _refresh_workers(self) -> None:
        """Learn msrun's workers: its children with MS_ROLE=MS_WORKER (read once they have exec'd)."""
        import psutil

        try:
            children = psutil.Process(self.proc.pid).children()
        except psutil.Error:
            return
        for c in children:
            if c.pid in self.workers:
                continue
            try:
                env = c.environ()
            except psutil.Error:
                continue
            if env.get("MS_ROLE") == "MS_WORKER" and "RANK_ID" in env:
                try:
                    self.worker_pgids.add(os.getpgid(c.pid))  # msrun starts each worker in its own session
                except ProcessLookupError:
                    pass
                self.workers[c.pid] = int(env["RANK_ID"])

    def _forward_signal(self) -> None:
        if self.stop_signal is None:
            return
        reached = self.forwarded.setdefault(self.stop_signal, set())
        for pid in self.workers:
            if pid not in reached and _alive(pid) and _catches_sigterm(pid):
                try:
                    os.kill(pid, self.stop_signal)
                except ProcessLookupError:
                    pass
                reached.add(pid)

    def _kill_everything(self) -> None:
        for pgid in self.worker_pgids:
            _kill_group(pgid)
        if self.proc is not None:
            _kill_group(self.proc.pid)  # msrun and its scheduler

    def _failed_pid(self) -> tuple[int, int] | None:
        """(pid, exit code) of the first worker msrun saw failing, from its log."""
        try:
            with open(os.path.join(self.ranks_dir, "msrun.log"), encoding="utf-8", errors="replace") as f:
                m = re.search(r"Worker process (\d+) exit with exception\. Error code: (-?\d+)", f.read())
        except OSError:
            return None
        return (int(m.group(1)), int(m.group(2))) if m else None

    def preflight(self) -> list[dict[str, Any]]:
        """This node's NPU checks, before msrun starts its ranks, recorded in this node's run
        directory (ranks/preflight-node-<node rank>.json). Rank 0 writes node 0's as the run's
        warning events; another node's go into its own event log, marked with its node rank."""
        warnings = self.checks(self.spec) if self.checks else []
        os.makedirs(self.ranks_dir, exist_ok=True)
        atomic_write_json(
            os.path.join(self.ranks_dir, NODE_PREFLIGHT_FILE.format(self.node_rank)),
            {
                "node_rank": self.node_rank,
                "host": socket.gethostname(),
                "ids": self.spec["device"]["ids"],
                "warnings": warnings,
            },
        )
        if self.node_rank:
            for w in warnings:
                self.run.log.emit("warning", **{**w, "details": {**w.get("details", {}), "node_rank": self.node_rank}})
        return warnings

    def _sample_devices(self) -> DeviceSampler | None:
        """Telemetry of this node's NPUs on a node other than the master, whose rank 0 samples its
        own: `device` events in this node's event log, with its node rank."""
        if not self.node_rank:
            return None
        k = self.node_rank

        def emit(type_: str, **payload: Any) -> Any:
            return self.run.log.emit(type_, node_rank=k, **payload)

        interval = float(self.spec["device"].get("telemetry_s", DEFAULT_INTERVAL_S))
        return DeviceSampler.for_run(emit, self.spec["device"]["ids"], interval)

    def _stopped_before_msrun(self) -> bool:
        """A stop that came while the launcher set up, before its own handlers (the download in
        prepare_weights can take minutes): a SIGTERM/SIGINT the run's handler took (run.begin installed
        it), or a `stop` in the control inbox (the extension's Stop). Other requests stay for rank 0."""
        for action, path in self.run.inbox.poll():
            if action == "stop":
                self.run.stop_requested = True
                self.run.stop_reason = self.run.stop_reason or "control"
                self.run.inbox.done(path)
        return self.run.stop_requested

    def start(self) -> int:
        import subprocess

        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)
        if self._stopped_before_msrun():
            return self.run.finish("stopped", None, None, {"stop_reason": self.run.stop_reason}, 0)
        os.makedirs(self.ranks_dir, exist_ok=True)
        for name in os.listdir(self.ranks_dir):  # a resume into the same directory: old verdicts
            if re.fullmatch(r"rank-\d+\.json", name):
                os.remove(os.path.join(self.ranks_dir, name))
        self.preflight()
        events_path = os.path.join(self.run_dir, "events.jsonl")
        self.events_start = len(read_events(events_path))
        argv = bind_core_argv(
            self.spec, msrun_argv(self.spec, self.run_dir, self.node_rank, self.master_port, self.run.resume_from)
        )
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # msrun starts `python` from PATH: make that this interpreter (the venv with MindSpore).
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        # msrun's output without MindSpore's known noise (logfilter.py)
        with os.fdopen(open_append(os.path.join(self.ranks_dir, "msrun.log")), "ab") as log:
            self.proc, log_filter = popen_filtered(
                argv,
                log.fileno(),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.run_dir,
                env=env,
                close_fds=True,
            )
        sampler = self._sample_devices()
        try:
            self._watch()
        finally:
            if sampler:
                sampler.stop()  # no device event after the run's end
            self._kill_everything()  # nothing of this run outlives the launcher
            self.proc.wait()
            try:
                log_filter.wait(timeout=FILTER_DRAIN_S)  # msrun.log complete before its tail is read
            except subprocess.TimeoutExpired:
                pass  # a straggler still holds the pipe: the filter ends with it
        return self._conclude(events_path)

    def _watch(self) -> None:
        failed_at = None
        while self.proc.poll() is None:
            self._refresh_workers()
            self._forward_signal()
            if failed_at is None and self._failed_pid():
                failed_at = time.monotonic()
            if (
                failed_at is not None
                and time.monotonic() - failed_at > SCHEDULER_GRACE_S
                and not any(_alive(p) for p in self.workers)
            ):
                _kill_group(self.proc.pid)  # the scheduler would wait out its node timeout
            time.sleep(POLL_S)

    def _conclude(self, events_path: str) -> int:
        run = self.run
        run.log.close()
        run.log = EventLog(events_path)  # rank 0 appended: resync seq, cut a line torn by a kill
        segment = read_events(events_path)[self.events_start :]
        finished = next((e for e in reversed(segment) if e["type"] == "run_finished"), None)
        verdicts = {
            r: _read_json(os.path.join(self.ranks_dir, f"rank-{r}.json")) for r in sorted(set(self.workers.values()))
        }
        if finished is not None:  # rank 0 ended the run itself
            rank0 = _read_json(os.path.join(self.ranks_dir, "rank-0.json")) or {}
            code = rank0.get("exit_code")
            if code is None:
                code = 0 if finished["status"] != "failed" else 1
            run.log.close()
            run.inbox.clear()
            run.error = finished.get("error")
            write_status(self.run_dir, state=finished["status"], ended_at=time.time(), exit_code=code)
            return code
        error, code = self._rank_error(verdicts)
        if error is None:  # rank 0 is on another node: this node's ranks all ended cleanly
            stopped = self.stop_signal is not None or any(v and v.get("status") == "stopped" for v in verdicts.values())
            return run.finish("stopped" if stopped else "completed", None, None, None, 0)
        return run.finish("failed", error, self._best(), None, code)

    def _rank_error(self, verdicts: dict[int, Any]) -> tuple[dict[str, Any] | None, int]:
        failed = self._failed_pid()
        rank = self.workers.get(failed[0]) if failed else None
        if rank is None:  # msrun did not say, or the pid was never seen: a rank's own verdict
            rank = next((r for r, v in verdicts.items() if v and v.get("status") == "failed"), None)
        if rank is None:
            if self.proc.returncode == 0:
                return None, 0
            # A node other than the master whose ranks all ended cleanly: what failed was msrun's
            # own end, e.g. the scheduler it starts whenever the master address is one of this
            # host's (two nodes on one machine), which cannot bind the master's port. The ranks'
            # verdicts are the truth about the training.
            if (
                self.node_rank > 0
                and verdicts
                and all(v and v.get("status") in ("completed", "stopped") for v in verdicts.values())
            ):
                return None, 0
            tail = _log_tail(os.path.join(self.ranks_dir, "msrun.log"))
            return (
                error_dict(
                    "msrun_failed",
                    f"msrun exited with {self.proc.returncode} before any rank "
                    f"finished: {tail[-1] if tail else 'no output'} (see {RANKS_DIR}/msrun.log)",
                    "msrun_failed",
                    {
                        "returncode": self.proc.returncode,
                        "last": tail[-1] if tail else None,
                        "log": f"{RANKS_DIR}/msrun.log",
                    },
                    trace_tail="\n".join(tail) or None,
                ),
                1,
            )
        log_rel = os.path.join(RANKS_DIR, f"worker_{rank}.log")
        tail = _log_tail(os.path.join(self.run_dir, log_rel))
        own = (verdicts.get(rank) or {}).get("error") if verdicts.get(rank) else None
        if own:
            error = {**own, "message": f"rank {rank} failed: {own.get('message')}", "rank": rank, "log": log_rel}
            return error, int((verdicts.get(rank) or {}).get("exit_code") or 1)
        how = (
            f"exited with code {failed[1]}"
            if failed and failed[1] >= 0
            else (f"was killed by {signal.Signals(-failed[1]).name}" if failed else "died")
        )
        last = tail[-1] if tail else "its log is empty"
        return (
            error_dict(
                "rank_failed",
                f"rank {rank} {how}: {last} (see {log_rel})",
                "rank_failed",
                {
                    "rank": rank,
                    "returncode": failed[1] if failed else None,
                    "last": tail[-1] if tail else None,
                    "log": log_rel,
                },  # fmt: skip
                rank=rank,
                log=log_rel,
                trace_tail="\n".join(tail) or None,
            ),
            1,
        )

    def _best(self) -> dict[str, Any] | None:
        entries = _read_json(os.path.join(self.run_dir, "checkpoints.json")) or []
        best = next((e for e in entries if isinstance(e, dict) and e.get("best")), None)
        return {k: best[k] for k in ("file", "epoch", "step", "metrics")} if best else None


def launch(run: HeldRun, node_rank: int = 0, master_port: int | None = None, checks: NodeChecks | None = None) -> int:
    """A run of several ranks, from the process that holds the run (the CLI's `train`): msrun for this
    node's ranks, watched to the end. `checks`: this node's pre-flight (train/preflight.node_warnings)."""
    run.begin()
    spec = run.spec
    if spec["train"].get("cache_features"):  # refused before msrun starts anything
        return run.finish(
            "failed",
            error_dict(
                "bad_input",
                "cache_features trains on one device; this spec has "
                f"{local_ranks(spec)} device id(s) on {node_count(spec)} node(s)",
                "cache_features_distributed",
                {"devices": local_ranks(spec), "nodes": node_count(spec)},
                path="train.cache_features",
                trace_tail=None,
                fix="use one device id on one machine, or set train.cache_features to false",
            ),
            None,
            None,
            2,
        )
    try:
        prepare_data(spec, run.run_dir)
        prepare_weights(spec, run.run_dir, run.resume_from, run.log.emit, node_rank)
    except DataError as e:  # what every rank would have failed with, before msrun starts any
        return run.finish(
            "failed",
            error_dict("bad_input", e.message, e.why, e.params, path=e.path, fix=e.fix, trace_tail=None),
            None,
            None,
            2,
        )
    except PretrainedError as e:  # a download or a file every rank would have failed on
        return run.finish("failed", error_dict("bad_input", str(e), e.why, e.params, trace_tail=None), None, None, 2)
    except Exception as e:  # a full disk, a cache folder that cannot be used: the run ends saying so
        return _failed(run, e)
    try:
        return Launcher(run, node_rank, master_port, checks).start()
    except Exception as e:  # the launcher itself failed (msrun missing, bad node rank, ...)
        return _failed(run, e)


def _failed(run: HeldRun, e: Exception) -> int:
    """The run's end on an error the launcher did not expect (called in its `except`), as `execute` ends a
    single process: `unsafe_file` (exit 2) for a planted symlink or folder, `disk_full` on a full disk,
    else the exception as it is."""
    if isinstance(e, UnsafeFile):
        return run.finish("failed", e.as_dict(), None, None, 2)
    tail = "\n".join(traceback.format_exc().strip().splitlines()[-LOG_TAIL_LINES:])
    error = disk_full_error(run.run_dir, e, tail) if is_disk_full(e) else exception_error(e, trace_tail=tail)
    return run.finish("failed", error, None, None, 1)
