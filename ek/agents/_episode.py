"""Layer B, the episode: what happened in one attempt at one task.

:class:`Step` (one tool call and what came back), :class:`Trajectory` (the steps, in order),
:class:`Cost` (token usage of one model in one role, by token kind), :class:`RunProvenance` (the
hidden evaluation variables a gate compares) and :class:`Episode` (all of it, plus the final
answer and state). The task and tool grammar (what it costs to get it wrong, Layer A) is in
:mod:`ek.agents._spec`; :mod:`ek.agents.base` re-exports both.

Every shape round-trips through ``to_dict()`` / ``from_dict()``; episodes also through JSONL
(:func:`write_episodes`, :func:`read_episodes`). Bad input raises ``ValueError`` or
``TypeError`` naming the field, what was expected and what was given.

Example:
    >>> ep = Episode(
    ...     task_id="t1",
    ...     trajectory=[Step("lookup", {"order_id": "A1"}, observation={"status": "paid"})],
    ...     output="refunded",
    ...     cost=Cost(input_tokens=1200, output_tokens=300, model="gpt-4o"),
    ... )
    >>> ep.trajectory.tools, ep.agent_cost.total_tokens
    (('lookup',), 1500)
    >>> Episode.from_dict(ep.to_dict()) == ep
    True
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, overload

from ek._validate import (
    check_keys,
    check_mapping,
    count,
    finite,
    nonempty_str,
    opt_str,
    plain_json,
    short_repr,
)
from ek.jsonio import readable_file, writable_file

__all__ = [
    "COMPARABILITY_KEYS",
    "TOKEN_KINDS",
    "Cost",
    "Episode",
    "RunProvenance",
    "Step",
    "Trajectory",
    "read_episodes",
    "write_episodes",
]

#: The token kinds every source is normalised to (see :class:`Cost`).
TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)

_set = object.__setattr__

#: Provenance fields that must agree for two runs to be compared by a regression gate.
COMPARABILITY_KEYS = ("simulator", "suite_version", "scaffold")


@dataclass(frozen=True)
class Step:
    """One tool call and what came back.

    Args:
        tool: The tool's name.
        args: The arguments (a str-keyed mapping; copied). Not JSON text: a call whose
            arguments are model output goes through the call normaliser,
            ``normalize_call({"name": tool, "arguments": text})``, which decodes valid JSON and
            reads anything else as a malformed call (scored as wrong, never raised on); a str
            here is a ``TypeError`` saying so.
        observation: What the tool returned (any JSON-like value).
        error: The error message when the call failed (``None`` when it succeeded).
        id: The call id when the source has one (used to pair calls with results).

    Example:
        >>> Step("search", {"q": "refund policy"}).to_dict()
        {'tool': 'search', 'args': {'q': 'refund policy'}}
    """

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    observation: Any = None
    error: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        # Hot path (bridges build thousands of steps): cheap exact-type checks first, the
        # general validators (with their error messages) only when something is off.
        tool, args = self.tool, self.args
        if type(tool) is not str or not tool:
            nonempty_str("Step.tool", tool)
        if type(args) is dict:
            for key in args:
                if type(key) is not str:
                    check_mapping(f"Step({short_repr(tool)}).args", args)
            _set(self, "args", args.copy())
        elif isinstance(args, (str, bytes)):
            raise TypeError(
                f"Step({short_repr(tool)}).args must be a mapping, got JSON text "
                f"{short_repr(args, 80)}: decode it with json.loads, or read the model's call "
                f"with ek.agents.toolcalls.normalize_call({{'name': {short_repr(tool)}, "
                "'arguments': text}) (unparseable text becomes a malformed call, scored as wrong)"
            )
        else:
            _set(self, "args", check_mapping(f"Step({short_repr(tool)}).args", args))
        if self.error is not None and type(self.error) is not str:
            opt_str(f"Step({short_repr(tool)}).error", self.error)
        if self.id is not None and type(self.id) is not str:
            opt_str(f"Step({short_repr(tool)}).id", self.id)

    @property
    def failed(self) -> bool:
        """True when the call recorded an error."""
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``None`` fields omitted)."""
        d: dict[str, Any] = {"tool": self.tool, "args": dict(self.args)}
        if self.observation is not None:
            d["observation"] = self.observation
        if self.error is not None:
            d["error"] = self.error
        if self.id is not None:
            d["id"] = self.id
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        """Inverse of :meth:`to_dict`. Unknown keys, a missing ``tool`` or bad types raise."""
        check_keys("Step", data, {"tool", "args", "observation", "error", "id"}, ("tool",))
        args = data.get("args", {})
        if args is None:
            args = {}
        plain_json("Step.args", args)
        plain_json("Step.observation", data.get("observation"))
        return cls(
            tool=data["tool"],
            args=args,
            observation=data.get("observation"),
            error=data.get("error"),
            id=data.get("id"),
        )


def _to_step(x: Any, i: int) -> Step:
    if isinstance(x, Step):
        return x
    if isinstance(x, Mapping):
        return Step.from_dict(x)
    raise TypeError(
        f"trajectory[{i}] must be a Step or a mapping, got {type(x).__name__}: {short_repr(x)}"
    )


class Trajectory(Sequence[Step]):
    """An immutable sequence of :class:`Step` s (the tool calls of an episode, in order).

    Accepts Steps or step dicts.

    Example:
        >>> t = Trajectory([Step("a"), {"tool": "b", "args": {"x": 1}}])
        >>> len(t), t.tools, t[1].args
        (2, ('a', 'b'), {'x': 1})
    """

    __slots__ = ("_steps",)

    def __init__(self, steps: Iterable[Step | Mapping[str, Any]] = ()) -> None:
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Iterable):
            raise TypeError(
                f"Trajectory expects an iterable of steps, got {type(steps).__name__}: {short_repr(steps)}"
            )
        given: tuple[Any, ...] = tuple(steps)
        for x in given:
            if type(x) is not Step:  # convert (and validate) only when needed
                given = tuple(_to_step(s, i) for i, s in enumerate(given))
                break
        self._steps: tuple[Step, ...] = given

    @overload
    def __getitem__(self, i: int) -> Step: ...
    @overload
    def __getitem__(self, i: slice) -> Trajectory: ...
    def __getitem__(self, i: int | slice) -> Step | Trajectory:
        if isinstance(i, slice):
            return Trajectory(self._steps[i])
        return self._steps[i]

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Trajectory):
            return self._steps == other._steps
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Trajectory({list(self._steps)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Trajectory, (self._steps,))

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps as a tuple."""
        return self._steps

    @property
    def tools(self) -> tuple[str, ...]:
        """The tool names, in order."""
        return tuple(s.tool for s in self._steps)

    @property
    def errors(self) -> tuple[Step, ...]:
        """The steps that failed."""
        return tuple(s for s in self._steps if s.error is not None)

    def to_list(self) -> list[dict[str, Any]]:
        """JSON-ready list of step dicts."""
        return [s.to_dict() for s in self._steps]

    @classmethod
    def from_list(cls, data: Any) -> Trajectory:
        """Inverse of :meth:`to_list`."""
        if not isinstance(data, (list, tuple)):
            raise TypeError(
                f"trajectory must be a list of steps, got {type(data).__name__}: {short_repr(data)}"
            )
        return cls(data)


#: The largest token count a Cost holds (beyond it floats are no longer exact).
_MAX_TOKENS = 2**53
_COST_KEYS = frozenset({*TOKEN_KINDS, "model", "role", "dollars"})


@dataclass(frozen=True)
class Cost:
    """Token usage of one model in one role, by token kind (priced asymmetrically).

    Token kinds, as every source is normalised: ``input_tokens`` = uncached input;
    ``cache_read_tokens`` and ``cache_write_tokens`` separate; ``output_tokens`` = all billed
    output *including* reasoning; ``reasoning_tokens`` = the informational subset of output
    (so ``reasoning_tokens <= output_tokens``).

    Args:
        input_tokens: Uncached input tokens.
        output_tokens: All billed output tokens, reasoning included.
        cache_read_tokens: Input tokens read from a prompt cache.
        cache_write_tokens: Input tokens written to a prompt cache.
        reasoning_tokens: The part of ``output_tokens`` spent reasoning. Every token count is
            at most 2**53 (a larger one is a ValueError: pricing it would overflow).
        model: The model that consumed them (used to look up a price).
        role: ``"agent"`` (default; what Cost-of-Pass counts), ``"simulator"``, ``"judge"``, ...
        dollars: A dollar amount *reported by the source* (e.g. a provider's bill), or ``None``.
            ek never invents it; :func:`ek.agents.cost.dollars` prefers a price you pass.

    Example:
        >>> c = Cost(input_tokens=10, output_tokens=5, model="m") + Cost(input_tokens=1, model="m")
        >>> c.input_tokens, c.total_tokens, c.model
        (11, 16, 'm')
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    model: str | None = None
    role: str = "agent"
    dollars: float | None = None

    def __post_init__(self) -> None:
        for k in TOKEN_KINDS:
            n = getattr(self, k)
            if type(n) is int and 0 <= n <= _MAX_TOKENS:
                continue  # the common case: already what the checks below would make of it
            n = count(f"Cost.{k}", n)
            if n > _MAX_TOKENS:  # beyond exact floats: pricing would overflow or round
                raise ValueError(f"Cost.{k} must be <= 2**53, got an int of {n.bit_length()} bits")
            object.__setattr__(self, k, n)
        if self.reasoning_tokens > self.output_tokens:
            raise ValueError(
                f"Cost.reasoning_tokens ({self.reasoning_tokens}) must be <= output_tokens "
                f"({self.output_tokens}): output_tokens counts all billed output, reasoning included"
            )
        opt_str("Cost.model", self.model)
        nonempty_str("Cost.role", self.role)
        if self.dollars is not None:
            try:
                usd = finite("Cost.dollars", self.dollars, minimum=0.0)
            except OverflowError:  # an int too large for a float
                bits = int(self.dollars).bit_length()
                msg = f"Cost.dollars must be finite, got an int of {bits} bits"
                raise ValueError(msg) from None
            object.__setattr__(self, "dollars", usd)

    @property
    def total_tokens(self) -> int:
        """Input + cache reads + cache writes + output (reasoning is inside output)."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )

    @property
    def is_zero(self) -> bool:
        """True when no token was used and no dollar was reported."""
        return self.total_tokens == 0 and not self.dollars

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        if self.is_zero and self.dollars is None:
            d = other.dollars
        elif other.is_zero and other.dollars is None:
            d = self.dollars
        elif self.dollars is None or other.dollars is None:
            d = None  # one side spent tokens without a known bill: the sum is unknown
        else:
            d = self.dollars + other.dollars
        return Cost(
            **{k: getattr(self, k) + getattr(other, k) for k in TOKEN_KINDS},
            model=self.model if self.model == other.model else None,
            role=self.role if self.role == other.role else "mixed",
            dollars=d,
        )

    def tokens(self) -> dict[str, int]:
        """``{token_kind: count}`` for the five kinds."""
        return {k: getattr(self, k) for k in TOKEN_KINDS}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (zero counts and ``None`` omitted; ``role`` always present)."""
        d: dict[str, Any] = {k: v for k, v in self.tokens().items() if v}
        if self.model is not None:
            d["model"] = self.model
        d["role"] = self.role
        if self.dollars is not None:
            d["dollars"] = self.dollars
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cost:
        """Inverse of :meth:`to_dict`."""
        check_keys("Cost", data, _COST_KEYS)
        return cls(**data)

    @classmethod
    def several(cls, value: Any) -> tuple[Cost, ...]:
        """What :attr:`Episode.cost` holds, from what it accepts: ``None``, one Cost, a mapping
        (:meth:`from_dict`) or a list of Costs and mappings (a store's record, say).

        Example:
            >>> [c.input_tokens for c in Cost.several([{"input_tokens": 3}, Cost(input_tokens=4)])]
            [3, 4]
        """
        if value is None or value == ():
            return ()
        if isinstance(value, Cost):
            return (value,)
        if isinstance(value, Mapping):
            return (cls.from_dict(value),)
        if isinstance(value, (list, tuple)):
            out = []
            for i, c in enumerate(value):
                if isinstance(c, Cost):
                    out.append(c)
                elif isinstance(c, Mapping):
                    out.append(cls.from_dict(c))
                else:
                    raise TypeError(
                        f"Episode.cost[{i}] must be a Cost or a mapping, got {type(c).__name__}: {short_repr(c)}"
                    )
            return tuple(out)
        raise TypeError(
            f"Episode.cost must be a Cost, a list of Costs or None, got {type(value).__name__}: {short_repr(value)}"
        )

    @staticmethod
    def sum(costs: Iterable[Cost]) -> Cost:
        """The sum of ``costs`` (an empty iterable gives ``Cost()``)."""
        tot = Cost()
        first = True
        for c in costs:
            tot = c if first else tot + c
            first = False
        return tot


@dataclass(frozen=True)
class RunProvenance:
    """The hidden evaluation variables of a run; gates refuse to compare runs where they differ.

    ``simulator``, ``suite_version`` and ``scaffold`` (:data:`COMPARABILITY_KEYS`) must agree for
    two runs to be comparable: a user simulator is itself an LLM, and a different suite or
    scaffold is a different experiment.

    Example:
        >>> a = RunProvenance(agent="bot", model="m1", suite_version="v1")
        >>> b = RunProvenance(agent="bot", model="m2", suite_version="v2")
        >>> a.incompatibilities(b)
        [('suite_version', 'v1', 'v2')]
    """

    agent: str | None = None
    model: str | None = None
    scaffold: str | None = None
    simulator: str | None = None
    suite_version: str | None = None
    seed: int | None = None
    ek_version: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for k in ("agent", "model", "scaffold", "simulator", "suite_version", "ek_version"):
            opt_str(f"RunProvenance.{k}", getattr(self, k))
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise TypeError(
                f"RunProvenance.seed must be an int or None, got {short_repr(self.seed)}"
            )
        plain_json("RunProvenance.seed", self.seed)  # an int JSON can print
        object.__setattr__(self, "extra", check_mapping("RunProvenance.extra", self.extra))
        plain_json("RunProvenance.extra", self.extra)  # what to_dict writes reads back
        if self.ek_version is None:
            from ek import __version__

            object.__setattr__(self, "ek_version", __version__)

    def comparability_key(self) -> tuple[str | None, ...]:
        """``(simulator, suite_version, scaffold)``: runs are comparable iff these are equal."""
        return tuple(getattr(self, k) for k in COMPARABILITY_KEYS)

    def incompatibilities(self, other: RunProvenance) -> list[tuple[str, Any, Any]]:
        """The comparability keys on which ``self`` and ``other`` differ, as (key, mine, theirs)."""
        return [
            (k, getattr(self, k), getattr(other, k))
            for k in COMPARABILITY_KEYS
            if getattr(self, k) != getattr(other, k)
        ]

    def signature(self) -> str:
        """A compact ``key:value|...`` string of every set field (report it with results)."""
        parts = [
            f"{k}:{getattr(self, k)}"
            for k in (
                "agent",
                "model",
                "scaffold",
                "simulator",
                "suite_version",
                "seed",
                "ek_version",
            )
            if getattr(self, k) is not None
        ]
        return "|".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``None`` omitted)."""
        d: dict[str, Any] = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "extra" and getattr(self, f.name) is not None
        }
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunProvenance:
        """Inverse of :meth:`to_dict`."""
        check_keys("RunProvenance", data, {f.name for f in fields(cls)})
        if "extra" in data:
            plain_json("RunProvenance.extra", data["extra"])
        return cls(**dict(data))


_EPISODE_FIELDS = (
    "task_id",
    "trajectory",
    "output",
    "final_state",
    "cost",
    "success",
    "run",
    "trial",
    "input",
    "error",
    "duration",
    "metadata",
)


@dataclass(frozen=True)
class Episode:
    """One attempt at one task: the tool calls, the final answer and state, and what it cost.

    Args:
        task_id: The task attempted (required, non-empty).
        trajectory: The tool calls in order (a :class:`Trajectory`, or a list of Steps/dicts).
        output: The final answer (any JSON-like value).
        final_state: The world state the episode left behind (what a state checker compares).
        cost: One :class:`Cost` or several (agent, simulator, judge, one per model); stored as a tuple.
        success: A verdict already recorded by an external harness, or ``None``.
        run: The :class:`RunProvenance` of the run this episode belongs to.
        trial: Which of the k trials of this task (0-based; an Inspect epoch is ``epoch - 1``).
        input: The task input, when recorded.
        error: Why the agent failed to produce an episode (raised, timed out), or ``None``.
        duration: Wall-clock seconds, when measured.
        metadata: Free JSON-like data.
    """

    task_id: str
    trajectory: Trajectory = field(default_factory=Trajectory)
    output: Any = None
    final_state: Any = None
    cost: tuple[Cost, ...] = ()
    success: bool | None = None
    run: RunProvenance | None = None
    trial: int = 0
    input: Any = None
    error: str | None = None
    duration: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_scalars()
        t = self.trajectory
        if t is None:
            t = Trajectory()
        elif not isinstance(t, Trajectory):
            t = Trajectory(t)
        object.__setattr__(self, "trajectory", t)
        object.__setattr__(self, "cost", Cost.several(self.cost))
        md = self.metadata
        if type(md) is dict and not md:
            object.__setattr__(self, "metadata", {})
        else:
            object.__setattr__(self, "metadata", check_mapping("Episode.metadata", md))

    def _check_scalars(self) -> None:
        """Check the single-valued fields (the id, verdict, provenance, trial, error, duration)."""
        if not isinstance(self.task_id, str) or not self.task_id:
            raise (TypeError if not isinstance(self.task_id, str) else ValueError)(
                f"Episode.task_id must be a non-empty str, got {short_repr(self.task_id)}"
            )
        if self.success is not None and not isinstance(self.success, bool):
            raise TypeError(
                f"Episode.success must be a bool or None, got {short_repr(self.success)}"
            )
        if self.run is not None and not isinstance(self.run, RunProvenance):
            raise TypeError(
                f"Episode.run must be a RunProvenance or None, got {type(self.run).__name__}"
            )
        if type(self.trial) is not int or self.trial < 0:
            object.__setattr__(self, "trial", count("Episode.trial", self.trial))
        if self.error is not None and type(self.error) is not str:
            opt_str("Episode.error", self.error)
        if self.duration is not None:
            object.__setattr__(
                self, "duration", finite("Episode.duration", self.duration, minimum=0.0)
            )

    # -- cost views
    def costs(self, role: str | None = None) -> tuple[Cost, ...]:
        """The costs, optionally only those of one ``role``."""
        return self.cost if role is None else tuple(c for c in self.cost if c.role == role)

    @property
    def agent_cost(self) -> Cost:
        """The summed cost of the ``"agent"`` role (what Cost-of-Pass counts)."""
        return Cost.sum(self.costs("agent"))

    def replace(self, **changes: Any) -> Episode:
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)

    # -- JSON
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (defaults omitted; ``task_id`` always present)."""
        d: dict[str, Any] = {"task_id": self.task_id}
        if len(self.trajectory):
            d["trajectory"] = self.trajectory.to_list()
        for k in ("output", "final_state", "success", "input", "error", "duration"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        if self.cost:
            d["cost"] = [c.to_dict() for c in self.cost]
        if self.run is not None:
            d["run"] = self.run.to_dict()
        if self.trial:
            d["trial"] = self.trial
        if self.metadata:
            d["metadata"] = dict(self.metadata)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        """Inverse of :meth:`to_dict`. Rejects unknown fields and values of the wrong type."""
        check_keys("Episode", data, set(_EPISODE_FIELDS), ("task_id",))
        kw: dict[str, Any] = dict(data)
        if "trajectory" in kw:
            kw["trajectory"] = (
                Trajectory.from_list(kw["trajectory"]) if kw["trajectory"] is not None else None
            )
        if kw.get("run") is not None:
            kw["run"] = RunProvenance.from_dict(kw["run"])
        for k in ("output", "final_state", "input", "metadata"):
            if k in kw:
                plain_json(f"Episode.{k}", kw[k])
        if kw.get("trial") is None:
            kw.pop("trial", None)
        if kw.get("metadata") is None:
            kw.pop("metadata", None)
        return cls(**kw)

    def to_json(self) -> str:
        """One compact JSON line that :meth:`from_json` reads back.

        Objects JSON cannot hold (a live tool's observation) are written as their ``repr``.

        Raises:
            ValueError: what :meth:`from_json` would refuse (NaN or infinity, nesting past 200
                levels, a cycle, an int too long to print): the line is read back through the
                reader's own validation before it is returned, never handed out unreadable.
        """
        try:
            line = json.dumps(
                self.to_dict(), ensure_ascii=False, separators=(",", ":"), default=_json_default
            )
            Episode.from_json(line)  # the reader's rule, applied to what was written
        except (ValueError, TypeError, RecursionError) as e:
            raise ValueError(
                f"Episode {short_repr(self.task_id, 100)} trial {self.trial} cannot be written "
                f"as JSON that reads back ({type(e).__name__}: {str(e)[:300]})"
            ) from None
        return line

    @classmethod
    def from_json(cls, line: str) -> Episode:
        """Parse one JSON line (see :meth:`to_json`)."""
        try:
            data = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            raise ValueError(f"Episode.from_json: not valid JSON ({e})") from None
        except RecursionError:
            raise ValueError("Episode.from_json: JSON nested too deeply to read") from None
        return cls.from_dict(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON constant {name} (NaN/Infinity) is not allowed in an episode")


def _json_default(obj: Any) -> Any:
    # Observations from live tools can be arbitrary objects; keep their text rather than fail.
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if isinstance(obj, MappingProxyType):
        return dict(obj)
    try:
        return repr(obj)
    except Exception:  # an object whose repr raises is written as its type
        return f"<{type(obj).__name__} object>"


def write_episodes(
    path: str | os.PathLike[str], episodes: Iterable[Episode], *, append: bool = False
) -> int:
    """Write episodes as JSON lines; returns how many were written.

    Each line is checked against :func:`read_episodes`' own validation before it is written:
    an episode the reader would refuse (NaN or infinity, nesting past 200 levels, a cycle, an
    int too long to print, a lone surrogate) raises ``ValueError`` and is not written (the
    lines before it are complete and readable). Objects that are not JSON (e.g. a live tool's
    observation) are written as their ``repr``.

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "eps.jsonl")
        >>> write_episodes(p, [Episode("a"), Episode("b", trial=1)])
        2
        >>> [e.task_id for e in read_episodes(p)]
        ['a', 'b']
    """
    target = writable_file("write_episodes", path)
    n = 0
    with open(target, "ab" if append else "wb") as fh:
        for ep in episodes:
            fh.write(_episode_line(ep))
            n += 1
    return n


def _episode_line(ep: Any) -> bytes:
    """One JSON line that :func:`read_episodes` reads back, or ``ValueError`` (nothing written).

    The line is read back through the reader's own validation before it is written, so a value
    the reader would refuse (NaN or infinity, nesting past its limit, a cycle, an int too long
    to print, a lone surrogate) is refused here instead of leaving an unreadable file.
    """
    if not isinstance(ep, Episode):
        raise TypeError(f"write_episodes expects Episode objects, got {type(ep).__name__}")
    try:
        return (ep.to_json() + "\n").encode("utf-8")  # to_json reads its line back
    except ValueError as e:
        raise ValueError(f"write_episodes: {e}") from None


def read_episodes(path: str | os.PathLike[str]) -> Iterator[Episode]:
    """Stream episodes from a JSON-lines file; a bad line raises ``ValueError`` with its number.

    ``path`` must be a str or ``os.PathLike`` (an int or bool, which ``open`` would take as a file
    descriptor, raises ``TypeError``).
    """
    return _read_episodes(readable_file("read_episodes", path))


def _read_episodes(path: str) -> Iterator[Episode]:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield Episode.from_json(line)
            except (ValueError, TypeError) as e:
                raise type(e)(f"{os.fspath(path)}:{i}: {e}") from None
