"""A run's user metadata (meta.json: a name, notes and tags the user gives it after the fact), and
the fields `ls` adds per run from it: `meta`, `display_name` and `health`.

Only the `meta` command writes meta.json (atomically, under an flock on the run directory, so two
edits at once do not lose one); a training process never touches it, so a running run can be renamed.
Every value is checked before anything is written: a refused value leaves meta.json as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from typing import Any

from .rundir import atomic_write_json, read_json
from .runlist import last_event_of

META = "meta.json"
MAX_NAME = 200  # characters
MAX_NOTES_BYTES = 10_000  # UTF-8 bytes
MAX_TAGS = 32
MAX_TAG = 64  # characters
# Control, format (bidi overrides, zero-width), line and paragraph separators, and lone surrogates
# (undecodable bytes on the command line): in a one-line label they hide or reorder text.
# (Not unassigned code points: an older Python's Unicode tables would refuse a newer emoji.)
_REFUSED_IN_LABELS = {"Cc", "Cf", "Zl", "Zp", "Cs"}
_ALLOWED_IN_NOTES = {"\n", "\t"}


class MetaError(Exception):
    """A refused value: `field` is name, notes or tags."""

    def __init__(self, field: str, message: str, why: str = "bad_meta", **params: Any):
        super().__init__(message)
        self.field, self.why, self.params = field, why, params


def meta_path(run_dir: str) -> str:
    return os.path.join(run_dir, META)


def read_meta(run_dir: str) -> dict[str, Any]:
    """`{name, notes, tags, updated_at}`; missing, unreadable or wrongly typed values read as unset
    (a hand-edited file cannot put anything but a string name, string notes and string tags in `ls`)."""
    raw = read_json(meta_path(run_dir), {})
    raw = raw if isinstance(raw, dict) else {}
    name, notes, tags, at = raw.get("name"), raw.get("notes"), raw.get("tags"), raw.get("updated_at")
    return {
        "name": name[:MAX_NAME] if isinstance(name, str) and name else None,
        "notes": notes if isinstance(notes, str) and len(notes.encode("utf-8", "replace")) <= MAX_NOTES_BYTES else "",
        "tags": [t for t in tags if isinstance(t, str)][:MAX_TAGS] if isinstance(tags, list) else [],
        "updated_at": at if isinstance(at, (int, float)) and not isinstance(at, bool) else None,
    }


def _bad_char(text: str, allowed: set[str]) -> str | None:
    for ch in text:
        if ch not in allowed and unicodedata.category(ch) in _REFUSED_IN_LABELS:
            return f"U+{ord(ch):04X}"
    return None


def check_name(name: str) -> str | None:
    """The name to store (None clears it: the run shows its spec's name again)."""
    name = name.strip()
    if len(name) > MAX_NAME:
        raise MetaError(
            "name",
            f"the name has {len(name)} characters; at most {MAX_NAME}",
            "name_too_long",
            length=len(name),
            most=MAX_NAME,
        )
    bad = _bad_char(name, set())
    if bad:
        raise MetaError(
            "name", f"the name contains the control or invisible character {bad}", "name_bad_char", char=bad
        )
    return name or None


def check_notes(notes: str) -> str:
    size = len(notes.encode("utf-8", "surrogatepass"))
    if size > MAX_NOTES_BYTES:
        raise MetaError(
            "notes",
            f"the notes are {size} bytes (UTF-8); at most {MAX_NOTES_BYTES}",
            "notes_too_long",
            size=size,
            most=MAX_NOTES_BYTES,
        )
    bad = _bad_char(notes.replace("\r\n", "\n"), _ALLOWED_IN_NOTES)
    if bad:
        raise MetaError(
            "notes",
            f"the notes contain the control character {bad} (line breaks and tabs are fine)",
            "notes_bad_char",
            char=bad,
        )
    return notes.replace("\r\n", "\n")


def check_tag(tag: str) -> str:
    tag = tag.strip()
    if not tag:
        raise MetaError("tags", "a tag is empty", "tag_empty")
    if len(tag) > MAX_TAG:
        raise MetaError(
            "tags",
            f"the tag {tag[:20]!r}... has {len(tag)} characters; at most {MAX_TAG}",
            "tag_too_long",
            tag=tag[:20],
            length=len(tag),
            most=MAX_TAG,
        )
    bad = _bad_char(tag, set())
    if bad:
        raise MetaError("tags", f"a tag contains the control or invisible character {bad}", "tag_bad_char", char=bad)
    return tag


@contextlib.contextmanager
def _locked(run_dir: str) -> Iterator[None]:
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)  # the run directory itself, not a planted link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def update_meta(
    run_dir: str,
    name: str | None = None,
    notes: str | None = None,
    add_tags: list[str] | None = None,
    remove_tags: list[str] | None = None,
) -> dict[str, Any]:
    """Change what is given (None: leave it), write meta.json, return the new metadata. Tags keep their
    order; an added tag that is already there is not repeated; removing a tag that is not there is
    no error. Raises MetaError (nothing written) for a value out of bounds."""
    new_name = check_name(name) if name is not None else None
    new_notes = check_notes(notes) if notes is not None else None
    adds = [check_tag(t) for t in add_tags or []]
    removes = {t.strip() for t in remove_tags or []}
    with _locked(run_dir):
        meta = read_meta(run_dir)
        if name is not None:
            meta["name"] = new_name
        if new_notes is not None:
            meta["notes"] = new_notes
        tags = [t for t in meta["tags"] if t not in removes]
        for t in adds:
            if t not in tags:
                tags.append(t)
        if len(tags) > MAX_TAGS:
            raise MetaError(
                "tags",
                f"the run would have {len(tags)} tags; at most {MAX_TAGS}",
                "too_many_tags",
                count=len(tags),
                most=MAX_TAGS,
            )
        meta["tags"] = tags
        meta["updated_at"] = time.time()
        atomic_write_json(meta_path(run_dir), meta)
    return meta


_RUN_SUFFIX = re.compile(r"-([0-9a-f]{4})$")  # new_run_id's last part: 4 random hex digits


def _suffix(run: dict[str, Any]) -> str:
    run_id = str(run.get("run_id") or os.path.basename(str(run.get("run_dir") or "")))
    m = _RUN_SUFFIX.search(run_id)
    return m.group(1) if m else run_id


def annotate_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`ls`'s per-run additions, in place: `meta` (read_meta), `health` (status.json's, else the one in
    the run's last run_finished: a run of several ranks, whose status.json the launcher writes) and
    `display_name`: meta's name, else the spec's, else the run id; when two listed runs would show the
    same name, each of them gets its run id's short suffix (the 4 hex digits, or the whole run id
    when it has none, or when those clash too) in parentheses."""
    for r in runs:
        run_dir = str(r.get("run_dir") or "")
        r["meta"] = read_meta(run_dir)
        if not isinstance(r.get("health"), dict):
            r["health"] = None
        if r["health"] is None and r.get("state") in ("completed", "stopped", "failed"):
            try:
                ev = last_event_of(os.path.join(run_dir, "events.jsonl"), "run_finished")
            except OSError:  # no log, or one that is not a regular file: the run's `problem` says so
                ev = None
            r["health"] = ev.get("health") if ev and isinstance(ev.get("health"), dict) else None
        base = r["meta"]["name"] or r.get("name") or r.get("run_id") or os.path.basename(run_dir)
        r["display_name"] = str(base)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_name.setdefault(r["display_name"], []).append(r)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        suffixes = [_suffix(r) for r in same]
        unique = len(set(suffixes)) == len(suffixes)
        for r, sfx in zip(same, suffixes):
            r["display_name"] = f"{name} ({sfx if unique else r.get('run_id') or r.get('run_dir')})"
    return runs
