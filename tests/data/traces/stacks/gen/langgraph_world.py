"""The world on LangGraph (``create_react_agent``), under a given LangChain instrumentation.

Each agent is ``create_react_agent(ScriptedChatModel, ToolNode(tools, handle_tool_errors=True),
name=...)``: the fake chat model answers from the world's script, with tool calls (ids included)
and ``usage_metadata`` (cache reads and reasoning in ``input_token_details`` /
``output_token_details``). The sub-agent tool ``notify(request)`` invokes the notifier's graph
and returns its last message. The handoff is LangGraph's documented pattern: a tool
``transfer_to_billing`` returning ``Command(goto="billing", graph=Command.PARENT)`` inside a
two-node parent graph (``support`` -> ``billing``); that run goes through the parent graph, the
others call the support agent's graph directly.

(Named ``langgraph_world`` so that it does not shadow the ``langgraph`` package.)
"""

# No `from __future__ import annotations`: LangChain reads the tools' annotations at run time,
# and the handoff tool's name types that only exist inside _graphs.
from collections.abc import Callable
from typing import Annotated, Any

import world

HANDOFF_RESULT = "Transferred to billing."


def stack(name: str, instrumentation: str) -> world.Stack:
    """The world as LangGraph expresses it."""
    return world.Stack(
        name=name,
        packages=("langgraph", "langchain-core", instrumentation, "opentelemetry-sdk"),
        handoff_result=HANDOFF_RESULT,
        notes=(
            "Tools run in ToolNode(handle_tool_errors=True): the raising tool's ToolMessage is "
            "LangChain's error text around the exception; the truth's error is the exception's "
            "message.",
            "The sub-agent tool is notify(request), which invokes the notifier's graph and "
            "returns its last message's text.",
            "The handoff tool transfer_to_billing returns Command(goto='billing', "
            "graph=Command.PARENT) with a ToolMessage whose text is the truth's result; the "
            "handoff run is invoked through a parent graph (nodes support, billing), the other "
            "runs through the support agent's graph alone.",
        ),
    )


def _model_class() -> type:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        """A chat model whose every turn comes from the world's script."""

        agent: str
        model_name: str
        stack: Any
        cursor: Any

        @property
        def _llm_type(self) -> str:
            return "scripted"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"model_name": self.model_name}

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, **kwargs: Any) -> ChatResult:
            i, step = self.cursor.next(self.agent)
            u = world.usage(self.agent, i)
            usage = {
                "input_tokens": u.input,
                "output_tokens": u.output,
                "total_tokens": u.input + u.output,
                "input_token_details": {"cache_read": u.cache_read},
                "output_token_details": {"reasoning": u.reasoning},
            }
            calls = (
                [] if isinstance(step, str) else self.cursor.calls(self.stack, self.agent, i, step)
            )
            message = AIMessage(
                content=step if isinstance(step, str) else "",
                tool_calls=[
                    {"name": c.name, "args": c.args, "id": cid, "type": "tool_call"}
                    for cid, c in calls
                ],
                usage_metadata=usage,
                response_metadata={"model_name": self.model_name},
            )
            return ChatResult(
                generations=[ChatGeneration(message=message)],
                llm_output={"model_name": self.model_name},
            )

    return ScriptedChatModel


def _graphs(st: world.Stack, cursor: world.Cursor) -> tuple[Any, Any]:
    """The support agent's graph and the parent graph (support -> billing) for the handoff."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import InjectedToolCallId, tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph.types import Command

    model_class = _model_class()

    def agent(name: str, extra: list[Any]) -> Any:
        model = model_class(agent=name, model_name=world.MODELS[name], stack=st, cursor=cursor)
        tools = [tool(world.TOOLS[t]) for t in world.AGENT_TOOLS[name]] + extra
        return create_react_agent(
            model,
            ToolNode(tools, handle_tool_errors=True),
            prompt=world.INSTRUCTIONS[name],
            name=name,
        )

    notifier = agent("notifier", [])

    @tool(world.NOTIFY, description=world.NOTIFY_DESCRIPTION)
    def notify(request: str) -> str:
        result = notifier.invoke({"messages": [("user", request)]})
        return str(result["messages"][-1].content)

    @tool(world.HANDOFF, description=world.HANDOFF_DESCRIPTION)
    def transfer_to_billing(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        message = ToolMessage(HANDOFF_RESULT, tool_call_id=tool_call_id, name=world.HANDOFF)
        return Command(goto="billing", graph=Command.PARENT, update={"messages": [message]})

    support = agent("support", [notify, transfer_to_billing])
    desk = (
        StateGraph(MessagesState)
        .add_node("support", support, destinations=("billing",))
        .add_node("billing", agent("billing", []))
        .add_edge(START, "support")
        .compile(name="support_desk")
    )
    return support, desk


def main(name: str, instrumentation: str, instrument: Callable[[Any], None]) -> int:
    """Generate stack ``name``: the world on LangGraph under ``instrument(provider)``."""
    world.setup_env()
    st = stack(name, instrumentation)
    provider = world.tracer_provider(st)
    instrument(provider)
    cursor = world.Cursor()
    support, desk = _graphs(st, cursor)

    def run(plan: world.RunPlan) -> Any:
        graph = desk if "billing" in plan.turns else support
        return graph.invoke({"messages": [("user", plan.prompt)]})["messages"][-1].content

    world.run_all(st, provider, cursor, run)
    return 0
