"""Host versions: the adapters' ranges, the refusal at import, the extras and the README's table.

The ranges (``ek.adapters._versions.HOSTS``) are what ``make test-hosts`` measured; these tests
check the rule that refuses anything else (hand-derived cases), that importing each real adapter
with a host outside its range is refused before the host is imported (the installed version
faked by patching ``importlib.metadata.version`` in a child interpreter), that the extras in
``pyproject.toml`` declare the same ranges, and that the README's compatibility table is the one
the committed matrix results give. The real installs are ``tests/hosts/test_install_behaviour.py``
(run by ``make test-hosts``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ek.adapters._versions import HOSTS, HostRange, HostVersionError, release, require_features

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "tests" / "hosts" / "results.json"


def _matrix():
    spec = importlib.util.spec_from_file_location("ek_host_matrix", ROOT / "tests/hosts/matrix.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


R = HostRange("h", "h", floor="1.2", below="3", why_floor="x", excluded=(("2.5.0", "y"),))


@pytest.mark.parametrize(
    ("found", "refused"),
    [
        ("1.1.9", True),  # below the floor
        ("1.2", False),  # the floor itself (inclusive)
        ("1.2.0", False),  # 1.2.0 is 1.2
        ("2.5", True),  # excluded: 2.5 == 2.5.0
        ("2.5.1", False),
        ("2.99.99", False),
        ("3", True),  # the cap is exclusive
        ("3.0.0rc1", True),  # a pre-release of the cap is refused, as pip refuses it
        ("10.0", True),  # numeric, not text, order: 10 > 3
    ],
)
def test_the_range_rule(found: str, refused: bool) -> None:
    assert (R.refusal(found) is not None) is refused


def test_a_refusal_names_the_version_the_range_and_the_fix() -> None:
    with pytest.raises(HostVersionError) as e:
        R.check(found="2.5.0")
    msg = str(e.value)
    assert (
        msg
        == "ek.adapters.h supports h >=1.2,!=2.5.0,<3; found h 2.5.0 (y). Fix: pip install 'h>=1.2,!=2.5.0,<3'"
    )
    assert isinstance(e.value, ImportError)
    with pytest.raises(HostVersionError, match=r"found h 'nightly', which is not a release"):
        R.check(found="nightly")
    assert R.check(found="2.0") == "2.0"


def test_bad_ranges_and_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="must be below"):
        HostRange("h", "h", floor="3", below="3", why_floor="x")
    with pytest.raises(ValueError, match="release number"):
        release("abc")
    assert release("v0.3.285+local") == (0, 3, 285)
    with pytest.raises(HostVersionError, match=r"with A, B; found h 1.5 without it"):
        require_features(R, "1.5", ["A", "B"])


_FAKE = textwrap.dedent(
    """
    import importlib.metadata as md, sys
    real = md.version
    md.version = lambda dist: sys.argv[2] if dist == sys.argv[1] else real(dist)
    try:
        __import__(sys.argv[3])
    except ImportError as e:
        print(type(e).__name__, e)
    else:
        print("imported")
    """
)

_OUT_OF_RANGE = [
    ("deepeval", "3.9.5"),  # 3.7-3.9.5: test cases drop metadata silently (the case)
    ("deepeval", "3.7.0"),
    ("deepeval", "5.0.0"),
    ("inspect", "0.3.240"),  # no @metric(scores="unreduced")
    ("inspect", "0.3.261"),  # not tested (some lack Score.unscored(reason=))
    ("ragas", "0.4.2"),  # downloads a tokenizer at import
    ("ragas", "0.3.6"),
    ("pydantic_evals", "1.107.10"),  # the maintained 1.x line: no span status
    ("pydantic_evals", "2.3.0"),
]


@pytest.mark.parametrize(("module", "version"), _OUT_OF_RANGE)
def test_importing_an_adapter_with_a_host_out_of_range_is_refused(
    module: str, version: str
) -> None:
    host = HOSTS[module]
    proc = subprocess.run(
        [sys.executable, "-c", _FAKE, host.dist, version, f"ek.adapters.{module}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    out = proc.stdout.strip()
    # refused before the host is imported: the same in the core-only environment
    assert out.startswith("HostVersionError "), out + proc.stderr[-2000:]
    assert f"found {host.dist} {version} (" in out
    assert f"supports {host.dist} {host.spec};" in out
    assert out.endswith(f"Fix: pip install '{host.requirement}'")


_NO_METADATA = textwrap.dedent(
    """
    from deepeval.test_case import LLMTestCase
    # a DeepEval inside the range whose test case has no metadata field, as 3.7-3.9.5 have none
    del LLMTestCase.model_fields["metadata"]
    try:
        import ek.adapters.deepeval
    except ImportError as e:
        print(type(e).__name__, e)
    else:
        print("imported")
    """
)


def test_a_deepeval_in_range_without_metadata_is_refused_by_the_feature_check() -> None:
    pytest.importorskip("deepeval")
    host = HOSTS["deepeval"]
    proc = subprocess.run(
        [sys.executable, "-c", _NO_METADATA],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"},
    )
    out = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert out.startswith("HostVersionError "), proc.stdout + proc.stderr[-2000:]
    assert f"needs deepeval {host.spec} with LLMTestCase.metadata; found deepeval " in out
    assert out.endswith(f"Fix: pip install '{host.requirement}'")


def test_deepeval_before_the_floor_is_refused_for_dropping_metadata() -> None:
    why = HOSTS["deepeval"].refusal("3.9.5")
    assert why is not None and "drops its metadata silently" in why and "Cost-of-Pass" in why


def test_the_extras_declare_the_adapters_ranges() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for module, host in HOSTS.items():
        extra = module.replace("_", "-")
        assert host.requirement in extras[extra], (extra, extras[extra])
        assert host.requirement in extras["all"], host.requirement
    # the one known bound on a host's own dependency, with its reason in pyproject.toml
    assert "langchain-community<0.4.2" in extras["ragas"]


def test_the_readme_table_is_the_matrix_results() -> None:
    data = json.loads(RESULTS.read_text())
    assert data["ranges"] == {m: h.spec for m, h in HOSTS.items()}, "re-run make test-hosts"
    for module, host in HOSTS.items():
        runs = {r["kind"]: r for r in data["runs"] if r["adapter"] == module}
        assert set(runs) == {"floor", "newest"}, module
        assert release(runs["floor"]["version"]) == release(host.floor), module
        assert host.refusal(runs["newest"]["version"]) is None, module
        for r in runs.values():
            assert r["tests_ok"] and r["example_ok"], r
    assert _matrix().write_readme(check=True) == 0
