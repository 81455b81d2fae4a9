"""Detached runs: launch, stop through control, resume to the full step count; SIGKILL durability."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import mindspore as ms
import pytest
from conftest import ROOT, assert_contiguous, events, of_type, runner, spec, wait_for, write_spec


def _launch(tmp_path, s):
    code, out = runner("launch", str(write_spec(tmp_path / "s.json", s)), "--runs-root", str(tmp_path / "runs"))
    assert code == 0, out
    assert set(out) == {"run_id", "run_dir", "pid"} and os.path.isdir(out["run_dir"])
    return out


def _steps(run_dir):
    return of_type(events(run_dir), "step")


def test_stop_then_resume_to_full_step_count(data_a, tmp_path):
    s = spec(
        data_a,
        name="stop-resume",
        train={"epochs": 3, "lr": 0.01, "lr_schedule": "cosine", "warmup_steps": 4},
        checkpoint={"every_steps": 1000},
    )
    launched = _launch(tmp_path, s)
    run_dir = launched["run_dir"]
    code, ls = runner("ls", str(tmp_path / "runs"))
    assert [r["state"] for r in ls["runs"]] == ["running"]
    wait_for(lambda: len(_steps(run_dir)) >= 3, what="3 steps")
    before = _steps(run_dir)[-1]["step"]
    code, out = runner("control", run_dir, "stop")
    assert code == 0 and out["handled"], out
    wait_for(lambda: json.load(open(os.path.join(run_dir, "status.json")))["state"] == "stopped", what="stopped")
    evs = events(run_dir)
    finished = evs[-1]
    assert finished["type"] == "run_finished" and finished["status"] == "stopped"
    stop_step = finished["final"]["step"]
    total = of_type(evs, "run_started")[0]["total_steps"]
    assert 3 <= stop_step < total
    # "within one step": the stop came at most a step or two after the last step seen before
    # asking (the request crosses a process start and a step in flight)
    assert before <= stop_step <= before + 2, (before, stop_step)
    ckpt = of_type(evs, "checkpoint")[-1]
    assert ckpt["step"] == stop_step
    code, out = runner("control", run_dir, "stop")
    assert code == 2 and out["error"]["kind"] == "not_running"

    code, out = runner(
        "train",
        os.path.join(run_dir, "spec.json"),
        "--run-dir",
        run_dir,
        "--resume",
        os.path.join(run_dir, ckpt["file"]),
    )
    assert code == 0, out
    evs = events(run_dir)
    assert_contiguous(evs)  # seq continues across the resume, no gap, no duplicate
    steps = [e["step"] for e in of_type(evs, "step")]
    assert steps == list(range(1, total + 1)), "each step exactly once, to the full count"
    started = of_type(evs, "run_started")
    assert started[-1]["resumed_from"]["step"] == stop_step
    assert evs[-1]["status"] == "completed" and evs[-1]["final"]["step"] == total
    # the loss scale and the optimizer's schedule position came back from the checkpoint
    all_steps = of_type(evs, "step")
    saved_scale = float(ms.load_checkpoint(os.path.join(run_dir, ckpt["file"]))["loss_scale.scale_value"].asnumpy())
    assert saved_scale == all_steps[stop_step - 1]["loss_scale"]
    first = all_steps[stop_step]
    assert first["loss_scale"] == (saved_scale / 2 if first["overflow"] else saved_scale)
    from ascend_finetune.train.trainer import lr_per_step

    expected, applied = lr_per_step(started[0]["spec"]["train"], total), 0
    for st in all_steps:
        assert st["lr"] == pytest.approx(expected[applied]), st
        applied += not st["skipped"]
    code, ls = runner("ls", str(tmp_path / "runs"))
    assert ls["runs"][0]["state"] == "completed"


def test_sigkill_leaves_a_readable_log_lost_state_and_a_resumable_checkpoint(data_a, tmp_path):
    s = spec(data_a, name="killed", train={"epochs": 3, "lr": 0.01}, checkpoint={"every_steps": 2})
    launched = _launch(tmp_path, s)
    run_dir = launched["run_dir"]
    wait_for(lambda: of_type(events(run_dir), "checkpoint") and len(_steps(run_dir)) >= 3, what="a checkpoint")
    os.killpg(launched["pid"], signal.SIGKILL)
    wait_for(lambda: runner("ls", str(tmp_path / "runs"))[1]["runs"][0]["state"] == "lost", timeout=30, what="lost")
    # a write torn by the kill: readers keep every complete line and ignore the rest
    with open(os.path.join(run_dir, "events.jsonl"), "a") as f:
        f.write('{"v": 1, "seq": 99999, "type": "st')
    evs = events(run_dir)
    assert_contiguous(evs)
    assert not of_type(evs, "run_finished")
    code, out = runner("attach", run_dir, "--since", "0", check_json=False)
    lines = [json.loads(ln) for ln in out.splitlines()]
    assert code == 1 and lines[-1]["error"]["kind"] == "lost"
    assert [e["seq"] for e in lines[:-1]] == [e["seq"] for e in evs]
    # the newest checkpoint is complete (its sha256 matches) and resumes to the end
    manifest = json.load(open(os.path.join(run_dir, "checkpoints.json")))
    newest = max(manifest, key=lambda e: e["step"])
    from ascend_finetune.checkpoints.manifest import sha256_file

    assert sha256_file(os.path.join(run_dir, newest["file"])) == newest["sha256"]
    assert ms.load_checkpoint(os.path.join(run_dir, newest["file"]))["step_num"].asnumpy() == newest["step"]
    code, out = runner(
        "train",
        os.path.join(run_dir, "spec.json"),
        "--run-dir",
        run_dir,
        "--resume",
        os.path.join(run_dir, newest["file"]),
    )
    assert code == 0, out
    evs = events(run_dir)
    assert_contiguous(evs)  # the torn line was cut before appending
    assert evs[-1]["status"] == "completed"
    assert [e["step"] for e in of_type(evs, "step")][-1] == of_type(evs, "run_started")[0]["total_steps"]


def test_sigterm_stops_like_control(data_a, tmp_path):
    s = spec(data_a, name="sigterm", train={"epochs": 3, "lr": 0.01})
    run_dir = str(tmp_path / "run")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "runner"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ascend_finetune",
            "train",
            str(write_spec(tmp_path / "s.json", s)),
            "--run-dir",
            run_dir,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: len(_steps(run_dir)) >= 2, what="2 steps")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
    evs = events(run_dir)
    assert evs[-1]["status"] == "stopped" and evs[-1]["final"]["stop_reason"] == "SIGTERM"
    assert of_type(evs, "checkpoint")[-1]["step"] == evs[-1]["final"]["step"]


def test_control_checkpoint_now(data_a, tmp_path):
    s = spec(data_a, name="ckpt-now", train={"epochs": 3, "lr": 0.01}, checkpoint={"every_steps": 1000})
    run_dir = _launch(tmp_path, s)["run_dir"]
    wait_for(lambda: len(_steps(run_dir)) >= 2, what="2 steps")
    code, out = runner("control", run_dir, "checkpoint")
    assert code == 0 and out["handled"]
    ck = of_type(events(run_dir), "checkpoint")
    assert any(c["metrics"].get("reason") == "requested" for c in ck), ck
    runner("control", run_dir, "stop")
    wait_for(lambda: of_type(events(run_dir), "run_finished"), what="run end")
