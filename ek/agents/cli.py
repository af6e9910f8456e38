"""The ``ek-agents`` command.

Example:
    >>> main(["--version"])
    ek-agents 0.1.0
    0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ek-agents``."""
    from ek import __version__

    p = argparse.ArgumentParser(
        prog="ek-agents",
        description="Agent evaluation: pass^k, Cost-of-Pass, tool-call and trajectory scores, "
        "and a variance-aware regression gate.",
    )
    p.add_argument("--version", action="version", version=f"ek-agents {__version__}")
    p.add_subparsers(dest="command", metavar="COMMAND")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse exits for --help/--version and on bad usage
        return int(e.code or 0)
    if not getattr(args, "command", None):
        parser.print_help(sys.stdout)
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
