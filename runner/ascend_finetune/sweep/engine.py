"""Optuna, as the sweep uses it: the study's storage, sampler, pruner and search space.

Storage: a JournalStorage over a file in the sweep folder (study.journal): an append-only log of
operations, fsynced per write, that survives the scheduler's crash and needs no server. Or a database
URL the spec names (RDBStorage), for one study shared by schedulers on several machines. The sampler
and pruner hold no state that needs keeping: a resumed scheduler builds them again from the spec, and
they read the trials so far from the storage.
"""

from __future__ import annotations

import logging
import os
import zlib
from typing import Any

import optuna
from optuna.storages import BaseStorage, JournalStorage
from optuna.storages.journal import JournalFileBackend

from ..rundir import UnsafeFile, open_regular
from ..spec import Problem, SpecError
from . import rdb
from .folder import JOURNAL

JOURNAL_MAX_BYTES = 1 << 30  # a sweep of 1000 trials x 100 epochs writes a few tens of MB

# Optuna logs each trial at INFO; the sweep's own events say the same, and console.log keeps warnings.
optuna.logging.set_verbosity(logging.WARNING)


def storage_for(sweep: dict[str, Any], sweep_dir: str) -> BaseStorage:
    url = sweep["storage"]
    if url:
        # Checked when the sweep was made too; again here for a resume or status on a Python without it.
        problem = rdb.driver_problem(url)
        if problem:
            raise SpecError([Problem("storage", *problem)])
        return rdb.open_storage(url)
    path = os.path.join(sweep_dir, JOURNAL)
    # Optuna opens the journal with a plain open(): check first that it is a regular file we may
    # read (a symlink or FIFO planted in a shared folder is refused), and not a runaway size.
    fd = open_regular(path, os.O_RDONLY | os.O_CREAT)
    try:
        if os.fstat(fd).st_size > JOURNAL_MAX_BYTES:
            raise UnsafeFile(
                f"{JOURNAL} is larger than {JOURNAL_MAX_BYTES} bytes",
                path,
                "too_large",
                file=JOURNAL,
                limit=JOURNAL_MAX_BYTES,
            )
    finally:
        os.close(fd)
    return JournalStorage(JournalFileBackend(path))


def safe_url(url: str | None) -> str | None:
    """The storage URL without its password (for events and status)."""
    if not url:
        return None
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL fails at RDBStorage with its own message
        return url.split("://", 1)[0] + "://..."


class _GridSampler(optuna.samplers.GridSampler):
    """Optuna's GridSampler without the study.stop() its after_trial calls once the grid is done: that
    call is for optimize() (outside it Optuna raises, and the tell is lost); the scheduler ends a sweep
    by counting its trials, and `trials` is at most the grid's size (sweepspec)."""

    def after_trial(self, study: optuna.Study, trial: Any, state: Any, values: Any) -> None:
        return None


def sampler_for(sweep: dict[str, Any], salt: str = "") -> optuna.samplers.BaseSampler:
    kind, seed = sweep["sampler"], sweep["seed"]
    if sweep["storage"] and seed is not None:
        # Schedulers sharing a study run the same spec: with one seed, each one's first draws would be
        # the same values (two trials of one setting). The salt (this scheduler's sweep folder) keeps
        # them apart; each scheduler's draws stay the same across its resumes.
        seed = (seed + zlib.crc32(salt.encode())) % 2**32
    if kind == "grid":
        return _GridSampler({k: e["choices"] for k, e in sweep["space"].items()}, seed=seed)
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def pruner_for(sweep: dict[str, Any]) -> optuna.pruners.BasePruner:
    p = sweep["pruner"]
    if p["kind"] == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=p["startup_trials"], n_warmup_steps=p["warmup_epochs"])
    if p["kind"] == "successive_halving":
        return optuna.pruners.SuccessiveHalvingPruner(
            min_resource=p["min_epochs"], reduction_factor=p["reduction_factor"]
        )
    return optuna.pruners.NopPruner()


def suggest_all(trial: optuna.trial.Trial, sweep: dict[str, Any]) -> dict[str, Any]:
    """The trial's value of every space field, through Optuna's suggest API (a value the trial
    already has is returned as it is: a trial asked before a crash keeps its draw)."""
    for key, e in sweep["space"].items():
        if "choices" in e:
            trial.suggest_categorical(key, e["choices"])
        elif e["int"]:
            trial.suggest_int(key, e["low"], e["high"], step=e.get("step", 1), log=e["log"])
        else:
            trial.suggest_float(key, e["low"], e["high"], step=e.get("step"), log=e["log"])
    return dict(trial.params)


def open_study(sweep: dict[str, Any], sweep_dir: str, study_name: str, create: bool = True) -> optuna.Study:
    storage = storage_for(sweep, sweep_dir)
    if not create:
        return optuna.load_study(study_name=study_name, storage=storage)
    return optuna.create_study(
        storage=storage,
        study_name=study_name,
        direction=sweep["objective"]["direction"],
        sampler=sampler_for(sweep, sweep_dir),
        pruner=pruner_for(sweep),
        load_if_exists=True,
    )
