"""A new user's first hour (issue 32, items 14-16), through the real install, demo and files.

- (14) the README says how to install: from a checkout or a git URL, with which extras; the
  checkout really installs (a wheel built from it, offline, with no extra, imports and scores).
- (15) ``make demo`` installs ``.[inspect,plot]`` with pip's progress visible (not ``.[all,dev]``
  quietly), and that is enough: the real demo runs in a child interpreter that can import only
  the standard library, ek, and what those two extras install.
- (16) the README lists exactly what the demo writes, and ``baseline.json`` / ``gate.json`` get
  the permissions ``open()`` gives (the atomic write used ``mkstemp``'s 0600).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _installs import extra_distributions, import_names

from ek.jsonio import write_json_atomic

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _open_mode(folder: Path) -> int:
    """The mode ``open(path, "w")`` gives a new file in ``folder`` under the current umask."""
    probe = folder / "made-by-open"
    with open(probe, "w"):
        pass
    mode = probe.stat().st_mode & 0o777
    probe.unlink()
    return mode


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_an_atomic_json_write_gets_the_permissions_open_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_json_atomic(tmp_path / "new.json", {"a": 1})
        # 0o666 less the umask: 0o644, 0o640, 0o600 (mkstemp gave 0o600 whatever the umask)
        assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o666 & ~umask
        assert _open_mode(tmp_path) == 0o666 & ~umask
    finally:
        os.umask(old)


def test_writing_over_a_file_keeps_its_mode_as_open_does(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text("{}")
    target.chmod(0o600)  # the user made it private
    write_json_atomic(target, {"a": 1})
    assert target.stat().st_mode & 0o777 == 0o600
    target.chmod(0o664)
    write_json_atomic(target, {"a": 2})
    assert target.stat().st_mode & 0o777 == 0o664
    assert json.loads(target.read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]  # no temp file left


# -- the demo, with only what `make demo` installs ----------------------------------------------

_ONLY = textwrap.dedent(
    """
    import importlib.machinery, os, sys, sysconfig

    _ALLOWED = set(sys.stdlib_module_names) | {m.partition(".")[0] for m in sys.modules}
    _ALLOWED |= {"ek"} | set(ALLOWED)
    _STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
    _PathFinder = importlib.machinery.PathFinder

    def _in_stdlib(top):  # the interpreter's own private modules (_sysconfigdata_...)
        spec = _PathFinder.find_spec(top)
        origin = spec.origin if spec is not None else None
        return bool(origin) and os.path.realpath(origin).startswith(_STDLIB)

    class _OnlyTheExtras:
        \"\"\"The path finder, blind to what the extras do not install (find_spec is None,
        as when the distribution is absent: hosts probe optional packages that way).\"\"\"

        @staticmethod
        def find_spec(name, path=None, target=None):
            top = name.partition(".")[0]
            if top in _ALLOWED or _in_stdlib(top):
                return _PathFinder.find_spec(name, path, target)
            return None

        @staticmethod
        def invalidate_caches():
            _PathFinder.invalidate_caches()

        @staticmethod
        def find_distributions(*args, **kwargs):  # metadata stays visible: the code is what counts
            return _PathFinder.find_distributions(*args, **kwargs)

    sys.meta_path[:] = [_OnlyTheExtras if f is _PathFinder else f for f in sys.meta_path]
    """
)


def _make_demo_recipe() -> str:
    """What ``make demo`` runs on a fresh clone (``-n``: printed, not run; ``-B``: every step)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        ["make", "-n", "-B", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _demo_extras(recipe: str) -> list[str]:
    (line,) = [ln for ln in recipe.splitlines() if "pip install" in ln and "-e" in ln.split()]
    assert " -q" not in line and "--quiet" not in line, f"pip runs quietly: {line}"
    (extras,) = re.findall(r'-e "\.\[([^\]]*)\]"', line)
    return extras.split(",")


def test_make_demo_installs_the_demo_extras_with_progress():
    assert _demo_extras(_make_demo_recipe()) == ["inspect", "plot"]


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory):
    """The real demo (Inspect part and plots), run as ``ek-agents demo`` in a child that can
    import only the standard library, ek and what ``make demo``'s extras install."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("matplotlib")
    extras = _demo_extras(_make_demo_recipe())
    allowed = sorted(import_names(extra_distributions(*extras)))
    folder = tmp_path_factory.mktemp("first-hour") / "ek-demo-run"
    code = f"ALLOWED = {allowed!r}\n{_ONLY}\n" + textwrap.dedent(
        """
        import importlib.util, os, sys
        assert importlib.util.find_spec("hypothesis") is None  # dev only: hidden, as uninstalled
        os.umask(0o022)
        from ek.agents.cli import main
        sys.exit(main(["demo", sys.argv[1], "-k", "2", "--quiet"]))
        """
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        timeout=1800,  # a hang guard only: the demo takes well under a minute
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Inspect part skipped" not in proc.stdout and "plots skipped" not in proc.stdout
    return folder


def _readme_demo_files() -> list[str]:
    """The file names in the README's table of what the demo writes."""
    start = README.index("| File | What it holds |")
    table = README[start : README.index("\n\n", start)]
    return re.findall(r"`([^`\s]+)`", "\n".join(ln.split("|")[1] for ln in table.splitlines()))


def test_the_readme_lists_exactly_what_the_demo_writes(demo_folder):
    written = sorted(p.name + ("/" if p.is_dir() else "") for p in demo_folder.iterdir())
    assert sorted(_readme_demo_files()) == written
    assert [p.suffix for p in (demo_folder / "inspect").iterdir()] == [".eval"]


def test_the_demo_files_have_normal_permissions(demo_folder):
    # umask 022 in the demo's process: a file open() creates is 0o644
    modes = {p.name: p.stat().st_mode & 0o777 for p in demo_folder.iterdir() if p.is_file()}
    assert modes["baseline.json"] == modes["gate.json"] == 0o644
    assert set(modes.values()) == {0o644}, modes


# -- installing from the checkout -----------------------------------------------------------------


def test_the_readme_says_how_to_install_from_a_checkout():
    section = README[README.index("### Installing") :]
    section = section[: section.index("\n## ")]
    assert "not on the package index" in section
    for command in ("pip install .  ", 'pip install ".[inspect,plot]"', "@ git+"):
        assert command in section, command
    assert "pip install ek-agents " not in README  # the unpublished name alone fails


def _old_build_backend() -> str | None:
    """Why this venv's setuptools cannot build the checkout without isolation, or None.

    The floor is the project's own ``[build-system] requires`` (``setuptools>=N``): the core-only
    venv of ``make test-core`` has the setuptools its ``venv`` bundled (65 on Python 3.11),
    which predates the licence fields; ``pip install .`` with build isolation fetches a new one.
    """
    import importlib.metadata

    text = (ROOT / "pyproject.toml").read_text("utf-8")
    floor = int(re.search(r'"setuptools>=(\d+)', text).group(1))  # type: ignore[union-attr]
    try:
        found = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return "setuptools is not installed in this venv"
    if int(found.split(".")[0]) < floor:
        return f"this venv's setuptools {found} is older than the build requirement >={floor}"
    return None


def test_the_checkout_installs_and_runs(tmp_path):
    """``pip install .`` from the checkout, offline: the wheel builds, installs with no
    dependency, and the core scores an episode (the build backend is the one in this venv)."""
    if (why := _old_build_backend()) is not None:
        pytest.skip(why + " (the full venv of make pytest runs this test)")
    target = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(ROOT)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        import ek
        from ek.agents.base import Episode, Step, TaskSpec
        from ek.agents.toolcalls import ToolCallMetric
        gold = TaskSpec("t", gold_calls=[Step("refund", {"order_id": "A1"})])
        ep = Episode("t", trajectory=[Step("refund", {"order_id": "A1"})])
        print(ek.__file__, ToolCallMetric()(ep, gold).value)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    where, value = run.stdout.split()
    assert where.startswith(str(target)) and float(value) == 1.0


def test_a_store_the_pytest_plugin_writes_has_open_permissions_and_keeps_its_mode(tmp_path):
    """``pytest --ek-store`` replaces the store atomically (the same temp-file rule as the JSON
    files): a new store is 0o644 under umask 022, and a store the user made 0o600 stays so."""
    (tmp_path / "test_tiny.py").write_text(
        "import pytest\n\n@pytest.mark.ek(trials=2)\ndef test_ok(ek_episode):\n    assert True\n"
    )
    store = tmp_path / "runs.jsonl"

    def run() -> None:
        code = "import os, sys, pytest; os.umask(0o022); sys.exit(pytest.main(sys.argv[1:]))"
        proc = subprocess.run(
            [sys.executable, "-c", code, "-q", "-p", "no:cacheprovider", "test_tiny.py",
             "--ek-store", str(store)],
            capture_output=True, text=True, cwd=tmp_path, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    run()
    assert store.stat().st_mode & 0o777 == 0o644  # 0o666 less umask 022 (mkstemp gave 0o600)
    store.chmod(0o600)
    run()
    assert store.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".ek-store-")) == []
