"""One work pool for a whole evaluation (adk/evaluate/pool.py, adk/evaluate/scheduler.py):
results in a fixed
order whatever order the work finishes in, suites and repeats interleaved, metrics right
after each case's inference, per-model concurrency limits, progress lines. Real google-adk
evaluation on counting stand-in models (tests/counting_models.py)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.evaluate.engine import EngineSettings
from adk_eval_action.adk.evaluate.pool import Job, ProgressSnapshot, WorkPool
from adk_eval_action.adk.evaluate.scheduler import CASE_RUNS_PER_SLOT, EngineHooks, evaluate_suites
from adk_eval_action.project.discovery import discover_suites
from support.counting_models import CALLS, register, thanks, weather, write_agent

register()

JUDGE = {
    "threshold": 0.5,
    "judge_model_options": {"judge_model": "counting-judge", "num_samples": 1},
}
CRITERIA = {"tool_trajectory_avg_score": 1.0, "final_response_match_v2": JUDGE}
CITIES = ["Paris", "London", "Tokyo"]


@pytest.fixture(autouse=True)
def clear_calls():
    CALLS.clear()
    yield
    CALLS.clear()


def _two_suites(root: Path, model_a: str = "counting-agent-a",
                model_b: str = "counting-agent-b") -> Path:
    """Suites ``alpha`` and ``beta``: 2 eval sets x 3 cases each (weather; a thanks case)."""
    for name, model in (("alpha", model_a), ("beta", model_b)):
        sets = {
            f"{name}_{n}": {
                f"{name}_{n}_{city.lower()}": [weather(city)] if city != "Tokyo"
                else [weather(city), thanks()]
                for city in CITIES
            }
            for n in (1, 2)
        }
        write_agent(root, name, sets, CRITERIA, model=model)
    return root


def _evaluate(root: Path, **settings: Any) -> list:
    suites = discover_suites([root], root)
    engine = EngineSettings(repo_root=root, **settings)
    evaluation = asyncio.run(evaluate_suites(suites, engine, EngineHooks(on_progress=None)))
    return evaluation.suites


_VOLATILE = {"session_id", "actual_invocations", "invocations", "details"}


def _stable(value: Any) -> Any:
    """A record dump without what differs between two runs of the same input: session
    ids, recorded invocations (timestamps, ids) and the durations metric."""
    if isinstance(value, dict):
        if value.get("metric_name") == "invocation_duration_v1":
            return "duration"
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def test_pool_returns_results_in_the_given_order_whatever_finishes_first() -> None:
    rng = random.Random(7)
    waits = [rng.uniform(0, 0.03) for _ in range(40)]
    finished: list[int] = []
    running = peak = 0

    def job(index: int) -> Job[int]:
        async def start() -> int:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(waits[index])
            running -= 1
            finished.append(index)
            return index

        return Job(start)

    results = asyncio.run(WorkPool(5).run([job(i) for i in range(40)]))
    assert results == list(range(40))
    assert finished != sorted(finished)  # they did finish out of order
    assert peak == 5


def test_progress_line_and_snapshots() -> None:
    line = ProgressSnapshot(done=120, total=600, errors=2, elapsed_s=45.0).line()
    # 45 s for 120 runs -> 480 left at 0.375 s each = 180 s.
    assert line == (
        "progress: 120/600 eval case runs (20%), 2 with errors, 45 s elapsed, about 3 min left"
    )
    seen: list[ProgressSnapshot] = []

    async def slow() -> bool:
        await asyncio.sleep(0.05)
        return True

    jobs = [Job(slow, failed=lambda ok: ok) for _ in range(4)]
    asyncio.run(WorkPool(2, total=4, on_progress=seen.append, interval_s=0.02).run(jobs))
    assert len(seen) >= 3 and seen[-1].done == 4 and seen[-1].errors == 4
    assert [s.done for s in seen] == sorted(s.done for s in seen)


def test_results_do_not_depend_on_the_order_work_finishes_in(tmp_path: Path) -> None:
    """Random model latency (two seeds): the same records, in the same order."""
    root = _two_suites(tmp_path)
    orders, records = [], []
    for seed in (1, 2):
        rng = random.Random(seed)

        def jitter(model: str, rng: random.Random = rng) -> float:
            return rng.uniform(0, 0.03)

        CALLS.clear(delay=jitter)
        suites = _evaluate(root, num_runs=2, parallelism=6)
        agent_calls = sorted((c for c in CALLS.calls if c.role == "agent"), key=lambda c: c.end)
        orders.append([(c.model, c.text) for c in agent_calls])
        records.append([_stable(s.model_dump(mode="json")) for s in suites])
    assert orders[0] != orders[1]  # the work finished in another order
    assert records[0] == records[1]
    alpha = records[0][0]
    assert [e["eval_set_id"] for e in alpha["eval_sets"]] == ["alpha_1", "alpha_2"]
    assert [c["eval_id"] for c in alpha["eval_sets"][0]["eval_cases"]] == [
        "alpha_1_paris", "alpha_1_london", "alpha_1_tokyo",
    ]
    for case in alpha["eval_sets"][0]["eval_cases"]:
        assert [r["run"] for r in case["runs"]] == [1, 2]
        assert all(r["status"] == "passed" for r in case["runs"])


def test_suites_repeats_and_metrics_interleave(tmp_path: Path) -> None:
    """Suite beta starts before alpha is done, and judge calls start before the last agent
    call: each case's metrics follow its own inference, not the whole run's."""
    root = _two_suites(tmp_path)
    CALLS.clear(delay=0.01)
    _evaluate(root, num_runs=2, parallelism=8)
    alpha = [c for c in CALLS.calls if c.model == "counting-agent-a"]
    beta = [c for c in CALLS.calls if c.model == "counting-agent-b"]
    judges = [c for c in CALLS.calls if c.role == "judge"]
    assert min(c.start for c in beta) < max(c.end for c in alpha)
    assert min(c.start for c in judges) < max(c.end for c in alpha + beta)
    # 2 suites x 6 cases x 2 runs, 2 agent calls per weather turn, 1 per thanks turn.
    assert len(alpha) == len(beta) == 2 * (2 * 2 + 3) * 2
    assert len(judges) == 2 * 6 * 2 * 1 + 2 * 2 * 2  # tokyo cases have two turns


def test_parallelism_bounds_the_model_calls_in_flight_across_everything(
    tmp_path: Path,
) -> None:
    """``parallelism`` counts model calls (agents' and judges', of every suite), not case
    runs: the pool keeps more case runs going (CASE_RUNS_PER_SLOT) so that one case's
    work between its calls does not leave a slot empty, yet the calls in flight never
    exceed it. With 24 case runs and calls that take 20 ms, the bound is reached."""
    root = _two_suites(tmp_path)
    CALLS.clear(delay=0.02)
    suites = _evaluate(root, num_runs=2, parallelism=3)
    assert CASE_RUNS_PER_SLOT > 1
    assert CALLS.max_in_flight() == 3
    # 2 suites x 6 cases x 2 runs: 2 agent calls per weather turn, 1 per thanks turn,
    # 1 judge call per turn (tokyo cases have two turns).
    assert CALLS.count("agent") == 2 * (2 * 2 + 3) * 2 * 2
    assert CALLS.count("judge") == 2 * 8 * 2
    assert all(not s.errors for s in suites)


def test_a_call_waiting_for_its_model_holds_no_slot_of_the_evaluation() -> None:
    """ModelGate: 4 calls of a model limited to 1 and 4 of an unlimited one, with 2 slots in
    all. The limited model's waiting calls take no slot (its model's slot is taken first),
    so the other model's first call starts alongside the limited model's first call; never
    more than 2 calls and never 2 of the limited model are in flight."""
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from adk_eval_action.adk.runtime.model_limits import ModelGate
    from support.counting_models import CountingAgentLlm

    async def call(llm: Any) -> None:
        text = types.Part(text="thanks")
        request = LlmRequest(contents=[types.Content(role="user", parts=[text])])
        async for _ in llm.generate_content_async(request):
            pass

    async def main() -> None:
        gate = ModelGate({"counting-agent-a": 1}, parallelism=2)
        a = gate.wrap(CountingAgentLlm(model="counting-agent-a"))
        b = gate.wrap(CountingAgentLlm(model="counting-agent-b"))
        await asyncio.gather(*[call(a) for _ in range(4)], *[call(b) for _ in range(4)])

    CALLS.clear(delay=0.02)
    asyncio.run(main())
    a_calls = [c for c in CALLS.calls if c.model == "counting-agent-a"]
    b_calls = [c for c in CALLS.calls if c.model == "counting-agent-b"]
    assert len(a_calls) == len(b_calls) == 4
    assert min(c.start for c in b_calls) < min(c.end for c in a_calls)
    assert CALLS.max_in_flight() == 2
    assert CALLS.max_in_flight("counting-agent-a") == 1


def test_a_calls_wait_for_a_slot_is_not_counted_against_its_timeout() -> None:
    """``call_timeout_s`` bounds the wait for the model's answer, not the wait for a slot
    (ModelGate): 8 calls of 0.1 s through one slot, with 0.5 s per attempt and no retries.
    The last waits ~0.7 s for the slot and still gets its answer; when the wait counted, the
    5th and later calls timed out and failed the run as a model outage."""
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    from adk_eval_action.adk.runtime.model_calls import ModelCalls, RetryingLlm
    from adk_eval_action.adk.runtime.model_limits import ModelGate
    from adk_eval_action.project.config import ModelRetrySettings
    from support.counting_models import CountingAgentLlm

    async def call(llm: Any) -> None:
        text = types.Part(text="thanks")
        request = LlmRequest(contents=[types.Content(role="user", parts=[text])])
        async for _ in llm.generate_content_async(request):
            pass

    calls = ModelCalls(ModelRetrySettings(attempts=1, call_timeout_s=0.5))

    async def main() -> list[BaseException | None]:
        gate = ModelGate({}, parallelism=1)
        llm = RetryingLlm.wrap(gate.wrap(CountingAgentLlm(model="counting-agent-a")), calls)
        return await asyncio.gather(*[call(llm) for _ in range(8)], return_exceptions=True)

    CALLS.clear(delay=0.1)
    outcomes = asyncio.run(main())
    assert outcomes == [None] * 8
    assert len(CALLS.calls) == 8 and CALLS.max_in_flight() == 1
    summary = calls.summary()
    assert (summary.calls, summary.retries, summary.failed_calls) == (8, 0, 0)


def test_model_limits_bound_calls_across_suites_and_judges(tmp_path: Path) -> None:
    root = _two_suites(tmp_path, "counting-agent", "counting-agent")
    CALLS.clear(delay=0.02)
    _evaluate(root, num_runs=2, parallelism=8)
    unlimited = CALLS.max_in_flight("counting-agent")
    CALLS.clear(delay=0.02)
    suites = _evaluate(root, num_runs=2, parallelism=8,
                       model_limits={"counting-agent": 2, "counting-judge": 1})
    assert unlimited > 2  # without the limit the pool runs more at once
    assert CALLS.max_in_flight("counting-agent") == 2
    assert CALLS.max_in_flight("counting-judge") == 1
    assert CALLS.max_in_flight() <= 8
    assert all(not s.errors for s in suites)


SLEEPY_AGENT = '''\
import time

from google.adk.agents import LlmAgent

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule


def lookup(query: str) -> str:
    """Looks something up, synchronously, for a long time."""
    time.sleep(1.5)
    return "found"


root_agent = LlmAgent(
    name="sleepy",
    model=ScriptedLlm(model="scripted-sleepy", rules=[
        ScriptRule(pattern=r"look up", tool_calls=[ScriptedToolCall(
            name="lookup", args={"query": "x"})], reply="Done: {result}"),
        ScriptRule(pattern=r"hello", reply="Hello!"),
    ]),
    instruction="You look things up.",
    tools=[lookup],
)
'''


def _turn(text: str, reply: str) -> dict[str, Any]:
    return {"user_content": {"role": "user", "parts": [{"text": text}]},
            "final_response": {"role": "model", "parts": [{"text": reply}]}}


def test_progress_lines_come_and_name_the_case_while_a_sync_tool_blocks_the_loop(
    tmp_path: Path,
) -> None:
    """A sync tool that sleeps blocks google-adk's event loop, and every case run with it;
    the progress snapshots still come (from their own thread) and name the case runs that
    have run for more than three intervals."""
    folder = tmp_path / "sleepy"
    (folder / "eval").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(SLEEPY_AGENT)
    cases = {"fast": [_turn("hello", "Hello!")], "slow": [_turn("look up x", "Done: found")]}
    (folder / "eval" / "s.evalset.json").write_text(json.dumps({
        "eval_set_id": "s", "eval_cases": [
            {"eval_id": k, "conversation": v,
             "session_input": {"app_name": "sleepy", "user_id": "u"}}
            for k, v in cases.items()]}))
    (folder / "eval" / "test_config.json").write_text(
        json.dumps({"criteria": {"response_match_score": 0.5}}))
    seen: list[ProgressSnapshot] = []
    suites = discover_suites([tmp_path], tmp_path)
    engine = EngineSettings(repo_root=tmp_path, parallelism=2)
    hooks = EngineHooks(on_progress=seen.append, progress_interval_s=0.1)
    evaluation = asyncio.run(evaluate_suites(suites, engine, hooks))
    (suite,) = evaluation.suites
    runs = {c.eval_id: c.runs[0].status.value for e in suite.eval_sets for c in e.eval_cases}
    assert runs == {"fast": "passed", "slow": "passed"}
    assert seen[-1].done == 2
    # During the 1.5 s the loop was blocked, the thread reported every 0.1 s.
    waiting = [s for s in seen if s.done < 2]
    assert len(waiting) >= 8, [s.line() for s in seen]
    named = {name for s in waiting for name, _ in s.long_running}
    assert "sleepy/s/slow run 1" in named
    # Under load the fast case can be named first (the blocked loop holds it too), so
    # look at the first snapshot that names the slow one.
    stuck = next(s for s in waiting
                 if any(name == "sleepy/s/slow run 1" for name, _ in s.long_running))
    assert all(seconds >= 0.3 for _, seconds in stuck.long_running)
    assert "; running for long: " in stuck.line() and "sleepy/s/slow run 1 (" in stuck.line()
