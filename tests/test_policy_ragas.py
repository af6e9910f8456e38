"""Issue 34: PolicyMetric in Ragas' real evaluate(), offline, through ek_ragas_metric."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("ragas")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from ragas import EvaluationDataset, evaluate

from _policy_host_case import CAREFUL, HASTY, RULES, direct
from ek.adapters.ragas import ek_ragas_metric, to_ragas_sample
from test_ragas_adapter import no_outbound  # noqa: F401 (the autouse offline fixture)

from ek.agents.base import Episode, TaskSpec
from ek.agents.policy import PolicyMetric

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Length mismatch:UserWarning"),
]


def test_ragas_evaluate() -> None:
    eps = [
        Episode(n, s, input="refund A1", output="refunded")
        for n, s in (("careful", CAREFUL), ("hasty", HASTY))
    ]
    ds = EvaluationDataset(
        samples=[to_ragas_sample(ep, TaskSpec(ep.task_id, gold="refunded")) for ep in eps]
    )
    metric = ek_ragas_metric(PolicyMetric(RULES), name="policy")
    result = evaluate(ds, metrics=[metric], show_progress=False)
    # Ragas' column: careful clean (1.0), hasty one violation (0.0): as called directly
    assert list(result.to_pandas()["policy"]) == [1.0, 0.0]
    assert [direct(CAREFUL).value, direct(HASTY).value] == [1.0, 0.0]
