"""A process the agent left behind: it swaps pairs of names in its workspace, atomically, forever.

Usage: ``python racer.py <workspace> <name> <other name> [<name> <other name> ...]``

Each pair is exchanged with ``renameat2(RENAME_EXCHANGE)`` in a tight loop, so at any moment
each name is one of the two entries (a directory and a symlink to the hidden tests, say): a
checker that lists the workspace and then opens a name by its path meets the other one half of
the time. On SIGTERM it prints how many exchanges succeeded and leaves.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    folder = os.fsencode(sys.argv[1])
    pairs = [
        (os.path.join(folder, os.fsencode(a)), os.path.join(folder, os.fsencode(b)))
        for a, b in zip(sys.argv[2::2], sys.argv[3::2])
    ]
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    swaps = 0
    while not stop:
        for a, b in pairs:
            if libc.renameat2(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE) == 0:
                swaps += 1
    print(swaps, flush=True)


if __name__ == "__main__":
    main()
