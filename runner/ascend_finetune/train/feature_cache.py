"""Frozen-backbone feature cache (`train.cache_features`): run the backbone once, train the head on
what it produced.

With `model.freeze: backbone` the backbone is a fixed function (its BatchNorms run on their moving
statistics), so every epoch recomputes the same features. The cache computes them once and trains
only the head on them: the same head, optimizer, schedule, loss scaling and steps as without it.

- Without augmentation, the cached features are exactly what the backbone gives every epoch, and
  the cached epochs draw the same shuffled batches as the image pipeline (same sampler, same seed),
  so the training is the same up to floating-point rounding.
- With augmentation, each epoch would see a fresh random crop/flip of every image. The cache keeps
  `train.cache_views` (K) augmented views per image and epoch e trains on view (e-1) mod K: K=1 trains
  every epoch on the same random view. That is an approximation; raise K to get closer.

The cache lives in the run directory (`feature-cache/<key>/`), keyed by the data (every image's
path, size and modification time, and its label), the backbone's weights (a hash of the loaded
tensors, so the pretrained file and the seed both count), the transforms (image size, augmentation,
views, seed, normalisation) and the AMP level. A later run finds a cache with the same key in its
own directory (resume) or in a sibling run directory under the same runs root, and reuses it.

Runs roots are shared: a sibling run directory may be another user's, and a cache is only numbers
that nothing can check against the images without recomputing them. So a sibling's cache is reused
only when this user owns it, every part of its path from the sibling run directory down (not
through a symlink, not group- or world-writable); and every cache, the run's own included, must
match the run: array names, dtypes and shapes (images per split, views, the backbone's feature
width), finite features, and labels equal to the run's own labels of those images. A cache that
fails is not used: the run says why in a `feature_cache_rejected` warning naming its path, and
computes its own features. So does a symlink or a file planted where this run keeps its own cache
(its feature-cache/ or the key's folder): never followed or written through, it leaves the run's
features unsaved, not the run failed.

One file above the 450-line mark: computing, checking, reusing and saving the features share one
object's state (the key, the arrays, why a cache was refused), and the checks a cache must pass are
only readable beside what they guard.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
import time
import zipfile
from collections.abc import Iterator
from functools import cached_property
from typing import Any

import numpy as np

from ..data.pipeline import MEAN, STD, make_dataset
from ..rundir import open_regular
from ..spec_types import RunSpec

FORMAT = 2  # bump when what is cached or how it is computed changes
DIRNAME = "feature-cache"


def _files_digest(samples: list[tuple[str, int]]) -> list[Any]:
    out = []
    for path, label in samples:
        st = os.stat(path)
        out.append([os.path.abspath(path), st.st_size, st.st_mtime_ns, int(label)])
    return out


def backbone_digest(backbone: Any) -> str:
    h = hashlib.sha256()
    for p in sorted(backbone.get_parameters(), key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(np.ascontiguousarray(p.asnumpy()).tobytes())
    return h.hexdigest()


def cache_key(
    train: list[tuple[str, int]],
    val: list[tuple[str, int]],
    backbone_hash: str,
    image_size: int,
    augment: str,
    views: int,
    seed: int,
    amp_level: str,
    preprocess: str | dict[str, Any] = "imagenet",
) -> str:
    doc: dict[str, Any] = {
        "format": FORMAT,
        "train": _files_digest(train),
        "val": _files_digest(val),
        "backbone": backbone_hash,
        "transforms": {
            "image_size": image_size,
            "augment": augment,
            "views": views,
            "seed": seed,
            "mean": MEAN,
            "std": STD,
        },
        "amp": amp_level,
    }
    # The runner's own resize adds nothing (keys of caches made before the presets stay valid); a preset
    # row is its name (keys made before per-weight values stay valid), other values are written out.
    if preprocess != "imagenet":
        doc["transforms"]["preprocess"] = preprocess
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def pixels_key(p: Any) -> str | dict[str, Any]:
    """What of a Preprocess changes the cached features: its preset's name when it is that row's values."""
    from ..models.preprocess import TABLE

    keys = ("interpolation", "crop_pct", "rounding", "crop_mode", "mean", "std")
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in ((k, getattr(p, k)) for k in keys)}
    row = TABLE.get(p.name)
    if row is not None and all(getattr(row, k) == getattr(p, k) for k in keys):
        return str(p.name)
    return {"name": p.name, **values}


META_MAX_BYTES = 1 << 16  # meta.json is a few hundred bytes
NPY_HEADER_MAX = 1 << 16  # an .npy member's header, beyond its data


def _open_regular(path: str, check_owner: bool) -> int:
    """A read-only descriptor of a regular file (rundir's rules: no symlink, no FIFO); with
    check_owner, also this user's and not group- or world-writable (checked on the open file, so the
    file cannot be swapped between the check and the read)."""
    fd = open_regular(path)
    try:
        why = _not_mine(os.fstat(fd)) if check_owner else None
        if why:
            raise ValueError(f"{os.path.basename(path)} {why}")
        return fd
    except BaseException:
        os.close(fd)
        raise


def _read_capped(path: str, cap: int, check_owner: bool) -> bytes:
    """A small regular file's bytes, at most `cap`, with the owner check of _open_regular."""
    with os.fdopen(_open_regular(path, check_owner), "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise ValueError(f"{os.path.basename(path)} is larger than {cap} bytes")
    return data


def _not_mine(st: os.stat_result) -> str | None:
    if st.st_uid != os.getuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "every user" if st.st_mode & stat.S_IWOTH else "its group"
        return f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def untrusted(run_dir: str, folder: str) -> str | None:
    """Why a cache `folder` inside another run directory may hold what someone else wrote, or None:
    the run directory, its feature-cache/ and the folder must each be a real directory (no symlink),
    owned by this user and not writable by its group or by others. (Its files are checked when
    they are opened.)"""
    paths = [run_dir, os.path.join(run_dir, DIRNAME), os.path.join(run_dir, DIRNAME, os.path.basename(folder))]
    return _not_real_folders(paths, missing_ok=False, owned=True)


def _not_folders(folder: str) -> str | None:
    """Why this run's own cache `folder` is taken by something the runner did not make, or None: its
    feature-cache/ and the folder, where they exist, must be real directories. A symlink there
    (planted in a shared run directory) is never followed, to read or to write."""
    return _not_real_folders([os.path.dirname(folder), folder], missing_ok=True, owned=False)


def _not_real_folders(paths: list[str], missing_ok: bool, owned: bool) -> str | None:
    """Why one of `paths` (outermost first) is not a real directory (a symlink, a file), or, with
    `owned`, not this user's alone; None when all are. A missing one ends the check (`missing_ok`:
    nothing below it exists either) or is the reason."""
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError as e:
            if missing_ok:
                return None
            return f"cannot check {path} ({e.strerror or e})"
        except OSError as e:
            return f"cannot check {path} ({e.strerror or e})"
        if not stat.S_ISDIR(st.st_mode):
            return f"{path} is {'a symlink' if stat.S_ISLNK(st.st_mode) else 'not a directory'}"
        why = _not_mine(st) if owned else None
        if why:
            return f"{path} {why}"
    return None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _create_at(dir_fd: int, name: str) -> Any:
    """A new file `name` in the folder open as dir_fd, created exclusively, never through a symlink."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.fdopen(os.open(name, flags, 0o666, dir_fd=dir_fd), "wb")


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _rmtree_at(dir_fd: int, name: str, quiet: bool = False) -> None:
    """Remove the folder `name` of the folder open as dir_fd with all it holds, never through a
    symlink (shutil.rmtree takes dir_fd only from Python 3.11)."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            with os.scandir(fd) as entries:
                for e in entries:
                    if e.is_dir(follow_symlinks=False):
                        _rmtree_at(fd, e.name)
                    else:
                        os.unlink(e.name, dir_fd=fd)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)
    except OSError:
        if not quiet:
            raise


class _Indices:
    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, i: int) -> tuple[np.ndarray]:
        return (np.array(i, np.int64),)

    def __len__(self) -> int:
        return self.n


def shuffled_order(n: int, seed: int) -> list[int]:
    """The order in which `make_dataset(train=True, seed=seed)` yields n samples: the same sampler
    with the same seed, over indices instead of files. The cached epochs then see the same batches
    as the image pipeline would, so without augmentation the training is the same."""
    import mindspore.dataset as ds

    ds.config.set_seed(seed)
    indices = ds.GeneratorDataset(_Indices(n), column_names=["i"], shuffle=True, num_parallel_workers=1)
    return [int(row[0]) for row in indices.create_tuple_iterator(num_epochs=1, output_numpy=True)]


class FeatureCache:
    """Features of the train views and of the val set, computed (or found) on first use."""

    def __init__(self, trainer: Any, views: int) -> None:
        # trainer: the Trainer (trainer.py), which imports this module; typed Any to keep one direction
        self.tr = trainer
        spec: RunSpec = trainer.spec
        d, t = spec["data"], spec["train"]
        self.augment = str(d["augment"])  # a data.augment preset (data/augment.py)
        self.views = max(1, int(views)) if self.augment != "none" else 1  # without augmentation every view is the same
        self.batch = d["batch_size"]
        self.seed = t["seed"]
        self.reused_from: str | None = None
        self.rejected: list[dict[str, str]] = []  # caches found and not used: {path, reason}
        self.reported = False  # described once, in the epoch_end of the epoch that built or found it
        self._no_save = False  # this run's own cache folder is taken by something it did not make
        self.compute_s: float | None = None
        self._train: Any = None  # (views, n, dim) float32
        self._train_labels: Any = None  # (views, n) int32
        self._val: Any = None
        self._val_labels: Any = None

    @cached_property
    def key(self) -> str:
        """Of the backbone's weights as they are at first use, after a resume has loaded its checkpoint:
        in __init__ a resumed run's backbone still holds its random initial weights (a resume does
        not load model.pretrained), and two resumed runs would have shared one key."""
        tr, d = self.tr, self.tr.spec["data"]
        return cache_key(
            tr.train_samples,
            tr.val_samples,
            backbone_digest(tr.net.backbone),
            d["image_size"],
            self.augment,
            self.views,
            self.seed,
            tr.amp_plan.level,
            pixels_key(tr.preprocess),
        )

    @cached_property
    def dir(self) -> str:
        return os.path.join(self.tr.run_dir, DIRNAME, self.key[:16])

    # -- finding or computing ---------------------------------------------------------------
    def _candidates(self) -> list[str]:
        """This run's own cache first (a resume), then its siblings' under the same runs root."""
        own = self.dir
        root = os.path.dirname(os.path.abspath(self.tr.run_dir))
        found = [own]
        try:
            siblings = sorted(os.listdir(root))
        except OSError:
            siblings = []
        for name in siblings:
            folder = os.path.join(root, name, DIRNAME, self.key[:16])
            if folder != own:
                found.append(folder)
        return found

    def ensure(self) -> None:
        if self._train is not None:
            return
        for folder in self._candidates():
            own = folder == self.dir
            taken = _not_folders(folder) if own else None
            self._no_save = self._no_save or taken is not None
            if taken is None and not os.path.lexists(folder):
                continue
            reason = taken if own else untrusted(os.path.dirname(os.path.dirname(folder)), folder)
            if reason is None:
                try:
                    arrays = self._read(folder, check_owner=not own)
                    reason = arrays if isinstance(arrays, str) else self._mismatch(arrays)
                except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
                    reason = f"cannot read it ({type(e).__name__}: {e})"
            if reason is None:
                assert not isinstance(arrays, str)
                self._train, self._train_labels = arrays["train"], arrays["train_labels"]
                self._val, self._val_labels = arrays["val"], arrays["val_labels"]
                if not own:
                    self.reused_from = os.path.dirname(os.path.dirname(folder))
                return
            self._reject(folder, reason)
        t0 = time.perf_counter()
        self._compute()
        self.compute_s = round(time.perf_counter() - t0, 3)
        self._save()

    def _reject(self, folder: str, reason: str) -> None:
        self.rejected.append({"path": folder, "reason": reason})
        self.tr.warn(
            "feature_cache_rejected",
            f"not reusing the feature cache at {folder}: {reason}; this run computes its own features",
            {"path": folder, "reason": reason},
        )

    def _unsaved(self, e: OSError) -> None:
        """The features could not be written (a feature-cache/ another user made, a full disk, a
        read-only mount): the cache only saves time, so the run trains on without it."""
        reason = e.strerror or str(e)
        self.tr.warn(
            "feature_cache_unsaved",
            f"the features were not saved at {self.dir} ({reason}); this run trains on, and the next one "
            "computes them again",
            {"path": self.dir, "reason": reason},
        )

    def _expected(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """Each array's shape and dtype, as this run computes them."""
        tr = self.tr
        n, m, dim = len(tr.train_samples), len(tr.val_samples), int(tr.net.backbone.num_features)
        return {
            "train": ((self.views, n, dim), np.float32),
            "train_labels": ((self.views, n), np.int32),
            "val": ((m, dim) if m else (0, 0), np.float32),
            "val_labels": ((m,), np.int32),
        }

    def _read(self, folder: str, check_owner: bool) -> dict[str, np.ndarray] | str:
        """The cache's arrays, or why it cannot be one of this run's: meta.json with this key, then
        features.npz whose members are no larger than this run's arrays (read without pickles)."""
        meta_raw = _read_capped(os.path.join(folder, "meta.json"), META_MAX_BYTES, check_owner)
        try:
            meta = json.loads(meta_raw)
        except ValueError:
            return "meta.json is not JSON"
        if not isinstance(meta, dict) or meta.get("key") != self.key:
            return "meta.json does not hold this run's cache key"
        want = self._expected()
        fd = _open_regular(os.path.join(folder, "features.npz"), check_owner)
        with os.fdopen(fd, "rb") as f:
            with zipfile.ZipFile(f) as z:
                members = {i.filename: i for i in z.infolist()}
                if sorted(members) != sorted(f"{k}.npy" for k in want):
                    return f"features.npz holds {sorted(members)}, not the 4 arrays of a feature cache"
                for k, (shape, dtype) in want.items():
                    cap = int(np.prod(shape)) * np.dtype(dtype).itemsize + NPY_HEADER_MAX
                    if members[f"{k}.npy"].file_size > cap:
                        return (
                            f"{k} in features.npz is {members[f'{k}.npy'].file_size} bytes, more than this run's {cap}"
                        )
            f.seek(0)
            z2 = np.load(f, allow_pickle=False)
            return {k: z2[k] for k in want}

    def _mismatch(self, arrays: dict[str, np.ndarray]) -> str | None:
        """Why the arrays are not this run's features, or None."""
        tr = self.tr
        for k, (shape, dtype) in self._expected().items():
            a = arrays[k]
            if a.dtype != dtype or tuple(a.shape) != shape:
                return (
                    f"{k} is {a.dtype} {list(a.shape)}, this run's is {np.dtype(dtype)} {list(shape)} "
                    f"({len(tr.train_samples)} train and {len(tr.val_samples)} val images, {self.views} view(s), "
                    f"{tr.net.backbone.num_features} features)"
                )
        for k in ("train", "val"):
            if not np.isfinite(arrays[k]).all():
                return f"{k} holds NaN or infinite features"
        n_classes = len(tr.classes)
        for k, samples in (("train_labels", tr.train_samples), ("val_labels", tr.val_samples)):
            labels = arrays[k]
            if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
                return f"{k} holds labels outside 0..{n_classes - 1}"
            mine = np.array([label for _, label in samples], np.int32)
            if not np.array_equal(labels, np.broadcast_to(mine, labels.shape)):
                bad = int(np.count_nonzero(labels != np.broadcast_to(mine, labels.shape)))
                return f"{k} differs from this run's labels of the same images ({bad} of {labels.size})"
        return None

    def _extract(
        self, samples: list[tuple[str, int]], train: bool, augment: bool | str, seed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        tr = self.tr
        # In sample order (no shuffle), so row i is image i; train_batches shuffles rows the way
        # the image pipeline shuffles files.
        ds = make_dataset(
            samples,
            tr.spec["data"]["image_size"],
            self.batch,
            tr.workers,
            train,
            augment,
            seed,
            drop_remainder=False,
            shuffle=False,
            preprocess=tr.preprocess,
        )
        feats, labels = [], []
        for x, y in ds.create_tuple_iterator(num_epochs=1):
            feats.append(tr.backbone_features(x).asnumpy().astype(np.float32))
            labels.append(y.asnumpy().astype(np.int32))
        if not feats:
            return np.zeros((0, 0), np.float32), np.zeros((0,), np.int32)
        return np.concatenate(feats), np.concatenate(labels)

    def _compute(self) -> None:
        tr = self.tr
        tr._set_train_mode(tr.net, False)
        try:
            views = [
                self._extract(tr.train_samples, self.augment != "none", self.augment, self.seed + 7919 * (k + 1))
                for k in range(self.views)
            ]
            self._val, self._val_labels = (
                self._extract(tr.val_samples, False, False, 0)
                if tr.val_samples
                else (np.zeros((0, 0), np.float32), np.zeros((0,), np.int32))
            )
        finally:
            tr._set_train_mode(tr.net, True)
        self._train = np.stack([v[0] for v in views])
        self._train_labels = np.stack([v[1] for v in views])

    def _save(self) -> None:
        """Keep the features where a later run finds them, written to a temporary folder and renamed:
        a killed run never leaves a half cache behind that a later run would trust. A shared run
        directory may hold what others planted, so every step goes through descriptors opened without
        following a symlink; a place taken by something this run did not make (a file, a symlink)
        leaves the features unsaved, in a feature_cache_rejected warning, and the run trains on; an error
        writing them (a feature-cache/ another user made, a full disk) in a feature_cache_unsaved one."""
        if self._no_save:  # ensure() already said why
            return
        parent, name = os.path.split(self.dir)
        try:
            os.mkdir(parent)
        except FileExistsError:
            pass
        except OSError as e:
            self._unsaved(e)
            return
        try:
            pfd = os.open(parent, _DIR_FLAGS)
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):  # ENOTDIR for a symlink too, with O_DIRECTORY
                self._unsaved(e)
            else:
                self._reject(self.dir, _not_folders(self.dir) or f"{parent} is not a directory")
            return
        try:
            try:
                tmp = self._write_temp(pfd, name)
            except OSError as e:
                self._unsaved(e)
                return
            try:
                st = _lstat_at(pfd, name)
                if st is not None and stat.S_ISDIR(st.st_mode):  # a cache of ours ensure() found unusable
                    _rmtree_at(pfd, name)
                os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)  # ENOTDIR onto a file or symlink
            except BaseException as e:
                _rmtree_at(pfd, tmp, quiet=True)
                if not isinstance(e, OSError):
                    raise
                if e.errno in (errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST):
                    self._reject(self.dir, f"{self.dir} was taken by something else while this run computed it")
                else:  # another user's folder there that this user cannot remove, a full disk, ...
                    self._unsaved(e)
        finally:
            os.close(pfd)

    def _write_temp(self, pfd: int, name: str) -> str:
        """A new folder `NAME.tmp-<random>` in the folder open as pfd (created exclusively) holding
        features.npz and meta.json; its name."""
        for _ in range(100):
            tmp = f"{name}.tmp-{secrets.token_hex(8)}"
            try:
                os.mkdir(tmp, dir_fd=pfd)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, f"no free temporary name next to {self.dir}")
        try:
            tfd = os.open(tmp, _DIR_FLAGS, dir_fd=pfd)
            try:
                with _create_at(tfd, "features.npz") as f:
                    np.savez(
                        f,
                        train=self._train,
                        train_labels=self._train_labels,
                        val=self._val,
                        val_labels=self._val_labels,
                    )
                meta = {
                    "key": self.key,
                    "format": FORMAT,
                    "views": self.views,
                    "augment": self.augment,
                    "train_images": int(self._train.shape[1]),
                    "val_images": int(self._val.shape[0]),
                    "dim": int(self._train.shape[2]) if self._train.ndim == 3 else 0,
                    "compute_s": self.compute_s,
                    "created_at": time.time(),
                }
                with _create_at(tfd, "meta.json") as f:
                    f.write(json.dumps(meta, indent=1).encode())
            finally:
                os.close(tfd)
        except BaseException:
            _rmtree_at(pfd, tmp, quiet=True)
            raise
        return tmp

    def describe(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "dir": os.path.relpath(self.dir, self.tr.run_dir),
            "views": self.views,
            "reused_from": self.reused_from,
            "compute_s": self.compute_s,
            "rejected": self.rejected,
        }

    # -- batches ----------------------------------------------------------------------------
    def train_batches(self, epoch: int) -> Iterator[tuple[Any, Any]]:
        import mindspore as ms

        self.ensure()
        view = (epoch - 1) % self.views
        x, y = self._train[view], self._train_labels[view]
        order = shuffled_order(len(y), self.seed + epoch)
        for i in range(len(order) // self.batch):  # drop the remainder, as the image pipeline does
            idx = order[i * self.batch : (i + 1) * self.batch]
            yield ms.Tensor(x[idx]), ms.Tensor(y[idx])

    def val_batches(self) -> Iterator[tuple[Any, Any]]:
        import mindspore as ms

        self.ensure()
        for i in range(0, len(self._val_labels), self.batch):
            yield ms.Tensor(self._val[i : i + self.batch]), ms.Tensor(self._val_labels[i : i + self.batch])
