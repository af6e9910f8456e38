"""The checker: :class:`HiddenTestChecker`, its factory :func:`hidden_tests`, :func:`run_hidden_tests`.

A run, in order: check the workspace argument, that the hidden tests are unchanged and apart
from the workspace, and that the test interpreter's library folders are as first seen; copy the
workspace and the tests (plus a canary module) into fresh directories
(:mod:`~ek.agents.verifier._workspace`, :mod:`~ek.agents.verifier._canary`); run the trusted test
process, which runs the workspace's code only in a sandboxed child
(:mod:`~ek.agents.verifier._process`, :mod:`~ek.agents.verifier._runner`,
:mod:`~ek.agents.verifier._child`); check the tests, their source and the library folders
again; let the verdict rules decide on the signed report (:mod:`~ek.agents.verifier._verdict`).

The workspace is named by the caller (``workspace=`` or :meth:`HiddenTestChecker.verify`),
never read from the episode unless the caller opts in with ``workspace_from_episode=True``:
the episode is the agent's, and could name another, correct workspace.

Example:
    >>> check = hidden_tests({"test_a.py": "def test_one():\\n    assert True\\n"}, timeout=30)
    >>> check
    HiddenTestChecker('1 in-memory file(s)', tests=1, timeout=30.0)
    >>> check.verify(None).reason
    'no workspace: pass the path of the workspace to check'
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Union

from ek.agents.verifier._canary import Canary, make_canary
from ek.agents.verifier._process import (
    ProcessResult,
    StartError,
    build_command,
    build_env,
    child_command,
    prepare_private,
    pytest_args,
    run_isolated,
)
from ek.agents.verifier._tree import (
    TestsInWorkspace,
    WorkspaceError,
    copy_workspace,
    identity,
    remove_tree,
)
from ek.agents.verifier._verdict import Evidence, HiddenTestVerdict, Ruling, decide
from ek.agents.verifier._workspace import (
    SiteBaseline,
    check_parent,
    digest,
    discover,
    read_back,
    site_baseline,
    snapshot_tests,
)
from ek.base import ReadOnlyDict
from ek.registry import register

__all__ = ["HiddenTestChecker", "hidden_tests", "run_hidden_tests"]

PathLike = Union[str, "os.PathLike[str]"]

_ENV_PREFIXES = ("PYTHON", "PYTEST", "EK_VERIFIER")
_LIMIT_KEYS = ("memory", "cpu", "processes", "file_size", "transfer")
_NO_WORKSPACE = (
    "hidden_tests needs the workspace from the harness: pass workspace=<path> or "
    "workspace=<callable(episode) -> path> to hidden_tests(), or call check.verify(path). "
    "It is not read from the episode by default, because the agent writes the episode and "
    "could name another, correct workspace; opt in with workspace_from_episode=True only for "
    "episodes the agent cannot edit"
)


# --------------------------------------------------------------------------- validation
def _check_files(files: Mapping[str, bytes], tests: Any) -> None:
    if not files:
        raise ValueError(f"tests must contain at least one file, got none from {tests!r:.200}")
    conftests = [r for r in files if r.rsplit("/", 1)[-1] == "conftest.py"]
    if conftests:
        raise ValueError(
            f"hidden tests must not rely on conftest.py (conftest loading is disabled so that no "
            f"workspace conftest can load either); move fixtures into the test modules, got {conftests}"
        )


def _expected_ids(
    expected: Iterable[str] | None, found: tuple[str, ...], files: Mapping[str, bytes]
) -> tuple[str, ...]:
    if expected is None:
        exp = found
    else:
        if isinstance(expected, str):
            raise TypeError(
                f"expected must be an iterable of node ids, got a str {expected!r:.100}"
            )
        exp = tuple(expected)
        bad = [e for e in exp if not isinstance(e, str) or "::" not in e]
        if bad:
            raise ValueError(
                f"expected must hold node ids like 'test_x.py::test_y', got {bad[:3]!r}"
            )
    if not exp:
        raise ValueError(
            "no hidden tests found: expected test_*.py / *_test.py files with test* functions "
            f"or Test* classes, got files {sorted(files)[:10]}"
        )
    return exp


def _check_timeout(timeout: Any) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    if timeout == float("inf"):
        raise ValueError("timeout must be finite, got inf")


def _check_workspace_option(workspace: Any) -> None:
    if (
        workspace is not None
        and not callable(workspace)
        and not isinstance(workspace, (str, os.PathLike))
    ):
        raise TypeError(
            f"workspace must be a path, a callable(episode) -> path, or None, got {type(workspace).__name__}"
        )
    problem = _no_workspace_named(workspace) if isinstance(workspace, (str, os.PathLike)) else None
    if problem is not None:
        raise ValueError(problem)


def _no_workspace_named(workspace: str | os.PathLike[str]) -> str | None:
    """Why ``workspace`` names no workspace: ``""`` (which pathlib reads as ``"."``) or ``"."``
    is whatever directory the harness runs in (an agent-written empty string would pick it).

    Example:
        >>> _no_workspace_named(Path("")) is not None, _no_workspace_named("/runs/42") is None
        (True, True)
    """
    text = os.fspath(workspace)
    if os.path.normpath(text) != ".":
        return None
    return (
        f"workspace must be a non-empty path naming a directory, got {text!r} (the harness's "
        "own working directory); pass an absolute path, e.g. os.getcwd(), if that is meant"
    )


def _plugin_names(plugins: Iterable[str]) -> tuple[str, ...]:
    plug = tuple(plugins)
    for p in plug:
        if not isinstance(p, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]+", p):
            raise ValueError(f"plugins must be plugin names like 'pytest_asyncio', got {p!r:.100}")
    return plug


def _extra_env(env: Mapping[str, str] | None) -> dict[str, str]:
    extra = dict(env or {})
    for k, v in extra.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"env must map str to str, got {k!r:.50}: {v!r:.50}")
        if k.upper().startswith(_ENV_PREFIXES):
            raise ValueError(
                f"env must not configure Python, pytest or the verifier ({'/'.join(_ENV_PREFIXES)}*), got {k!r}"
            )
    return extra


def _check_limits(**limits: Any) -> None:
    for label, n in limits.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{label} must be an int >= 1, got {n!r}")


def _resource_limits(
    limits: Mapping[str, int] | None, timeout: float, max_bytes: int
) -> dict[str, int]:
    """The workspace process's resource limits: the defaults, overridden by ``limits``."""
    out = {
        "memory": 4 << 30,
        "cpu": math.ceil(timeout) + 1,
        "processes": 64,
        "file_size": max_bytes,
        "transfer": 64 << 20,
    }
    if limits is None:
        return out
    if not isinstance(limits, Mapping):
        raise TypeError(
            f"limits must be a mapping like {{'memory': 2**30}}, got {type(limits).__name__}"
        )
    unknown = sorted(set(limits) - set(_LIMIT_KEYS))
    if unknown:
        raise ValueError(f"limits keys must be among {_LIMIT_KEYS}, got {unknown}")
    _check_limits(**{f"limits[{k!r}]": v for k, v in limits.items()})
    return {**out, **limits}


# --------------------------------------------------------------------------- before a run
def _workspace_of(episode: Any) -> Any:
    """The workspace an episode names: itself if a path, else ``final_state`` / ``metadata``."""
    if isinstance(episode, (str, os.PathLike)):
        return episode
    fs = getattr(episode, "final_state", None)
    if isinstance(fs, (str, os.PathLike)):
        return fs
    if isinstance(fs, Mapping) and "workspace" in fs:
        return fs["workspace"]
    md = getattr(episode, "metadata", None)
    if isinstance(md, Mapping) and "workspace" in md:
        return md["workspace"]
    return None


def _workspace_problem(workspace: Any) -> Ruling | None:
    if workspace is None:
        return Ruling("error", "no workspace: pass the path of the workspace to check")
    if not isinstance(workspace, (str, os.PathLike)):
        return Ruling(
            "error", f"workspace must be a path, got {type(workspace).__name__}: {workspace!r:.100}"
        )
    problem = _no_workspace_named(workspace)
    if problem is not None:
        return Ruling("error", problem)
    ws = Path(workspace)
    if not ws.is_dir():
        return Ruling("error", f"workspace {str(ws)!r} is not a directory")
    return None


def _platform_problem() -> Ruling | None:
    if os.name != "posix":
        return Ruling(
            "error",
            f"hidden_tests needs a POSIX system (process groups, pass_fds), got {os.name!r}",
        )
    return None


class _Dirs:
    """One check's folders, all under ``base`` (itself under :func:`check_parent`).

    ``tests`` and ``private`` (runner, ini, config) are the trusted process's alone; the
    workspace process may read ``child`` and write ``ws`` and ``scratch`` (its HOME, TMPDIR
    and pytest's basetemp).
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ws, self.tests, self.private = base / "ws", base / "tests", base / "private"
        self.child, self.scratch = base / "child", base / "scratch"
        for d in (self.ws, self.tests, self.private, self.child, self.scratch):
            d.mkdir()
        for sub in ("home", "tmp"):
            (self.scratch / sub).mkdir()


# --------------------------------------------------------------------------- the checker
class HiddenTestChecker:
    """An isolated hidden-test checker: ``check=hidden_tests("tests/hidden", workspace=...)``
    (``hidden_tests`` is this class under the name the spec gives it).

    Call it as a checker, ``check(episode, gold) -> HiddenTestVerdict`` (truthy when passed),
    or run it on a directory with :meth:`verify`. :attr:`last_verdict` is the verdict of the
    calling thread's latest call.

    Requires pytest **in the interpreter that runs the tests** (``python``), not in ek.

    Args:
        tests: The trusted hidden tests: a test file, a directory (read recursively), or a
            ``{relative path: source}`` mapping. Read and hashed now; a later change of the
            files is reported as tampering. ``conftest.py`` is refused (conftest loading is off).
        workspace: The agent's final workspace, named by the harness: a path or a
            ``callable(episode) -> path``. Required to call the checker on episodes (or
            pass the path to :meth:`HiddenTestChecker.verify`); without it, calling the
            checker raises ``ValueError`` unless ``workspace_from_episode`` is set.
        timeout: Seconds before the whole test process group is killed (status ``"timeout"``).
        python: The interpreter that runs pytest (default :data:`sys.executable`).
        expected: Node ids (``"test_x.py::test_y"``, parameters stripped) that must pass;
            default: the tests found statically in ``test_*.py`` / ``*_test.py`` files.
        plugins: pytest plugins to enable explicitly with ``-p`` (autoloading is off).
        env: Extra environment variables for the test process (no ``PYTHON*``/``PYTEST*``).
        max_output: Bytes of pytest output kept (head and tail).
        max_files: Most files and directories copied from the workspace (more: status
            ``"error"``).
        max_bytes: Most bytes copied from the workspace (more: status ``"error"``).
        limits: Resource limits of the process that runs the workspace's code
            (``resource.setrlimit``; POSIX): ``memory`` (bytes of address space, default
            4 GiB), ``cpu`` (seconds, default ``ceil(timeout) + 1``), ``processes`` (default
            64, threads included; also enforced by counting the descendants' threads, since
            Linux does not apply ``RLIMIT_NPROC`` to root), ``file_size`` (bytes, default
            ``max_bytes``); and ``transfer``, the bytes the trusted test process accepts from
            it in one run (default 64 MiB; one message at most 4 MiB; past either the run is
            an ``"error"``).
        workspace_from_episode: Read the workspace from the episode (a path as
            ``episode.final_state``, ``final_state["workspace"]`` or
            ``metadata["workspace"]``) when ``workspace`` is not given. Off by default: the
            agent writes the episode and could name another, correct workspace.

    Example:
        >>> check = hidden_tests({"test_a.py": "def test_one():\\n    assert True\\n"})
        >>> check.expected, check.timeout
        (('test_a.py::test_one',), 60.0)
    """

    __name__ = "hidden_tests"

    def __init__(
        self,
        tests: Any,
        *,
        workspace: PathLike | Callable[[Any], Any] | None = None,
        timeout: float = 60.0,
        python: PathLike | None = None,
        expected: Iterable[str] | None = None,
        plugins: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        max_output: int = 20_000,
        max_files: int = 20_000,
        max_bytes: int = 100_000_000,
        limits: Mapping[str, int] | None = None,
        workspace_from_episode: bool = False,
    ) -> None:
        files, source = snapshot_tests(tests)
        _check_files(files, tests)
        exp = _expected_ids(expected, discover(files), files)
        _check_timeout(timeout)
        _check_workspace_option(workspace)
        plug = _plugin_names(plugins)
        extra = _extra_env(env)
        _check_limits(max_output=max_output, max_files=max_files, max_bytes=max_bytes)
        if not isinstance(workspace_from_episode, bool):
            raise TypeError(
                f"workspace_from_episode must be a bool, got {workspace_from_episode!r}"
            )
        self.limits = ReadOnlyDict(_resource_limits(limits, float(timeout), max_bytes))
        self.workspace_from_episode = workspace_from_episode
        self._loaded: tuple[str, ...] = ()
        self._files = files
        self._source = source
        self._digest = digest(files)
        self._expected = exp
        self.workspace = workspace
        self.timeout = float(timeout)
        self.python = os.fspath(python) if python is not None else sys.executable
        self.plugins = plug
        self.env = ReadOnlyDict(extra)
        self.max_output = max_output
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._local = threading.local()

    # -- properties
    @property
    def digest(self) -> str:
        """SHA-256 of the hidden tests as read when the checker was built."""
        return self._digest

    @property
    def expected(self) -> tuple[str, ...]:
        """The node ids (without parameters) that must be present and pass."""
        return self._expected

    @property
    def last_verdict(self) -> HiddenTestVerdict | None:
        """The verdict of this thread's latest call (``None`` before the first)."""
        return getattr(self._local, "verdict", None)

    def __repr__(self) -> str:
        src = str(self._source) if self._source else f"{len(self._files)} in-memory file(s)"
        return f"HiddenTestChecker({src!r}, tests={len(self._expected)}, timeout={self.timeout})"

    def ek_config(self) -> dict[str, Any]:
        """Every setting that decides its verdicts, the hidden tests by their digest (the
        protocol :mod:`ek.agents._fingerprint` reads: a run store refuses to resume with a
        checker whose configuration differs, e.g. other test files under the same name)."""
        return {
            "tests": self._digest,
            "expected": list(self._expected),
            "timeout": self.timeout,
            "python": self.python,
            "plugins": list(self.plugins),
            "env": dict(self.env),
            "limits": dict(self.limits),
            "max_output": self.max_output,
            "max_files": self.max_files,
            "max_bytes": self.max_bytes,
            "workspace": self.workspace,
            "workspace_from_episode": self.workspace_from_episode,
        }

    # -- the checker protocol
    def __call__(self, episode: Any, gold: Any = None) -> HiddenTestVerdict:
        """Check an episode (``gold`` is ignored: the hidden tests are the gold).

        Raises:
            ValueError: No ``workspace=`` was given (and no opt-in to read it from the episode).
        """
        if callable(self.workspace):
            ws = self.workspace(episode)
        elif self.workspace is not None:
            ws = self.workspace
        elif isinstance(episode, (str, os.PathLike)):
            ws = episode  # the caller passed the path itself
        elif self.workspace_from_episode:
            ws = _workspace_of(episode)
        else:
            raise ValueError(_NO_WORKSPACE)
        return self.verify(ws)

    def verify(self, workspace: Any) -> HiddenTestVerdict:
        """Run the hidden tests against a copy of ``workspace`` and return the verdict."""
        t0 = time.monotonic()
        ruling, output = self._verify(workspace)
        verdict = HiddenTestVerdict(
            ruling.status == "passed",
            ruling.status,
            ruling.reason,
            ruling.failed_tests,
            round(time.monotonic() - t0, 3),
            output,
            ruling.detail,
        )
        self._local.verdict = verdict
        return verdict

    # -- implementation
    def _verify(self, workspace: Any) -> tuple[Ruling, str]:
        problem = _workspace_problem(workspace) or _platform_problem()
        if problem is None:
            changed = self._source_changed()
            problem = None if changed is None else Ruling("tampering", changed)
        if problem is not None:
            return problem, ""
        return self._in_fresh_dirs(Path(workspace))

    def _source_changed(self) -> str | None:
        """Why the hidden tests' source no longer holds what was read when the checker was built."""
        if self._source is None:
            return None
        try:
            now, _ = snapshot_tests(self._source)
        except OSError as e:
            return f"the hidden tests at {str(self._source)!r} can no longer be read: {e}"
        if digest(now) != self._digest:
            return f"the hidden tests at {str(self._source)!r} changed since the checker was built"
        return None

    def _tests_folder(self) -> set[tuple[int, int]]:
        """The identity of the hidden tests' folder (a single file's: its directory), if any."""
        if self._source is None:
            return set()
        folder = self._source if self._source.is_dir() else self._source.parent
        try:
            return {identity(os.stat(folder))}
        except OSError:
            return set()

    def _in_fresh_dirs(self, ws: Path) -> tuple[Ruling, str]:
        """Copy the workspace into a fresh folder and run there; remove it all afterwards."""
        base = Path(tempfile.mkdtemp(prefix="check-", dir=check_parent()))
        dirs = _Dirs(base)
        try:
            try:
                skipped = copy_workspace(
                    ws, dirs.ws, self.max_files, self.max_bytes, avoid=self._tests_folder()
                )
            except TestsInWorkspace as e:
                return Ruling("tampering", str(e)), ""
            except WorkspaceError as e:
                return Ruling("error", str(e)), ""
            except OSError as e:
                return Ruling("error", f"cannot copy the workspace {str(ws)!r}: {e}"), ""
            return self._run(dirs, skipped)
        finally:
            remove_tree(dirs.tests)  # the hidden tests first, whatever happens to the rest
            remove_tree(base)

    def _stage_tests(self, tests_dir: Path) -> Canary:
        """Write the hidden tests and a fresh canary module into ``tests_dir``."""
        for rel, data in self._files.items():
            p = tests_dir / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        canary = make_canary(taken=self._files)
        (tests_dir / canary.module).write_text(canary.source, encoding="utf-8")
        return canary

    def _site(self) -> SiteBaseline | Ruling:
        """The test interpreter's library folders, unchanged since first seen (or a ruling)."""
        if not os.path.exists(self.python):
            return Ruling("error", f"cannot start the test interpreter {self.python!r}: not found")
        baseline = site_baseline(self.python)
        if isinstance(baseline, str):
            return Ruling("error", f"cannot start the test interpreter {self.python!r}: {baseline}")
        changed = baseline.changed(self._loaded)
        if changed is not None:
            return Ruling(
                "tampering",
                f"the test interpreter changed since the checker first ran it: {changed}",
            )
        return baseline

    def _hidden_paths(self, dirs: _Dirs) -> list[str]:
        """What the workspace process may not even read: every check's folder and the tests'
        source; for a single test file also what pytest and Python leave beside it (its
        bytecode in ``__pycache__`` holds the tests' constants, ``.pytest_cache`` their names)."""
        hide = [str(dirs.base.parent)]
        if self._source is not None:
            hide.append(str(self._source))
            if not self._source.is_dir():
                hide += [str(self._source.parent / n) for n in ("__pycache__", ".pytest_cache")]
        return hide

    def _config(self, dirs: _Dirs, canary: Canary, child: Path, ini: Path) -> dict[str, Any]:
        """The trusted test process's configuration (the HMAC key travels separately)."""
        names = [*self._files, canary.module]
        back = read_back(dirs.tests, names)
        return {
            "tests": str(dirs.tests),
            "digests": {rel: hashlib.sha256(back[rel]).hexdigest() for rel in names},
            "workspace": str(dirs.ws),
            "args": pytest_args(ini, dirs.tests, dirs.scratch / "basetemp", self.plugins),
            "child_command": child_command(self.python, child),
            "child_env": build_env(dirs.scratch / "home", dirs.scratch / "tmp", self.env),
            "child_config": {
                "workspace": str(dirs.ws),
                "limits": dict(self.limits),
                "hide": self._hidden_paths(dirs),
                "read": [str(dirs.child)],
                "write": [str(dirs.ws), str(dirs.scratch), "/dev/null"],
            },
        }

    def _run(self, dirs: _Dirs, skipped: list[str]) -> tuple[Ruling, str]:
        canary = self._stage_tests(dirs.tests)
        if digest(read_back(dirs.tests, self._files)) != self._digest:
            return Ruling("tampering", "the hidden tests changed while being copied"), ""
        site = self._site()
        if isinstance(site, Ruling):
            return site, ""
        runner, ini, child = prepare_private(dirs.private, dirs.child)
        key = secrets.token_bytes(32)
        try:
            result = run_isolated(
                build_command(self.python, runner),
                cwd=dirs.ws,
                env=build_env(dirs.scratch / "home", dirs.scratch / "tmp", self.env),
                config=self._config(dirs, canary, child, ini),
                config_path=dirs.private / "config.json",
                key=key,
                timeout=self.timeout,
                max_output=self.max_output,
                max_processes=self.limits["processes"] + 2,
            )
        except StartError as e:
            return Ruling("error", f"cannot start the test interpreter {self.python!r}: {e}"), ""
        ruling = self._judge_run(result, dirs.tests, canary, skipped, key)
        return self._after(ruling, site), result.output

    def _after(self, ruling: Ruling, site: SiteBaseline) -> Ruling:
        """The hidden tests' source and the interpreter's library folders, checked again."""
        loaded = ruling.detail.get("loaded_files")
        if isinstance(loaded, list):
            self._loaded = tuple(loaded)
        detail = {k: v for k, v in ruling.detail.items() if k != "loaded_files"}
        problem = self._source_changed() or site.changed(self._loaded)
        if problem is not None and ruling.status != "tampering":
            return Ruling("tampering", f"during the run: {problem}", detail=detail)
        return replace(ruling, detail=detail)

    def _intact(self, tests_dir: Path, canary: Canary) -> bool:
        """The hidden tests and the canary module in ``tests_dir`` are still what was written."""
        after = read_back(tests_dir, [*self._files, canary.module])
        tests_now = digest({k: after[k] for k in self._files})
        return tests_now == self._digest and after[canary.module] == canary.source.encode("utf-8")

    def _judge_run(
        self, result: ProcessResult, tests_dir: Path, canary: Canary, skipped: list[str], key: bytes
    ) -> Ruling:
        """Timeout, process limit, tests modified during the run, then the verdict rules."""
        paths: dict[str, Any] = {"skipped_paths": skipped} if skipped else {}
        if result.timed_out:
            return Ruling(
                "timeout",
                f"the hidden tests did not finish within {self.timeout:g} s",
                detail={**paths, "exit_code": None},
            )
        if result.too_many_processes:
            return Ruling(
                "error",
                f"the workspace started too many processes ({result.too_many_processes} "
                f"processes and threads > processes limit {self.limits['processes']}); all "
                "were killed",
                detail={**paths, "exit_code": None},
            )
        if not self._intact(tests_dir, canary):
            return Ruling(
                "tampering",
                "the hidden tests were modified during the run",
                detail={**paths, "exit_code": result.exit_code},
            )
        evidence = Evidence(
            result.lines,
            exit_code=result.exit_code,
            expected=self._expected,
            canary_pass=canary.must_pass,
            canary_fail=canary.must_fail,
            overflow=result.overflow,
            key=key,
        )
        ruling = decide(evidence)
        extra = {"sandbox": evidence.sandbox, "loaded_files": list(evidence.loaded)}
        return replace(ruling, detail={**ruling.detail, **paths, **extra})


#: Build an isolated hidden-test checker: ``check=hidden_tests("tests/hidden", workspace=...)``
#: (the class itself, so its one signature and docstring serve both names).
hidden_tests = HiddenTestChecker


def run_hidden_tests(tests: Any, workspace: PathLike, **options: Any) -> HiddenTestVerdict:
    """One-shot: run ``tests`` against ``workspace`` and return the :class:`HiddenTestVerdict`.

    ``options`` are those of :class:`HiddenTestChecker` (:data:`hidden_tests`).

    Example:
        >>> run_hidden_tests({"test_a.py": "def test_one():\\n    pass\\n"}, "/nonexistent-ek").status
        'error'
    """
    return hidden_tests(tests, **options).verify(workspace)


register("checker_factories", "hidden_tests", hidden_tests)
