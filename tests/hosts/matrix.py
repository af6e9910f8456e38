"""The host matrix (``make test-hosts``): each adapter against the oldest and newest host release.

For every adapter (``ek.adapters._versions.HOSTS``) and both ends of its range (the floor and
the newest release the range allows, resolved when the matrix runs), an environment is built
under ``.venv-hosts/<adapter>-<version>/`` with uv (ek installed editable with its extra, the
host pinned, the test tools), and there the adapter's tests and its example run, offline (the
tests under ``tests/conftest.py``'s network guard, the example under the same guard through
``tests/hosts/offline_run.py``). Then ``tests/hosts/test_install_behaviour.py`` checks what
``pip`` does to a user's environment. Environments build one after another (installing is the
only step that reaches the package index); the runs go side by side, ``--jobs`` at a time.

The results go to ``tests/hosts/results.json`` and the README's compatibility table is written
from them (``readme``); ``tests/test_host_versions.py`` checks the two agree.

Usage::

    python tests/hosts/matrix.py run [--jobs 2] [--only inspect deepeval ...]
    python tests/hosts/matrix.py readme [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ek.adapters._versions import HOSTS, HostRange  # noqa: E402

VENVS = ROOT / ".venv-hosts"
RESULTS = ROOT / "tests" / "hosts" / "results.json"
README = ROOT / "README.md"
BEGIN = "<!-- host-matrix: begin (written by `python tests/hosts/matrix.py readme`) -->"
END = "<!-- host-matrix: end -->"
UV_VERSION = "0.13.9"
TEST_TOOLS = ("pytest>=8", "hypothesis>=6.100", "pytest-asyncio>=0.23", "anyio>=4")
OFFLINE_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_FILE_SYSTEM": "READ_ONLY",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_NO_INSPECT_PROMPT": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
}
PYTEST_ARGS = (
    "-q",
    "-p",
    "no:randomly",
    "-W",
    "ignore:Unknown config option:pytest.PytestConfigWarning",
)


@dataclass(frozen=True)
class Suite:
    """What one adapter runs in the matrix."""

    module: str  # the key in HOSTS (ek.adapters.<module>)
    extra: str  # ek's extra that installs the host
    tests: tuple[str, ...]
    example: tuple[str, ...]  # arguments to tests/hosts/offline_run.py (empty: run by a test)
    companions: Callable[[str], list[str]] = lambda version: []

    @property
    def host(self) -> HostRange:
        return HOSTS[self.module]


SUITES = (
    Suite(
        "inspect",
        "inspect",
        (
            "tests/test_inspect_adapter.py",
            "tests/test_inspect_e2e.py",
            "tests/test_inspect_host_expectations.py",
            "tests/test_inspect_issue_paths.py",
            "tests/test_report_hostlogs.py",
        ),
        ("examples/inspect_task.py",),
    ),
    Suite(
        "deepeval",
        "deepeval",
        (
            "tests/test_deepeval_adapter.py",
            "tests/test_deepeval_cli.py",
            "tests/test_deepeval_host_expectations.py",
            "tests/test_deepeval_one_number.py",
            "tests/test_bridge_deepeval.py",
        ),
        (),  # its example runs under `deepeval test run` in tests/test_deepeval_cli.py
    ),
    Suite(
        "ragas",
        "ragas",
        (
            "tests/test_ragas_adapter.py",
            "tests/test_ragas_host_expectations.py",
            "tests/test_ragas_one_number.py",
        ),
        ("examples/ragas_example.py",),
    ),
    Suite(
        "pydantic_evals",
        "pydantic-evals",
        ("tests/test_pydantic_evals_adapter.py",),
        ("examples/pydantic_evals_example.py",),
        # the tests and the example drive a pydantic-ai agent of the same release
        lambda version: [f"pydantic-ai-slim=={version}"],
    ),
)


def uv() -> str:
    """A uv executable: on PATH, else installed once into .venv-hosts/_uv."""
    found = shutil.which("uv")
    if found:
        return found
    tool = VENVS / "_uv" / "bin" / "uv"
    if not tool.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENVS / "_uv")], check=True)
        pip = [str(VENVS / "_uv" / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, f"uv=={UV_VERSION}"], check=True)
    return str(tool)


def newest(host: HostRange) -> str:
    """The newest release the range allows, as the package index has it now."""
    out = subprocess.run(
        [uv(), "pip", "compile", "-", "--no-deps", "--no-header", "-q", "--no-annotate"],
        input=host.requirement + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    m = re.search(rf"^{re.escape(host.dist)}==(\S+)$", out, re.M)
    if m is None:
        raise RuntimeError(f"could not resolve the newest {host.requirement}: {out!r}")
    return m.group(1)


def build(suite: Suite, version: str) -> tuple[Path, float]:
    """The environment for ``suite`` at host ``version`` (reused when built with the same pins)."""
    env = VENVS / f"{suite.module}-{version}"
    pins = [f"-e.[{suite.extra}]", f"{suite.host.dist}=={version}"]
    pins += [*suite.companions(version), *TEST_TOOLS]
    stamp = env / ".installed"
    if stamp.exists() and stamp.read_text() == "\n".join(pins):
        return env, 0.0
    start = time.monotonic()
    subprocess.run(
        [uv(), "venv", "-q", "--clear", "--python", sys.executable, str(env)], check=True
    )
    py = str(env / "bin" / "python")
    subprocess.run([uv(), "pip", "install", "-q", "--python", py, *pins], check=True, cwd=ROOT)
    stamp.write_text("\n".join(pins))
    return env, time.monotonic() - start


_SUMMARY = re.compile(r"^=*\s*(\d+ \w+.*) in [\d.]+s", re.M)


def _run(argv: Sequence[str], log: Path) -> tuple[int, float, str]:
    start = time.monotonic()
    env = {**os.environ, **OFFLINE_ENV}
    with log.open("w") as out:
        rc = subprocess.run(
            list(argv), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=3600
        ).returncode
    text = log.read_text(errors="replace")
    found = _SUMMARY.findall(text)
    return rc, time.monotonic() - start, found[-1].strip("= ") if found else ""


def run_one(suite: Suite, kind: str, version: str, env: Path, build_s: float) -> dict[str, Any]:
    """The adapter's tests, then its example, in ``env``; one results row."""
    py = str(env / "bin" / "python")
    logs = env / "logs"
    logs.mkdir(exist_ok=True)
    t_rc, t_s, t_sum = _run([py, "-m", "pytest", *PYTEST_ARGS, *suite.tests], logs / "tests.log")
    e_rc, e_s = 0, 0.0
    if suite.example:
        example = [py, "tests/hosts/offline_run.py", *suite.example]
        e_rc, e_s, _ = _run(example, logs / "example.log")
    row = {
        "adapter": suite.module,
        "host": suite.host.dist,
        "kind": kind,
        "version": version,
        "tests": t_sum or f"exit {t_rc}",
        "tests_ok": t_rc == 0,
        "example_ok": e_rc == 0,
        "seconds": {"build": round(build_s, 1), "tests": round(t_s, 1), "example": round(e_s, 1)},
        "logs": str(logs.relative_to(ROOT)),
    }
    print(f"{suite.module:<15} {kind:<6} {version:<9} tests {row['tests']!r} example "
          f"{'ok' if e_rc == 0 else 'FAILED'} ({t_s + e_s:.0f} s)", flush=True)  # fmt: skip
    return row


def run_install_checks() -> dict[str, Any]:
    """tests/hosts/test_install_behaviour.py (real pip installs) in the project's .venv."""
    VENVS.mkdir(exist_ok=True)
    log = VENVS / "install-behaviour.log"
    argv = [sys.executable, "-m", "pytest", *PYTEST_ARGS, "tests/hosts/test_install_behaviour.py"]
    os.environ["EK_HOST_MATRIX_UV"] = uv()
    rc, s, summary = _run(argv, log)
    print(f"install behaviour: {summary or f'exit {rc}'} ({s:.0f} s)", flush=True)
    return {"ok": rc == 0, "tests": summary or f"exit {rc}", "seconds": round(s, 1)}


def _execute(
    jobs: int, suites: Sequence[Suite], install: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Build each environment in turn and run it in the pool as soon as it is built."""
    rows: list[Future[dict[str, Any]]] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for suite in suites:
            for kind, version in (("floor", suite.host.floor), ("newest", newest(suite.host))):
                env, build_s = build(suite, version)
                rows.append(pool.submit(run_one, suite, kind, version, env, build_s))
        checks = pool.submit(run_install_checks) if install else None
        return [f.result() for f in rows], (checks.result() if checks is not None else None)


def _write(
    results: list[dict[str, Any]], install: dict[str, Any] | None, only: Sequence[str], total: float
) -> None:
    """RESULTS: these runs, and with ``only`` the other adapters' rows of the previous results."""
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() and only else {}
    kept = [r for r in previous.get("runs", []) if r["adapter"] not in only]
    data = {
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "seconds": round(total, 1),
        "ranges": {m: h.spec for m, h in HOSTS.items()},
        "runs": sorted(kept + results, key=lambda r: (r["adapter"], r["kind"] != "floor")),
        "install": install if install is not None else previous.get("install"),
    }
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


def run(jobs: int, only: Sequence[str]) -> int:
    """Build and run the matrix; write RESULTS; 0 when every run passed."""
    start = time.monotonic()
    suites = [s for s in SUITES if not only or s.module in only]
    results, install = _execute(jobs, suites, install=not only)
    total = time.monotonic() - start
    _write(results, install, only, total)
    print(f"matrix: {len(results)} runs in {total:.0f} s; results in {RESULTS.relative_to(ROOT)}")
    failed = [
        f"{r['adapter']} {r['kind']} {r['version']}"
        for r in results
        if not (r["tests_ok"] and r["example_ok"])
    ]
    if install is not None and not install["ok"]:
        failed.append("install behaviour")
    for f in failed:
        print(f"FAILED: {f}")
    return 1 if failed else 0


def table(data: dict[str, Any]) -> str:
    """The README's compatibility table (markdown) from the matrix results."""
    lines = [
        "| Adapter | Host | Supported range | Tested by `make test-hosts` |",
        "| --- | --- | --- | --- |",
    ]
    for module, host in HOSTS.items():
        runs = [r for r in data["runs"] if r["adapter"] == module]
        tested = ", ".join(
            f"{r['version']} ({r['kind']}: {'passed' if r['tests_ok'] and r['example_ok'] else 'FAILED'})"
            for r in runs
        )
        lines.append(
            f"| `ek.adapters.{module}` | {host.dist} | `{data['ranges'].get(module, '?')}` | "
            f"{tested or 'not run'} |"
        )
    lines.append("")
    lines.append(f"Matrix run of {data['date']} on Python {data['python']}.")
    return "\n".join(lines)


def write_readme(check: bool) -> int:
    """Write (or with ``check`` compare) the table between the README's markers."""
    text = README.read_text()
    if BEGIN not in text or END not in text:
        print(f"README.md has no {BEGIN!r} ... {END!r} markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{table(json.loads(RESULTS.read_text()))}\n{END}{tail}"
    if check:
        if new != text:
            print("README.md's compatibility table differs from tests/hosts/results.json")
            return 1
        return 0
    README.write_text(new)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="build the environments and run the matrix")
    r.add_argument("--jobs", type=int, default=2, help="runs side by side (default 2)")
    r.add_argument("--only", nargs="*", default=[], choices=[s.module for s in SUITES])
    w = sub.add_parser("readme", help="write the README's table from the results")
    w.add_argument("--check", action="store_true", help="only check that it is up to date")
    a = p.parse_args(argv)
    if a.cmd == "run":
        rc = run(a.jobs, a.only)
        write_readme(check=False)
        return rc
    return write_readme(a.check)


if __name__ == "__main__":
    sys.exit(main())
