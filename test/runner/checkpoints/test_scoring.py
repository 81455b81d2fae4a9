"""scoring.py's metrics on known logits, against independent computations: numpy's own top-k and
MindSpore's `Top5CategoricalAccuracy`; the padding of a partial batch never reaches a metric; the
per-image records stay within their bound and keep the mistakes."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_finetune.checkpoints.scoring import Tally, pad_batch


def _known_batch(rows: int = 64, classes: int = 10, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(rows, classes)), rng.integers(0, classes, rows)


def test_top5_matches_a_numpy_top_k_and_mindsporess_own_metric():
    from mindspore.train import Top5CategoricalAccuracy

    logits, labels = _known_batch()
    t = Tally(10)
    t.add(logits[:40], labels[:40])
    t.add(logits[40:], labels[40:])
    # numpy: the label is among the 5 largest logits (argpartition, not the code's argsort)
    top5 = np.argpartition(-logits, 5, axis=1)[:, :5]
    expected = float(np.mean([labels[i] in top5[i] for i in range(len(labels))]))
    assert 0.2 < expected < 0.9  # a batch where top-5 and top-1 both mean something
    assert t.top5 == pytest.approx(expected)
    ms_metric = Top5CategoricalAccuracy()
    ms_metric.update(logits, labels)
    assert t.top5 == pytest.approx(ms_metric.eval())
    assert t.accuracy == pytest.approx(float(np.mean(logits.argmax(axis=1) == labels)))
    assert t.top5 > t.accuracy


@pytest.mark.parametrize("classes", [2, 4, 5])
def test_top5_is_one_with_five_classes_or_fewer(classes):
    logits, labels = _known_batch(rows=33, classes=classes)
    t = Tally(classes)
    t.add(logits, labels)
    assert t.top5 == 1.0 and t.accuracy < 1.0


def test_a_nonfinite_row_is_a_miss_in_every_metric():
    logits, labels = _known_batch(rows=4, classes=3)
    logits[1, 0] = np.nan
    t = Tally(3, record=True)
    t.add(logits, labels)
    assert t.nonfinite == 1 and t.top5 == 0.75 and t.confusion.sum() == 3
    recs = t.predictions(["a", "b", "c", "d"])["records"]
    assert recs[1]["top"] is None and all(r["top"] for i, r in enumerate(recs) if i != 1)


def test_padding_rows_are_counted_nowhere():
    x = np.arange(3 * 2 * 2, dtype=np.uint8).reshape(3, 2, 2)
    padded, n = pad_batch(x, 8)
    assert padded.shape == (8, 2, 2) and n == 3 and (padded[:3] == x).all() and not padded[3:].any()
    assert pad_batch(x, 3)[0] is x

    seen: list[tuple[int, ...]] = []

    class Logits:  # stands for the compiled step: a row's logits favour the class of its first pixel
        def __call__(self, t):
            import mindspore as ms

            a = t.asnumpy()
            seen.append(a.shape)
            return ms.Tensor(np.eye(4)[a.reshape(len(a), -1)[:, 0] % 4] * 5)

    images = np.arange(10, dtype=np.int64).reshape(10, 1) * np.ones((10, 3), np.int64)
    labels = np.arange(10) % 4
    labels[7] = 0  # one mistake: image 7 looks like class 3
    t = Tally(4, record=True)
    t.run(Logits(), [(images[i : i + 4], labels[i : i + 4]) for i in range(0, 10, 4)], 4)
    assert seen == [(4, 3)] * 3  # 4 + 4 + 2 images: one shape
    assert t.count == 10 and t.confusion.sum() == 10 and t.accuracy == 0.9
    assert [r["file"] for r in t.predictions([f"f{i}" for i in range(10)])["records"]] == [f"f{i}" for i in range(10)]


def test_predictions_above_the_limit_keep_the_most_confident_mistakes_and_a_sample():
    logits, labels = _known_batch(rows=500, classes=10, seed=5)
    t = Tally(10, record=True)
    t.add(logits, labels)
    files = [f"c/{i}.jpg" for i in range(500)]
    out = t.predictions(files, limit=100)
    recs, kept = out["records"], out["kept"]
    wrong = logits.argmax(axis=1) != labels
    assert len(recs) == kept["kept"] == 100 and kept["total"] == 500 and not kept["all"]
    assert kept["mistakes"] == int(wrong.sum()) and kept["mistakes_kept"] == 75 and kept["correct_kept"] == 25
    idx = [int(r["file"][2:-4]) for r in recs]
    assert idx == sorted(set(idx))  # each image once, in sample order
    # the 75 mistakes kept are the most confident ones
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    conf = (p / p.sum(axis=1, keepdims=True)).max(axis=1)
    kept_wrong = [i for i in idx if wrong[i]]
    assert min(conf[kept_wrong]) >= max(conf[[i for i in np.flatnonzero(wrong) if i not in kept_wrong]])
    for r in recs:
        i = int(r["file"][2:-4])
        assert r["label"] == labels[i] and [c for c, _ in r["top"]] == list(np.argsort(-logits[i])[:5])
        assert sum(pr for _, pr in r["top"]) <= 1.0 + 1e-4
    assert t.predictions(files, limit=1000)["kept"]["all"]
