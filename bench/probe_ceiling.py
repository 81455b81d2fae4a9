"""What a linear probe can get out of a run's cached features: the feature scale, a nearest-class-mean
classifier, and a NumPy probe (AdamW with cosine decay, the transfer test's recipe) with no feature
normalisation, with a BatchNorm on batch statistics (model.head_norm's) and with features standardised
by the training set's statistics, at two learning rates, each the mean over 3 seeds.

    .venv/bin/python bench/probe_ceiling.py RUN_DIR [RUN_DIR ...]

RUN_DIR is a probe's run directory (`model.freeze: backbone`, `train.cache_features: true`), e.g. the
transfer test's `b` run under pytest's temporary folder. It reads `feature-cache/*/features.npz`
(the first view of the training features and the validation features). NumPy only: it says whether a
probe that stays low is held back by its optimisation or by what the features hold (docs/weights.md,
"Transfer per family").
"""

from __future__ import annotations

import argparse
import glob
import os

import numpy as np


def load(run_dir: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    found = glob.glob(os.path.join(run_dir, "feature-cache", "*", "features.npz"))
    if not found:
        raise SystemExit(f"{run_dir}: no feature-cache/*/features.npz (a run with train.cache_features?)")
    z = np.load(found[0])
    return z["train"][0], z["train_labels"][0], z["val"], z["val_labels"]


def probe(data, mode: str, lr: float, epochs: int, batch: int, seed: int, wd: float = 0.01) -> float:
    """Validation accuracy of a softmax-regression head trained like the runner's probe (AdamW, cosine
    to 0, drop the last partial batch). mode: none | batch (BatchNorm, no affine, momentum 0.9) | fixed."""
    x_tr, y_tr, x_va, y_va = data
    mu, var = x_tr.mean(0), x_tr.var(0)
    rng = np.random.default_rng(seed)
    d, c = x_tr.shape[1], int(max(y_tr.max(), y_va.max())) + 1
    w, b = rng.normal(0, 0.02, (d, c)), np.zeros(c)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    per_epoch = len(y_tr) // batch
    steps, t = epochs * per_epoch, 0
    run_mean, run_var = np.zeros(d), np.ones(d)
    for _ in range(epochs):
        order = rng.permutation(len(y_tr))
        for i in range(per_epoch):
            idx = order[i * batch : (i + 1) * batch]
            x = x_tr[idx]
            if mode == "fixed":
                x = (x - mu) / np.sqrt(var + 1e-6)
            elif mode == "batch":
                bm, bv = x.mean(0), x.var(0)
                run_mean = 0.9 * run_mean + 0.1 * bm
                run_var = 0.9 * run_var + 0.1 * bv * batch / max(1, batch - 1)
                x = (x - bm) / np.sqrt(bv + 1e-6)
            logits = x @ w + b
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(idx)), y_tr[idx]] -= 1
            p /= len(idx)
            grads = [x.T @ p, p.sum(0)]
            rate = 0.5 * lr * (1 + np.cos(np.pi * t / steps))
            t += 1
            for k, (param, g) in enumerate(zip((w, b), grads)):
                m[k] = 0.9 * m[k] + 0.1 * g
                v[k] = 0.999 * v[k] + 0.001 * g * g
                param -= rate * ((m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8) + wd * param)
    xv = x_va
    if mode == "fixed":
        xv = (xv - mu) / np.sqrt(var + 1e-6)
    elif mode == "batch":
        xv = (xv - run_mean) / np.sqrt(run_var + 1e-6)
    return float(((xv @ w + b).argmax(1) == y_va).mean())


def centroid(data, standardise: bool) -> float:
    x_tr, y_tr, x_va, y_va = data
    if standardise:
        mu, sd = x_tr.mean(0), x_tr.std(0) + 1e-6
        x_tr, x_va = (x_tr - mu) / sd, (x_va - mu) / sd
    classes = sorted(set(y_tr.tolist()))
    means = np.stack([x_tr[y_tr == k].mean(0) for k in classes])
    nearest = ((x_va[:, None, :] - means[None]) ** 2).sum(-1).argmin(1)
    return float((np.array(classes)[nearest] == y_va).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="probe run directories with a feature cache")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=5)
    a = ap.parse_args()
    for run in a.runs:
        data = load(run)
        x = data[0]
        dead = float((x.std(0) == 0).mean())
        print(f"{run}: {x.shape[0]} train, {len(data[3])} val, {x.shape[1]} features")
        print(f"  scale: mean {x.mean():.3g}, std {x.std():.3g}, max {x.max():.3g}, constant features {dead:.0%}")
        print(f"  nearest class mean: raw {centroid(data, False):.3f}, standardised {centroid(data, True):.3f}")
        for mode in ("none", "batch", "fixed"):
            accs = {lr: np.mean([probe(data, mode, lr, a.epochs, a.batch, s) for s in range(3)]) for lr in (1e-3, 1e-2)}
            print(f"  probe, {mode:5s} normalisation: " + ", ".join(f"lr {lr:g} {acc:.3f}" for lr, acc in accs.items()))


if __name__ == "__main__":
    main()
