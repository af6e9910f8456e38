"""Generate ``agents_sdk_openinference``: the OpenAI Agents SDK under ``openinference-instrumentation-openai-agents``.

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-agents_sdk_openinference.txt``), from the repository root:
``.venv-traces/agents_sdk_openinference/bin/python tests/data/traces/stacks/gen/agents_sdk_openinference.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import agents_sdk


def instrument(provider: Any) -> None:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    sys.exit(
        agents_sdk.main(
            "agents_sdk_openinference", "openinference-instrumentation-openai-agents", instrument
        )
    )
