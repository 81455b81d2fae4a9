"""`train.accumulate_steps` > 1 turns dataset sink mode off (an update's micro-batches are fed from
the host), and the run says so with a `sink_unavailable` warning instead of doing it silently.

CPU has no device queue, so the run puts the test-only host sink in its place (steps.HOST_SINK_ENV),
as test_sink_run does: without accumulation this very spec trains in sinks of 5 steps there."""

from __future__ import annotations

from conftest import events, of_type, write_spec
from test_sink_run import _cli, _spec, sink_data  # noqa: F401 (a fixture)


def test_accumulation_turns_sink_mode_off_with_a_warning_that_says_why(tmp_path, sink_data):  # noqa: F811
    s = _spec(sink_data, "acc", train={"epochs": 1, "accumulate_steps": 2})
    code, out = _cli("train", str(write_spec(tmp_path / "acc.json", s)), "--run-dir", str(tmp_path / "r"), sink=True)
    assert code == 0, out
    evs = events(tmp_path / "r")
    warnings = {w["code"]: w for w in of_type(evs, "warning")}
    w = warnings.get("sink_unavailable")
    assert w is not None, list(warnings)
    assert "train.accumulate_steps 2" in w["message"] and "step by step" in w["message"]
    assert w["details"]["sink"] == {"enabled": True, "size": 5}
    # The sink that is not used is not resized either: no sink_size_reduced for the 6 updates an epoch.
    assert "sink_size_reduced" not in warnings
    started = of_type(evs, "run_started")[0]
    steps = of_type(evs, "step")
    assert started["steps_per_epoch"] == 6, "48 images, batch 4, 2 micro-batches an update"
    assert [e["step"] for e in steps] == list(range(1, 7)), "one step event per update, none per sink"
    assert not [e for e in steps if "first_step" in e]
    assert evs[-1]["type"] == "run_finished" and evs[-1]["status"] == "completed"
