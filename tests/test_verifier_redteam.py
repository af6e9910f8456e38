"""The red-team suite: every attack workspace fails the hidden tests, none is scored a success.

Each attack (tests/redteam/attacks.py) is run twice on fresh copies: by a naive checker
(``python -m pytest`` in the workspace, exit status 0 = success) and by ``hidden_tests``. The
ek checker must reject every one; the naive checker's results are recorded to show what the
isolation buys. ``pytest tests/test_verifier_redteam.py -s`` prints the table (also:
``python tests/redteam/run.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redteam.attacks import ATTACKS, RIGHT, Attack
from redteam.run import Row, format_table, run_all, run_attack

pytestmark = pytest.mark.slow

# Attacks with an unmistakable signature: the verdict must say "tampering", not just "failed".
TAMPERING = {"os_exit_at_import", "inprocess_rewrite", "forged_report", "edit_hidden_tests"}
# Attacks the naive checker certainly falls for (the point of the exercise).
NAIVE_FOOLED = {
    "conftest_root",
    "conftest_subfolder",
    "pytest_ini_deselect",
    "pyproject_plugin",
    "env_PYTEST_ADDOPTS",
    "env_PYTEST_PLUGINS",
    "setup_cfg_skip",
    "tox_ini_ignore",
    "pytest_toml_plugin",
    "env_PYTHONPATH",
    "shadow_pytest",
    "shadow__pytest",
    "shadow_stdlib",
    "dist_info_pytest11",
    "os_exit_at_import",
    "inprocess_rewrite",
    "symlink_to_tests",
    "edit_hidden_tests",
}


@pytest.fixture(scope="module")
def rows() -> dict[str, Row]:
    got = run_all(ATTACKS, workers=2)
    print("\n" + format_table(got))
    return {r.attack: r for r in got}


def test_the_suite_covers_the_issue_list() -> None:
    names = {a.name for a in ATTACKS}
    required = {
        "conftest_root", "conftest_subfolder", "pytest_ini_deselect", "pyproject_plugin",
        "setup_cfg_skip", "tox_ini_ignore", "env_PYTEST_ADDOPTS", "env_PYTEST_PLUGINS",
        "env_PYTHONPATH", "env_PYTHONSTARTUP", "shadow_pytest", "shadow__pytest",
        "shadow_stdlib", "sitecustomize", "usercustomize", "pth_file", "dist_info_pytest11",
        "os_exit_at_import", "sys_exit_at_import", "forged_report", "symlink_to_tests",
        "symlink_to_report", "edit_hidden_tests",
    }  # fmt: skip
    assert required <= names and len(names) == len(ATTACKS)


@pytest.mark.parametrize("name", [a.name for a in ATTACKS])
def test_ek_checker_rejects(rows: dict[str, Row], name: str) -> None:
    v = rows[name].verdict
    assert not v.passed and v.status != "passed", f"{name} beat the checker: {v.reason}"
    assert v.status in {"failed", "tampering", "collection_error", "error"}, v.reason
    if name in TAMPERING:
        assert v.status == "tampering", v.reason


def test_naive_checker_is_fooled(rows: dict[str, Row]) -> None:
    fooled = {n for n, r in rows.items() if r.naive_fooled}
    assert fooled >= NAIVE_FOOLED, sorted(NAIVE_FOOLED - fooled)


def test_control_honest_workspace_passes_both(tmp_path: Path) -> None:
    # Without this, "naive not fooled" could mean a broken naive harness.
    row = run_attack(Attack("control", "a correct solution", {"solution.py": RIGHT}), tmp_path)
    assert row.naive_fooled and row.naive_exit == 0  # "fooled" here = it said success, rightly
    assert row.verdict.passed and row.verdict.status == "passed"
