"""Weights a run of several ranks starts from are fetched, and their preprocessing resolved, once per node
by the launcher before msrun starts any rank (train/weights_setup.py): one request for the weights and one
for the hub config.json, and every rank trains with the same preprocessing (each rank's verdict says
which). Each rank used to resolve its own, so a rank whose config fetch failed trained on the timm preset
and said nothing: only rank 0's warnings reach the events."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from conftest import events, of_type, spec, write_spec
from test_msrun import TWO_RANKS, assert_no_orphans, cli, pytestmark, rank_verdicts, small_data  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from weights_server import serve  # noqa: E402

HUB = "hf-hub:timm/resnet18.a1_in1k"
WEIGHTS = "/timm/resnet18.a1_in1k/resolve/main/model.safetensors"
CONFIG = "/timm/resnet18.a1_in1k/resolve/main/config.json"
HALF = {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5], "crop_pct": 0.9, "interpolation": "bicubic"}


@pytest.fixture
def host(tmp_path):
    """A ResNet-18 backbone under the hub's resolve layout (MindSpore names in a .safetensors: the runner
    reads a file's origin from its names), and a config.json whose values differ from the timm preset."""
    import mindspore as ms

    from ascend_finetune.models.net import TransferNet, frozen_parts

    net = TransferNet("resnet18", 4, frozen_parts("none"))
    path = tmp_path / "model.safetensors"
    ms.save_checkpoint(net.backbone, str(path), format="safetensors")
    state, server = serve()
    state.files[WEIGHTS] = path.read_bytes()
    state.files[CONFIG] = json.dumps({"architecture": "resnet18", "pretrained_cfg": HALF}).encode()
    yield state
    server.shutdown()
    server.server_close()


def test_the_launcher_fetches_once_and_every_rank_trains_with_its_preprocessing(tmp_path, small_data, host):  # noqa: F811
    model = {"pretrained": HUB, "freeze": "backbone"}
    s = spec(
        small_data, name="hub", data={"batch_size": 8, "workers": 1}, model=model, train={"epochs": 1}, **TWO_RANKS
    )
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "HF_ENDPOINT": host.base}
    run = tmp_path / "run"
    code, out = cli("train", str(write_spec(tmp_path / "hub.json", s)), "--run-dir", str(run), env=env)
    assert code == 0, out

    asked = [p for p, _ in host.requests]
    assert asked.count(WEIGHTS) == 1 and asked.count(CONFIG) == 1, asked
    evs = events(run)
    started = of_type(evs, "run_started")[0]
    assert started["preprocess"]["source"] == "hub_config" and started["preprocess"]["mean"] == [127.5] * 3
    assert started["pretrained"]["source"] == HUB and not started["pretrained"]["missing"]
    # The download's progress is in the run's events, before run_started.
    setup = of_type(evs, "setup")
    assert setup and setup[-1]["done"] == setup[-1]["total"] == len(host.files[WEIGHTS])
    assert evs.index(setup[-1]) < evs.index(started)
    # What the launcher left for the ranks, and what each rank trained with: one preprocessing.
    launched = json.loads((run / "ranks" / "preprocess.json").read_text())
    assert {k: launched[k] for k in ("preprocess", "warnings")} == {"preprocess": started["preprocess"], "warnings": []}
    # ... and the cached file it resolved them from, which each rank checked it loaded
    cached = Path(started["pretrained"]["file"])
    assert launched["identity"]["host"] == socket.gethostname()
    assert launched["identity"]["file"][1:3] == [cached.stat().st_ino, cached.stat().st_size]
    verdicts = rank_verdicts(run)
    assert sorted(verdicts) == [0, 1]
    assert all(v["status"] == "completed" and v["preprocess"] == started["preprocess"] for v in verdicts.values())
    assert_no_orphans(run)


def test_a_download_that_fails_in_the_launcher_fails_the_run_before_any_rank_starts(tmp_path, small_data, host):  # noqa: F811
    del host.files[WEIGHTS]
    s = spec(small_data, name="gone", model={"pretrained": HUB, "freeze": "backbone"}, **TWO_RANKS)
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "HF_ENDPOINT": host.base}
    run = tmp_path / "run"
    code, out = cli("train", str(write_spec(tmp_path / "gone.json", s)), "--run-dir", str(run), env=env)
    assert code == 2, out
    (finished,) = of_type(events(run), "run_finished")
    assert finished["status"] == "failed" and finished["error"]["kind"] == "bad_input"
    assert "404" in finished["error"]["message"], finished["error"]
    assert not (run / "ranks" / "worker_0.log").exists(), "msrun never started"
    assert_no_orphans(run)


@pytest.mark.parametrize("how", ["SIGTERM", "control"])
def test_a_stop_during_the_launchers_download_ends_the_run_before_msrun(how, tmp_path, small_data, host):  # noqa: F811
    """A SIGTERM while the launcher downloads (it reaches the run's own handler), or the extension's Stop
    (a control request): the run ends stopped, with that reason, and no rank starts. Both used to let
    msrun start: the signal was lost and the run trained to the end."""
    import signal

    from conftest import wait_for

    host.delay_s = 3.0
    s = spec(small_data, name="stop", model={"pretrained": HUB, "freeze": "backbone"}, **TWO_RANKS)
    env = {"ASCEND_FINETUNE_CACHE": str(tmp_path / "cache"), "HF_ENDPOINT": host.base}
    run = tmp_path / "run"
    proc = cli("train", str(write_spec(tmp_path / "stop.json", s)), "--run-dir", str(run), env=env, wait=False)
    wait_for(lambda: WEIGHTS in [p for p, _ in host.requests], 120, "the launcher's weights request")
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        code, out = cli("control", str(run), "stop", "--timeout", "300")
        assert code == 0, out
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    (finished,) = of_type(events(run), "run_finished")
    assert finished["status"] == "stopped" and finished["final"]["stop_reason"] == how
    assert json.loads((run / "status.json").read_text())["state"] == "stopped"
    assert not (run / "ranks" / "worker_0.log").exists(), "msrun never started"
    assert_no_orphans(run)


def test_an_unexpected_error_before_msrun_still_ends_the_run(tmp_path, small_data):  # noqa: F811
    """Anything the launcher's set-up raises (here: ranks/preprocess.json cannot be written, a folder is
    in its place) ends the run as failed, with the error, instead of leaving status.json at running."""
    run = tmp_path / "run"
    (run / "ranks" / "preprocess.json").mkdir(parents=True)
    s = spec(small_data, name="odd", **TWO_RANKS)
    code, out = cli("train", str(write_spec(tmp_path / "odd.json", s)), "--run-dir", str(run))
    assert code == 2, out
    (finished,) = of_type(events(run), "run_finished")
    assert finished["status"] == "failed" and finished["error"]["code"] == "unsafe_file", finished["error"]
    assert finished["error"]["params"]["file"] == "ranks/preprocess.json"
    assert json.loads((run / "status.json").read_text())["state"] == "failed"
    assert_no_orphans(run)


def test_another_nodes_launcher_says_its_own_preprocessing_warnings(tmp_path, small_data, host, monkeypatch):  # noqa: F811
    """Node 1 cannot read the hub config (404 there): its launcher emits the warning into its own event log,
    marked with its node rank, as it does its pre-flight's (only rank 0, on node 0, emits the ranks')."""
    from ascend_finetune import spec as specmod
    from ascend_finetune.distributed.prepare import prepare_weights

    del host.files[CONFIG]
    monkeypatch.setenv("ASCEND_FINETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", host.base)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    resolved = specmod.resolve(spec(small_data, model={"pretrained": HUB}), str(tmp_path))
    emitted: list[tuple[str, dict]] = []
    for node in (0, 1):
        run_dir = tmp_path / f"node{node}"
        prepare_weights(resolved, str(run_dir), None, lambda t, **p: emitted.append((t, p)), node)
        doc = json.loads((run_dir / "ranks" / "preprocess.json").read_text())
        assert [w["code"] for w in doc["warnings"]] == ["preprocess_config_missing"], "for the node's ranks"
    warned = [p for t, p in emitted if t == "warning"]
    assert [(w["code"], w["details"].get("node_rank")) for w in warned] == [("preprocess_config_missing", 1)]


def test_the_launchers_set_up_does_not_import_mindspore(run_a, data_a, tmp_path):
    """The launcher holds the run for its whole length: reading a pretrained file's origin for its
    preprocessing (models/origin.py) must not load MindSpore into it (about 400 MB)."""
    from conftest import snippet

    ckpt = run_a / json.loads((run_a / "checkpoints.json").read_text())[-1]["file"]
    code = (
        "import json, sys\n"
        "from ascend_finetune import spec\n"
        "from ascend_finetune.distributed.prepare import prepare_weights\n"
        "s = spec.resolve({'data': {'train': sys.argv[3]}, 'model': {'pretrained': sys.argv[1]}}, sys.argv[2])\n"
        "prepare_weights(s, sys.argv[2], None, lambda *a, **k: None)\n"
        "print(json.dumps({'mindspore': 'mindspore' in sys.modules}))\n"
    )
    assert snippet(code, str(ckpt), str(tmp_path), str(data_a), cwd=tmp_path) == {"mindspore": False}
    assert json.loads((tmp_path / "ranks" / "preprocess.json").read_text())["preprocess"]["why"].startswith(
        "recorded with the checkpoint"
    )


def test_a_full_disk_during_the_launchers_set_up_ends_the_run_as_disk_full(tmp_path):
    """As a single process's run ends (run.py `execute`): the extension words disk_full with what to do."""
    import errno

    from ascend_finetune.distributed.launcher import _failed

    ended: list[tuple] = []

    class Held:
        run_dir = str(tmp_path)

        def finish(self, *args):
            ended.append(args)
            return args[-1]

    try:
        raise OSError(errno.ENOSPC, "No space left on device", "preprocess.json")
    except OSError as e:
        assert _failed(Held(), e) == 1  # type: ignore[arg-type]
    ((status, error, _, _, _),) = ended
    assert status == "failed" and error["kind"] == error["code"] == "disk_full"
    assert error["params"]["run_dir"] == str(tmp_path) and "No space left" in error["trace_tail"]


# The launcher, with prepare_weights wrapped so that another file is renamed over model.pretrained once the
# launcher has resolved the preprocessing from it, before msrun starts the ranks.
SWAP_AFTER_PREPARE = """
import os, sys
import ascend_finetune.distributed.launcher as launcher
from ascend_finetune.cli import main
real = launcher.prepare_weights
def prepare_then_swap(spec, *args, **kwargs):
    out = real(spec, *args, **kwargs)
    os.replace(os.environ["SWAP_IN"], spec["model"]["pretrained"])
    return out
launcher.prepare_weights = prepare_then_swap
sys.argv[0] = "ascend_finetune"
raise SystemExit(main())
"""


def test_a_file_swapped_after_the_launcher_resolved_it_fails_the_ranks(tmp_path, small_data, host):  # noqa: F811
    """The ranks load the weights themselves: one that finds another file than the one the launcher resolved
    the preprocessing from (ranks/preprocess.json's identity) fails with pretrained_changed, not training on
    the other file with the first one's preprocessing."""
    import os
    import shutil
    import subprocess

    from conftest import ROOT

    weights = tmp_path / "weights.safetensors"
    weights.write_bytes(host.files[WEIGHTS])
    other = tmp_path / "other.safetensors"
    shutil.copy(weights, other)
    s = spec(small_data, name="swap", model={"pretrained": str(weights), "freeze": "backbone"}, **TWO_RANKS)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"), SWAP_IN=str(other))
    run = tmp_path / "run"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            SWAP_AFTER_PREPARE,
            "train",
            str(write_spec(tmp_path / "s.json", s)),
            "--run-dir",
            str(run),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode != 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert json.loads((run / "ranks" / "preprocess.json").read_text())["identity"]["file"][1] != os.stat(weights).st_ino
    (finished,) = of_type(events(run), "run_finished")
    assert finished["status"] == "failed", finished
    verdicts = rank_verdicts(run)
    assert verdicts and all(v["error"]["code"] == "pretrained_changed" for v in verdicts.values()), verdicts
    assert not of_type(events(run), "step"), "no rank trained on the swapped file"
    assert_no_orphans(run)
