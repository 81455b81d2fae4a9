"""Fetching a named weight source (catalog.py) into the local cache, where the run executes.

The cache is `$ASCEND_FINETUNE_CACHE/weights/` (default `~/.cache/ascend-finetune/weights/`). A file
there is used without any request (delete it to fetch again). A download goes to `<file>.part`, is
resumed with an HTTP Range request when the connection drops (or on the next run), checked against
the expected sha256 when there is one (a mismatch deletes it), and renamed into place atomically, so
a cache path that exists holds a whole file. `HF_HUB_OFFLINE=1` forbids downloads from the hub.
Beside a downloaded file, `<file>.sha256.json` records its sha256, size and mtime, so the cache listing
(cache_status.py) can say "whole and this hash" without reading the file, and a run refuses a cached
file whose size no longer matches its record (truncated or replaced) instead of loading it.

Every msrun rank and every sweep trial fetches the same source at once, so a download holds an
exclusive flock on `<file>.lock` from its first byte to the rename, and looks at the cache again once
it has it. The others wait while the holder's `.part` changes; one that has not changed for
LOCK_STALL_S (a holder stuck on a dead link) fails with `download_locked` rather than hang the run.
A `.part` is resumed only from the URL that began it and only while the host still serves the same
file: `<file>.part.json` keeps that URL, the response's ETag (else Last-Modified), sent back as
If-Range, and the file's size. A 206 answer whose ETag or size is not the recorded one (a proxy that
honours Range but ignores If-Range) starts over instead of joining two files.
A host that sends neither ETag nor Last-Modified cannot say whether its file changed: its `.part` is
resumed only by the download that began it (a cut connection, retried at once), never by a later run.
The cache may be shared: its folders are opened and its files written as cache_folder.py says (no
symlink another user made is followed, only regular files are read or written).
Without fcntl (Windows) a download takes no lock.

A hub repository's `config.json` (the weights' preprocessing: models/preprocess.py) comes the same way,
into the same cache folder, bounded in size; it is cached only once it reads as a usable config.

Progress goes to stderr as lines (`console.log` of a run, which the extension's "Show Console" tails).

Above the ~450-line mark on purpose: its one topic is getting a file over HTTP into the cache whole
(the lock, the resumable `.part` and its record, the checks before the rename), and those parts share
each other's state; the cache's shared-ground rules already live in cache_folder.py and its listing in
cache_status.py.
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..checkpoints.errors import PretrainedError
from .cache_folder import (
    CHUNK,
    CacheUnsafe,
    Folder,
    cache_root,
    read_record,
    read_small_json,
    sha256_fd,
    write_record,
)
from .catalog import OVERRIDABLE, Source, mindcv_cfg, parse, resolve_url

try:
    import fcntl
except ImportError:  # Windows: no flock, so a download there takes no lock (as the copy script does); two
    fcntl = None  # type: ignore[assignment]  # processes fetching one source at once there may clash

ATTEMPTS = 4  # one request plus three resumes after a dropped connection
TIMEOUT_S = 30.0

Progress = Callable[[int, int | None], None]
ORIGIN_SUFFIX = ".part.json"  # where the .part came from: {url, validator, total}
LOCK_SUFFIX = ".lock"
# How long a download waits on another process's lock while that process's .part does not change: a
# large file on a slow link keeps it waiting, a holder stuck on a dead connection (an air-gapped copy's
# ssh link: up to 2 hours) does not hang every run that needs the source.
LOCK_STALL_S = 600.0
LOCK_POLL_S = 0.5
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")  # RFC 9110 14.4


@dataclass
class Fetched:
    path: str
    source: str
    url: str
    sha256: str
    downloaded: bool  # False: the cache already had it
    name_hash: str | None = None  # the hex a mindcv file name carries (catalog.Source.name_hash)
    # The file's (device, inode, size, mtime) as it was hashed: the run checks that the file it opens
    # to read is that file (weights_setup.starting_weights).
    identity: tuple[int, int, int, int] | None = None

    @property
    def name_hash_ok(self) -> bool | None:
        """Whether the sha256 begins with the hex in the file's name, mindcv's naming rule; None: no hex."""
        return None if self.name_hash is None else self.sha256.startswith(self.name_hash.lower())

    def describe(self) -> dict[str, object]:
        doc: dict[str, object] = {"source": self.source, "url": self.url, "sha256": self.sha256}
        if self.name_hash is not None:
            doc.update(name_hash=self.name_hash, name_hash_ok=self.name_hash_ok)
        return {**doc, "cached": not self.downloaded}

    def name_hash_warning(self) -> dict | None:
        """`weights_name_hash_mismatch` when the file is not the one its name says. A warning, not a
        refusal: the rule is mindcv's documented one, but no real file could be checked against it
        where this was written (no network to mindcv's host); a `#sha256=` pin refuses."""
        if self.name_hash_ok is not False:
            return None
        file = os.path.basename(self.path)
        return {
            "code": "weights_name_hash_mismatch",
            "message": f"{self.source}: the sha256 of {file} is {self.sha256}, which does not begin with "
            f"{self.name_hash}, the hash its name carries (mindcv names its files by their sha256); the file "
            f"from {self.url} may not be mindcv's. The run goes on with it; if you trust it, pin it: "
            f"{self.source}#sha256={self.sha256}",
            "details": {"source": self.source, "file": file, "sha256": self.sha256, "name_hash": self.name_hash},
        }


def cache_path(src: Source, env: Mapping[str, str] | None = None) -> str:
    return os.path.join(cache_root(env), src.cache_relpath())


def identity_of(st: os.stat_result) -> tuple[int, int, int, int]:
    """A file's (device, inode, size, mtime in ns): another file renamed into place, or the same one
    rewritten, has another."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def _throttled(pct_step: float, every_s: float, send: Callable[[int, int | None], object]) -> Progress:
    """Passes a download's (done, total) to `send` the first time, at the end (done == total), and in
    between at most every `pct_step` per cent or `every_s` seconds."""
    last: list[float] = []  # [per cent, time] of the last one sent

    def report(done: int, total: int | None) -> None:
        now = time.monotonic()
        pct = 100.0 * done / total if total else 0.0
        final = total is not None and done >= total
        if last and not final and pct - last[0] < pct_step and now - last[1] < every_s:
            return
        last[:] = [pct, now]
        send(done, total)

    return report


def stderr_progress(label: str) -> Progress:
    """Lines like `downloading mindcv:resnet50: 40.0 of 97.8 MB (41%)`, at most every 10% or 5 s."""

    def line(done: int, total: int | None) -> None:
        of = f" of {total / 1e6:.1f} MB ({100.0 * done / total:.0f}%)" if total else " MB"
        print(f"downloading {label}: {done / 1e6:.1f}{of}", file=sys.stderr, flush=True)

    return _throttled(10, 5, line)


def setup_progress(emit: Callable[..., object], source: str) -> Progress:
    """A run's download as `setup` events (`{stage: "download", source, done, total}`, bytes; total
    null when the host does not say) at most every 5% or 2 s, always the first and the last, and as
    the console's lines (stderr_progress). The extension shows them until `run_started`."""
    console = stderr_progress(source)
    event = _throttled(5, 2, lambda done, total: emit("setup", stage="download", source=source, done=done, total=total))

    def report(done: int, total: int | None) -> None:
        console(done, total)
        event(done, total)

    return report


def json_progress(emit: Callable[[object], None]) -> Progress:
    """`{"progress": {"done": N, "total": M or null}}` documents for the editor's notification, at most
    every 1% or 0.5 s, and always the first and the last."""
    return _throttled(1, 0.5, lambda done, total: emit({"progress": {"done": done, "total": total}}))


def _offline_error(src: Source, url: str, dest: str, why: str) -> PretrainedError:
    """A file outside the cache does not say whose preprocessing it wants (a mindcv file there would get
    `imagenet`'s round-256 resize), so the fix says what model.preprocess keeps it: mindcv's values,
    known here (`preprocess`), or a hub repository's config.json, which is not. A mindcv model trained at
    another size than 224 (`image_size`: CrossViT's 240) also needs data.image_size, which the named
    source's run would have suggested."""
    head = (
        f"cannot download {src.text} from {url}: {why}. On a machine without internet, fetch the file where "
        "there is a connection (or use 'Ascend: Copy Weights to Target…' in the editor)"
    )
    params: dict[str, Any] = {
        "source": src.text,
        "url": url,
        "cache": dest,
        "error": why,
        "preprocess": None,
        "image_size": None,
    }
    if src.kind == "mindcv":
        cfg = mindcv_cfg(src.name)
        own = {k: v for k, v in cfg.items() if k in OVERRIDABLE}  # what the object can set
        params["preprocess"] = json.dumps({"preset": "mindcv", **own}) if own else '"mindcv"'
        params["image_size"] = size = cfg.get("input_size")
        settings = (
            f"model.pretrained to its path, model.preprocess to {params['preprocess']}, and data.image_size to "
            f"{size}, the size the weights were trained at"
            if size
            else f"model.pretrained to its path and model.preprocess to {params['preprocess']}"
        )
        tail = (
            f" and copy it to {dest}: in the cache the run finds it by its name, with its preprocessing. A copy "
            f"elsewhere is read as a plain file: set {settings}"
        )
    else:
        tail = (
            f" and copy it to {dest}, with the repository's config.json beside it: in the cache the run finds it "
            "by its name, with that config's preprocessing. A copy elsewhere is read as a plain file: set "
            "model.pretrained to its path and model.preprocess's mean, std, crop_pct and interpolation to that "
            "config.json's"
        )
    return PretrainedError(head + tail, "download_offline", **params)


def _interrupted_error(src: Source, url: str, part: str, why: str) -> PretrainedError:
    return PretrainedError(
        f"download of {src.text} from {url} was interrupted and could not reconnect ({why}); the partial "
        f"file {part} is kept and the next run resumes it",
        "download_interrupted",
        source=src.text,
        url=url,
        error=why,
        part=part,
    )


def _locked_error(src: Source, lock: str) -> PretrainedError:
    return PretrainedError(
        f"another process holds the download of {src.text} (the lock {lock}) and its partial file has not "
        f"changed for {LOCK_STALL_S:g} s: it may be stuck, such as a 'Copy Weights to Target' copy whose ssh "
        f"connection dropped. Find it with `fuser -v {lock}` (or `lsof {lock}`), stop it, and try again. The "
        "lock ends with the process holding it, so removing the file does not help; if no process here holds "
        "it, one on another machine sharing this cache does",
        "download_locked",
        source=src.text,
        lock=lock,
        waited_s=LOCK_STALL_S,
    )


def _bad_range_error(src: Source, url: str, part: str, content_range: str) -> PretrainedError:
    return PretrainedError(
        f"{url} answered the request for the rest of {src.text} with a malformed Content-Range "
        f"{content_range!r}; the partial file {part} was deleted and the next run downloads the file whole",
        "download_bad_range",
        source=src.text,
        url=url,
        content_range=content_range,
        part=part,
    )


def _validator(headers: Mapping[str, str]) -> str | None:
    """What If-Range can send back: a strong ETag, else Last-Modified (RFC 9110 13.1.5)."""
    etag = headers.get("ETag")
    return etag if etag and not etag.startswith("W/") else headers.get("Last-Modified")


@dataclass
class _Resume:
    """A `.part` to resume: its bytes, and what began it (<file>.part.json): the validator sent back as
    If-Range (None: the host gave none, only the download that began the .part resumes it) and the
    file's size (None: the host did not say)."""

    kept: int
    validator: str | None
    total: int | None


class _BadRange(Exception):
    """A 206 answer whose Content-Range does not parse."""


def _same_file(resp: object, resume: _Resume) -> bool:
    """Whether a 206 answer is the rest of the file that began the `.part`: it starts where the `.part`
    ends, and its strong ETag (when it has one) and size are the recorded ones. A host that ignores
    If-Range serves the rest of a changed file otherwise, and the two would be joined."""
    headers = resp.headers  # type: ignore[attr-defined]
    cr = headers.get("Content-Range", "")
    m = _CONTENT_RANGE.fullmatch(cr)
    if m is None:
        raise _BadRange(cr)
    etag = headers.get("ETag")
    total = None if m[3] == "*" else int(m[3])
    return (
        int(m[1]) == resume.kept
        and (not etag or etag.startswith("W/") or etag == resume.validator)
        and (resume.total is None or total == resume.total)
    )


def _open(url: str, resume: _Resume | None) -> tuple[object, int, int | None, str | None] | None:
    """(response, offset the body starts at, total size or None, the response's validator), or None
    for a 206 answer of another file (_same_file). A resume sends If-Range: a host whose file changed
    since answers 200 with all of the new one."""
    req = urllib.request.Request(url, headers={"User-Agent": "ascend-finetune"})
    if resume:
        req.add_header("Range", f"bytes={resume.kept}-")
        if resume.validator is not None:
            req.add_header("If-Range", resume.validator)
    resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 (https/http URL from the catalog)
    if resume and resp.status == 206:
        try:
            same = _same_file(resp, resume)
        except _BadRange:
            resp.close()
            raise
        if not same:
            resp.close()
            return None
        return resp, resume.kept, resume.total, resume.validator
    length = resp.headers.get("Content-Length")
    return resp, 0, int(length) if length and length.isdigit() else None, _validator(resp.headers)


def _resume_point(folder: Folder, name: str, url: str, mine: _Resume | None) -> _Resume | None:
    """The `<name>.part` to resume, if any: only when this URL began it and its host gave a validator,
    since only then can the host say whether the file is still the same; or `mine`, the `.part` as this
    download left it when its connection broke off, which is resumed without a validator: the 206's
    start and size are checked against what this download saw (_same_file). A `.part` without a
    validator left by an earlier run (or process) is not resumed: seconds apart within one download the
    host's file is taken to be the same, across runs nothing says so, and it starts over."""
    size = folder.size(name + ".part")
    if mine is not None and size == mine.kept > 0:
        return mine
    doc = read_small_json(name + ORIGIN_SUFFIX, folder.fd)
    # An earlier process's .part whose host gave no validator starts over (validator null in its record).
    if not (size and isinstance(doc, dict) and doc.get("url") == url and isinstance(doc.get("validator"), str)):
        return None
    total = doc.get("total")  # absent in records of runners before it was kept
    return _Resume(size, doc["validator"], total if isinstance(total, int) else None)


def _whole_size(e: urllib.error.HTTPError) -> int | None:
    """The file size a 416 answer gives (`Content-Range: bytes */N`)."""
    cr = (e.headers.get("Content-Range") if e.headers else None) or ""
    return int(cr[8:]) if cr.startswith("bytes */") and cr[8:].isdigit() else None


def _start_over(folder: Folder, name: str) -> None:
    folder.remove(name + ".part")
    folder.remove(name + ORIGIN_SUFFIX)


def _download(src: Source, url: str, dest: str, folder: Folder, progress: Progress) -> None:
    """`<dest>.part` made whole (the caller verifies it), resumed where that is safe."""
    name = os.path.basename(dest)
    part = name + ".part"
    arrived = 0  # bytes this call received: a later network error is an interruption, not an offline machine
    mine: _Resume | None = None  # the .part as this call's broken-off answer left it
    for _ in range(ATTEMPTS):
        resume = _resume_point(folder, name, url, mine)
        mine = None
        try:
            opened = _open(url, resume)
        except _BadRange as e:
            _start_over(folder, name)  # its host cannot say where the rest goes: the next run asks for all
            raise _bad_range_error(src, url, dest + ".part", str(e)) from None
        except urllib.error.HTTPError as e:
            if e.code == 416 and resume:
                whole = _whole_size(e)
                if whole == resume.kept and resume.total in (None, whole):  # killed before the rename
                    return
                _start_over(folder, name)  # not a prefix of this file
                continue
            raise PretrainedError(
                f"cannot download {src.text}: {url} answered HTTP {e.code} {e.reason}"
                + ("; is the name right, and does the mirror hold it?" if e.code == 404 else ""),
                "download_http",
                source=src.text,
                url=url,
                status=e.code,
                reason=str(e.reason),
            ) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            why = f"{type(reason).__name__}: {reason}"
            if arrived:
                raise _interrupted_error(src, url, dest + ".part", why) from None
            raise _offline_error(src, url, dest, why) from None
        if opened is None:
            print(f"{url} sent the rest of another file than {src.text}'s partial one; starting over", file=sys.stderr)
            _start_over(folder, name)
            continue
        resp, offset, total, validator = opened
        done = offset
        fd = folder.open(part, os.O_WRONLY | os.O_CREAT)
        try:
            os.ftruncate(fd, offset)  # a 200 answer to a Range request restarts from zero
            if offset == 0:  # a new .part: recorded once the old bytes are gone, so it never vouches for them
                origin_doc = {"url": url, "validator": validator, "total": total}
                folder.write(name + ORIGIN_SUFFIX, json.dumps(origin_doc).encode())
            os.lseek(fd, offset, os.SEEK_SET)
            progress(done, total)
            with resp:  # type: ignore[attr-defined]
                while block := resp.read(CHUNK):  # type: ignore[attr-defined]
                    os.write(fd, block)
                    done += len(block)
                    arrived += len(block)
                    progress(done, total)
        except (OSError, http.client.HTTPException) as e:  # reset, timeout, IncompleteRead
            print(f"download of {src.text} cut at {done} bytes ({type(e).__name__}); resuming", file=sys.stderr)
            mine = _Resume(done, validator, total)
            continue
        finally:
            os.close(fd)
        if total is not None and done < total:
            print(f"download of {src.text} cut at {done} of {total} bytes; resuming", file=sys.stderr)
            mine = _Resume(done, validator, total)
            continue
        return
    raise PretrainedError(
        f"download of {src.text} from {url} kept breaking off ({ATTEMPTS} attempts); the partial file "
        f"{dest}.part is kept and the next run resumes it",
        "download_broken_off",
        source=src.text,
        url=url,
        attempts=ATTEMPTS,
        part=dest + ".part",
    )


def _try_lock(fd: int) -> bool:
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def _locked(folder: Folder, name: str, src: Source) -> Iterator[None]:
    """An exclusive flock on `<name>.lock` while it is held, waited for while the holder's `.part`
    changes (download_locked once it has not for LOCK_STALL_S). A cache this process cannot write in
    gets no lock: nothing can be downloaded into it either, which fails as it would without one.
    Without fcntl (Windows) there is no lock at all, nor a `.lock` file."""
    if fcntl is None:
        yield
        return
    try:
        fd = folder.open(name + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT)
    except OSError as e:
        if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        yield
        return
    try:
        if not _try_lock(fd):
            print(f"waiting for another process downloading {src.text}", file=sys.stderr, flush=True)
            seen, since = folder.size(name + ".part"), time.monotonic()
            while not _try_lock(fd):
                now, size = time.monotonic(), folder.size(name + ".part")
                if size != seen:
                    seen, since = size, now
                elif now - since >= LOCK_STALL_S:
                    raise _locked_error(src, os.path.join(folder.path, name + LOCK_SUFFIX))
                time.sleep(LOCK_POLL_S)
        yield
    finally:
        os.close(fd)


def _cached(src: Source, url: str, dest: str, folder: Folder) -> Fetched | None:
    """The cached file, hashed (and checked against its record and pin); None when there is none."""
    name = os.path.basename(dest)
    try:
        fd = folder.open(name, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except CacheUnsafe:
        if folder.holds_folder(name):  # no rename replaces it: refused before a download that could not land
            raise
        return None  # a symlink or special file there is downloaded over (the rename replaces it)
    try:
        st = os.fstat(fd)
        rec = read_record(name, dir_fd=folder.fd)
        if rec is not None and rec["bytes"] != st.st_size:
            raise PretrainedError(
                f"the cached {dest} for {src.text} is {st.st_size} bytes, but {rec['bytes']} were downloaded: it "
                "was truncated or replaced; delete it to download it again",
                "cache_size_mismatch",
                cache=dest,
                source=src.text,
                size=st.st_size,
                expected=rec["bytes"],
            )
        actual = sha256_fd(fd)
    finally:
        os.close(fd)
    if src.sha256 and actual != src.sha256:
        raise PretrainedError(
            f"the cached {dest} for {src.text} has sha256 {actual}, expected {src.sha256}: "
            "delete it to download it again",
            "cache_hash_mismatch",
            cache=dest,
            source=src.text,
            sha256=actual,
            expected=src.sha256,
        )
    if rec is None:  # cached before records existed, or copied in: record it now that it is hashed
        _record(folder, name, actual, st)
    return Fetched(dest, src.text, url, actual, downloaded=False, name_hash=src.name_hash, identity=identity_of(st))


def _record(folder: Folder, name: str, sha256: str, st: os.stat_result) -> None:
    """write_record, best effort: a read-only or someone else's cache (a folder planted at the record's
    name: CacheUnsafe) fails no fetch of a whole file; the listing just knows less."""
    try:
        write_record(folder, name, sha256, st)
    except (OSError, CacheUnsafe):
        pass


def _install(src: Source, url: str, dest: str, folder: Folder) -> Fetched:
    """The whole `.part` checked against the pin and renamed into place, with its record."""
    name = os.path.basename(dest)
    fd = folder.open(name + ".part", os.O_RDONLY)
    try:
        st = os.fstat(fd)
        actual = sha256_fd(fd)
    finally:
        os.close(fd)
    if src.sha256 and actual != src.sha256:
        folder.remove(name + ".part")
        folder.remove(name + ORIGIN_SUFFIX)
        raise PretrainedError(
            f"download of {src.text} from {url} has sha256 {actual}, expected {src.sha256}: the file was "
            "deleted; check the mirror or the pinned hash",
            "download_hash_mismatch",
            source=src.text,
            url=url,
            sha256=actual,
            expected=src.sha256,
        )
    # A folder planted at `name` meanwhile is CacheUnsafe; the whole, checked .part stays, so once the
    # folder is gone the next run renames it without downloading it again (when its host gave a validator).
    folder.replace(name + ".part", name)
    folder.remove(name + ORIGIN_SUFFIX)
    _record(folder, name, actual, st)  # a rename keeps the size and mtime
    return Fetched(dest, src.text, url, actual, downloaded=True, name_hash=src.name_hash, identity=identity_of(st))


def fetch(value: str, env: dict[str, str] | None = None, progress: Progress | None = None) -> Fetched:
    """The local file for a named source, downloaded into the cache if it is not there yet."""
    env = dict(os.environ) if env is None else env
    src = parse(value)
    url = resolve_url(src, env)
    dest = cache_path(src, env)
    folder = Folder.of(dest, env, create=False)
    try:
        got = _cached(src, url, dest, folder) if folder is not None else None
        if got:
            return got
        if src.kind == "hf-hub" and offline(env):
            raise _offline_error(src, url, dest, "HF_HUB_OFFLINE is set and the file is not in the cache")
        folder = folder or Folder.of(dest, env, create=True)
        assert folder is not None  # create=True makes every folder
        with _locked(folder, os.path.basename(dest), src):
            got = _cached(src, url, dest, folder)  # another process may have fetched it while this one waited
            if got:
                return got
            _download(src, url, dest, folder, progress or stderr_progress(src.text))
            return _install(src, url, dest, folder)
    finally:
        if folder is not None:
            folder.close()


def local_weights(value: str, progress: Progress | None = None) -> tuple[str, Fetched | None]:
    """`model.pretrained` as a local path: a named source is fetched (or found in the cache), a path
    is returned as it is."""
    from .catalog import SourceError, is_named

    if not is_named(value):
        return value, None
    try:
        got = fetch(value, progress=progress)
    except SourceError as e:
        raise PretrainedError(f"model.pretrained: {e}; {e.fix}", e.why, **e.params) from None
    return got.path, got


HUB_CONFIG = "config.json"
MAX_CONFIG_BYTES = 64 << 10  # a timm config.json is ~1 KB


@dataclass
class HubConfig:
    url: str
    data: bytes  # empty when `problem` says why there is none
    problem: str | None
    cached: bool


# fetch_hub_config's `problem` for a config that is not cached while HF_HUB_OFFLINE is set.
NOT_CACHED_OFFLINE = "HF_HUB_OFFLINE is set and it is not in the cache"


def offline(env: Mapping[str, str]) -> bool:
    return env.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _hub_config_source(src: Source) -> Source:
    return Source(src.text, src.kind, src.name, HUB_CONFIG, src.backbone, None)


def cache_path_of_hub_config(src: Source, env: Mapping[str, str] | None = None) -> str:
    """Where a hub source's config.json is cached: beside its weights."""
    return cache_path(_hub_config_source(src), env)


def _problem(e: Exception) -> str:
    return str(e) if isinstance(e, CacheUnsafe) else f"{type(e).__name__}: {getattr(e, 'strerror', None) or e}"


def _cached_config(dest: str, env: Mapping[str, str]) -> bytes | None:
    folder = Folder.of(dest, env, create=False)
    if folder is None:
        return None
    try:
        fd = folder.open(os.path.basename(dest), os.O_RDONLY)
    except (FileNotFoundError, CacheUnsafe):  # a symlink or special file there is downloaded over
        return None
    finally:
        folder.close()
    try:
        return os.read(fd, MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)


def fetch_hub_config(src: Source, check: Callable[[bytes], object], env: Mapping[str, str] | None = None) -> HubConfig:
    """The `config.json` beside a hub source's weights (`<org>/<repo>/resolve/main/config.json`), from
    the cache or, unless HF_HUB_OFFLINE, downloaded (read up to one byte past MAX_CONFIG_BYTES,
    so an oversized answer is refused by `check`). `check` raises ValueError on content that must
    not be cached. Never raises for a missing or bad file, nor for a cache it cannot use or write
    (read-only, a planted symlink): `problem` says why."""
    e: Mapping[str, str] = os.environ if env is None else env
    cfg = _hub_config_source(src)
    url, dest = resolve_url(cfg, e), cache_path(cfg, e)
    try:
        cached = _cached_config(dest, e)
    except (OSError, PretrainedError) as err:
        return HubConfig(url, b"", _problem(err), cached=False)
    if cached is not None:
        return HubConfig(url, cached, None, cached=True)
    if offline(e):
        return HubConfig(url, b"", NOT_CACHED_OFFLINE, cached=False)
    req = urllib.request.Request(url, headers={"User-Agent": "ascend-finetune"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # noqa: S310 (the hub's resolve URL)
            data = resp.read(MAX_CONFIG_BYTES + 1)
    except urllib.error.HTTPError as err:
        return HubConfig(url, b"", f"HTTP {err.code} {err.reason}", cached=False)
    except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
        reason = getattr(err, "reason", err)
        return HubConfig(url, b"", f"{type(reason).__name__}: {reason}", cached=False)
    try:
        check(data)
    except ValueError:  # reported by the caller's own check; a fixed mirror is asked again next run
        return HubConfig(url, data, None, cached=False)
    try:
        folder = Folder.of(dest, e, create=True)
        assert folder is not None  # create=True makes every folder
        try:
            folder.write(os.path.basename(dest), data)
        finally:
            folder.close()
    except (OSError, PretrainedError) as err:  # not used uncached: an offline rerun would preprocess otherwise
        return HubConfig(url, b"", f"it cannot be cached at {dest}: {_problem(err)}", cached=False)
    return HubConfig(url, data, None, cached=False)
