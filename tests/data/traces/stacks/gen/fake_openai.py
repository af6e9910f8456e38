"""A scripted OpenAI API on a mock transport: every model turn comes from the world's script.

The ``openai`` client (3.x, on ``httpx2``) is given ``httpx2.MockTransport(FakeOpenAI(...))``:
no network, a dummy key. Each request names its model; the model names its agent
(:data:`world.MODELS`), and the agent's next scripted turn is answered, as a Chat Completions
response (``/chat/completions``) or a Responses API response (``/responses``), with the turn's
usage including cached input and reasoning tokens in the API's own shape.
"""

from __future__ import annotations

import json
from typing import Any

from world import MODELS, Call, Cursor, Stack, Usage, usage

AGENT_OF_MODEL = {m: a for a, m in MODELS.items()}


class FakeOpenAI:
    """The mock transport's handler; ``cursor`` holds the current run's script."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.cursor = Cursor()

    def _turn(self, model: str) -> tuple[str, int, Any]:
        agent = AGENT_OF_MODEL[model]
        i, step = self.cursor.next(agent)
        return agent, i, step

    def _calls(self, agent: str, i: int, step: tuple[Call, ...]) -> list[tuple[str, Call]]:
        return self.cursor.calls(self.stack, agent, i, step)

    def __call__(self, request: Any) -> Any:
        import httpx2

        body = json.loads(request.content)
        agent, i, step = self._turn(body["model"])
        u = usage(agent, i)
        path = request.url.path
        if path.endswith("/chat/completions"):
            payload = self._chat(body["model"], agent, i, step, u)
        elif path.endswith("/responses"):
            payload = self._responses(body["model"], agent, i, step, u)
        else:
            raise AssertionError(f"unexpected request {request.method} {path}")
        return httpx2.Response(200, json=payload)

    def _chat(self, model: str, agent: str, i: int, step: Any, u: Usage) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        final_tool = self.stack.final_answer_tool
        if isinstance(step, str) and final_tool is not None:
            # The framework answers through a tool (smolagents' final_answer).
            step = (Call(final_tool, {"answer": step}),)
        if isinstance(step, str):
            message["content"] = step
            finish = "stop"
        else:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for cid, c in self._calls(agent, i, step)
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{agent}-{i}",
            "object": "chat.completion",
            "created": 1_800_000_000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": u.input,
                "completion_tokens": u.output,
                "total_tokens": u.input + u.output,
                "prompt_tokens_details": {"cached_tokens": u.cache_read},
                "completion_tokens_details": {"reasoning_tokens": u.reasoning},
            },
        }

    def _responses(self, model: str, agent: str, i: int, step: Any, u: Usage) -> dict[str, Any]:
        if isinstance(step, str):
            output: list[dict[str, Any]] = [
                {
                    "type": "message",
                    "id": f"msg_{agent}_{i}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step, "annotations": []}],
                }
            ]
        else:
            output = [
                {
                    "type": "function_call",
                    "id": f"fc_{cid}",
                    "call_id": cid,
                    "name": c.name,
                    "arguments": json.dumps(c.args),
                    "status": "completed",
                }
                for cid, c in self._calls(agent, i, step)
            ]
        return {
            "id": f"resp_{agent}_{i}",
            "object": "response",
            "created_at": 1_800_000_000,
            "status": "completed",
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": u.input,
                "input_tokens_details": {"cached_tokens": u.cache_read},
                "output_tokens": u.output,
                "output_tokens_details": {"reasoning_tokens": u.reasoning},
                "total_tokens": u.input + u.output,
            },
        }


def clients(fake: FakeOpenAI) -> tuple[Any, Any]:
    """A sync and an async ``openai`` client answered by ``fake`` (dummy key, no network)."""
    import httpx2
    import openai

    transport = httpx2.MockTransport(fake)
    sync = openai.OpenAI(api_key="sk-dummy-offline", http_client=httpx2.Client(transport=transport))
    aio = openai.AsyncOpenAI(
        api_key="sk-dummy-offline", http_client=httpx2.AsyncClient(transport=transport)
    )
    return sync, aio
