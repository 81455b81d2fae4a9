"""Fetching a named weight source (catalog.py) into the local cache, where the run executes.

The cache is `$ASCEND_FINETUNE_CACHE/weights/` (default `~/.cache/ascend-finetune/weights/`). A file
there is used without any request (delete it to fetch again). A download goes to `<file>.part`, is
resumed with an HTTP Range request when the connection drops (or on the next run), checked against
the expected sha256 when there is one (a mismatch deletes it), and renamed into place atomically, so
a cache path that exists holds a whole file. `HF_HUB_OFFLINE=1` forbids downloads from the hub.
Beside a downloaded file, `<file>.sha256.json` records its sha256, size and mtime, so the cache listing
(cache_status.py) can say "whole and this hash" without reading the file, and a run refuses a cached
file whose size no longer matches its record (truncated or replaced) instead of loading it.

A hub repository's `config.json` (the weights' preprocessing: models/preprocess.py) comes the same way,
into the same cache folder, bounded in size; it is cached only once it reads as a usable config.

Progress goes to stderr as lines (`console.log` of a run, which the extension's "Show Console" tails).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import stat
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..checkpoints.errors import PretrainedError
from .catalog import Source, parse, resolve_url

CACHE_ENV = "ASCEND_FINETUNE_CACHE"
CHUNK = 1 << 20
ATTEMPTS = 4  # one request plus three resumes after a dropped connection
TIMEOUT_S = 30.0

Progress = Callable[[int, int | None], None]
RECORD_SUFFIX = ".sha256.json"
RECORD_MAX_BYTES = 4096


@dataclass
class Fetched:
    path: str
    source: str
    url: str
    sha256: str
    downloaded: bool  # False: the cache already had it
    name_hash: str | None = None  # the hex a mindcv file name carries (catalog.Source.name_hash)

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


def cache_root(env: Mapping[str, str] | None = None) -> str:
    e: Mapping[str, str] = os.environ if env is None else env
    root = e.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "ascend-finetune")
    return os.path.join(os.path.abspath(root), "weights")


def cache_path(src: Source, env: Mapping[str, str] | None = None) -> str:
    return os.path.join(cache_root(env), src.cache_relpath())


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


def write_record(dest: str, sha256: str) -> None:
    """`<dest>.sha256.json`: {sha256, bytes, mtime_ns} of the file as it is now. Written to a new file
    (O_EXCL, no symlink followed) and renamed over the old record."""
    st = os.stat(dest, follow_symlinks=False)
    doc = {"sha256": sha256, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
    tmp = f"{dest}{RECORD_SUFFIX}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, json.dumps(doc).encode())
    finally:
        os.close(fd)
    os.replace(tmp, dest + RECORD_SUFFIX)


def read_record(dest: str, dir_fd: int | None = None) -> dict[str, object] | None:
    """The record beside `dest`, or None: missing, not a regular file (a symlink is not followed),
    over 4 KB, or not the shape write_record writes. With dir_fd, `dest` is a name in that folder."""
    try:
        fd = os.open(dest + RECORD_SUFFIX, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > RECORD_MAX_BYTES:
            return None
        doc = json.loads(os.read(fd, RECORD_MAX_BYTES + 1))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    ok = (
        isinstance(doc, dict)
        and isinstance(doc.get("sha256"), str)
        and isinstance(doc.get("bytes"), int)
        and isinstance(doc.get("mtime_ns"), int)
    )
    return doc if ok else None


def _offline_error(src: Source, url: str, dest: str, why: str) -> PretrainedError:
    return PretrainedError(
        f"cannot download {src.text} from {url}: {why}. On a machine without internet, fetch the file "
        f"where there is a connection (or use 'Ascend: Copy Weights to Target…' in the editor), copy it "
        f"to {dest} (the cache, used without a request) or anywhere on this machine, and set "
        f"model.pretrained to that path",
        "download_offline",
        source=src.text,
        url=url,
        cache=dest,
        error=why,
    )


def _open(url: str, start: int) -> tuple[object, int, int | None]:
    """(response, offset the body starts at, total size or None)."""
    req = urllib.request.Request(url, headers={"User-Agent": "ascend-finetune"})
    if start:
        req.add_header("Range", f"bytes={start}-")
    resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 (https/http URL from the catalog)
    status = resp.status
    length = resp.headers.get("Content-Length")
    if start and status == 206:
        cr = resp.headers.get("Content-Range", "")  # "bytes 100-199/200"
        total = int(cr.rsplit("/", 1)[1]) if "/" in cr and not cr.endswith("*") else None
        if not cr.startswith(f"bytes {start}-"):
            resp.close()
            raise urllib.error.HTTPError(url, 416, f"unexpected Content-Range {cr!r}", resp.headers, None)
        return resp, start, total
    return resp, 0, int(length) if length and length.isdigit() else None


def _download(src: Source, url: str, dest: str, progress: Progress) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    part = dest + ".part"
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(ATTEMPTS):
        start = os.path.getsize(part) if os.path.isfile(part) else 0
        try:
            resp, offset, total = _open(url, start)
        except urllib.error.HTTPError as e:
            if e.code == 416 and start:  # the partial file is not a prefix of this one: start over
                os.unlink(part)
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
            raise _offline_error(src, url, dest, f"{type(reason).__name__}: {reason}") from None
        done = offset
        fd = os.open(part, flags, 0o644)
        try:
            os.ftruncate(fd, offset)  # a 200 answer to a Range request restarts from zero
            os.lseek(fd, offset, os.SEEK_SET)
            progress(done, total)
            with resp:  # type: ignore[attr-defined]
                while block := resp.read(CHUNK):  # type: ignore[attr-defined]
                    os.write(fd, block)
                    done += len(block)
                    progress(done, total)
        except (OSError, http.client.HTTPException) as e:  # reset, timeout, IncompleteRead
            print(f"download of {src.text} cut at {done} bytes ({type(e).__name__}); resuming", file=sys.stderr)
            continue
        finally:
            os.close(fd)
        if total is not None and done < total:
            print(f"download of {src.text} cut at {done} of {total} bytes; resuming", file=sys.stderr)
            continue
        return
    raise PretrainedError(
        f"download of {src.text} from {url} kept breaking off ({ATTEMPTS} attempts); the partial file "
        f"{part} is kept and the next run resumes it",
        "download_broken_off",
        source=src.text,
        url=url,
        attempts=ATTEMPTS,
        part=part,
    )


def fetch(value: str, env: dict[str, str] | None = None, progress: Progress | None = None) -> Fetched:
    """The local file for a named source, downloaded into the cache if it is not there yet."""
    env = dict(os.environ) if env is None else env
    src = parse(value)
    url = resolve_url(src, env)
    dest = cache_path(src, env)
    if os.path.isfile(dest) and not os.path.islink(dest):
        rec = read_record(dest)
        size = os.path.getsize(dest)
        if rec is not None and rec["bytes"] != size:
            raise PretrainedError(
                f"the cached {dest} for {src.text} is {size} bytes, but {rec['bytes']} were downloaded: it was "
                "truncated or replaced; delete it to download it again",
                "cache_size_mismatch",
                cache=dest,
                source=src.text,
                size=size,
                expected=rec["bytes"],
            )
        actual = sha256_of(dest)
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
            try:
                write_record(dest, actual)
            except OSError:
                pass  # a read-only or someone else's cache: the listing just knows less
        return Fetched(dest, src.text, url, actual, downloaded=False, name_hash=src.name_hash)
    if src.kind == "hf-hub" and _offline(env):
        raise _offline_error(src, url, dest, "HF_HUB_OFFLINE is set and the file is not in the cache")
    _download(src, url, dest, progress or stderr_progress(src.text))
    part = dest + ".part"
    actual = sha256_of(part)
    if src.sha256 and actual != src.sha256:
        os.unlink(part)
        raise PretrainedError(
            f"download of {src.text} from {url} has sha256 {actual}, expected {src.sha256}: the file was "
            "deleted; check the mirror or the pinned hash",
            "download_hash_mismatch",
            source=src.text,
            url=url,
            sha256=actual,
            expected=src.sha256,
        )
    os.replace(part, dest)
    write_record(dest, actual)
    return Fetched(dest, src.text, url, actual, downloaded=True, name_hash=src.name_hash)


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


def _offline(env: Mapping[str, str]) -> bool:
    return env.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _hub_config_source(src: Source) -> Source:
    return Source(src.text, src.kind, src.name, HUB_CONFIG, src.backbone, None)


def cache_path_of_hub_config(src: Source, env: Mapping[str, str] | None = None) -> str:
    """Where a hub source's config.json is cached: beside its weights."""
    return cache_path(_hub_config_source(src), env)


def fetch_hub_config(src: Source, check: Callable[[bytes], object], env: Mapping[str, str] | None = None) -> HubConfig:
    """The `config.json` beside a hub source's weights (`<org>/<repo>/resolve/main/config.json`), from
        the cache or, unless HF_HUB_OFFLINE, downloaded (read up to one byte past MAX_CONFIG_BYTES,
    so an oversized answer is refused by `check`). `check` raises ValueError on
        content that must not be cached. Never raises for a missing or bad file: `problem` says why."""
    e: Mapping[str, str] = os.environ if env is None else env
    cfg = _hub_config_source(src)
    url, dest = resolve_url(cfg, e), cache_path(cfg, e)
    if os.path.isfile(dest) and not os.path.islink(dest):
        with open(dest, "rb") as f:
            return HubConfig(url, f.read(MAX_CONFIG_BYTES + 1), None, cached=True)
    if _offline(e):
        return HubConfig(url, b"", "HF_HUB_OFFLINE is set and it is not in the cache", cached=False)
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
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = f"{dest}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dest)
    return HubConfig(url, data, None, cached=False)
