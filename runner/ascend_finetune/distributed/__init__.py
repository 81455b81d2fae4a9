"""Many devices, many machines: data-parallel training through MindSpore's own launcher, `msrun`.

A run whose `device.ids` times `device.nodes` is more than one trains in three roles:

- the **launcher** is the `train` process (the one `launch` starts, or a foreground `train`). It
  holds the run directory's lock, `status.json` and the control inbox, starts `msrun` for this
  node's ranks, forwards SIGTERM/SIGINT to them, watches them, cleans up every process msrun left,
  and writes `run_finished` when rank 0 could not (a rank that died);
- **rank 0** trains and writes the run's events and checkpoints, and takes the control requests;
- the **other ranks** train the same steps on their shard of the data and write nothing but their
  log (`RUN_DIR/ranks/worker_<rank>.log`, written by msrun) and `ranks/rank-<rank>.json`.

Every rank stops at the same step: after each step (and once after set-up) the ranks sum a
stop flag with one AllReduce, so a stop that rank 0 took from the inbox, or a signal any rank got,
ends them all after that step. Reading the inbox on every rank instead would desync them (a file
seen at step k by one rank and k+1 by another leaves the others waiting in the gradient AllReduce
for ever), and the other nodes of a multi-node run cannot see the inbox at all.

msrun runs `python SCRIPT ARGS` with the `python` found on PATH and its task script must be a
file, so the launcher puts its own interpreter's folder first on PATH and runs `rank_entry.py`.

The modules, from the bottom: `world` (the pure plan: how many ranks, where, msrun's command line),
`strategy` (what a rank does differently inside a run: the stop flag, its verdict file) and
`launcher` (msrun for one node, and the run's ending). The per-rank entry that builds a rank's run
is `train/rank.py`, started through `rank_entry.py`; the CLI picks the launcher or a single process.
"""
