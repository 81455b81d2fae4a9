"""The task script that msrun starts once per rank (and once as its scheduler).

msrun runs `python THIS_FILE ARGS` (a file, not `-m`), so this puts the runner's folder on
sys.path and hands over to train/rank.py's rank_main. The launcher forwards SIGTERM/SIGINT to the
ranks as a stop request; one that arrives before the training code has loaded is kept here, not
fatal, and handed to rank_main.
"""

import os
import signal
import sys

_pending: list[int] = []


def _keep(signum: int, _frame: object) -> None:
    _pending.append(signum)


if __name__ == "__main__":
    for _s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(_s, _keep)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from ascend_finetune.logfilter import drop_teardown_noise
    from ascend_finetune.train.rank import rank_main

    drop_teardown_noise()

    sys.exit(rank_main(sys.argv[1:], _pending))
