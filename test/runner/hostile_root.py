"""A runs root full of hostile run directories next to two good ones, for every reader of a runs root
(the runner's `ls` and `attach` here; the dashboard server and the extension core from TypeScript).

    python test/runner/hostile_root.py DIR [--pid PID]

builds it under DIR (created; must be empty or missing) and prints a JSON summary:
{"root", "good": [run ids], "bad": [{"run_id", "problem", "attach_error"}], "lines": {...}}.
`problem` is a substring of the `problem` that `ls` gives that run; `attach_error` says whether
`attach --no-follow` on it ends with an `{"error": ...}` line (exit 1) rather than streaming its
events. The "running" good run names PID as its training process (default: the caller, the parent
of this process), so it stays `running` while that process lives.

Only the standard library: the TypeScript tests run this file with any python3.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any

HUGE_LINE_BYTES = (64 << 20) + 1024  # just over the runner's event-line cap (events.MAX_LINE_BYTES)


def _write(path: str, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(data if isinstance(data, str) else json.dumps(data))


def _start_time(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _event(seq: int, type_: str, **payload: Any) -> str:
    return json.dumps({"v": 1, "seq": seq, "t": 1796204880.0 + seq, "type": type_, **payload}) + "\n"


def _good_events(n_steps: int, finished: bool) -> list[str]:
    lines = [_event(1, "run_started", run_id="x", total_steps=n_steps)]
    for i in range(1, n_steps + 1):
        lines.append(_event(len(lines) + 1, "step", epoch=1, step=i, loss=1.0 / i))
    if finished:
        lines.append(
            _event(
                len(lines) + 1,
                "run_finished",
                status="completed",
                error=None,
                best=None,
                final=None,
            )
        )
    return lines


def _status(run_id: str, **over: Any) -> dict[str, Any]:
    s = {
        "run_id": run_id,
        "state": "completed",
        "pid": 4_000_000,
        "host": socket.gethostname(),
        "started_at": 1796204880.0,
        "ended_at": 1796204890.0,
        "exit_code": 0,
        "pid_start": 1,
    }
    s.update(over)
    return s


def _spec(name: str) -> dict[str, Any]:
    return {"name": name, "model": {"backbone": "resnet18"}, "train": {"epochs": 2}}


def _run(root: str, run_id: str, status: Any = None, spec: Any = None, events: Any = None) -> str:
    d = os.path.join(root, run_id)
    os.makedirs(d)
    if status is not None:
        _write(os.path.join(d, "status.json"), status)
    if spec is not None:
        _write(os.path.join(d, "spec.json"), spec)
    if events is not None:
        _write(os.path.join(d, "events.jsonl"), "".join(events))
    return d


def build(root: str, live_pid: int | None = None) -> dict[str, Any]:
    """Build the root under `root` (created if missing). `live_pid`: a process that stays alive while
    the root is used (the `running` good run names it); default: this process."""
    pid = live_pid or os.getpid()
    os.makedirs(root, exist_ok=True)
    bad: list[dict[str, Any]] = []

    def add_bad(run_id: str, problem: str, attach_error: bool) -> None:
        bad.append({"run_id": run_id, "problem": problem, "attach_error": attach_error})

    # --- the good runs
    done = _run(
        root,
        "good-completed",
        _status("good-completed"),
        _spec("done"),
        _good_events(5, finished=True),
    )
    _write(
        os.path.join(done, "checkpoints.json"),
        [
            {
                "file": "checkpoints/done-e1-s5.ckpt",
                "epoch": 1,
                "step": 5,
                "metrics": {"loss": 0.2, "val_acc": 0.75},
                "bytes": 1,
                "sha256": "0" * 64,
                "created_at": 1796204889.0,
                "best": True,
            }
        ],
    )
    _run(
        root,
        "good-running",
        _status(
            "good-running",
            state="running",
            pid=pid,
            pid_start=_start_time(pid),
            started_at=time.time(),
            ended_at=None,
            exit_code=None,
        ),
        _spec("live"),
        _good_events(3, finished=False),
    )
    good = ["good-completed", "good-running"]

    # --- special files where JSON or the log should be
    d = _run(root, "spec-devzero", _status("spec-devzero"), None, _good_events(2, True))
    os.symlink("/dev/zero", os.path.join(d, "spec.json"))
    add_bad("spec-devzero", "spec.json is a symlink", False)

    d = _run(root, "status-fifo")
    os.mkfifo(os.path.join(d, "status.json"))
    add_bad("status-fifo", "status.json is not a regular file", True)

    d = _run(root, "status-devzero")
    os.symlink("/dev/zero", os.path.join(d, "status.json"))
    add_bad("status-devzero", "status.json is a symlink", True)

    d = _run(root, "status-dir")
    os.mkdir(os.path.join(d, "status.json"))
    add_bad("status-dir", "status.json is not a regular file", True)

    d = _run(root, "status-huge", None, _spec("huge"))
    with open(os.path.join(d, "status.json"), "w") as f:
        f.write('{"state": "completed", "pad": "' + "x" * (2 << 20) + '"}')
    add_bad("status-huge", "status.json is larger than", True)

    d = _run(root, "events-fifo", _status("events-fifo"), _spec("ef"))
    os.mkfifo(os.path.join(d, "events.jsonl"))
    add_bad("events-fifo", "events.jsonl is not a regular file", True)

    d = _run(root, "events-devzero", _status("events-devzero"), _spec("ez"))
    os.symlink("/dev/zero", os.path.join(d, "events.jsonl"))
    add_bad("events-devzero", "events.jsonl is a symlink", True)

    # --- valid JSON of the wrong type
    _run(root, "status-list", [1])
    add_bad("status-list", "status.json is not a JSON object", True)
    _run(root, "status-nested", "[" * 100_000 + "]" * 100_000)
    add_bad("status-nested", "status.json is not valid JSON", True)
    _run(root, "spec-list", _status("spec-list"), [1], _good_events(2, True))
    add_bad("spec-list", "spec.json is not a JSON object", False)
    _run(
        root,
        "spec-model-int",
        _status("spec-model-int"),
        {"name": "m", "model": 5},
        _good_events(2, True),
    )
    add_bad("spec-model-int", "spec.json: model must be an object", False)
    _run(
        root,
        "started-str",
        _status("started-str", started_at="yesterday"),
        _spec("s"),
        _good_events(2, True),
    )
    add_bad("started-str", "status.json: started_at must be a number", False)
    _run(
        root,
        "pid-str",
        _status("pid-str", state="running", pid="123"),
        _spec("p"),
        _good_events(2, False),
    )
    add_bad("pid-str", "status.json: pid must be an integer", False)
    _run(
        root,
        "pid-float",
        _status("pid-float", state="running", pid=1e20),
        _spec("p"),
        _good_events(2, False),
    )
    add_bad("pid-float", "status.json: pid must be an integer", False)
    _run(
        root,
        "pid-bigint",
        _status("pid-bigint", state="running", pid=10**20),
        _spec("p"),
        _good_events(2, False),
    )
    add_bad("pid-bigint", "status.json: pid must be an integer", False)
    d = _run(
        root,
        "manifest-int",
        _status("manifest-int"),
        _spec("mi"),
        _good_events(2, True),
    )
    _write(os.path.join(d, "checkpoints.json"), 5)
    add_bad("manifest-int", "checkpoints.json is not a JSON array", False)

    # --- a log with lines that are not events, and one line over the cap, between good lines: `ls`
    # reads its tail fine, `attach` streams the good lines and warns about the others on stderr
    evs = _good_events(4, finished=True)
    junk = [
        "123\n",
        "[1]\n",
        "null\n",
        '"a string"\n',
        '{"seq": "7", "type": "step"}\n',
        '{"type": "step"}\n',
    ]
    d = _run(root, "events-junk", _status("events-junk"), _spec("junk"))
    with open(os.path.join(d, "events.jsonl"), "w", encoding="utf-8") as f:
        f.write(evs[0])
        f.writelines(junk)
        f.write(evs[1])
        f.write('{"pad": "' + "x" * HUGE_LINE_BYTES + '"}\n')
        f.writelines(evs[2:])
    good.append("events-junk")

    return {
        "root": os.path.abspath(root),
        "good": good,
        "bad": bad,
        # what `attach --no-follow` prints on stdout for the good runs: their event lines, in order
        "lines": {"good-completed": 7, "good-running": 4, "events-junk": 6},
        "junk_lines_in_events_junk": len(junk) + 1,
        "live_pid": pid,
    }


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument(
        "--pid",
        type=int,
        default=os.getppid(),
        help="the live process of the running run",
    )
    a = p.parse_args(argv)
    if os.path.isdir(a.dir) and os.listdir(a.dir):
        print(json.dumps({"error": f"{a.dir} is not empty"}))
        return 2
    print(json.dumps(build(a.dir, a.pid)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
