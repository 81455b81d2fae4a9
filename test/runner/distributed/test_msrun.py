"""Several ranks through MindSpore's own launcher, msrun: two CPU workers on this host.

Real msrun, real MindSpore data parallel (gradients averaged by AllReduce), real processes: the
launcher (`train`), msrun, its scheduler and one process per rank. Each test ends by listing the
processes of this machine (/proc) and failing on any that still belongs to the run.

Test-only fault injection: ASCEND_FINETUNE_TEST_EXIT_AT="RANK:STEP" makes that rank print a line to
its log and os._exit(3) right after that global step (strategy.FAULT_ENV).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, assert_contiguous, events, of_type, spec, wait_for, write_spec
from test_node_preflight import fake_npu_smi  # this folder is on sys.path, as for conftest

from ascend_finetune.distributed import strategy, world  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "msrun").exists()
    and subprocess.run([sys.executable, "-c", "import mindspore.parallel.cluster.run"], capture_output=True).returncode
    != 0,
    reason="needs MindSpore's msrun",
)

TWO_RANKS = {"device": {"target": "CPU", "ids": [0, 1]}}


def cli(*args: str, env: dict | None = None, timeout: float = 600, wait: bool = True):
    """`python -m ascend_finetune ARGS` with the runner on PYTHONPATH (an existing PYTHONPATH kept)."""
    e = dict(os.environ, **(env or {}))
    e["PYTHONPATH"] = str(ROOT / "runner") + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    argv = [sys.executable, "-m", "ascend_finetune", *args]
    if not wait:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=e)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    return r.returncode, (json.loads(lines[-1]) if lines else {"stderr": r.stderr[-3000:]})


def run_processes(run_dir: Path) -> list[str]:
    """Every live process whose command line names the run directory (launcher, msrun, scheduler, ranks)."""
    needle = str(run_dir).encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in cmd and state != b"Z":
            found.append(pid + ": " + cmd.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


def assert_no_orphans(run_dir: Path) -> None:
    # The launcher writes status.json before it exits: give the last processes a moment to go.
    try:
        wait_for(lambda: not run_processes(run_dir), timeout=30, what="the run's processes to exit")
    except AssertionError:
        left = run_processes(run_dir)
        for line in left:  # do not leave them hogging the cores for the next tests
            try:
                os.kill(int(line.split(":")[0]), signal.SIGKILL)
            except OSError:
                pass
        raise AssertionError(f"processes of the run still alive: {left}") from None


def rank_verdicts(run_dir: Path) -> dict[int, dict]:
    return {int(p.stem.split("-")[1]): json.loads(p.read_text()) for p in (run_dir / "ranks").glob("rank-*.json")}


@pytest.fixture(scope="module")
def small_data(tmp_path_factory) -> Path:
    from ascend_finetune.data.demo import make_shapes

    out = tmp_path_factory.mktemp("msrun") / "shapes"
    make_shapes(str(out), per_class=20, size=32, seed=3)  # 72 train / 8 val images
    return out


@pytest.fixture(scope="module")
def two_rank_run(tmp_path_factory, small_data) -> Path:
    """batch 8 per device x 2 ranks, 2 epochs; every_steps 3 so a mid-epoch checkpoint is saved too."""
    d = tmp_path_factory.mktemp("dp")
    s = spec(small_data, name="dp", data={"batch_size": 8, "workers": 2}, checkpoint={"every_steps": 3}, **TWO_RANKS)
    code, out = cli("train", str(write_spec(d / "dp.json", s)), "--run-dir", str(d / "run"))
    assert code == 0, out
    return d / "run"


# ---------------------------------------------------------------- a whole run on two ranks


def test_two_ranks_take_the_single_process_steps_and_learn(two_rank_run, small_data, tmp_path):
    evs = events(two_rank_run)
    assert_contiguous(evs)
    assert [e["type"] for e in evs].count("run_started") == 1, "only rank 0 writes events"
    started = of_type(evs, "run_started")[0]
    assert started["global_batch"] == 16 and started["spec"]["data"]["batch_size"] == 8
    steps = of_type(evs, "step")
    assert [e["step"] for e in steps] == list(range(1, started["total_steps"] + 1))
    assert of_type(evs, "run_finished")[-1]["status"] == "completed"

    # The same data with the same global batch (16) in one process: the same steps.
    single = spec(small_data, name="one", data={"batch_size": 16, "workers": 2}, checkpoint={"every_steps": 3})
    code, out = cli("train", str(write_spec(tmp_path / "one.json", single)), "--run-dir", str(tmp_path / "one"))
    assert code == 0, out
    one = events(tmp_path / "one")
    one_started = of_type(one, "run_started")[0]
    assert (started["steps_per_epoch"], started["total_steps"]) == (
        one_started["steps_per_epoch"],
        one_started["total_steps"],
    )
    assert len(steps) == len(of_type(one, "step")) == 8

    losses = [e["loss"] for e in steps]
    assert sum(losses[-2:]) / 2 < sum(losses[:2]) / 2, f"the loss must fall: {losses}"
    # img_per_s is the run's: both ranks' images per step over the step time.
    for e in steps:
        assert e["img_per_s"] == pytest.approx(16 / (e["step_ms"] / 1000), rel=0.02)


def test_two_ranks_write_the_run_like_one_process(two_rank_run):
    evs = events(two_rank_run)
    codes = [w["code"] for w in of_type(evs, "warning")]
    assert "sink_unavailable" in codes
    assert "workers_above_cores" in codes or (os.cpu_count() or 1) >= 4, "2 workers x 2 ranks on a small box"
    status = json.loads((two_rank_run / "status.json").read_text())
    assert status["state"] == "completed" and status["exit_code"] == 0
    # Rank logs and verdicts, one per rank; the other rank stopped at the same step.
    ranks = two_rank_run / "ranks"
    for name in ("worker_0.log", "worker_1.log", "scheduler.log", "msrun.log"):
        assert (ranks / name).is_file(), name
    # The ranks log at GLOG_v 2 (MindSpore's warnings kept): msrun's own worker logs hold the
    # warnings every healthy run prints, and the launcher's msrun.log does not (logfilter.py).
    from ascend_finetune.logfilter import is_noise

    assert any(is_noise(ln) for ln in (ranks / "worker_0.log").read_bytes().splitlines(keepends=True))
    msrun_log = (ranks / "msrun.log").read_bytes().splitlines(keepends=True)
    assert msrun_log and not [ln for ln in msrun_log if is_noise(ln)]
    verdicts = rank_verdicts(two_rank_run)
    assert {r: (v["status"], v["step"]) for r, v in verdicts.items()} == {0: ("completed", 8), 1: ("completed", 8)}
    # Same start (seed) and the same averaged update every step: the ranks end with the same weights.
    assert verdicts[0]["weights_l1"] == pytest.approx(verdicts[1]["weights_l1"], rel=1e-9)
    # Checkpoints from rank 0 only, listed once, and they load into a fresh network.
    manifest = json.loads((two_rank_run / "checkpoints.json").read_text())
    assert [(c["step"]) for c in manifest] == [3, 4, 6, 8]
    assert len(of_type(evs, "checkpoint")) == 4

    import mindspore as ms

    from ascend_finetune.models.net import TransferNet, frozen_parts

    net = TransferNet("resnet18", 4, frozen_parts("none"))
    params = ms.load_checkpoint(str(two_rank_run / manifest[-1]["file"]))
    not_loaded, _ = ms.load_param_into_net(net, params)
    assert not_loaded == [], not_loaded
    assert int(params["step_num"].asnumpy()) == 8
    assert_no_orphans(two_rank_run)


# ---------------------------------------------------------------- failures and stops


def test_a_rank_that_dies_fails_the_run_with_its_error_and_leaves_no_process(tmp_path, small_data):
    s = spec(small_data, name="die", data={"batch_size": 8, "workers": 1}, train={"epochs": 3}, **TWO_RANKS)
    run_dir = tmp_path / "run"
    code, out = cli(
        "train", str(write_spec(tmp_path / "die.json", s)), "--run-dir", str(run_dir), env={strategy.FAULT_ENV: "1:2"}
    )
    assert code == 1, out
    err = out["error"]
    assert err["rank"] == 1 and err["kind"] == "rank_failed"
    assert "rank 1 exited with code 3" in err["message"] and "test fault" in err["message"], err["message"]
    assert err["log"] == "ranks/worker_1.log" and "test fault" in (run_dir / err["log"]).read_text()
    evs = events(run_dir)
    assert_contiguous(evs)  # the launcher's run_finished continues rank 0's seq
    fin = evs[-1]
    assert fin["type"] == "run_finished" and fin["status"] == "failed" and fin["error"]["rank"] == 1
    assert max(e["step"] for e in of_type(evs, "step")) <= 3, "rank 0 stopped right after rank 1 died"
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "failed" and status["exit_code"] == 1
    assert_no_orphans(run_dir)


def _launch_and_wait_for_step(tmp_path: Path, small_data: Path, step: int, sink_size: int = 0) -> Path:
    s = spec(small_data, name="stop", data={"batch_size": 8, "workers": 1}, train={"epochs": 20}, **TWO_RANKS)
    env = None
    if sink_size:  # the test-only host queue in the device queue's place (CPU has none): steps.HOST_SINK_ENV
        s["sink"], env = {"enabled": True, "size": sink_size}, {"ASCEND_FINETUNE_TEST_HOST_SINK": "1"}
    path = str(write_spec(tmp_path / "stop.json", s))
    code, out = cli("launch", path, "--runs-root", str(tmp_path / "runs"), env=env)
    assert code == 0, out
    run_dir = Path(out["run_dir"])
    wait_for(
        lambda: (
            any(e["type"] == "step" and e["step"] >= step for e in events(run_dir))
            or of_type(events(run_dir), "run_finished")
        ),
        timeout=400,
        what=f"step {step}",
    )
    assert not of_type(events(run_dir), "run_finished"), events(run_dir)[-1]
    return run_dir


def _assert_stopped_together(run_dir: Path, reason: str) -> None:
    evs = events(run_dir)
    assert_contiguous(evs)
    fin = evs[-1]
    assert fin["type"] == "run_finished" and fin["status"] == "stopped", fin
    assert fin["final"]["stop_reason"] == reason
    verdicts = rank_verdicts(run_dir)
    assert {r: v["status"] for r, v in verdicts.items()} == {0: "stopped", 1: "stopped"}
    assert verdicts[0]["step"] == verdicts[1]["step"] == fin["final"]["step"], "every rank stops at the same step"
    assert of_type(evs, "checkpoint")[-1]["step"] == fin["final"]["step"]
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "stopped" and status["exit_code"] == 0
    assert_no_orphans(run_dir)


def test_control_stop_ends_every_rank_at_the_same_step(tmp_path, small_data):
    run_dir = _launch_and_wait_for_step(tmp_path, small_data, 2)
    code, out = cli("control", str(run_dir), "stop", "--timeout", "300")
    assert code == 0 and out["handled"] is True and out["state"] == "stopped", out
    _assert_stopped_together(run_dir, "control")


def test_ranks_in_sink_mode_stop_together_at_a_sink_end(tmp_path, small_data):
    """Two steps per call: the stop rides in the step's AllReduce, and both ranks end after the
    same call, at the end of a sink."""
    run_dir = _launch_and_wait_for_step(tmp_path, small_data, 2, sink_size=2)
    code, out = cli("control", str(run_dir), "stop", "--timeout", "300")
    assert code == 0 and out["handled"] is True and out["state"] == "stopped", out
    _assert_stopped_together(run_dir, "control")
    steps = of_type(events(run_dir), "step")
    assert [(e["first_step"], e["step"]) for e in steps] == [(s, s + 1) for s in range(1, len(steps) * 2, 2)]
    assert of_type(events(run_dir), "run_finished")[-1]["final"]["step"] % 2 == 0


def test_sigterm_to_the_launcher_stops_every_rank(tmp_path, small_data):
    run_dir = _launch_and_wait_for_step(tmp_path, small_data, 2)
    launcher = json.loads((run_dir / "status.json").read_text())["pid"]
    os.kill(launcher, signal.SIGTERM)
    wait_for(
        lambda: json.loads((run_dir / "status.json").read_text()).get("state") != "running",
        timeout=300,
        what="the run to stop",
    )
    _assert_stopped_together(run_dir, "SIGTERM")


# ---------------------------------------------------------------- two nodes, both on this host


def test_two_nodes_launched_apart_train_as_one_run(tmp_path, small_data):
    """What the extension does for a multi-node run: `launch` on each node with its node rank, one
    master port and the master's run id. Here both "nodes" are this host (two names for it), so each
    node's msrun also tries to start a scheduler; the second cannot bind the port, and the node still
    ends `completed` because its rank did."""
    port = world.free_port()
    s = spec(
        small_data,
        name="2n",
        data={"batch_size": 8, "workers": 1},
        device={"target": "CPU", "ids": [0], "nodes": ["127.0.0.1", "localhost"]},
    )
    s["device"]["telemetry_s"] = 0.5
    path = str(write_spec(tmp_path / "2n.json", s))
    # Each "node" finds an npu-smi (a recorded idle 910B3): both sample their NPUs.
    env = {"PATH": f"{fake_npu_smi(tmp_path, 'info_910b3_8npu_idle.txt')}{os.pathsep}{os.environ['PATH']}"}
    code, master = cli("launch", path, "--runs-root", str(tmp_path / "a"), "--master-port", str(port), env=env)
    assert code == 0, master
    code, other = cli(
        "launch",
        path,
        "--runs-root",
        str(tmp_path / "b"),
        "--master-port",
        str(port),
        "--node-rank",
        "1",
        "--run-id",
        master["run_id"],
        env=env,
    )
    assert code == 0, other
    a, b = Path(master["run_dir"]), Path(other["run_dir"])
    assert b.name == a.name == master["run_id"]

    def ended(d: Path) -> bool:
        return json.loads((d / "status.json").read_text()).get("state") not in ("running", "starting", None)

    wait_for(lambda: ended(a) and ended(b), timeout=500, what="both nodes to end")

    evs = events(a)
    assert_contiguous(evs)
    started = of_type(evs, "run_started")[0]
    assert started["global_batch"] == 16, "batch 8 per device x 1 device x 2 nodes"
    steps = of_type(evs, "step")
    assert [e["step"] for e in steps] == list(range(1, started["total_steps"] + 1)) and len(steps) == 8
    assert of_type(evs, "run_finished")[-1]["status"] == "completed"
    for d in (a, b):
        status = json.loads((d / "status.json").read_text())
        assert (status["state"], status["exit_code"]) == ("completed", 0), (d, status, events(d)[-1:])
    # Node 1 held global rank 1, which trained every step alongside rank 0 to the same weights.
    v0, v1 = rank_verdicts(a)[0], rank_verdicts(b)[1]
    assert v0["step"] == v1["step"] == 8 and v0["weights_l1"] == pytest.approx(v1["weights_l1"], rel=1e-6)
    assert not of_type(events(b), "step"), "only rank 0 writes the run's events"
    # Pre-flight and telemetry on every node: each launcher recorded its node's checks, and node 1's
    # NPUs were sampled into node 1's own log (the master's by rank 0, into the run's).
    for node, d in ((0, a), (1, b)):
        doc = json.loads((d / "ranks" / f"preflight-node-{node}.json").read_text())
        assert doc["node_rank"] == node and doc["warnings"] == [], doc
    assert of_type(evs, "device") and all("node_rank" not in e for e in of_type(evs, "device"))
    node1 = of_type(events(b), "device")
    assert node1 and all(e["node_rank"] == 1 and [d["id"] for d in e["devices"]] == [0] for e in node1)
    # `ls` tells node 1's part from a run of its own; the master's run has no node_rank.
    _, ls_b = cli("ls", str(tmp_path / "b"))
    _, ls_a = cli("ls", str(tmp_path / "a"))
    assert [r.get("node_rank") for r in ls_b["runs"]] == [1] and [r.get("node_rank") for r in ls_a["runs"]] == [None]
    assert_no_orphans(a)
    assert_no_orphans(b)


def test_launch_refuses_a_node_rank_outside_the_nodes_and_a_taken_run_id(tmp_path, small_data):
    s = spec(small_data, name="2n", device={"target": "CPU", "ids": [0], "nodes": ["npu-a", "npu-b"]})
    path = str(write_spec(tmp_path / "2n.json", s))
    code, out = cli("launch", path, "--runs-root", str(tmp_path / "r"), "--node-rank", "2")
    assert code == 2 and out["error"]["kind"] == "bad_input" and "--node-rank 2" in out["error"]["message"]
    (tmp_path / "r" / "taken").mkdir(parents=True)
    code, out = cli("launch", path, "--runs-root", str(tmp_path / "r"), "--run-id", "taken")
    assert code == 2 and out["error"]["kind"] == "busy", out
    code, out = cli("launch", path, "--runs-root", str(tmp_path / "r"), "--run-id", "../escape")
    assert code == 2 and "--run-id" in out["error"]["message"], out
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["taken"], "nothing was started"


# ---------------------------------------------------------------- launch lines (no second machine)


def _spec(ids, nodes=None, port=None) -> dict:
    device = {"target": "Ascend", "ids": ids}
    if nodes is not None:
        device["nodes"] = nodes
    if port is not None:
        device["master_port"] = port
    return {"device": device}


def _flags(argv: list[str]) -> dict[str, str]:
    return dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)


def test_one_node_msrun_line():
    argv = world.msrun_argv(_spec([0, 1, 2, 3]), "/runs/r", 0, 29500, resume="/ck/a.ckpt")
    assert _flags(argv) == {
        "worker_num": "4",
        "local_worker_num": "4",
        "master_addr": "127.0.0.1",
        "master_port": "29500",
        "node_rank": "0",
        "log_dir": "/runs/r/ranks",
        "join": "True",
    }
    script = argv.index(world.ENTRY_SCRIPT)
    assert argv[script + 1 :] == ["--spec", "/runs/r/spec.json", "--run-dir", "/runs/r", "--resume", "/ck/a.ckpt"]
    assert os.path.isfile(argv[script]), "msrun needs the task script as a file"


def test_multi_node_lines_share_master_and_port_and_number_the_nodes():
    s = _spec([0, 1, 2, 3], nodes=["npu-a", "npu-b", "npu-c"], port=29600)
    assert world.world_size(s) == 12
    for rank in range(3):
        f = _flags(world.msrun_argv(s, "/runs/r", rank, 29600))
        assert (f["worker_num"], f["local_worker_num"], f["node_rank"]) == ("12", "4", str(rank))
        assert (f["master_addr"], f["master_port"]) == ("npu-a", "29600")
    with pytest.raises(ValueError, match="node rank 3"):
        world.msrun_argv(s, "/runs/r", 3, 29600)


def test_node_plan_gives_each_node_its_train_command():
    s = _spec([0, 1], nodes=["npu-a", "10.0.0.2"])
    plan = world.node_plan(s, "/runs/r/spec.json", "/runs/r", master_port=29700)
    assert (plan["world_size"], plan["master_addr"], plan["master_port"]) == (4, "npu-a", 29700)
    assert [(n["node"], n["node_rank"], n["ranks"]) for n in plan["nodes"]] == [
        ("npu-a", 0, [0, 1]),
        ("10.0.0.2", 1, [2, 3]),
    ]
    assert plan["nodes"][1]["args"] == [
        "train",
        "/runs/r/spec.json",
        "--run-dir",
        "/runs/r",
        "--node-rank",
        "1",
        "--master-port",
        "29700",
    ]
    # Without a port in the call or the spec, one free port is picked for all nodes.
    free = world.node_plan(s, "/s.json", "/r")
    assert len({n["args"][-1] for n in free["nodes"]}) == 1 and 1024 <= free["master_port"] <= 65535


def test_one_device_is_not_distributed():
    assert not world.is_distributed(_spec([0]))
    assert world.is_distributed(_spec([0], nodes=["a", "b"]))
    assert world.master_addr(_spec([0, 1], nodes=["only"])) == "127.0.0.1"


def test_multi_host_nodes_that_resolve_to_loopback_are_refused():
    """A master whose /etc/hosts maps its own name to 127.0.1.1 (a hostile resolver here)."""
    hosts = {"gpu-a": ["127.0.1.1"], "gpu-b": ["10.0.0.12"], "gpu-c": ["10.0.0.11", "fe80::1"]}
    resolve = hosts.__getitem__
    two_hosts = {"device": {"ids": [0], "nodes": ["gpu-a", "gpu-b"]}}
    with pytest.raises(ValueError, match=r"'gpu-a' resolves to 127\.0\.1\.1 \(loopback\).*network address"):
        world.master_address(two_hosts, resolve)
    # a master that resolves to its network address is passed to msrun by that address
    assert world.master_address({"device": {"ids": [0], "nodes": ["gpu-c", "gpu-b"]}}, resolve) == "10.0.0.11"
    # every node on this host: loopback is right (the two-nodes-on-one-host test runs this way)
    assert world.master_address({"device": {"ids": [0], "nodes": ["127.0.0.1", "localhost"]}}) == "127.0.0.1"
    assert world.master_address({"device": {"ids": [0, 1]}}) == "127.0.0.1"
