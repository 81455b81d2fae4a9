"""The best-checkpoint rule (checkpoints.manifest.mark_best) on manifest entries."""

from __future__ import annotations

from ascend_finetune.checkpoints.manifest import mark_best


def _entry(step: int, val_acc: float | None, val_loss: object = None) -> dict:
    metrics: dict = {"loss": 1.0}
    if val_acc is not None:
        metrics["val_acc"] = val_acc
    if val_loss is not None:
        metrics["val_loss"] = val_loss
    return {"file": f"checkpoints/t-s{step}.ckpt", "step": step, "metrics": metrics}


def _best(entries: list[dict]) -> list[int]:
    mark_best(entries, True)
    return [e["step"] for e in entries if e["best"]]


def test_the_highest_val_acc_wins_whatever_its_loss():
    assert _best([_entry(4, 0.5, 0.1), _entry(8, 0.75, 3.0), _entry(12, 0.5, 0.01)]) == [8]


def test_a_val_acc_tie_goes_to_the_lower_val_loss_not_the_later_step():
    # issue 17: three epochs at 25%, the last with the highest val loss
    assert _best([_entry(4, 0.25, 1.40), _entry(8, 0.25, 1.30), _entry(12, 0.25, 1.47)]) == [8]
    assert _best([_entry(4, 0.25, 1.30), _entry(8, 0.25, 1.40)]) == [4]


def test_equal_val_acc_and_val_loss_go_to_the_later_step():
    assert _best([_entry(4, 0.25, 1.4), _entry(8, 0.25, 1.4), _entry(2, 0.25, 1.4)]) == [8]


def test_a_missing_null_or_non_finite_val_loss_loses_a_tie():
    for worst in (None, float("nan"), float("inf"), "1.0"):
        entries = [_entry(4, 0.5, 2.0), _entry(8, 0.5, worst)]
        assert _best(entries) == [4], worst
    assert _best([_entry(4, 0.5, None), _entry(8, 0.5, None)]) == [8], "both unknown: the later step"


def test_no_val_acc_or_keep_best_false_marks_none():
    entries = [_entry(4, None, 1.0), _entry(8, None, 0.5)]
    assert _best(entries) == []
    entries = [_entry(4, 0.5, 1.0)]
    mark_best(entries, False)
    assert entries[0]["best"] is False
