"""The ek pytest plugin's cost per trial, against pytest-repeat on the same plain test.

One trivial test (``assert True``) repeated N times, each configuration a fresh pytest process
(plugin autoloading off; only the plugins named run):

- ``pytest-repeat``: ``@pytest.mark.repeat(N)``, the peer (N items, N outcomes);
- ``ek marker``: ``@pytest.mark.ek(trials=N)`` (N trial items, one outcome, the session table);
- ``ek + record``: the test also records a small Episode with ``ek_episode.record(...)``;
- ``ek + record + store``: and ``--ek-store`` writes every trial to a run store.

The cost per trial is the slope between N = ``--small`` and N = ``--large`` (so the process
start-up, the same for both sizes, drops out), in child CPU time, best of ``--rounds`` rounds with
the configurations interleaved (bytecode caching on, as on a user's machine). The last lines give the start-up cost of merely having the
plugin loaded, on a suite that does not use it (the ``pytest11`` entry point loads it into every
session): a 20-test unrelated suite with and without ``-p ek.agents.pytest_plugin``.

    python bench/pytest_plugin.py [--small 100] [--large 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

PLAIN = """
import pytest

@pytest.mark.repeat({n})
def test_plain():
    assert True
"""

EK = """
import pytest

@pytest.mark.ek(trials={n})
def test_plain():
    assert True
"""

EK_RECORD = """
import pytest
from ek.agents.base import Cost, Episode, Step

@pytest.mark.ek(trials={n})
def test_plain(ek_episode):
    ek_episode.record(Episode("t", trajectory=[Step("get", {{"id": 1}})],
                              cost=Cost(input_tokens=100, output_tokens=10)))
    assert True
"""

UNRELATED = """
import pytest

@pytest.mark.parametrize("x", range(20))
def test_x(x):
    assert x >= 0
"""

CONFIGS = {
    "pytest-repeat": (PLAIN, ["-p", "repeat"]),
    "ek marker": (EK, ["-p", "ek.agents.pytest_plugin"]),
    "ek + record": (EK_RECORD, ["-p", "ek.agents.pytest_plugin"]),
    "ek + record + store": (
        EK_RECORD,
        ["-p", "ek.agents.pytest_plugin", "--ek-store", "run.jsonl"],
    ),
}


def _cpu_of(cmd: list[str], cwd: Path) -> float:
    """Child CPU seconds (user + system) of one pytest process."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # cached bytecode, as on a user's machine
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _pytest(folder: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(folder)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--large", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ek-bench-pytest-"))
    folders: dict[tuple[str, int], Path] = {}
    for name, (source, _) in CONFIGS.items():
        for n in (args.small, args.large):
            d = root / f"{name.replace(' ', '_').replace('+', 'p')}_{n}"
            d.mkdir()
            (d / "test_bench.py").write_text(source.format(n=n))
            folders[(name, n)] = d
    unrelated = root / "unrelated"
    unrelated.mkdir()
    (unrelated / "test_unrelated.py").write_text(UNRELATED)

    best: dict[tuple[str, int], float] = {}
    start: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, (_, extra) in CONFIGS.items():
            for n in (args.small, args.large):
                d = folders[(name, n)]
                t = _cpu_of(_pytest(d, extra), d)
                best[(name, n)] = min(best.get((name, n), t), t)
        for label, extra in (("without", []), ("with", ["-p", "ek.agents.pytest_plugin"])):
            t = _cpu_of(_pytest(unrelated, extra), unrelated)
            start[label] = min(start.get(label, t), t)

    span = args.large - args.small
    per = {name: (best[(name, args.large)] - best[(name, args.small)]) / span for name in CONFIGS}
    peer = per["pytest-repeat"]
    print(
        f"pytest plugin cost per trial (CPU ms, slope from N={args.small} to N={args.large}, "
        f"best of {args.rounds})"
    )
    print(f"{'configuration':<22} {'ms / trial':>10} {'vs repeat':>10} {'overhead ms':>12}")
    for name in CONFIGS:
        print(
            f"{name:<22} {per[name] * 1e3:>10.3f} {per[name] / peer:>10.2f} "
            f"{(per[name] - peer) * 1e3:>12.3f}"
        )
    print(
        f"\nunrelated suite (20 tests), one pytest process, CPU ms: without the plugin "
        f"{start['without'] * 1e3:.0f}, with it loaded {start['with'] * 1e3:.0f} "
        f"(+{(start['with'] - start['without']) * 1e3:.0f})"
    )
    print("goal: ek marker's overhead over pytest-repeat below 1 ms per trial")


if __name__ == "__main__":
    main()
