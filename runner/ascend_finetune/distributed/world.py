"""The world of a run: how many ranks on how many nodes, msrun's command line for one node, and
which rank this process is. Pure functions of the spec (no MindSpore), so the CLI's `nodes` and the
tests can call them anywhere."""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..spec_types import RunSpec

RANKS_DIR = "ranks"
NODE_PREFLIGHT_FILE = "preflight-node-{}.json"  # in RANKS_DIR: a node's pre-flight (launcher.py)
# The task script msrun starts once per rank: a file, as msrun wants (see rank_entry.py).
ENTRY_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rank_entry.py")


def local_ranks(spec: RunSpec) -> int:
    return len(spec["device"]["ids"])


def node_names(spec: RunSpec) -> list[str]:
    return list(spec["device"].get("nodes") or [])


def node_count(spec: RunSpec) -> int:
    """Machines in the run: one when `device.nodes` is empty."""
    return max(1, len(node_names(spec)))


def world_size(spec: RunSpec) -> int:
    """Ranks in the whole run: device ids per node times nodes (one node when `nodes` is empty)."""
    return local_ranks(spec) * node_count(spec)


def is_distributed(spec: RunSpec) -> bool:
    return world_size(spec) > 1


def master_addr(spec: RunSpec) -> str:
    """The first node runs msrun's scheduler; one node talks to itself over loopback."""
    nodes = node_names(spec)
    return nodes[0] if len(nodes) > 1 else "127.0.0.1"


Resolver = Callable[[str], list[str]]


def _resolve(name: str) -> list[str]:
    """The addresses `name` resolves to on this host (as msrun's own lookup sees them)."""
    try:
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)})
    except OSError:
        return []


def _loopback(addr: str) -> bool:
    return addr.startswith("127.") or addr in ("::1", "0.0.0.0", "::")


def master_address(spec: RunSpec, resolve: Resolver | None = None) -> str:
    """The address msrun gets as `--master_addr`, checked on this host.

    Where a host's /etc/hosts maps its own name to 127.0.1.1 (Debian and Ubuntu do), msrun's scheduler
    on the master listens on loopback and the other nodes wait out `cluster_time_out` (600 s). So the
    nodes are resolved first: when every node is this host (all loopback) loopback is right; when some
    are other hosts, a node that resolves only to loopback is a ValueError naming the node and the fix,
    and the master is given by its first non-loopback address."""
    nodes = node_names(spec)
    if len(nodes) <= 1:
        return "127.0.0.1"
    resolve = resolve or _resolve
    addrs = {n: resolve(n) for n in nodes}
    local = [n for n in nodes if addrs[n] and all(_loopback(a) for a in addrs[n])]
    if len(local) == len(nodes):
        return nodes[0]
    if local:
        n = local[0]
        raise ValueError(
            f"device.nodes: {n!r} resolves to {', '.join(addrs[n])} (loopback) on this host, but the run spans "
            f"other hosts: msrun's scheduler would listen on loopback and the other nodes would wait 600 s for it. "
            f"Put {n}'s network address (its IP on the cluster network) in device.nodes, or map its name to that "
            "address in /etc/hosts instead of 127.0.1.1"
        )
    master = [a for a in addrs[nodes[0]] if not _loopback(a)]
    if not master:  # unresolvable here: leave it to msrun, which fails with its own message
        return nodes[0]
    v4 = [a for a in master if ":" not in a]
    return (v4 or master)[0]


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


def msrun_argv(
    spec: RunSpec,
    run_dir: str,
    node_rank: int,
    master_port: int,
    resume: str | None = None,
    python: str = sys.executable,
) -> list[str]:
    """The msrun command line for one node: its `local_worker_num` ranks run rank_entry.py."""
    run_dir = os.path.abspath(run_dir)
    nodes = node_count(spec)
    if not 0 <= node_rank < nodes:
        raise ValueError(f"node rank {node_rank} is outside the run's {nodes} node(s) (device.nodes)")
    argv = msrun_program(python) + [
        f"--worker_num={world_size(spec)}",
        f"--local_worker_num={local_ranks(spec)}",
        f"--master_addr={master_address(spec)}",
        f"--master_port={int(master_port)}",
        f"--node_rank={node_rank}",
        f"--log_dir={os.path.join(run_dir, RANKS_DIR)}",
        "--join=True",
        ENTRY_SCRIPT,
        "--spec",
        os.path.join(run_dir, "spec.json"),
        "--run-dir",
        run_dir,
    ]
    if resume:
        argv += ["--resume", os.path.abspath(resume)]
    return argv


def node_plan(spec: RunSpec, spec_path: str, run_dir: str, master_port: int | None = None) -> dict[str, Any]:
    """What to start on each node of a multi-node run: the runner arguments (after
    `python -m ascend_finetune`) of one `train` per node, each with its node rank and the shared
    master port. The extension runs them on the SSH targets named in `device.nodes`."""
    nodes = node_names(spec) or ["localhost"]
    port = int(master_port or spec["device"].get("master_port") or free_port())
    out = []
    for rank, node in enumerate(nodes):
        args = ["train", spec_path, "--run-dir", run_dir, "--node-rank", str(rank), "--master-port", str(port)]
        out.append(
            {
                "node": node,
                "node_rank": rank,
                "ranks": list(range(rank * local_ranks(spec), (rank + 1) * local_ranks(spec))),
                "args": args,
            }
        )
    return {"world_size": world_size(spec), "master_addr": master_addr(spec), "master_port": port, "nodes": out}


@dataclass
class RankInfo:
    """This process's place in the run when msrun started it (rank_entry.py reads it from msrun's environment)."""

    rank: int
    size: int
    local_rank: int


def device_id(spec: RunSpec, target: str, rank: RankInfo | None) -> int:
    """On Ascend each local rank uses ids[local_rank]; on CPU the id means nothing. The ids are
    MindSpore's: under ASCEND_RT_VISIBLE_DEVICES, 0..n-1 over the visible devices (device/visible.py);
    an id outside them is a ValueError that names the fix."""
    ids: list[int] = spec["device"]["ids"]
    if target == "Ascend":
        from ..device.visible import check_ids

        problem = check_ids(ids)
        if problem:
            raise ValueError(problem)
    return ids[rank.local_rank] if (rank and target == "Ascend") else ids[0]


def msrun_supports_bind_core() -> bool:
    """Whether the installed msrun takes `--bind_core` (MindSpore 2.4+), read from its source
    (mindspore/parallel/cluster/run.py) rather than by importing MindSpore or running `msrun --help`."""
    import importlib.util

    spec = importlib.util.find_spec("mindspore")  # finds the package without importing it
    if spec is None or not spec.origin:
        return False
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "parallel", "cluster", "run.py"), encoding="utf-8") as f:
            return '"--bind_core"' in f.read()
    except OSError:
        return False


def bind_core_argv(spec: RunSpec, argv: list[str], supported: bool | None = None) -> list[str]:
    """msrun's argv with `--bind_core=True` (each rank on its own share of the cores, near its NPU,
    as mindcv's and ModelZoo's Ascend scripts run) when the run may use Ascend and msrun has the flag.
    Not on CPU: there the ranks' own compute threads need every core."""
    from ..device.backend import ASCEND_SIGNS

    target = spec["device"].get("target", "auto")
    ascend = target == "Ascend" or (target == "auto" and any(os.path.exists(p) for p in ASCEND_SIGNS))
    if not ascend or not (msrun_supports_bind_core() if supported is None else supported):
        return argv
    i = argv.index(ENTRY_SCRIPT)
    return argv[:i] + ["--bind_core=True"] + argv[i:]
