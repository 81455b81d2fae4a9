"""MindSpore's log level for the run's processes, and the filter that keeps its known noise out of the
run's logs.

MindSpore's C++ side logs through glog at the level `GLOG_v` names (0 debug, 1 info, 2 warning,
3 error). The runner used 3, which also hid the warnings a user needs on an NPU box: CANN's and
HCCL's hints arrive as warnings. So the run's processes log at 2, and the lines that MindSpore
prints at that level on every healthy run (msrun's cluster building its topology, connections,
collective groups: dozens per rank, recorded from MindSpore 2.10 in
test/runner/fixtures/glog-noise.log) are dropped on their way into `console.log` and
`ranks/msrun.log`. Anything not on the list stays, and errors always stay.

The filter runs as its own small process between the run's process and the log file (its
stdout), so that a crash of the run, a segfault included, still leaves every line before it in the
log. It uses the standard library only: it starts as a script, without the package.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import sys
from typing import Any, BinaryIO

GLOG_LEVEL = "2"  # warnings and errors

# glog's line: `[LEVEL] MODULE(pid,...):TIME [path/file.cc:LINE] Function] message`; MindSpore's
# Python log has no `Function]`. Only these levels can be noise: an ERROR line always stays.
_LINE = re.compile(rb"^\[(?:WARNING|INFO|DEBUG)\] \w+\([^)]*\):\S+ \[(?:[^\]]*/)?([\w.]+):\d+\] (?:(\w+)\] )?(.*)")

# (source file, function or "", the message's start as a regex): each seen on a healthy run.
NOISE: tuple[tuple[str, str, str], ...] = (
    ("tcp_comm.cc", "Connect", r"Connection \d+ source: "),
    ("compute_graph_node.cc", "Register", r"Failed to connect to the meta server node url"),
    ("compute_graph_node.cc", "ReconnectWithTimeoutWindow", r"Failed to register and try to reconnect"),
    ("cluster_context.cc", "BuildCluster", r"Topology build timed out\., retry\(\d+/\d+\)"),
    ("cluster_context.cc", "BuildCluster", r"Cluster is successfully initialized"),
    ("cluster_context.cc", "PostProcess", r"This node \d+ rank id: \d+"),
    ("allreduce_impl.cc", "Initialize", r"The worker node start sync start"),
    ("ms_collective_comm_lib.cc", "Initialize", r"Mindspore collective communication lib for group \S+ has already"),
    ("ms_collective_comm_lib.cc", "CreateCommunicationGroup", r"The group \S+ has already existed"),
    ("collective_manager.cc", "CreateCommunicationGroup", r"Create collective communication group: "),
    ("libevent_tcp_server.h", "TcpConnection", r"TcpConnection is constructed"),
    ("tcp_client.cc", "Start", r"Event base dispatch success"),
    ("tcp_server.cc", "Start", r"Event base dispatch success"),
    ("meta_server_node.cc", "Initialize", r"(Begin|Finish) to Initialize MetaServerNode"),
    ("meta_server_node.cc", "ProcessRegister", r"The new node: \d+\(role: \w+\).* is registered successfully"),
    ("meta_server_node.cc", "ProcessUnregister", r"Node \d+ has unregistered"),
    ("meta_server_node.cc", "ReassignNodeRank", r"Rank ids are already set"),
    ("meta_server_node.cc", "Finalize", r"Cluster currently has \d+ alive nodes"),
    ("connection.cc", "SocketEventHandler", r"Event value fd: \d+, events: \d+, state: \d+, errcode: 0, errno: 0 "),
    ("_api.py", "", r"Distributed job is spawned"),
)
_NOISE: dict[tuple[bytes, bytes], list[re.Pattern[bytes]]] = {}
for _f, _fn, _msg in NOISE:
    _NOISE.setdefault((_f.encode(), _fn.encode()), []).append(re.compile(_msg.encode()))


def is_noise(line: bytes) -> bool:
    """A MindSpore warning or info line that every healthy run prints (NOISE)."""
    m = _LINE.match(line)
    if not m:
        return False
    return any(p.match(m.group(3)) for p in _NOISE.get((m.group(1), m.group(2) or b""), ()))


def copy_filtered(src: BinaryIO, dst: BinaryIO) -> int:
    """Copies `src` to `dst` line by line without the noise, flushing each line; returns the lines dropped."""
    dropped = 0
    for line in iter(src.readline, b""):
        if is_noise(line):
            dropped += 1
            continue
        dst.write(line)
        dst.flush()
    return dropped


def popen_filtered(
    argv: list[str], log_fd: int, **kwargs: Any
) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """Starts `argv` with stdout and stderr going through the filter into `log_fd` (an open file).
    The filter has a session of its own: a signal to the run's process group leaves it to drain
    the pipe, and it ends when the last writer closes it. Returns (the process, the filter)."""
    filt = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__)],
        stdin=subprocess.PIPE,
        stdout=log_fd,
        stderr=log_fd,
        start_new_session=True,
        close_fds=True,
    )
    assert filt.stdin is not None
    try:
        proc = subprocess.Popen(argv, stdout=filt.stdin, stderr=subprocess.STDOUT, **kwargs)
    finally:
        filt.stdin.close()  # the child holds the pipe now; at its end the filter sees EOF
    return proc, filt


if __name__ == "__main__":
    for _s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(_s, signal.SIG_IGN)  # drain to the end: the run's last lines matter most
    copy_filtered(sys.stdin.buffer, sys.stdout.buffer)


def drop_teardown_noise() -> None:
    """Keep MindSpore's Cell.__del__ out of stderr at interpreter exit. There it reads module globals
    that shutdown has already set to None, and Python prints "Exception ignored in: Cell.__del__" with
    a traceback for each cell still alive: 176 of them after a healthy run with a mindcv backbone
    (MindSpore 2.10), in the run's console.log. Only that case is dropped, and only while Python is
    finalizing: an AttributeError raised in a `__del__` of mindspore/nn/cell.py (told by the failing
    function, or by the traceback's last frame where a later Python gives no function). Every other
    unraisable exception goes on to the hook that was there before. The hook keeps its own references:
    the module's globals are gone by the time it runs."""

    if getattr(sys.unraisablehook, "drops_teardown_noise", False):
        return  # installed already (cli.main called again in one process)

    def hook(
        u: Any,
        _finalizing: Any = sys.is_finalizing,
        _before: Any = sys.unraisablehook,
        _attribute_error: type = AttributeError,
        _getattr: Any = getattr,
    ) -> None:
        if _finalizing() and u.exc_type is _attribute_error:
            if _getattr(u.object, "__qualname__", "") == "Cell.__del__":
                return
            tb = u.exc_traceback
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            code = tb.tb_frame.f_code if tb is not None else None
            if code is not None and code.co_name == "__del__" and code.co_filename.endswith("nn/cell.py"):
                return
        _before(u)

    hook.drops_teardown_noise = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def configure_env() -> None:
    """Set before MindSpore loads. oneDNN's AVX-512 convolutions in MindSpore's CPU build fall back to
    its reference kernel and ran 13-22x slower per resnet18 step (50-70x per conv) than its AVX2 ones
    on this project's machines (bench/onednn_isa.py); a user's own setting wins. GLOG_v=2 keeps MindSpore's
    C++ warnings (CANN's and HCCL's hints among them) and drops its info lines; the known noise among
    the warnings is filtered out of the run's logs (logfilter.py)."""
    if platform.machine() in ("x86_64", "AMD64"):
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    os.environ.setdefault("GLOG_v", GLOG_LEVEL)
