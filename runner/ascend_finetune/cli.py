"""The runner's command line. Every command prints JSON on stdout; errors are {"error": {...}} with
exit 2 for bad input and 1 for failures (the contract in DESIGN.md). About 630 lines because it is the
one table of subcommands and their flags; each handler only imports its module and prints its answer."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from typing import cast

from . import spec as specmod
from .clierrors import CliError, bad_spec, out, report
from .logfilter import configure_env, drop_teardown_noise, popen_filtered
from .spec_types import RunSpec


def _load_spec(path: str, resume: bool = False) -> RunSpec:
    """`resume`: a run resumed from its checkpoint, which replaces model.pretrained's weights, so that
    file may be gone (a pruned parent checkpoint, a cleared cache)."""
    raw = specmod.load_file(path)
    return specmod.resolve(raw, os.path.dirname(os.path.abspath(path)), resume=resume)


def cmd_validate(a: argparse.Namespace) -> int:
    try:
        raw = specmod.load_file(a.spec)
        problems = specmod.check(raw, os.path.dirname(os.path.abspath(a.spec)), resume=a.resume)
    except specmod.SpecError as e:
        problems = e.problems
    if problems or not a.preflight:
        out({"ok": not problems, "problems": [p.as_dict() for p in problems]})
        return 2 if problems else 0
    # --preflight: also what a run would warn about at its start, and its length
    from .data.folder import DataError
    from .train.preflight import for_spec

    try:
        report = for_spec(specmod.resolve(raw, os.path.dirname(os.path.abspath(a.spec)), resume=a.resume))
    except DataError as e:
        out({"ok": False, "problems": [{"path": e.path, "message": e.message, "fix": e.fix}]})
        return 2
    out({"ok": True, "problems": [], **report})
    return 0


def cmd_train(a: argparse.Namespace) -> int:
    from .distributed.world import is_distributed
    from .rundir import write_status
    from .train.run import Run, RunBusy

    try:
        spec = _load_spec(a.spec, resume=bool(a.resume))
    except specmod.SpecError as e:
        # Still leave a readable failed run behind: a launched run must say why it ended.
        try:
            # Only finish() runs on this spec: its verdict (verdict.py) reads a spec with .get.
            r = Run(cast(RunSpec, {"name": "invalid"}), a.run_dir)
        except RunBusy as busy:
            raise CliError(
                2, "busy", str(busy), why="run_busy", params={"run_dir": os.path.abspath(a.run_dir)}
            ) from busy
        r.finish("failed", bad_spec(e, trace_tail=None), None, None, 2)
        raise
    try:
        r = Run(spec, a.run_dir, a.resume)
    except RunBusy as e:
        raise CliError(2, "busy", str(e), why="run_busy", params={"run_dir": os.path.abspath(a.run_dir)}) from e
    if a.node_rank:  # `ls` shows it, so a listing of this node can tell its part from a run of its own
        write_status(r.run_dir, node_rank=a.node_rank)
    if is_distributed(spec):
        # Several ranks: this process holds the run and starts msrun for this node's ranks.
        from .distributed.launcher import launch
        from .train.preflight import node_warnings

        code = launch(r, a.node_rank, a.master_port, node_warnings)
    else:
        code = r.execute()
    if code:
        out({"error": {**(r.error or {}), "run_dir": r.run_dir}})  # a failed run always set its error
    else:
        out({"run_dir": r.run_dir, "exit_code": code})
    return code


def cmd_nodes(a: argparse.Namespace) -> int:
    from .distributed.world import node_plan

    spec = _load_spec(a.spec)
    out(node_plan(spec, os.path.abspath(a.spec), os.path.abspath(a.run_dir), a.master_port))
    return 0


def cmd_launch(a: argparse.Namespace) -> int:
    from .distributed.world import node_count
    from .rundir import atomic_write_json, initial_status, new_run_id, open_append

    spec = _load_spec(a.spec, resume=bool(a.resume))  # bad input fails here, before anything is detached
    # Every node of a multi-node run takes the master's run id, so its pieces are easy to pair.
    if a.run_id is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", a.run_id):
        raise CliError(
            2,
            "bad_input",
            f"--run-id {a.run_id!r}: use letters, digits, '.', '_' and '-' (a run id from `launch`)",
            why="bad_run_id",
            params={"run_id": a.run_id},
        )
    nodes = node_count(spec)
    if not 0 <= a.node_rank < nodes:
        raise CliError(
            2,
            "bad_input",
            f"--node-rank {a.node_rank} is outside the spec's {nodes} node(s) (device.nodes)",
            why="node_rank_out_of_range",
            params={"node_rank": a.node_rank, "nodes": nodes},
        )
    from .distributed.world import master_address

    try:
        master_address(spec)  # a multi-host run whose nodes resolve to loopback here would hang for 600 s
    except ValueError as e:
        raise CliError(2, "bad_input", str(e), why="bad_master_address", params={"text": str(e)}) from e
    run_id = a.run_id or new_run_id(spec["name"])
    run_dir = os.path.abspath(os.path.join(a.runs_root, run_id))
    try:
        os.makedirs(run_dir)
    except FileExistsError:
        raise CliError(
            2,
            "busy",
            f"{run_dir} already exists: a run id names one run",
            why="run_id_taken",
            params={"run_dir": run_dir},
        ) from None
    spec_path = os.path.join(run_dir, "spec.json")
    atomic_write_json(spec_path, spec)
    argv = [sys.executable, "-m", "ascend_finetune", "train", spec_path, "--run-dir", run_dir]
    if a.resume:
        argv += ["--resume", os.path.abspath(a.resume)]
    if a.node_rank:
        argv += ["--node-rank", str(a.node_rank)]
    if a.master_port is not None:
        argv += ["--master-port", str(a.master_port)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # Written before the child exists (pid null until it writes its own), so `ls` sees the run at
    # once and nothing here can overwrite what the child writes.
    initial_status(run_dir, None)
    # stdout and stderr through the filter that drops MindSpore's known noise (logfilter.py)
    with os.fdopen(open_append(os.path.join(run_dir, "console.log")), "ab") as log:  # never through a symlink
        proc, _ = popen_filtered(
            argv,
            log.fileno(),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=run_dir,
            env=env,
            close_fds=True,
        )
    out({"run_id": run_id, "run_dir": run_dir, "pid": proc.pid})
    return 0


def cmd_attach(a: argparse.Namespace) -> int:
    from .attach import attach

    return attach(a.run_dir, a.since, follow=not a.no_follow, poll_s=a.poll_ms / 1000)


def cmd_control(a: argparse.Namespace) -> int:
    from .control import request
    from .rundir import effective_state, status_path

    if not os.path.isfile(status_path(a.run_dir)):
        raise CliError(2, "not_a_run", f"no run at {a.run_dir} (status.json missing)", params={"run_dir": a.run_dir})
    state = effective_state(a.run_dir)
    if state != "running":
        raise CliError(
            2,
            "not_running",
            f"the run is {state}; only a running run takes '{a.action}'",
            state=state,
            params={"state": state, "action": a.action},
        )
    path = request(a.run_dir, a.action)
    deadline = time.monotonic() + a.timeout
    # Wait until the run took the request; for stop, until it has finished (checkpoint saved).
    while time.monotonic() < deadline:
        state = effective_state(a.run_dir)
        if state != "running" or (a.action == "checkpoint" and not os.path.exists(path)):
            break
        time.sleep(0.05)
    handled = not os.path.exists(path) and (a.action == "checkpoint" or state == "stopped")
    # A stop not yet taken stays: set-up, a first compile or a long eval can outlast the wait, and
    # the run clears control/ when it ends. A checkpoint request that is late has lost its point.
    if a.action == "checkpoint" and os.path.exists(path):
        os.remove(path)
    out({"action": a.action, "handled": handled, "state": effective_state(a.run_dir)})
    return 0


def cmd_ls(a: argparse.Namespace) -> int:
    from .meta import annotate_runs
    from .runlist import list_runs

    out({"root": os.path.abspath(a.root), "runs": annotate_runs(list_runs(a.root))})
    return 0


def cmd_meta(a: argparse.Namespace) -> int:
    from .meta import MetaError, read_meta, update_meta
    from .rundir import status_path

    if not os.path.isfile(status_path(a.run_dir)):
        raise CliError(2, "not_a_run", f"no run at {a.run_dir} (status.json missing)", params={"run_dir": a.run_dir})
    changes = a.name is not None or a.notes is not None or a.tag or a.untag
    try:
        meta = update_meta(a.run_dir, a.name, a.notes, a.tag, a.untag) if changes else read_meta(a.run_dir)
    except MetaError as e:
        raise CliError(2, "bad_input", str(e), field=e.field, why=e.why, params=e.params) from e
    out({"run_dir": os.path.abspath(a.run_dir), "meta": meta})
    return 0


def cmd_doctor(_a: argparse.Namespace) -> int:
    from .device.doctor import doctor

    out(doctor())
    return 0


def cmd_inspect(a: argparse.Namespace) -> int:
    from .checkpoints.tools import inspect

    out(inspect(a.ckpt, a.run))
    return 0


def cmd_eval(a: argparse.Namespace) -> int:
    from .checkpoints.evaluate import evaluate

    out(evaluate(a.run, a.ckpt, a.data, a.batch_size, a.device))
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    from .checkpoints.export import export

    out(export(a.run, a.ckpt, a.format, a.out))
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    from .checkpoints.tools import compare

    out(compare(a.ckpt_a, a.ckpt_b, a.run))
    return 0


def cmd_delete_checkpoints(a: argparse.Namespace) -> int:
    from .checkpoints.tools import delete_checkpoints

    out(delete_checkpoints(a.run, a.files, a.allow_best))
    return 0


def cmd_verify(a: argparse.Namespace) -> int:
    from .checkpoints.tools import verify

    out(verify(a.run))
    return 0


def cmd_make_demo_data(a: argparse.Namespace) -> int:
    from .data.demo import TASKS, make_shapes

    out(make_shapes(a.out, per_class=a.per_class, size=a.size, seed=a.seed, classes=TASKS[a.task]))
    return 0


def cmd_probe(a: argparse.Namespace) -> int:
    from .data.probe import probe

    out(probe(a.paths, a.max_classes))
    return 0


def cmd_fetch_weights(a: argparse.Namespace) -> int:
    from .checkpoints.errors import PretrainedError
    from .models.catalog import SourceError, parse
    from .models.download import fetch, json_progress, stderr_progress

    try:
        src = parse(a.source)
        got = fetch(a.source, progress=json_progress(out) if a.progress else stderr_progress(src.text))
    except SourceError as e:
        raise CliError.of(2, "bad_input", e, f"{e}; {e.fix}") from None
    except PretrainedError as e:
        raise CliError.of(1, "download_failed", e) from None
    doc: dict[str, object] = {"path": got.path, **got.describe()}
    if src.kind == "hf-hub":
        # The weights' preprocessing comes with them, so a copy to an air-gapped target carries it too.
        from .models.download import cache_path_of_hub_config, fetch_hub_config
        from .models.preprocess import hub_values

        cfg = fetch_hub_config(src, hub_values)
        problem = cfg.problem
        if problem is None:
            try:
                hub_values(cfg.data)
            except ValueError as e:
                problem = str(e)
        path = cache_path_of_hub_config(src)
        doc["config"] = {"url": cfg.url, "path": path if problem is None else None, "problem": problem}
    out(doc)
    return 0


def cmd_weights_status(a: argparse.Namespace) -> int:
    from .models.cache_status import status
    from .models.catalog import SourceError

    try:
        out(status(a.sources))
    except SourceError as e:
        raise CliError.of(2, "bad_input", e, f"{e}; {e.fix}") from None
    return 0


def cmd_preview(a: argparse.Namespace) -> int:
    from .data.folder import DataError
    from .data.preview import Cancel, preview, preview_spec

    if a.samples < 0 or a.max_bytes < 0:
        raise CliError(2, "bad_input", "--samples and --max-bytes must be 0 or more", why="negative_preview_budget")
    cancel = Cancel()
    cancel.install()  # SIGINT/SIGTERM: one "cancelled" line, then exit 128 + the signal
    try:
        try:
            spec = preview_spec(a.dir, a.val, a.spec)
            doc = preview(spec, a.samples, a.max_bytes, progress=out, cancel=cancel)
        except DataError as e:
            raise CliError.of(2, "bad_input", e, e.message, path=e.path, fix=e.fix) from e
        cancel.finishing = True  # a signal from here on waits for the document
        out(doc)
    finally:
        cancel.restore()
    return 0


def cmd_predict(a: argparse.Namespace) -> int:
    from .checkpoints.predict import predict

    out(predict(a.ckpt, a.run, a.files, a.batch_size, a.device))
    return 0


def cmd_thumbs(a: argparse.Namespace) -> int:
    from .data.thumbs import MAX_FILES, thumbs

    if a.max_bytes < 1:
        raise CliError(2, "bad_input", "--max-bytes must be 1 or more", why="bad_max_bytes")
    if len(a.files) > MAX_FILES:
        raise CliError(
            2,
            "bad_input",
            f"at most {MAX_FILES} files per call (got {len(a.files)}): ask in parts",
            why="too_many_files",
            params={"most": MAX_FILES, "count": len(a.files)},
        )
    try:
        out(thumbs(a.root, a.files, a.max_bytes))
    except NotADirectoryError as e:
        raise CliError(
            2,
            "bad_input",
            f"no such folder: {e}: pass the data folder the files are in",
            why="no_such_folder",
            params={"folder": str(e)},
        ) from e
    return 0


def _need_optuna() -> None:
    """Sweeps need Optuna (and the PyYAML it brings), which training does not: say so, not a traceback."""
    import importlib.util

    for mod in ("optuna", "yaml"):
        if importlib.util.find_spec(mod) is None:
            raise CliError(
                1,
                "missing_dependency",
                f"sweeps need Optuna, and {mod} is not installed in {sys.executable}: "
                "install optuna==5.0.0 there (runner/requirements.txt)",
                params={"module": mod, "python": sys.executable},
            )


def cmd_sweep(a: argparse.Namespace) -> int:
    _need_optuna()
    from .sweep.commands import BadInput, detach, prepare
    from .sweep.folder import Busy, read
    from .sweep.report import status
    from .sweep.scheduler import Scheduler

    try:
        sweep_dir, resumed = prepare(a.target, a.root, a.sweep_id)
        sweep_id = read(sweep_dir)["sweep_id"]
        if a.detach:
            out({"sweep_id": sweep_id, "sweep_dir": sweep_dir, "pid": detach(sweep_dir), "resumed": resumed})
            return 0
        state = Scheduler(sweep_dir, a.launch_id, new=not resumed).run()
    except BadInput as e:
        raise CliError.of(2, e.kind, e) from e
    except Busy as e:
        raise CliError(2, "busy", str(e), why="scheduler_running", params={"folder": e.folder}) from e
    out(status(sweep_dir))
    return 1 if state == "failed" else 0


def cmd_sweep_status(a: argparse.Namespace) -> int:
    _need_optuna()
    from .sweep.report import status

    try:
        out(status(a.sweep_dir))
    except ValueError as e:
        raise CliError(2, "not_a_sweep", str(e), params={"sweep_dir": a.sweep_dir, "text": str(e)}) from e
    return 0


def cmd_sweep_stop(a: argparse.Namespace) -> int:
    _need_optuna()
    from .sweep.commands import BadInput, stop

    try:
        out(stop(a.sweep_dir, a.drain, a.timeout))
    except BadInput as e:
        raise CliError.of(2, e.kind, e) from e
    except ValueError as e:
        raise CliError(2, "not_a_sweep", str(e), params={"sweep_dir": a.sweep_dir, "text": str(e)}) from e
    return 0


def cmd_sweep_ls(a: argparse.Namespace) -> int:
    _need_optuna()
    from .sweep.report import list_sweeps

    out({"root": os.path.abspath(a.root), "sweeps": list_sweeps(a.root)})
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ascend_finetune", description="Ascend Fine-Tune runner")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("validate", help="check a run spec; exit 2 with every problem")
    s.add_argument("spec")
    s.add_argument(
        "--resume",
        action="store_true",
        help="the spec of a run resumed from a checkpoint, which replaces model.pretrained's weights: that "
        "file need not exist any more",
    )
    s.add_argument(
        "--preflight",
        action="store_true",
        help="also scan the data and report the warnings a run would start with, and its steps",
    )
    s.set_defaults(fn=cmd_validate)
    s = sub.add_parser("train", help="train in the foreground")
    s.add_argument("spec")
    s.add_argument("--run-dir", required=True)
    s.add_argument("--resume")
    s.add_argument("--node-rank", type=int, default=0, help="this machine's index in device.nodes (from `nodes`)")
    s.add_argument(
        "--master-port", type=int, help="msrun's scheduler port (default: device.master_port, else a free one)"
    )
    s.set_defaults(fn=cmd_train)
    s = sub.add_parser("nodes", help="per node of a multi-node spec: the `train` arguments to start there")
    s.add_argument("spec")
    s.add_argument("--run-dir", required=True)
    s.add_argument("--master-port", type=int)
    s.set_defaults(fn=cmd_nodes)
    s = sub.add_parser("launch", help="start train detached; prints run_id, run_dir, pid")
    s.add_argument("spec")
    s.add_argument("--runs-root", required=True)
    s.add_argument("--resume")
    s.add_argument("--node-rank", type=int, default=0, help="this machine's index in device.nodes (multi-node runs)")
    s.add_argument("--master-port", type=int, help="msrun's scheduler port, the same on every node (from `nodes`)")
    s.add_argument("--run-id", help="use this run id (every node of a multi-node run takes the master's)")
    s.set_defaults(fn=cmd_launch)
    s = sub.add_parser("attach", help="print events with seq > SINCE, then follow until run_finished")
    s.add_argument("run_dir")
    s.add_argument("--since", type=int, default=0)
    s.add_argument("--no-follow", action="store_true")
    s.add_argument("--poll-ms", type=float, default=20.0, help=argparse.SUPPRESS)
    s.set_defaults(fn=cmd_attach)
    s = sub.add_parser("control", help="ask a running run to stop or save a checkpoint now")
    s.add_argument("run_dir")
    s.add_argument("action", choices=["stop", "checkpoint"])
    s.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the run to act")
    s.set_defaults(fn=cmd_control)
    s = sub.add_parser("ls", help="runs under ROOT with their states")
    s.add_argument("root")
    s.set_defaults(fn=cmd_ls)
    s = sub.add_parser("meta", help="show or change a run's name, notes and tags (meta.json)")
    s.add_argument("run_dir")
    s.add_argument("--name", help='the name shown for the run ("" shows the spec\'s name again)')
    s.add_argument("--notes", help="free text, replaces the notes")
    s.add_argument("--tag", action="append", default=[], help="add a tag (repeatable)")
    s.add_argument("--untag", action="append", default=[], help="remove a tag (repeatable)")
    s.set_defaults(fn=cmd_meta)
    s = sub.add_parser("sweep", help="run (or resume) a hyperparameter sweep with Optuna; --detach prints its pid")
    s.add_argument("target", metavar="SPEC|SWEEP_DIR", help="a sweep spec (new sweep) or a sweep folder (resume)")
    s.add_argument("--root", help="runs root: the trials' runs and sweeps/<sweep_id>/ go under it")
    s.add_argument("--sweep-id", help="name the new sweep (an existing one with the same spec is resumed)")
    s.add_argument(
        "--detach", action="store_true", help="run the scheduler in a new session; print sweep_id, sweep_dir, pid"
    )
    s.add_argument("--launch-id", help=argparse.SUPPRESS)  # from --detach: the status it wrote is this scheduler's
    s.set_defaults(fn=cmd_sweep)
    s = sub.add_parser("sweep-status", help="a sweep's trials, best trial and parameter importances")
    s.add_argument("sweep_dir")
    s.set_defaults(fn=cmd_sweep_status)
    s = sub.add_parser("sweep-stop", help="stop a sweep and its running trials (--drain: let them finish)")
    s.add_argument("sweep_dir")
    s.add_argument("--drain", action="store_true", help="start no new trial; let the running ones finish")
    s.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the sweep to end (0: no wait)")
    s.set_defaults(fn=cmd_sweep_stop)
    s = sub.add_parser("sweep-ls", help="the sweeps under ROOT/sweeps with their states")
    s.add_argument("root")
    s.set_defaults(fn=cmd_sweep_ls)
    s = sub.add_parser("doctor", help="python, mindspore, backends, CANN, NPUs")
    s.set_defaults(fn=cmd_doctor)
    s = sub.add_parser("inspect", help="tensors of a checkpoint: name, shape, dtype, module, trainable")
    s.add_argument("ckpt")
    s.add_argument("--run", help="the run directory: marks frozen/trainable tensors and checks the head")
    s.set_defaults(fn=cmd_inspect)
    s = sub.add_parser("eval", help="evaluate a checkpoint of a run: accuracy, per-class precision/recall, confusion")
    s.add_argument("--run", required=True)
    s.add_argument("--ckpt", required=True)
    s.add_argument("--data", help="an ImageFolder with the run's classes (default: the run's validation set)")
    s.add_argument("--batch-size", type=int)
    s.add_argument("--device", choices=["CPU", "Ascend"], help="default: the run's device.target")
    s.set_defaults(fn=cmd_eval)
    s = sub.add_parser("export", help="export a checkpoint of a run to MindIR or ONNX")
    s.add_argument("--run", required=True)
    s.add_argument("--ckpt", required=True)
    s.add_argument("--format", required=True, choices=["mindir", "onnx"])
    s.add_argument("--out", help="output file (default: next to the checkpoint, <stem>.mindir or <stem>.onnx)")
    s.set_defaults(fn=cmd_export)
    s = sub.add_parser("compare", help="per-tensor L2 distance and relative change between two checkpoints")
    s.add_argument("ckpt_a")
    s.add_argument("ckpt_b")
    s.add_argument("--run", help="the run directory: marks frozen tensors")
    s.set_defaults(fn=cmd_compare)
    s = sub.add_parser("delete-checkpoints", help="delete checkpoints of a run and update checkpoints.json")
    s.add_argument("--run", required=True)
    s.add_argument("files", nargs="+", help="manifest `file` values (checkpoints/NAME), or paths inside the run")
    s.add_argument("--allow-best", action="store_true", help="allow deleting the best checkpoint")
    s.set_defaults(fn=cmd_delete_checkpoints)
    s = sub.add_parser("verify", help="check every checkpoint of a run against checkpoints.json (size, sha256)")
    s.add_argument("--run", required=True)
    s.set_defaults(fn=cmd_verify)
    s = sub.add_parser("make-demo-data", help="write a small ImageFolder of coloured shapes")
    s.add_argument("out")
    s.add_argument("--per-class", type=int, default=40)
    s.add_argument("--size", type=int, default=48)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--task", choices=["a", "b"], default="a", help="a: 4 shapes; b: 3 shapes in other colours")
    s.set_defaults(fn=cmd_make_demo_data)
    s = sub.add_parser("probe", help="what each PATH is here: missing, a file (bytes) or a folder (its class folders)")
    s.add_argument("paths", nargs="+", metavar="PATH")
    s.add_argument("--max-classes", type=int, default=1000, help="class folder names listed per folder (count has all)")
    s.set_defaults(fn=cmd_probe)
    s = sub.add_parser(
        "fetch-weights", help="download a mindcv:/hf-hub: weights source into the cache; prints its path"
    )
    s.add_argument("source")
    s.add_argument(
        "--progress", action="store_true", help='print {"progress": {done, total}} lines on stdout before the answer'
    )
    s.set_defaults(fn=cmd_fetch_weights)
    s = sub.add_parser(
        "weights-status", help="which mindcv:/hf-hub: sources are in the weights cache here (no download, no request)"
    )
    s.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="default: the catalog's loadable mindcv: sources, then its hf-hub:timm/ repositories",
    )
    s.set_defaults(fn=cmd_weights_status)
    s = sub.add_parser("preview", help="a data set before training: counts, split, duplicates, sizes, thumbnails")
    s.add_argument("dir", help="the training ImageFolder (data.train)")
    s.add_argument("--val", help="a validation ImageFolder (data.val; default: the spec's, else its val_split)")
    s.add_argument("--spec", help="a run spec whose data and train settings (split, seed, size, augment) apply")
    s.add_argument("--samples", type=int, default=4, help="thumbnails per class (default 4)")
    s.add_argument(
        "--max-bytes", type=int, default=1 << 20, help="budget of all thumbnails, base64 bytes (default 1048576)"
    )
    s.set_defaults(fn=cmd_preview)
    s = sub.add_parser("predict", help="top-5 classes of image files by a checkpoint of a run")
    s.add_argument("--ckpt", required=True)
    s.add_argument("--run", help="the run directory (default: the folder above the checkpoint's checkpoints/)")
    s.add_argument("--batch-size", type=int, help="default: the run's data.batch_size")
    s.add_argument("--device", choices=["CPU", "Ascend"], help="default: the run's device.target")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.set_defaults(fn=cmd_predict)
    s = sub.add_parser("thumbs", help="JPEG thumbnails (base64) of image files inside a data folder")
    s.add_argument("root", help="the data folder; FILEs are relative to it and must stay inside it")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--max-bytes", type=int, default=512 << 10, help="budget of all thumbnails, base64 bytes")
    s.set_defaults(fn=cmd_thumbs)
    return p


def main(argv: list[str] | None = None) -> int:
    configure_env()
    drop_teardown_noise()
    a = parser().parse_args(argv)
    try:
        return a.fn(a)
    except Exception as e:  # the errors the CLI words (clierrors.report); any other is a traceback
        code = report(e)
        if code is None:
            raise
        return code
    except KeyboardInterrupt:
        return 130
