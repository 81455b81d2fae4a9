"""One sweep shared by two schedulers through a real PostgreSQL server, as two machines would share it:
a private cluster (Debian's postgresql: initdb, pg_ctl) on 127.0.0.1 and a free port, with a password,
made for this module and removed after it. Each scheduler has its own runs root and one CPU slot;
the study (its budget, trial numbers and results) is the database's. Trials are as small as
test_sweep_real.py's (resnet18 at 32 px, 1 epoch, 120 images)."""

from __future__ import annotations

import glob
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from typing import Callable, NamedTuple

import pytest
from conftest import ROOT, runner, wait_for

from ascend_finetune.events import read_events
from ascend_finetune.rundir import effective_state, status_path
from ascend_finetune.sweep.rdb import open_storage
from ascend_finetune.sweep.scheduler import count_states, counted, over_budget

DRIVER = "postgresql+psycopg"  # psycopg 3 (scripts/setup-python.sh installs it into the test venv only)
TRIALS = 4


def _initdb() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    return found[-1] if found else shutil.which("initdb")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(argv: list[str], **kw) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)
    assert r.returncode == 0, f"{argv[0]} failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}"


class Postgres(NamedTuple):
    url: str  # of the database "sweeps"
    version: str
    password: str
    createdb: Callable[[str], str]  # a new database's URL


@pytest.fixture(scope="module")
def postgres():
    """A private PostgreSQL cluster on 127.0.0.1, with a password, stopped and removed at the end."""
    initdb = _initdb()
    if initdb is None:
        reason = "PostgreSQL's initdb is missing: install Debian's postgresql package (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(reason)  # in CI the server must be there: fail rather than skip silently
        pytest.skip(reason)
    bindir = os.path.dirname(initdb)
    # postgres refuses to run as root: then the cluster is the postgres user's, in a folder it owns
    # (pytest's tmp_path is root's, mode 0700, so not there).
    base = tempfile.mkdtemp(prefix="aft-pg-")
    as_user: list[str] = []
    owner = None
    data = os.path.join(base, "data")
    try:
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")  # Debian's postgresql package makes this user
            os.chown(base, owner.pw_uid, owner.pw_gid)
            as_user = ["runuser", "-u", "postgres", "--"]
        password = secrets.token_hex(12)
        pwfile = os.path.join(base, "pwfile")
        with open(pwfile, "w") as f:
            f.write(password + "\n")
        if owner:
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        _run(as_user + [initdb, "-D", data, "-U", "optuna", "--pwfile", pwfile, "--auth", "scram-sha-256", "--no-sync"])
        port = _free_port()
        with open(os.path.join(data, "postgresql.conf"), "a") as f:  # TCP on loopback only, no socket file
            f.write(f"\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nfsync = off\n")
        _run(as_user + [os.path.join(bindir, "pg_ctl"), "start", "-D", data, "-w", "-l", os.path.join(base, "log")])

        def createdb(name: str) -> str:
            _run(
                [os.path.join(bindir, "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "optuna", name],
                env=dict(os.environ, PGPASSWORD=password),
            )
            return f"{DRIVER}://optuna:{password}@127.0.0.1:{port}/{name}"

        version = subprocess.run([os.path.join(bindir, "postgres"), "--version"], capture_output=True, text=True)
        yield Postgres(createdb("sweeps"), version.stdout.strip(), password, createdb)
    finally:
        if os.path.isfile(os.path.join(data, "postmaster.pid")):  # started, or half started
            subprocess.run(
                as_user + [os.path.join(bindir, "pg_ctl"), "stop", "-D", data, "-m", "immediate", "-w"],
                capture_output=True,
                timeout=120,
            )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "shapes"
    code, doc = runner("make-demo-data", str(out), "--per-class", "40", "--size", "32")
    assert code == 0, doc
    return out


def sweep_spec(path, demo, storage: str) -> str:
    path.write_text(
        json.dumps(
            {
                "name": "pg",
                "base": {
                    "name": "t",
                    "data": {"train": str(demo), "image_size": 32, "batch_size": 8, "workers": 1, "val_split": 0.25},
                    "model": {"backbone": "resnet18", "pretrained": None},
                    "train": {"epochs": 1},
                    "amp": {"level": "O0", "loss_scale": "none"},
                    "checkpoint": {"keep_max": 1},
                    "device": {"target": "CPU", "telemetry_s": 0},
                },
                "space": {"train.lr": {"low": 0.001, "high": 0.2, "log": True}},
                "objective": {"metric": "best_val_acc"},
                "trials": TRIALS,
                "sampler": "random",
                "seed": 0,
                "devices": {"ids": [0]},  # one CPU slot per "machine"
                "storage": storage,
                "study_name": "shared-lr",
            }
        )
    )
    return str(path)


def ended(sweep_dir) -> bool:
    # No status.json yet reads as lost: a scheduler just detached may not have written it.
    return os.path.isfile(status_path(sweep_dir)) and effective_state(sweep_dir) != "running"


def events_of(sweep_dir):
    return read_events(os.path.join(sweep_dir, "events.jsonl"))


def test_two_schedulers_share_one_study_in_postgresql_and_run_its_budget_once(postgres, demo, tmp_path):
    url, version, password = postgres.url, postgres.version, postgres.password
    spec = sweep_spec(tmp_path / "lr.ascend-sweep.json", demo, url)
    roots = [tmp_path / "machine-a", tmp_path / "machine-b"]

    # Machine B starts once A's first trial runs: A has one slot, so B must take trials of its own.
    code, a = runner("sweep", spec, "--root", str(roots[0]), "--detach")
    assert code == 0, a
    wait_for(lambda: any(e["type"] == "trial_started" for e in events_of(a["sweep_dir"])), 120, "A's first trial")
    code, b = runner("sweep", spec, "--root", str(roots[1]), "--detach")
    assert code == 0, b
    sweeps = [a["sweep_dir"], b["sweep_dir"]]
    for d in sweeps:
        wait_for(lambda d=d: ended(d), 600, f"the scheduler of {d} to end")

    statuses = []
    for d in sweeps:
        code, st = runner("sweep-status", d)
        assert code == 0, st
        assert st["state"] == "completed", (st["state"], open(os.path.join(d, "console.log")).read()[-3000:])
        assert st["study_name"] == "shared-lr"
        assert password not in json.dumps(st)  # the storage URL is shown without its password
        statuses.append(st)
    sa, sb = statuses
    # Both sides read the same study: the same trials, results and best trial.
    assert [(t["number"], t["state"], t["value"], t["params"]) for t in sa["trials"]] == [
        (t["number"], t["state"], t["value"], t["params"]) for t in sb["trials"]
    ]
    assert sa["best"] == sb["best"] and sa["best"] is not None
    ran = [t for t in sa["trials"] if t["outcome"] != "surplus"]  # surplus: asked past the budget, never run
    assert sa["counts"]["counted"] == TRIALS and len(ran) == TRIALS
    assert all(t["state"] == "COMPLETE" for t in ran), [(t["number"], t["state"], t["reason"]) for t in ran]
    best = max(ran, key=lambda t: t["value"])
    assert sa["best"]["value"] == best["value"]
    # Each scheduler drew its own values (no setting tried twice because both started from one seed).
    assert len({t["params"]["train.lr"] for t in ran}) == TRIALS

    # Together they ran exactly the budget: one run per trial number, on one machine or the other.
    runs = {}
    for root, st in zip(roots, statuses):
        code, ls = runner("ls", str(root))
        assert code == 0, ls
        mine = [r for r in ls["runs"] if f"sweep:{st['sweep_id']}" in r["meta"]["tags"]]
        assert mine, f"{root} ran no trial: the study was not shared"
        for r in mine:
            (tag,) = [t for t in r["meta"]["tags"] if t.startswith("trial:")]
            assert tag not in runs, f"{tag} ran on both machines"
            runs[tag] = (root, r)
    assert sorted(runs) == sorted(f"trial:{t['number']}" for t in ran)
    started = Counter(e["number"] for d in sweeps for e in events_of(d) if e["type"] == "trial_started")
    assert sorted(started) == sorted(t["number"] for t in ran) and max(started.values()) == 1

    # Each trial's result in the study is its run's: the run that trial's user attributes name, its
    # learning rate, and its own best val accuracy.
    for t in ran:
        root, r = runs[f"trial:{t['number']}"]
        assert t["run_dir"] == os.path.join(str(root), t["run_id"]) and r["run_dir"] == t["run_dir"]
        run_spec = json.loads(open(os.path.join(t["run_dir"], "spec.json")).read())
        assert run_spec["train"]["lr"] == t["params"]["train.lr"]
        assert r["state"] == "completed"
        assert r["summary"]["best_val_acc"] == pytest.approx(t["value"])
    per_machine = Counter(os.path.basename(root) for root, _ in runs.values())
    print(f"\n{version}: {len(runs)} runs {dict(per_machine)}, best {sa['best']['value']} (trial {best['number']})")


def test_two_schedulers_asking_for_the_last_trial_at_once_run_it_once(postgres):
    # Budget 3, one trial done and one running: schedulers A and B both find one trial left and both
    # ask. Optuna numbers their trials 2 and 3 (in the database, under a lock): 2 runs, 3 is surplus.
    import optuna

    url = postgres.createdb("last_trial")
    a = optuna.create_study(storage=open_storage(url), study_name="s", direction="maximize")
    b = optuna.load_study(storage=open_storage(url), study_name="s")
    a.tell(a.ask(), 0.5)
    b.ask()
    t2, t3 = a.ask(), b.ask()
    trials = b.get_trials(deepcopy=False)
    assert (t2.number, t3.number) == (2, 3)
    assert not over_budget(trials, t2.number, 3) and over_budget(trials, t3.number, 3)
    t3.set_user_attr("outcome", "surplus")
    b.tell(t3, state=optuna.trial.TrialState.FAIL)
    assert not counted(b.get_trials()[3]) and count_states(b.get_trials())["counted"] == 1
    # Trial 1's run died: it is retried as trial 4 (queued, WAITING), which is ahead of any trial asked
    # after it; the next ask takes it, and it runs (the budget has room again).
    t1 = a.get_trials()[1]
    a._storage.set_trial_user_attr(t1._trial_id, "outcome", "lost")
    a._storage.set_trial_state_values(t1._trial_id, optuna.trial.TrialState.FAIL)
    a.enqueue_trial({}, user_attrs={"retry_of": 1})
    assert over_budget(a.get_trials(deepcopy=False), 5, 3)  # 0 done, 2 running, 4 waiting
    t4 = b.ask()
    assert t4.number == 4 and not over_budget(b.get_trials(deepcopy=False), t4.number, 3)


def test_schedulers_starting_at_once_on_an_empty_database_all_open_it(postgres, tmp_path):
    # PostgreSQL's CREATE TABLE/TYPE race: without open_storage's retry, some of 4 processes making
    # Optuna's tables in one empty database at the same moment failed (3 of 18 in trials here).
    code = (
        "import sys, optuna; from ascend_finetune.sweep.rdb import open_storage\n"
        "optuna.create_study(storage=open_storage(sys.argv[1]), study_name='s', load_if_exists=True)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runner"))
    for round_ in range(2):
        url = postgres.createdb(f"empty{round_}")
        procs = [
            subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(4)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, "\n".join(e[-1500:] for e in errors if e)


def test_a_storage_whose_driver_is_not_installed_is_refused_with_the_package_and_the_pip_line(demo, tmp_path):
    # pg8000 is a PostgreSQL driver the test venv does not have (psycopg is the one installed).
    spec = sweep_spec(tmp_path / "s.ascend-sweep.json", demo, "postgresql+pg8000://optuna@127.0.0.1:5432/optuna")
    code, doc = runner("sweep", spec, "--root", str(tmp_path / "runs"), "--detach")
    assert code == 2 and doc["error"]["kind"] == "bad_spec", doc
    (p,) = doc["error"]["problems"]
    assert p["path"] == "storage"
    assert "Python package pg8000" in p["message"] and "not installed" in p["message"]
    assert "-m pip install pg8000" in p["fix"]
    assert not (tmp_path / "runs" / "sweeps").exists()  # refused before any sweep folder was made

    bad = sweep_spec(tmp_path / "d.ascend-sweep.json", demo, "postgresql+nosuchdriver://optuna@h/db")
    code, doc = runner("sweep", bad, "--root", str(tmp_path / "runs"))
    assert code == 2 and doc["error"]["problems"][0]["path"] == "storage", doc
    assert "nosuchdriver" in doc["error"]["problems"][0]["message"]
