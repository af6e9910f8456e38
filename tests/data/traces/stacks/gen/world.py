"""The support world every stack runs, its script, and the truth written from that script.

One small customer-support world, the same for every instrumentation stack:

* agent ``support`` (model ``support-model``) with the tools ``lookup_order(order_id)`` (one
  argument), ``refund(order_id, amount)``, ``fetch_invoice(order_id)`` (always raises), a tool
  that runs the sub-agent ``notifier``, and a handoff to the agent ``billing``;
* agent ``notifier`` (model ``notifier-model``) with ``send_email(to, body)``;
* agent ``billing`` (model ``billing-model``) with ``refund(order_id, amount)``.

:data:`RUNS` scripts every model turn of every (task, trial): the calls the fake model asks for
(several in one turn are parallel calls) or its final text, with the token usage of each turn
from :func:`usage`. :func:`truth` writes what happened from this script alone (the calls, what
the tools returned, the output, the sub-agents, the tokens by kind and model, the verdict),
never from the spans. Each stack's generator says, in its :class:`Stack`, how its framework
names the sub-agent tool and what its handoff returns; the spans are then checked against
nothing here: ``not_recorded`` (what a stack leaves out of its spans) is the one part of the
truth a generator writes from inspecting its spans, with one line of evidence each.

Standard library only: every stack's virtual environment imports this file.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "ek-trace-truth/1"
#: Where the generated files go: tests/data/traces/stacks/.
OUT_DIR = Path(__file__).resolve().parent.parent

#: The harness span every run sits under, and its attributes (a user's own harness).
HARNESS_SPAN = "task"
TASK_ATTRIBUTE = "ek.task_id"
TRIAL_ATTRIBUTE = "ek.trial"
SUCCESS_ATTRIBUTE = "ek.success"

MODELS = {"support": "support-model", "notifier": "notifier-model", "billing": "billing-model"}
INSTRUCTIONS = {
    "support": "You are a support agent.",
    "notifier": "You e-mail customers.",
    "billing": "You handle refunds.",
}
#: The tools each agent has (the sub-agent tool and the handoff are the stacks' own).
AGENT_TOOLS = {
    "support": ("lookup_order", "refund", "fetch_invoice"),
    "notifier": ("send_email",),
    "billing": ("refund",),
}
#: The abstract names the script uses for the sub-agent call and the handoff; each stack maps
#: them to what its framework calls them (:class:`Stack`).
NOTIFY = "notify"
HANDOFF = "transfer_to_billing"

ORDERS = {
    "A1": {"order_id": "A1", "status": "delivered", "total": 30.0},
    "B2": {"order_id": "B2", "status": "shipped", "total": 12.0},
    "D4": {"order_id": "D4", "status": "shipped", "total": 45.5},
    "E5": {"order_id": "E5", "status": "delivered", "total": 12.5},
}
INVOICE_ERROR = "invoice service unavailable"


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its id and return its status and total."""
    return dict(ORDERS.get(order_id, {"order_id": order_id, "status": "unknown", "total": 0.0}))


def refund(order_id: str, amount: float) -> str:
    """Refund an amount on an order."""
    return f"refunded {amount} on {order_id}"


def fetch_invoice(order_id: str) -> str:
    """Fetch the invoice of an order (the invoice service is down: it always raises)."""
    raise RuntimeError(INVOICE_ERROR)


def send_email(to: str, body: str) -> str:
    """Send a short e-mail to a customer."""
    return f"queued for {to}"


TOOLS: dict[str, Callable[..., Any]] = {
    "lookup_order": lookup_order,
    "refund": refund,
    "fetch_invoice": fetch_invoice,
    "send_email": send_email,
}
#: Each tool's description and its parameters (name -> JSON type, description), for the stacks
#: that declare tools by schema rather than by a Python function.
TOOL_PARAMS: dict[str, dict[str, tuple[str, str]]] = {
    "lookup_order": {"order_id": ("string", "the order id, e.g. A1")},
    "refund": {
        "order_id": ("string", "the order id"),
        "amount": ("number", "the amount to refund"),
    },
    "fetch_invoice": {"order_id": ("string", "the order id")},
    "send_email": {"to": ("string", "the address"), "body": ("string", "the text")},
}
NOTIFY_DESCRIPTION = "Ask the notifier agent to e-mail a customer."
HANDOFF_DESCRIPTION = "Hand the conversation over to the billing agent."


@dataclass(frozen=True)
class Call:
    """One call a scripted model asks for: the tool's name and its arguments."""

    name: str
    args: dict[str, Any]


#: One model turn: the calls it asks for (several = parallel calls) or its final text.
Turn = tuple[Call, ...] | str


@dataclass(frozen=True)
class Usage:
    """Token usage of one model turn as the API reports it: input includes cache reads,
    output includes reasoning."""

    input: int
    cache_read: int
    output: int
    reasoning: int


def usage(agent: str, turn: int) -> Usage:
    """The scripted usage of ``agent``'s model turn ``turn`` (0-based) in a run.

    Later turns of ``support`` and ``billing`` hit the prompt cache; ``notifier`` never does and
    does not reason.
    """
    if agent == "support":
        return Usage(300 + 100 * turn, 0 if turn == 0 else 256, 40, 16)
    if agent == "billing":
        return Usage(200 + 60 * turn, 0 if turn == 0 else 128, 32, 8)
    return Usage(120 + 40 * turn, 0, 24, 0)


@dataclass(frozen=True)
class RunPlan:
    """One scripted (task, trial): the prompt, every agent's model turns, and the verdict."""

    task_id: str
    trial: int
    scenario: str
    prompt: str
    success: bool
    turns: dict[str, tuple[Turn, ...]]


def _c(name: str, **args: Any) -> Call:
    return Call(name, args)


_NOTIFY_REQUEST = "Tell dan@example.com that order D4 has shipped."
_NOTIFIER_TURNS: tuple[Turn, ...] = (
    (_c("send_email", to="dan@example.com", body="Your order D4 has shipped."),),
    "Sent the e-mail to dan@example.com.",
)

RUNS: tuple[RunPlan, ...] = (
    RunPlan(
        "refund-A1", 0, "right", "Please refund 5 on order A1.", True,
        {"support": (
            (_c("lookup_order", order_id="A1"),),
            (_c("refund", order_id="A1", amount=5.0),),
            "Refunded 5.0 on order A1.",
        )},
    ),
    RunPlan(
        "refund-A1", 1, "wrong_argument", "Please refund 5 on order A1.", False,
        {"support": (
            (_c("lookup_order", order_id="A1"),),
            (_c("refund", order_id="A1", amount=50.0),),
            "Refunded 50.0 on order A1.",
        )},
    ),
    RunPlan(
        "status-B2", 0, "right", "Where is my order B2?", True,
        {"support": ((_c("lookup_order", order_id="B2"),), "Order B2 has shipped.")},
    ),
    RunPlan(
        "status-B2", 1, "missed_call", "Where is my order B2?", False,
        {"support": ("Order B2 has been delivered.",)},
    ),
    RunPlan(
        "status-B2", 2, "extra_call", "Where is my order B2?", True,
        {"support": (
            (_c("lookup_order", order_id="B2"),),
            (_c("lookup_order", order_id="A1"),),
            "Order B2 has shipped.",
        )},
    ),
    RunPlan(
        "invoice-C3", 0, "tool_error", "Send me the invoice of order C3.", False,
        {"support": (
            (_c("fetch_invoice", order_id="C3"),),
            "Sorry, the invoice service is unavailable right now.",
        )},
    ),
    RunPlan(
        "compare-A1-B2", 0, "parallel_calls", "How are my orders A1 and B2 doing?", True,
        {"support": (
            (_c("lookup_order", order_id="A1"), _c("lookup_order", order_id="B2")),
            "A1 was delivered; B2 has shipped.",
        )},
    ),
    RunPlan(
        "compare-A1-B2", 1, "parallel_calls", "How are my orders A1 and B2 doing?", True,
        {"support": (
            (_c("lookup_order", order_id="A1"), _c("lookup_order", order_id="B2")),
            "A1 was delivered; B2 has shipped.",
        )},
    ),
    RunPlan(
        "notify-D4", 0, "sub_agent", "Order D4 shipped: please let Dan know.", True,
        {
            "support": (
                (_c("lookup_order", order_id="D4"),),
                (_c(NOTIFY, request=_NOTIFY_REQUEST),),
                "Dan has been told that order D4 has shipped.",
            ),
            "notifier": _NOTIFIER_TURNS,
        },
    ),
    RunPlan(
        "billing-E5", 0, "handoff", "I was charged twice for order E5; refund 12.5.", True,
        {
            "support": ((_c(HANDOFF),),),
            "billing": (
                (_c("refund", order_id="E5", amount=12.5),),
                "Refunded 12.5 on order E5.",
            ),
        },
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Stack:
    """How one stack's framework expresses the world (what differs from stack to stack).

    ``notify_tool`` / ``notify_arg``: the name of the tool that runs the notifier and its one
    argument (the Agents SDK's ``as_tool`` takes ``input``, smolagents' managed agents ``task``).
    ``notify_result``: what that tool returns for the notifier's final text. ``handoff_result``:
    what the handoff call returns (None: the framework cannot hand off; the handoff run is then
    listed in ``not_expressible``). ``final_answer_tool``: a tool the framework uses to return
    the answer (smolagents' ``final_answer``): not a world call, named in the notes.
    """

    name: str
    packages: tuple[str, ...]
    notify_tool: str = NOTIFY
    notify_arg: str = "request"
    notify_result: Callable[[str], Any] = str
    handoff_result: Any = None
    handoff_tool: str = HANDOFF
    final_answer_tool: str | None = None
    notes: tuple[str, ...] = ()
    runs: tuple[RunPlan, ...] = field(default=RUNS)

    def call(self, call: Call) -> Call:
        """The call as this framework's model asks for it (the sub-agent tool renamed)."""
        if call.name == NOTIFY:
            return Call(self.notify_tool, {self.notify_arg: call.args["request"]})
        if call.name == HANDOFF:
            return Call(self.handoff_tool, {})
        return call

    def expressible(self, plan: RunPlan) -> bool:
        """Whether this framework can run ``plan`` (no handoff without a handoff)."""
        return self.handoff_result is not None or "billing" not in plan.turns

    def spans_path(self) -> Path:
        return OUT_DIR / f"{self.name}.otlp.jsonl"

    def truth_path(self) -> Path:
        return OUT_DIR / f"{self.name}.truth.json"


def call_id(plan: RunPlan, agent: str, turn: int, j: int) -> str:
    """The id the fake model gives call ``j`` of ``agent``'s turn ``turn`` in ``plan``."""
    return f"call_{plan.task_id}_{plan.trial}_{agent}_{turn}_{j}"


def final_text(plan: RunPlan, agent: str) -> str:
    """The final text of ``agent`` in ``plan`` (its last turn)."""
    last = plan.turns[agent][-1]
    assert isinstance(last, str), f"{plan.task_id}/{plan.trial}: {agent} ends without text"
    return last


class Cursor:
    """Where each agent is in the current run's script: a fake model asks it for its next turn."""

    def __init__(self) -> None:
        self.plan: RunPlan | None = None
        self.next_turn: dict[str, int] = {}

    def start(self, plan: RunPlan) -> None:
        """Script the next run."""
        self.plan, self.next_turn = plan, {a: 0 for a in plan.turns}

    def next(self, agent: str) -> tuple[int, Turn]:
        """``agent``'s next turn: its index and what the model says."""
        assert self.plan is not None, "no run started"
        i = self.next_turn[agent]
        self.next_turn[agent] = i + 1
        return i, self.plan.turns[agent][i]

    def calls(
        self, stack: Stack, agent: str, i: int, step: tuple[Call, ...]
    ) -> list[tuple[str, Call]]:
        """The calls of ``agent``'s turn ``i`` as the framework's model asks for them, with ids."""
        assert self.plan is not None
        return [(call_id(self.plan, agent, i, j), stack.call(c)) for j, c in enumerate(step)]

    def finish(self) -> None:
        """Check the run used every scripted turn (the framework followed the script)."""
        assert self.plan is not None
        for agent, turns in self.plan.turns.items():
            done = self.next_turn[agent]
            assert done == len(turns), f"{self.plan.task_id}: {agent} used {done}/{len(turns)}"


# ----------------------------------------------------------------------------- the truth


@dataclass
class _Walk:
    """State while writing one run's truth: the next execution number and the tokens."""

    stack: Stack
    plan: RunPlan
    seq: int = 0
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)


def _add_tokens(into: dict[str, dict[str, int]], model: str, u: Usage) -> None:
    t = into.setdefault(
        model, {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0, "reasoning": 0}
    )
    t["input"] += u.input - u.cache_read  # uncached input
    t["cache_read"] += u.cache_read
    t["output"] += u.output  # reasoning included
    t["reasoning"] += u.reasoning


def _run_tool(name: str, args: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        return TOOLS[name](**args), None
    except Exception as exc:  # the world's raising tool: its message is the truth's error
        return None, str(exc)


def _agent_truth(walk: _Walk, agent: str, kind: str, started_by: dict[str, Any] | None) -> dict:
    """The truth of one agent's part of a run: its calls (and the sub-agents they start)."""
    plan, stack = walk.plan, walk.stack
    calls: list[dict[str, Any]] = []
    subs: list[dict[str, Any]] = []
    own_tokens: dict[str, dict[str, int]] = {}
    for turn, step in enumerate(plan.turns[agent]):
        u = usage(agent, turn)
        _add_tokens(walk.tokens, MODELS[agent], u)
        _add_tokens(own_tokens, MODELS[agent], u)
        if isinstance(step, str):
            continue
        for j, abstract in enumerate(step):
            call = stack.call(abstract)
            row: dict[str, Any] = {
                "seq": walk.seq,
                "turn": turn,
                "name": call.name,
                "arguments": call.args,
                "call_id": call_id(plan, agent, turn, j),
            }
            walk.seq += 1
            calls.append(row)
            if abstract.name == NOTIFY:
                sub = _agent_truth(walk, "notifier", "sub_agent", row)
                subs.append(sub)
                row["result"], row["error"] = stack.notify_result(sub["output"]), None
            elif abstract.name == HANDOFF:
                row["result"], row["error"] = stack.handoff_result, None
                subs.append(_agent_truth(walk, "billing", "handoff", row))
            else:
                row["result"], row["error"] = _run_tool(call.name, call.args)
    out: dict[str, Any] = {"name": agent, "model": MODELS[agent]}
    if started_by is not None:
        out["kind"] = kind
        out["started_by"] = {k: started_by[k] for k in ("seq", "name", "call_id")}
    out["calls"] = calls
    out["output"] = final_text(plan, agent) if isinstance(plan.turns[agent][-1], str) else None
    out["tokens"] = own_tokens
    if subs:
        out["sub_agents"] = subs
    return out


def run_truth(stack: Stack, plan: RunPlan) -> dict[str, Any]:
    """The truth of one run, from the script: see the README for the schema."""
    walk = _Walk(stack, plan)
    top = _agent_truth(walk, "support", "agent", None)
    handoff = [s for s in top.get("sub_agents", []) if s["kind"] == "handoff"]
    return {
        "task_id": plan.task_id,
        "trial": plan.trial,
        "scenario": plan.scenario,
        "input": plan.prompt,
        "agent": top["name"],
        "model": top["model"],
        "calls": top["calls"],
        # A handoff ends the run with the target's answer; else the top agent's final text.
        "output": handoff[-1]["output"] if handoff else top["output"],
        "sub_agents": top.get("sub_agents", []),
        "tokens": walk.tokens,
        "success": plan.success,
    }


def versions(packages: tuple[str, ...]) -> dict[str, str]:
    """The installed version of each distribution (what generated the spans)."""
    return {p: importlib.metadata.version(p) for p in packages}


def write_truth(stack: Stack, not_recorded: dict[str, str]) -> Path:
    """Write ``<stack>.truth.json`` from the script (and ``not_recorded``, from the spans)."""
    runs = [run_truth(stack, p) for p in stack.runs if stack.expressible(p)]
    skipped = [
        {"task_id": p.task_id, "trial": p.trial, "scenario": p.scenario}
        for p in stack.runs
        if not stack.expressible(p)
    ]
    doc = {
        "schema": SCHEMA,
        "stack": stack.name,
        "spans": stack.spans_path().name,
        "versions": versions(stack.packages),
        "harness": {
            "span": HARNESS_SPAN,
            "task_attribute": TASK_ATTRIBUTE,
            "trial_attribute": TRIAL_ATTRIBUTE,
            "success_attribute": SUCCESS_ATTRIBUTE,
        },
        "models": MODELS,
        "final_answer_tool": stack.final_answer_tool,
        "not_expressible": skipped,
        "not_recorded": not_recorded,
        "notes": list(stack.notes),
        "runs": runs,
    }
    path = stack.truth_path()
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- the harness


def tracer_provider(stack: Stack) -> Any:
    """A fresh TracerProvider writing OTLP JSON lines to ``<stack>.otlp.jsonl`` through
    OpenTelemetry's own file exporter (batched; flushed after every run: one line a run)."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    path = stack.spans_path()
    path.unlink(missing_ok=True)  # the exporter appends
    provider = TracerProvider(resource=Resource.create({"service.name": f"ek-{stack.name}"}))
    provider.add_span_processor(
        BatchSpanProcessor(
            FileSpanExporter(path),
            schedule_delay_millis=3_600_000,
            max_export_batch_size=4096,
            max_queue_size=8192,
        )
    )
    return provider


@contextmanager
def harness_span(provider: Any, plan: RunPlan) -> Iterator[Any]:
    """The user's harness span around one run (plain OpenTelemetry API), flushed after it."""
    tracer = provider.get_tracer("ek-fixture-harness")
    with tracer.start_as_current_span(
        HARNESS_SPAN, attributes={TASK_ATTRIBUTE: plan.task_id, TRIAL_ATTRIBUTE: plan.trial}
    ) as span:
        yield span
        span.set_attribute(SUCCESS_ATTRIBUTE, plan.success)
    provider.force_flush()


def read_spans(path: Path) -> list[dict[str, Any]]:
    """Every span of an OTLP JSON lines file, attributes as a plain dict (for the
    ``not_recorded`` evidence)."""
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    s["attrs"] = {a["key"]: _value(a["value"]) for a in s.get("attributes", [])}
                    spans.append(s)
    return spans


def _texts(span: dict[str, Any]) -> list[str]:
    """Every text a span holds: name, attribute values, status message, events."""
    out = [span["name"], str(span.get("status", {}).get("message", ""))]
    out += [json.dumps(v) if not isinstance(v, str) else v for v in span["attrs"].values()]
    out += [json.dumps(e) for e in span.get("events", [])]
    return out


def _counts(spans: list[dict[str, Any]], word: str) -> dict[str, int]:
    """Every integer attribute whose key contains ``word``, the largest value of each key."""
    found: dict[str, int] = {}
    for s in spans:
        for k, v in s["attrs"].items():
            if word in k.lower() and isinstance(v, int) and not isinstance(v, bool):
                found[k] = max(found.get(k, 0), v)
    return found


def _token_keys(spans: list[dict[str, Any]]) -> list[str]:
    return sorted({k for s in spans for k in s["attrs"] if "token" in k.lower()})


def _find_text(spans: list[dict[str, Any]], text: str) -> bool:
    return any(text in t for s in spans for t in _texts(s))


def not_recorded(stack: Stack, spans: list[dict[str, Any]]) -> dict[str, str]:
    """What the stack leaves out of its spans, each with one line of evidence.

    Searched in the spans themselves (the one part of the truth that is): the model's call ids,
    the raising tool's message, cached and reasoning token counts (an integer attribute whose key
    names them and holds more than 0: the script reports both on most turns), each run's final
    answer.
    """
    out: dict[str, str] = {}
    runs = [p for p in stack.runs if stack.expressible(p)]
    ids = [c["call_id"] for p in runs for c in run_truth(stack, p)["calls"]]
    if not any(_find_text(spans, i) for i in ids):
        out["call_ids"] = (
            f"none of the model's call ids (e.g. {ids[0]!r}) is in any span's name, "
            "attributes, status or events"
        )
    if not _find_text(spans, INVOICE_ERROR):
        tool = [s for s in spans if "fetch_invoice" in s["name"]] or [
            s for s in spans if s["attrs"].get("tool.name") == "fetch_invoice"
        ]
        seen = [
            f"{s['name']!r}: status {s.get('status', {})}, output "
            f"{str(s['attrs'].get('output.value', s['attrs'].get('gen_ai.tool.call.result')))!r}"
            for s in tool
        ]
        out["tool_error_text"] = (
            f"the tool's message {INVOICE_ERROR!r} is in no span; the failing call's span: "
            + ("; ".join(seen) if seen else "none named fetch_invoice")
        )
    for kind, word in (("cached_tokens", "cache"), ("reasoning_tokens", "reasoning")):
        if any(v > 0 for v in _counts(spans, word).values()):
            continue
        out[kind] = (
            f"no integer attribute with {word!r} in its key holds a count above 0, though the "
            f"fake API reported them; token attributes present: {_token_keys(spans)}"
        )
        if _find_text(spans, f"{word}_tokens") or _find_text(spans, f"{word}d_tokens"):
            out[kind] += " (the count survives only inside a raw response kept as text)"
    out.update(_structure(stack, spans))
    missing = [r for r in runs if not _find_text(spans, world_output(stack, r))]
    if missing:
        out["output"] = (
            f"the final answer of {[(r.task_id, r.trial) for r in missing]} is in no span"
        )
    return out


AGENT_NAME_KEYS = ("agent.name", "gen_ai.agent.name", "smolagents.name")


def _run_spans(spans: list[dict[str, Any]], scenario: str) -> list[dict[str, Any]]:
    """The spans of the first run of ``scenario`` (its trace, found by the harness span)."""
    plan = next(p for p in RUNS if p.scenario == scenario)
    trace = next(
        s["traceId"]
        for s in spans
        if s["attrs"].get(TASK_ATTRIBUTE) == plan.task_id
        and s["attrs"].get(TRIAL_ATTRIBUTE) == plan.trial
    )
    return [s for s in spans if s["traceId"] == trace]


def _ancestors(spans: list[dict[str, Any]], span: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {s["spanId"]: s for s in spans}
    out, parent = [], by_id.get(span.get("parentSpanId", ""))
    while parent is not None and parent not in out:
        out.append(parent)
        parent = by_id.get(parent.get("parentSpanId", ""))
    return out


def _names_agent(span: dict[str, Any], agent: str) -> bool:
    return any(span["attrs"].get(k) == agent for k in AGENT_NAME_KEYS) or span["name"] in (
        agent,
        f"{agent}.agent",
        f"{agent}.run",
        f"invoke_agent {agent}",
    )


def _agent_span(spans: list[dict[str, Any]], agent: str) -> dict[str, Any] | None:
    """The outermost span naming ``agent`` (a nested span of the same agent is not another)."""
    named = [s for s in spans if _names_agent(s, agent)]
    outer = [s for s in named if not any(a in named for a in _ancestors(spans, s))]
    return min(outer, key=lambda s: int(s["startTimeUnixNano"]), default=None)


def _structure(stack: Stack, spans: list[dict[str, Any]]) -> dict[str, str]:
    """Whether the sub-agent sits under its caller, and whether the handoff names its target."""
    out: dict[str, str] = {}
    run = _run_spans(spans, "sub_agent")
    sub, top = _agent_span(run, "notifier"), _agent_span(run, "support")
    if sub is None:
        out["sub_agent_structure"] = "no span of the sub_agent run names the notifier agent"
    elif top is not None and top not in _ancestors(run, sub):
        parent = (_ancestors(run, sub) or [{"name": None}])[0]["name"]
        out["sub_agent_structure"] = (
            f"the notifier's span {sub['name']!r} is not under the support agent's span "
            f"{top['name']!r} nor under the {stack.notify_tool!r} tool span: its parent is "
            f"{parent!r} (the caller is not recorded)"
        )
    if stack.handoff_result is None:
        return out
    run = _run_spans(spans, "handoff")
    hand = [s for s in run if "handoff" in s["name"].lower() or stack.handoff_tool == s["name"]]
    named = ("billing" in t.replace(stack.handoff_tool, "") for s in hand for t in _texts(s))
    if hand and not any(named):
        out["handoff_target"] = (
            f"the handoff span {hand[0]['name']!r} does not name the target agent "
            f"(attributes {sorted(hand[0]['attrs'])})"
        )
    return out


def world_output(stack: Stack, plan: RunPlan) -> str:
    """The run's final answer (the handoff target's when it hands off)."""
    return str(run_truth(stack, plan)["output"])


def _value(v: dict[str, Any]) -> Any:
    (kind, x), *_ = v.items()
    if kind == "arrayValue":
        return [_value(i) for i in x.get("values", [])]
    if kind == "kvlistValue":
        return {kv["key"]: _value(kv["value"]) for kv in x.get("values", [])}
    return int(x) if kind == "intValue" else x


def setup_env() -> None:
    """Offline, content captured, the frameworks' own telemetry off (before any import)."""
    import os

    os.environ.update(
        {
            "OPENAI_API_KEY": "sk-dummy-offline",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
            "TRACELOOP_TRACE_CONTENT": "true",
            "TRACELOOP_TELEMETRY": "false",
            "OTEL_SDK_DISABLED": "false",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false",
            "HF_HUB_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "DO_NOT_TRACK": "1",
        }
    )


def run_all(stack: Stack, provider: Any, cursor: Cursor, run: Callable[[RunPlan], Any]) -> None:
    """Run every expressible run of the script, each under its harness span (``run(plan)``
    returns the run's answer, checked against the script), then write the truth."""
    for plan in stack.runs:
        if not stack.expressible(plan):
            continue
        cursor.start(plan)
        with harness_span(provider, plan):
            answer = run(plan)
        cursor.finish()
        assert answer == world_output(stack, plan), (plan.task_id, answer)
    provider.shutdown()
    finish(stack)


#: Where this machine's paths begin, and what the committed files say instead: tracebacks in
#: exception events name the files of the repository, its virtual environments and Python.
MACHINE_PATHS = (
    (str(OUT_DIR.parents[3]), "<repo>"),
    (sys.base_prefix, "<python>"),
)


def scrub_machine_paths(path: Path) -> None:
    """Replace this machine's path prefixes in a written span file by placeholders.

    The prefixes are plain text inside JSON strings (no character of them needs escaping), so
    the file stays the exporter's JSON byte for byte elsewhere.
    """
    text = path.read_text(encoding="utf-8")
    for prefix, placeholder in MACHINE_PATHS:
        text = text.replace(prefix, placeholder)
    path.write_text(text, encoding="utf-8")


def finish(stack: Stack) -> None:
    """After the spans are written: scrub machine paths, write the truth (``not_recorded``
    from the spans)."""
    path = stack.spans_path()
    scrub_machine_paths(path)
    spans = read_spans(path)
    truth = write_truth(stack, not_recorded(stack, spans))
    print(f"{path.name}: {len(spans)} spans, {path.stat().st_size} bytes; {truth.name} written")
