"""Judged success corrected with labels on the hosts (issue 38): an Inspect log whose success a
real model-graded scorer (``model_graded_qa``, its grader a scripted mockllm) decided, read by
``ek-agents report --success-scorer model_graded_qa --labels``; a pydantic-evals report whose
success a real ``LLMJudge`` (its model a scripted FunctionModel) decided, through
``summary_from_report`` and ``judged_run``. Each grader errs at known rates."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

from ek.agents.judge import corrected_success_rate, judged_run

N = 60
SENSITIVITY, SPECIFICITY = 0.9, 0.6  # the graders' error rates


def _u(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def answer(sample: str) -> str:
    """The agent's answer: right for about 60 % of the samples."""
    return f"RIGHT-{sample}" if _u(f"agent:{sample}") < 0.6 else f"WRONG-{sample}"


def grade(text: str) -> bool:
    """The grader's verdict on a prompt holding one submission: the truth (the submission is
    right) flipped at the known rates, by a draw fixed for the sample."""
    sample = re.search(r"(?:RIGHT|WRONG)-(s\d+)", text)
    assert sample is not None, text[:300]
    truth = f"WRONG-{sample.group(1)}" not in text
    u = _u(f"grader:{sample.group(1)}")
    return u < SENSITIVITY if truth else u >= SPECIFICITY


def _labels(n: int, seed: int) -> dict[tuple[str, int], bool]:
    ids = random.Random(seed).sample([f"s{i:02d}" for i in range(N)], n)
    return {(s, 0): answer(s).startswith("RIGHT") for s in ids}


def _truth() -> float:
    return sum(answer(f"s{i:02d}").startswith("RIGHT") for i in range(N)) / N


def _expected(labels: dict[tuple[str, int], bool]) -> Any:
    """The corrected rate straight from the estimator (the verdicts recomputed here)."""
    ids = [f"s{i:02d}" for i in range(N)]
    verdicts = [grade(answer(s) + " " + f"RIGHT-{s}") for s in ids]
    return corrected_success_rate(verdicts, [labels.get((s, 0)) for s in ids], tasks=ids)


def test_inspect_model_graded_scorer_with_a_labels_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import model_graded_qa
    from inspect_ai.solver import generate

    from ek.agents.cli import main

    os.environ.pop("INSPECT_TELEMETRY", None)

    def output(text: str) -> ModelOutput:
        # usage given: without it Inspect counts tokens with a tokenizer it would download
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        return out

    def agent(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        sample = next(m for m in input if isinstance(m, ChatMessageUser)).text.split()[-1]
        return output(answer(sample))

    def grader(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        return output(f"GRADE: {'C' if grade(chr(10).join(m.text for m in input)) else 'I'}")

    ids = [f"s{i:02d}" for i in range(N)]
    task = Task(
        dataset=[Sample(id=s, input=f"Solve {s}", target=f"RIGHT-{s}") for s in ids],
        solver=[generate()],
        scorer=model_graded_qa(model=get_model("mockllm/model", custom_outputs=grader)),
        model=get_model("mockllm/model", custom_outputs=agent),
        name="graded",
    )
    (log,) = eval(task, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success", log.error
    labels = _labels(30, seed=1)
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": y}) + "\n" for (t, i), y in labels.items()))  # fmt: skip
    args = ["report", log.location, "--success-scorer", "model_graded_qa", "--labels", str(path)]
    assert main([*args, "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)["judged"]["success"]
    expected = _expected(labels)
    # the grader saw the submission and the criterion: the same verdicts as recomputed here
    assert judged["judged_rate"] == pytest.approx(expected.judged_rate)
    assert judged["value"] == pytest.approx(expected.value, abs=1e-12)
    assert judged["interval"]["low"] <= _truth() <= judged["interval"]["high"]
    assert main(args) == 0
    assert "corrected success" in capsys.readouterr().out


def test_pydantic_evals_llm_judge_corrected(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_evals")
    from ek.adapters.pydantic_evals import summary_from_report
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import LLMJudge

    def judge_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text = "\n".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        verdict = grade(text)
        args = {"reason": "scripted", "pass": verdict, "score": float(verdict)}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    async def task(inputs: str) -> str:
        return answer(inputs)

    judge = LLMJudge(rubric="The answer is right", model=FunctionModel(judge_model))
    ds = Dataset(
        name="graded",
        cases=[Case(name=f"s{i:02d}", inputs=f"s{i:02d}") for i in range(N)],
        evaluators=[judge],
    )
    report = ds.evaluate_sync(task, progress=False)
    summary = summary_from_report(report, success="LLMJudge")
    labels = _labels(30, seed=2)
    j = judged_run(summary, labels)
    expected = _expected(labels)
    assert j.success.judged_rate == pytest.approx(expected.judged_rate)
    assert j.success.value == pytest.approx(expected.value, abs=1e-12)
    assert j.success.interval.contains(_truth())
