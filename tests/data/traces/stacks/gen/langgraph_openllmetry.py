"""Generate ``langgraph_openllmetry``: LangGraph under ``opentelemetry-instrumentation-langchain`` (OpenLLMetry).

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-langgraph_openllmetry.txt``), from the repository root:
``.venv-traces/langgraph_openllmetry/bin/python tests/data/traces/stacks/gen/langgraph_openllmetry.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import langgraph_world


def instrument(provider: Any) -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    sys.exit(
        langgraph_world.main(
            "langgraph_openllmetry", "opentelemetry-instrumentation-langchain", instrument
        )
    )
