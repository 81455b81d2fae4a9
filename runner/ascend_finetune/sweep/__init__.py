"""Hyperparameter sweeps with Optuna: a sweep spec (`*.ascend-sweep.yaml`, sweep.schema.json), a
scheduler process that starts each trial as a normal run on a free device slot and feeds its eval
events to Optuna, and the status of a sweep. The folder layout and the events are in
docs/protocol.md ("Sweeps"); docs/sweeps.md is the user's guide.

Modules, lower to upper: `specfile` (read YAML/JSON), `sweepspec` (validate, build trial specs),
`folder` (the sweep folder, its files and lock), `slots` (device slots), `engine` (Optuna: storage,
sampler, pruner), `trialrun` (one trial's run: launch, follow, its objective), `scheduler` (the loop,
resume), `report` (sweep-status and sweep-ls).
"""
