"""Many devices, many machines: data-parallel training through MindSpore's own launcher, `msrun`.

A run whose `device.ids` times `device.nodes` is more than one trains in three roles:

- the **launcher** is the `train` process (the one `launch` starts, or a foreground `train`). It
  holds the run directory's lock, `status.json` and the control inbox, starts `msrun` for this
  node's ranks, forwards SIGTERM/SIGINT to them, watches them, cleans up every process msrun left,
  and writes `run_finished` when rank 0 could not (a rank that died);
- **rank 0** trains and writes the run's events and checkpoints, and takes the control requests;
- the **other ranks** train the same steps on their shard of the data and write nothing but their
  log (`RUN_DIR/ranks/worker_<rank>.log`, written by msrun) and `ranks/rank-<rank>.json`.

Every rank stops at the same step: after each step (and once after set-up) the ranks sum a
stop flag with one AllReduce, so a stop that rank 0 took from the inbox, or a signal any rank got,
ends them all after that step. Reading the inbox on every rank instead would desync them (a file
seen at step k by one rank and k+1 by another leaves the others waiting in the gradient AllReduce
for ever), and the other nodes of a multi-node run cannot see the inbox at all.

msrun runs `python SCRIPT ARGS` with the `python` found on PATH and its task script must be a
file, so the launcher puts its own interpreter's folder first on PATH and runs `rank_entry.py`.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from .control import ControlInbox
from .events import EventLog, read_events
from .rundir import atomic_write_json, write_status
from .train import Run

RANKS_DIR = "ranks"
ENTRY_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank_entry.py")
# Test-only fault injection, read by the ranks: "RANK:STEP" makes that rank print a line to its
# log and os._exit(3) right after that global step (test/runner/test_msrun.py).
FAULT_ENV = "ASCEND_FINETUNE_TEST_EXIT_AT"
FAULT_EXIT_CODE = 3
# After a rank failed, msrun kills the other local ranks at once but then waits for its
# scheduler, which only gives up on the dead ranks after its node timeout (about 30 s here).
SCHEDULER_GRACE_S = 3.0
POLL_S = 0.2
LOG_TAIL_LINES = 15


# -- the world: how many ranks, where ------------------------------------------------------------

def local_ranks(spec: dict[str, Any]) -> int:
    return len(spec["device"]["ids"])


def node_names(spec: dict[str, Any]) -> list[str]:
    return list(spec["device"].get("nodes") or [])


def world_size(spec: dict[str, Any]) -> int:
    """Ranks in the whole run: device ids per node times nodes (one node when `nodes` is empty)."""
    return local_ranks(spec) * max(1, len(node_names(spec)))


def is_distributed(spec: dict[str, Any]) -> bool:
    return world_size(spec) > 1


def master_addr(spec: dict[str, Any]) -> str:
    """The first node runs msrun's scheduler; one node talks to itself over loopback."""
    nodes = node_names(spec)
    return nodes[0] if len(nodes) > 1 else "127.0.0.1"


def free_port() -> int:
    """A TCP port free right now on this host (msrun wants 1024-65535)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def msrun_program(python: str) -> list[str]:
    """msrun's console script beside the interpreter, else its module (the same `main`)."""
    script = os.path.join(os.path.dirname(python), "msrun")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [python, "-m", "mindspore.parallel.cluster.run"]


def msrun_argv(spec: dict[str, Any], run_dir: str, node_rank: int, master_port: int,
               resume: str | None = None, python: str = sys.executable) -> list[str]:
    """The msrun command line for one node: its `local_worker_num` ranks run rank_entry.py."""
    run_dir = os.path.abspath(run_dir)
    nodes = max(1, len(node_names(spec)))
    if not 0 <= node_rank < nodes:
        raise ValueError(f"node rank {node_rank} is outside the run's {nodes} node(s) (device.nodes)")
    argv = msrun_program(python) + [
        f"--worker_num={world_size(spec)}", f"--local_worker_num={local_ranks(spec)}",
        f"--master_addr={master_addr(spec)}", f"--master_port={int(master_port)}",
        f"--node_rank={node_rank}", f"--log_dir={os.path.join(run_dir, RANKS_DIR)}", "--join=True",
        ENTRY_SCRIPT, "--spec", os.path.join(run_dir, "spec.json"), "--run-dir", run_dir]
    if resume:
        argv += ["--resume", os.path.abspath(resume)]
    return argv


def node_plan(spec: dict[str, Any], spec_path: str, run_dir: str, master_port: int | None = None) -> dict[str, Any]:
    """What to start on each node of a multi-node run: the runner arguments (after
    `python -m ascend_finetune`) of one `train` per node, each with its node rank and the shared
    master port. The extension runs them on the SSH targets named in `device.nodes`."""
    nodes = node_names(spec) or ["localhost"]
    port = int(master_port or spec["device"].get("master_port") or free_port())
    out = []
    for rank, node in enumerate(nodes):
        args = ["train", spec_path, "--run-dir", run_dir, "--node-rank", str(rank), "--master-port", str(port)]
        out.append({"node": node, "node_rank": rank, "ranks": list(range(rank * local_ranks(spec), (rank + 1) * local_ranks(spec))),
                    "args": args})
    return {"world_size": world_size(spec), "master_addr": master_addr(spec), "master_port": port, "nodes": out}


# -- inside a rank ---------------------------------------------------------------------------------

@dataclass
class RankInfo:
    rank: int
    size: int
    local_rank: int


_current: RankInfo | None = None
_early_signals: list[int] = []
_current_run: "RankRun | None" = None


def current() -> RankInfo | None:
    """This process's rank when msrun started it, else None (a single-process run)."""
    return _current


def device_id(spec: dict[str, Any], target: str) -> int:
    """On Ascend each local rank uses ids[local_rank]; on CPU the id means nothing."""
    ids = spec["device"]["ids"]
    return ids[_current.local_rank] if (_current and target == "Ascend") else ids[0]


def join(info: RankInfo) -> None:
    """Join msrun's cluster and set data-parallel mode, with gradients averaged over the ranks.
    Called once the device is set (init() needs it)."""
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    init()
    if (get_rank(), get_group_size()) != (info.rank, info.size):
        raise RuntimeError(f"msrun gave rank {get_rank()} of {get_group_size()}, but RANK_ID/MS_WORKER_NUM said "
                           f"{info.rank} of {info.size}")
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                 device_num=info.size)


class _NullLog:
    """The event log of a rank other than 0: it writes nothing."""

    seq = 0

    def emit(self, type_: str, **payload: Any) -> dict[str, Any]:
        return {"type": type_, **payload}

    def close(self) -> None:
        pass


class _NoInbox(ControlInbox):
    """Only rank 0 reads control/: the others learn of a stop through the stop flag."""

    def __init__(self) -> None:
        pass

    def poll(self) -> list[tuple[str, str]]:
        return []

    def clear(self) -> None:
        pass


class _StopFlag:
    """Sums one float over the ranks: > 0 means some rank wants to stop after this step.
    (CPU's AllReduce supports only a sum.)"""

    def __init__(self) -> None:
        import mindspore as ms
        from mindspore import nn, ops

        class Sum(nn.Cell):
            def __init__(self):
                super().__init__()
                self.all_reduce = ops.AllReduce()

            def construct(self, x):
                return self.all_reduce(x)

        self._ms, self._cell = ms, Sum()

    def __call__(self, wanted: bool) -> bool:
        import numpy as np

        x = self._ms.Tensor(np.array([1.0 if wanted else 0.0], np.float32))
        return float(self._cell(x).asnumpy()[0]) > 0.5


class RankRun(Run):
    """One rank's training. Not Run.__init__: the launcher holds the lock, status.json and the
    inbox (it cleared the inbox at its start; a rank that cleared it again could drop a stop)."""

    def __init__(self, spec: dict[str, Any], run_dir: str, resume: str | None, info: RankInfo):
        run_dir = os.path.abspath(run_dir)
        self.spec, self.run_dir, self.info = spec, run_dir, info
        self.resume_from = os.path.abspath(resume) if resume else None
        self.owns_status = False
        os.chdir(run_dir)
        self.log = EventLog(os.path.join(run_dir, "events.jsonl")) if info.rank == 0 else _NullLog()
        self.stop_requested = False
        self.stop_reason = None
        self.inbox = ControlInbox(run_dir) if info.rank == 0 else _NoInbox()
        self.pending_warnings: list[dict[str, Any]] = []
        self._stop_flag: _StopFlag | None = None
        fault = os.environ.get(FAULT_ENV, "")
        self._fault = tuple(int(v) for v in fault.split(":")) if re.fullmatch(r"\d+:\d+", fault) else None
        if info.rank:  # npu-smi telemetry goes to events: rank 0 samples every device of its node
            spec = self.spec = {**spec, "device": {**spec["device"], "telemetry_s": 0}}
        global _current_run
        _current_run = self
        for signum in list(_early_signals):  # a stop sent while MindSpore was still loading
            self._on_signal(signum, None)

    def _take_requests(self, metrics: dict[str, Any]) -> None:
        if self.info.rank == 0:
            super()._take_requests(metrics)
        tr = self.trainer
        if self._fault and self._fault == (self.info.rank, tr.step):
            sys.stderr.write(f"test fault ({FAULT_ENV}): rank {self.info.rank} exits with code {FAULT_EXIT_CODE} "
                             f"after step {tr.step}\n")
            sys.stderr.flush()
            os._exit(FAULT_EXIT_CODE)
        if self._stop_flag is None:
            self._stop_flag = _StopFlag()
        if self._stop_flag(self.stop_requested) and not self.stop_requested:
            # Another rank got the signal (or rank 0 took a stop): stop after this same step.
            self.stop_requested, self.stop_reason = True, "peer"

    def _checkpoint(self, metrics: dict[str, Any]) -> dict[str, Any]:
        if self.info.rank:  # rank 0 saves; the weights are the same on every rank
            self.last_ckpt_step = self.trainer.step
            return {"best": False}
        return super()._checkpoint(metrics)

    def _finish(self, status: str, error, best, final, code: int) -> int:
        code = super()._finish(status, error, best, final, code)
        atomic_write_json(os.path.join(self.run_dir, RANKS_DIR, f"rank-{self.info.rank}.json"),
                          {"rank": self.info.rank, "pid": os.getpid(), "status": status, "error": error,
                           "exit_code": code, "step": self.trainer.step if getattr(self, "trainer", None) else None,
                           "weights_l1": self._weights_l1()})
        return code

    def _weights_l1(self) -> float | None:
        """Sum of |w| over the trainable weights: equal on every rank when the updates were averaged."""
        import numpy as np

        tr = getattr(self, "trainer", None)
        if tr is None:
            return None
        try:
            return float(sum(np.abs(p.asnumpy().astype(np.float64)).sum() for p in tr.net.trainable_params()))
        except Exception:  # a rank that failed mid-step: the verdict matters, not this
            return None


def _early_signal(signum, _frame) -> None:
    if _current_run is not None:
        _current_run._on_signal(signum, _frame)
    else:
        _early_signals.append(signum)


def rank_main(argv: list[str]) -> int:
    """A rank's (or msrun's scheduler's) life; rank_entry.py calls this."""
    import argparse

    global _current
    p = argparse.ArgumentParser(prog="rank_entry.py")
    p.add_argument("--spec", required=True)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--resume")
    a = p.parse_args(argv)
    if os.environ.get("MS_ROLE") == "MS_SCHED":
        # msrun runs the task script as its scheduler too: init() serves the cluster, then exits.
        import mindspore as ms
        from mindspore.communication import init

        ms.set_context(mode=ms.GRAPH_MODE)
        init()
        return 0
    # The launcher forwards SIGTERM/SIGINT; keep one that arrives while MindSpore loads.
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, _early_signal)
    with open(a.spec, encoding="utf-8") as f:
        spec = json.load(f)  # the launcher's resolved spec.json: already validated
    size = int(os.environ.get("MS_WORKER_NUM", world_size(spec)))
    rank = int(os.environ["RANK_ID"])
    _current = RankInfo(rank=rank, size=size, local_rank=int(os.environ.get("DEVICE_ID", rank % local_ranks(spec))))
    return RankRun(spec, a.run_dir, a.resume, _current).execute()


# -- the launcher ----------------------------------------------------------------------------------

def _log_tail(path: str, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last lines of a rank's log, without MindSpore's own [INFO]/[WARNING] lines."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    keep = [l.rstrip() for l in text.splitlines() if l.strip() and not re.match(r"\[(INFO|WARNING|DEBUG)\]", l)]
    return keep[-lines:]


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


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


class Launcher:
    """Runs msrun for one node of the run and turns its outcome into the run's ending."""

    def __init__(self, run: Run, node_rank: int = 0, master_port: int | None = None):
        self.run, self.spec, self.run_dir = run, run.spec, run.run_dir
        self.node_rank = node_rank
        self.master_port = master_port or self.spec["device"].get("master_port") or free_port()
        self.ranks_dir = os.path.join(self.run_dir, RANKS_DIR)
        self.workers: dict[int, int] = {}   # pid -> global rank
        self.worker_pgids: set[int] = set()
        self.forwarded: dict[int, set[int]] = {}  # signal -> pids it reached
        self.stop_signal: int | None = None
        self.proc = None

    def _on_signal(self, signum, _frame) -> None:
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

    def start(self) -> int:
        import subprocess

        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)
        os.makedirs(self.ranks_dir, exist_ok=True)
        for name in os.listdir(self.ranks_dir):  # a resume into the same directory: old verdicts
            if re.fullmatch(r"rank-\d+\.json", name):
                os.remove(os.path.join(self.ranks_dir, name))
        events_path = os.path.join(self.run_dir, "events.jsonl")
        self.events_start = len(read_events(events_path))
        argv = msrun_argv(self.spec, self.run_dir, self.node_rank, self.master_port, self.run.resume_from)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # msrun starts `python` from PATH: make that this interpreter (the venv with MindSpore).
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        with open(os.path.join(self.ranks_dir, "msrun.log"), "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True, cwd=self.run_dir, env=env, close_fds=True)
        try:
            self._watch()
        finally:
            self._kill_everything()  # nothing of this run outlives the launcher
            self.proc.wait()
        return self._conclude(events_path)

    def _watch(self) -> None:
        failed_at = None
        while self.proc.poll() is None:
            self._refresh_workers()
            self._forward_signal()
            if failed_at is None and self._failed_pid():
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > SCHEDULER_GRACE_S \
                    and not any(_alive(p) for p in self.workers):
                _kill_group(self.proc.pid)  # the scheduler would wait out its node timeout
            time.sleep(POLL_S)

    def _conclude(self, events_path: str) -> int:
        run = self.run
        run.log.close()
        run.log = EventLog(events_path)  # rank 0 appended: resync seq, cut a line torn by a kill
        segment = read_events(events_path)[self.events_start:]
        finished = next((e for e in reversed(segment) if e["type"] == "run_finished"), None)
        verdicts = {r: _read_json(os.path.join(self.ranks_dir, f"rank-{r}.json")) for r in sorted(set(self.workers.values()))}
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
            return run._finish("stopped" if stopped else "completed", None, None, None, 0)
        return run._finish("failed", error, self._best(), None, code)

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
            if self.node_rank > 0 and verdicts and all(v and v.get("status") in ("completed", "stopped") for v in verdicts.values()):
                return None, 0
            tail = _log_tail(os.path.join(self.ranks_dir, "msrun.log"))
            return ({"kind": "msrun_failed", "message": f"msrun exited with {self.proc.returncode} before any rank "
                     f"finished: {tail[-1] if tail else 'no output'} (see {RANKS_DIR}/msrun.log)",
                     "trace_tail": "\n".join(tail) or None}, 1)
        log_rel = os.path.join(RANKS_DIR, f"worker_{rank}.log")
        tail = _log_tail(os.path.join(self.run_dir, log_rel))
        own = (verdicts.get(rank) or {}).get("error") if verdicts.get(rank) else None
        if own:
            error = {**own, "message": f"rank {rank} failed: {own.get('message')}", "rank": rank, "log": log_rel}
            return error, int((verdicts.get(rank) or {}).get("exit_code") or 1)
        how = f"exited with code {failed[1]}" if failed and failed[1] >= 0 else \
            (f"was killed by {signal.Signals(-failed[1]).name}" if failed else "died")
        last = tail[-1] if tail else "its log is empty"
        return ({"kind": "rank_failed", "message": f"rank {rank} {how}: {last} (see {log_rel})", "rank": rank,
                 "log": log_rel, "trace_tail": "\n".join(tail) or None}, 1)

    def _best(self) -> dict[str, Any] | None:
        entries = _read_json(os.path.join(self.run_dir, "checkpoints.json")) or []
        best = next((e for e in entries if isinstance(e, dict) and e.get("best")), None)
        return {k: best[k] for k in ("file", "epoch", "step", "metrics")} if best else None


def launch_ranks(run: Run) -> int:
    """Run.execute's path for a run of several ranks (the process that holds the run)."""
    try:
        return Launcher(run, getattr(run, "node_rank", 0) or 0, getattr(run, "master_port", None)).start()
    except Exception as e:  # the launcher itself failed (msrun missing, bad node rank, ...)
        tail = traceback.format_exc().strip().splitlines()[-LOG_TAIL_LINES:]
        return run._finish("failed", {"kind": type(e).__name__, "message": str(e)[:500] or type(e).__name__,
                                      "trace_tail": "\n".join(tail)}, None, None, 1)
