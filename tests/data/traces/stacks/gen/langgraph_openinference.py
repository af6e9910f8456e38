"""Generate ``langgraph_openinference``: LangGraph under ``openinference-instrumentation-langchain``.

Run in its own environment (``make traces-fixtures`` builds it from
``requirements-langgraph_openinference.txt``), from the repository root:
``.venv-traces/langgraph_openinference/bin/python tests/data/traces/stacks/gen/langgraph_openinference.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import langgraph_world


def instrument(provider: Any) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    sys.exit(
        langgraph_world.main(
            "langgraph_openinference", "openinference-instrumentation-langchain", instrument
        )
    )
