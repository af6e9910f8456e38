"""The DeepEval releases this adapter supports, checked when it is imported.

The floor is the oldest release ``make test-hosts`` passes (see ``docs/host_versions.md``).
Before 3.9.9 a test case has no ``metadata`` field and DeepEval drops it without a word: ek's
task ids, gold calls, costs and verdicts travel there, so Cost-of-Pass would come out NaN and
tool-call scores would miss their gold, a wrong number with no error. That case is refused twice:
by the version, and by the feature itself (:func:`missing_features`). The token-count fields
(``input_token_count`` / ``output_token_count``, from 4.0.9) are optional: ek's own counts
travel in ``metadata["cost"]`` either way (see ``_convert``).
"""

from __future__ import annotations

from ek.adapters._versions import HOSTS, load_host

__all__ = ["INSTALLED", "SUPPORTED", "missing_features"]

SUPPORTED = HOSTS["deepeval"]


def missing_features() -> list[str]:
    """What the installed DeepEval lacks: test cases that keep ek's ``metadata``."""
    from deepeval.test_case import ConversationalTestCase, LLMTestCase

    return [
        f"{cls.__name__}.metadata"
        for cls in (LLMTestCase, ConversationalTestCase)
        if "metadata" not in cls.model_fields
    ]


#: The installed host version, checked when the adapter is imported (refused outside
#: :data:`SUPPORTED` before the host is imported, then for what :func:`missing_features` finds).
INSTALLED = load_host("deepeval", "deepeval", "DeepEval", missing_features)
