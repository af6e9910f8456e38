"""Run every red-team attack against a naive checker and against ``hidden_tests``; print a table.

Usage (from the repository root)::

    .venv/bin/python tests/redteam/run.py

The naive checker is what many harnesses do: copy the hidden tests into ``<workspace>/tests``,
run ``python -m pytest -q`` in the workspace with the inherited environment, and call exit
status 0 a success.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ek.agents.verifier import HiddenTestVerdict, hidden_tests
from redteam.attacks import ATTACKS, HIDDEN_TESTS, Attack, materialise

__all__ = ["Row", "format_table", "naive_check", "run_all", "run_attack", "write_hidden"]

# Heavy plugins installed in the project's venv that a naive run would otherwise import too.
_HEAVY = (
    "deepeval", "langsmith_plugin", "rerunfailures", "repeat", "hypothesispytest", "xdist",
    "xdist.looponfail", "anyio", "asyncio", "platformdirs",
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    attack: str
    summary: str
    naive_fooled: bool
    naive_exit: int | None
    verdict: HiddenTestVerdict


def write_hidden(folder: Path) -> Path:
    """Write the hidden tests into ``folder`` (created) and return it."""
    folder.mkdir(parents=True)
    for rel, text in HIDDEN_TESTS.items():
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def naive_check(
    hidden: Path, ws: Path, env: Mapping[str, str], timeout: float = 60.0
) -> int | None:
    """The naive checker: returns pytest's exit status (0 = "success"), ``None`` on timeout."""
    tests = ws / "tests"
    tests.mkdir(exist_ok=True)
    for f in sorted(hidden.iterdir()):
        if f.is_file():
            (tests / f.name).write_bytes(f.read_bytes())
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for p in _HEAVY:
        cmd += ["-p", f"no:{p}"]
    try:
        r = subprocess.run(
            cmd, cwd=ws, env={**base, **env}, timeout=timeout,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return r.returncode


@contextlib.contextmanager
def _leaked_env(env: Mapping[str, str]) -> Iterator[None]:
    """Put the agent's variables into this (the harness's) process environment for a while."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_attack(attack: Attack, scratch: Path, timeout: float = 60.0) -> Row:
    """Run one attack: the naive checker and ``hidden_tests`` each on a fresh copy."""
    hidden_n = write_hidden(scratch / "naive" / "hidden")
    env_n = materialise(attack, scratch / "naive" / "ws", hidden_n)
    rc = naive_check(hidden_n, scratch / "naive" / "ws", env_n, timeout)
    hidden_e = write_hidden(scratch / "ek" / "hidden")
    check = hidden_tests(hidden_e, timeout=timeout)
    env_e = materialise(attack, scratch / "ek" / "ws", hidden_e)
    with _leaked_env(env_e) if env_e else contextlib.nullcontext():
        verdict = check.verify(scratch / "ek" / "ws")
    return Row(attack.name, attack.summary, rc == 0, rc, verdict)


def run_all(attacks: Sequence[Attack] = ATTACKS, workers: int = 2) -> list[Row]:
    """Run ``attacks`` (attacks that leak environment variables run alone, the rest in parallel)."""
    root = Path(tempfile.mkdtemp(prefix="ek-redteam-"))
    try:
        plain = [a for a in attacks if not a.env]
        leaky = [a for a in attacks if a.env]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = dict(
                zip(
                    [a.name for a in plain], pool.map(lambda a: run_attack(a, root / a.name), plain)
                )
            )
        for a in leaky:
            rows[a.name] = run_attack(a, root / a.name)
        return [rows[a.name] for a in attacks]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def format_table(rows: Sequence[Row]) -> str:
    """A Markdown table: attack, naive checker fooled?, ek checker verdict."""
    out = [
        "| # | attack | what it tries | naive checker fooled? | ek `hidden_tests` verdict |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows, 1):
        naive = f"**yes** (exit {r.naive_exit})" if r.naive_fooled else f"no (exit {r.naive_exit})"
        reason = r.verdict.reason.replace("|", "/")
        if len(reason) > 90:
            reason = reason[:87] + "..."
        out.append(
            f"| {i} | `{r.attack}` | {r.summary} | {naive} | `{r.verdict.status}`: {reason} |"
        )
    fooled = sum(r.naive_fooled for r in rows)
    beaten = sum(r.verdict.passed for r in rows)
    out.append("")
    out.append(
        f"{len(rows)} attacks; the naive checker was fooled by {fooled}; "
        f"ek's hidden_tests was fooled by {beaten}."
    )
    return "\n".join(out)


if __name__ == "__main__":
    print(format_table(run_all()))
