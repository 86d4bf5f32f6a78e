"""Cost you can see and cap (adk.runtime.spend, adk.evaluate.estimate, analysis.cost,
results.usage): tokens
and dollars of every model call, the agent's cost per eval case against the baseline, the
plan's estimate, and the budget, on the example agents through ADK's ``Gemini`` class and
google-genai against the session's fake Gemini API.

The independent sources: the tokens the fake API reported in each answer (its call log's
``usage``), ADK's own ``token_usage_v1`` (the agent's tokens per invocation), the fake's
count of requests that reached it, and dollars and means worked out here by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.compat import EFFICIENCY_METRICS_REPORTED
from adk_eval_action.project.config import ModelSettings
from adk_eval_action.results.usage import ModelUsage, merge_usage, usd_of
from adk_eval_action.testing.gemini_fake import Fault, GeminiFake
from conftest import CliRun, SharedRun, load_json

EVAL_SET = "travel_agent/eval/travel.evalset.json"  # 4 eval cases, 17 model calls
IN_USD, OUT_USD = 0.3, 2.5  # per million tokens
PRICED = (
    "models:\n"
    f"  gemini-2.5-flash: {{input_usd_per_1m_tokens: {IN_USD}, "
    f"output_usd_per_1m_tokens: {OUT_USD}}}\n"
)
SCENARIO_SET = {
    "eval_set_id": "trip_scenarios",
    "eval_cases": [{
        "eval_id": "planned_trip",
        "conversation_scenario": {
            "starting_prompt": "Hi, I am planning a trip.",
            "conversation_plan": "- What's the weather in Paris?\n"
            "- Please convert 100 USD to EUR.\n- What's the weather in Tokyo?",
        },
        "session_input": {"app_name": "travel_agent", "user_id": "u", "state": {}},
    }],
}
SCENARIO_CONFIG = {
    "criteria": {"rubric_based_final_response_quality_v1": {
        "threshold": 0.5, "judge_model_options": {"num_samples": 1},
        "rubrics": [{"rubric_id": "helps", "rubric_content": {"text_property": "It helps."}}],
    }},
    "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 10},
}


def _run(cli: CliRun, *args: str) -> Any:
    return cli("run", *args, "--results-out", "r.json", "--comment-out", "c.md",
               "--summary-out", "s.md")


def _reported(fake: GeminiFake) -> dict[str, tuple[int, int]]:
    """(input, output) tokens per role as the fake API reported them in its answers."""
    out: dict[str, tuple[int, int]] = {}
    for call in fake.calls:
        usage = call.usage or {}
        before = out.get(call.role, (0, 0))
        out[call.role] = (before[0] + usage.get("promptTokenCount", 0),
                          before[1] + usage.get("candidatesTokenCount", 0))
    return out


def _dollars(tokens_in: int, tokens_out: int) -> float:
    return (tokens_in * IN_USD + tokens_out * OUT_USD) / 1_000_000


def test_a_priced_models_tokens_and_dollars_are_what_the_api_reported(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    (example_repo / "adk-eval.yaml").write_text(PRICED, encoding="utf-8")
    gemini_api.clear_calls()

    result = _run(cli, EVAL_SET)

    assert result.exit_code == 0, result.output
    reported = _reported(gemini_api)
    assert set(reported) == {"agent", "judge"}
    tokens = sum(i + o for i, o in reported.values())
    usd = sum(_dollars(i, o) for i, o in reported.values())
    counts = load_json(example_repo / "r.json")["metadata"]["model_calls"]
    by_role = {u["role"]: u for u in counts["usage"]}
    for role, (tokens_in, tokens_out) in reported.items():
        assert (by_role[role]["input_tokens"], by_role[role]["output_tokens"]) == (
            tokens_in, tokens_out)
        assert by_role[role]["usd"] == pytest.approx(_dollars(tokens_in, tokens_out))
        assert by_role[role]["calls"] == sum(c.role == role for c in gemini_api.calls)
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    agent = sum(reported["agent"])
    line = f"Cost: {tokens:,} tokens, ${usd:.4f} (agent {agent:,}, judge {tokens - agent:,})."
    assert line in comment
    assert f"{tokens:,} tokens, ${usd:.4f}" in result.output  # the console's model calls line
    summary = (example_repo / "s.md").read_text(encoding="utf-8")
    i, o = reported["judge"]
    assert (f"| travel\\_agent | `gemini-2.5-flash` | judge | "
            f"{sum(c.role == 'judge' for c in gemini_api.calls)} | {i:,} | 0 | {o:,} | 0 | "
            f"{i + o:,} | ${_dollars(i, o):.4f} |") in summary


def test_a_model_without_a_price_shows_tokens_only_and_says_so(good_run: SharedRun):
    results = load_json(good_run.results)
    tokens = sum(
        u["input_tokens"] + u["output_tokens"] + u["thoughts_tokens"]
        for u in results["metadata"]["model_calls"]["usage"]
    )
    assert tokens > 0
    assert all("usd" not in u for u in results["metadata"]["model_calls"]["usage"])
    comment = good_run.output
    assert f"Cost: {tokens:,} tokens (agent" in comment
    assert "`gemini-2.5-flash`: tokens only (no price in adk-eval.yaml" in comment


@pytest.mark.skipif(not EFFICIENCY_METRICS_REPORTED,
                    reason="this google-adk has no token_usage_v1 to check against")
def test_each_case_runs_agent_tokens_are_adks_token_usage(good_run: SharedRun):
    """ADK's token_usage_v1 scores each invocation with the tokens its agent's model calls
    reported; a case run's agent tokens are their sum."""
    results = load_json(good_run.results)
    checked = 0
    for suite in results["suites"]:
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                for run in case["runs"]:
                    metric = next(m for m in run["metrics"]
                                  if m["metric_name"] == "token_usage_v1")
                    adk = sum(i["score"] for i in metric["invocations"])
                    ours = sum(u["input_tokens"] + u["output_tokens"] + u["thoughts_tokens"]
                               for u in run["usage"] if u["role"] == "agent")
                    assert ours == adk, case["eval_id"]
                    checked += 1
    assert checked == 5


def _agent_tokens_per_case(results: dict[str, Any]) -> dict[str, float]:
    out = {}
    for suite in results["suites"]:
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                runs = [sum(u["input_tokens"] + u["output_tokens"] + u["thoughts_tokens"]
                            for u in run["usage"] if u["role"] == "agent")
                        for run in case["runs"]]
                out[f"{eval_set['eval_set_id']}/{case['eval_id']}"] = sum(runs) / len(runs)
    return out


def test_the_agents_tokens_per_case_are_compared_with_the_baseline(
    regressed_run: SharedRun, cli: CliRun, tmp_path: Path
):
    """Over the eval cases both sides have: the mean per case of each side's agent tokens,
    and the change relative to the baseline's mean."""
    head = _agent_tokens_per_case(load_json(regressed_run.results))
    base = _agent_tokens_per_case(load_json(regressed_run.root / "adk-eval-results.json"))
    matched = sorted(set(head) & set(base))
    head_mean = sum(head[k] for k in matched) / len(matched)
    base_mean = sum(base[k] for k in matched) / len(matched)
    assert head_mean != base_mean  # the regressed agent answers differently

    result = cli("compare", str(regressed_run.results),
                 "--baseline", str(regressed_run.root / "adk-eval-results.json"),
                 "--json-out", str(tmp_path / "cmp.json"),
                 "--comment-out", str(tmp_path / "cmp.md"))

    assert result.exit_code == 1, result.output  # the regressed agent fails the gate
    [agent] = load_json(tmp_path / "cmp.json")["cost"]["agent"]
    assert agent["n_cases"] == len(matched)
    assert agent["baseline_tokens"] == pytest.approx(base_mean)
    assert agent["head_tokens"] == pytest.approx(head_mean)
    assert agent["relative"] == pytest.approx((head_mean - base_mean) / base_mean)
    assert agent["classification"] in {"regressed", "improved", "unchanged", "inconclusive"}
    change = f"{'+' if head_mean > base_mean else '−'}{abs(head_mean / base_mean - 1):.0%}"
    line = (f"Agent tokens per eval case: {round(head_mean):,} vs {round(base_mean):,} at the "
            f"baseline ({change}")
    assert line in (tmp_path / "cmp.md").read_text(encoding="utf-8"), result.output
    assert line in regressed_run.comment.read_text(encoding="utf-8")


def _scenario_suite(root: Path) -> str:
    folder = root / "travel_agent/scenarios"
    folder.mkdir()
    (folder / "trip.evalset.json").write_text(json.dumps(SCENARIO_SET), encoding="utf-8")
    (folder / "test_config.json").write_text(json.dumps(SCENARIO_CONFIG), encoding="utf-8")
    return "travel_agent/scenarios"


def test_max_model_calls_is_a_hard_cap_on_the_requests_that_reach_the_api(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """A conversation scenario (agent, user simulator and judge: 15 calls a run here, none
    counted by the plan) run twice at once under --max-model-calls 5: five requests reach
    the API, the run ends incomplete naming the budget, and every file is written."""
    suite = _scenario_suite(example_repo)
    gemini_api.clear_calls()

    result = _run(cli, suite, "--num-runs", "2", "--max-model-calls", "5")

    assert result.exit_code == 2, result.output
    assert len(gemini_api.calls) == 5
    results = load_json(example_repo / "r.json")
    assert results["complete"] is False
    [stop] = [e for e in results["errors"] if e["kind"] == "budget"]
    assert "max_model_calls 5 was reached (5 model call(s)" in stop["message"]
    counts = results["metadata"]["model_calls"]
    assert counts["refused_calls"] >= 1 and counts["calls"] <= 5
    runs = [r for s in results["suites"] for e in s["eval_sets"] for c in e["eval_cases"]
            for r in c["runs"]]
    assert len(runs) == 2 and all(r["error_kind"] == "budget" for r in runs)
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert "**ADK eval incomplete** (over budget)" in comment
    assert "max\\_model\\_calls 5" in comment
    assert (example_repo / "s.md").is_file()
    assert "error (budget)" in result.output and "gate INCOMPLETE (over budget)" in result.output


def test_max_tokens_stops_starting_calls_once_spent(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """Tokens are known when a call answers: with one call in flight at a time
    (parallelism 1), the first answer spends the budget of 1 token and no other call
    starts."""
    gemini_api.clear_calls()

    result = _run(cli, EVAL_SET, "--parallelism", "1", "--max-tokens", "1")

    assert result.exit_code == 2, result.output
    assert len(gemini_api.calls) == 1
    [stop] = [e for e in load_json(example_repo / "r.json")["errors"] if e["kind"] == "budget"]
    reported = sum(sum(pair) for pair in _reported(gemini_api).values())
    assert f"max_tokens 1 was reached (1 model call(s), {reported:,} tokens" in stop["message"]


def test_a_token_budget_holds_within_one_calls_size(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """Half the whole run's tokens as max_tokens, four calls in flight: each call reserves
    a high quantile of its model's answered calls before it starts and the call that would
    pass the budget is not made, so what the API reported ends within one call's size of
    the budget (it passed by the calls in flight: up to four whole calls)."""
    gemini_api.clear_calls()
    _run(cli, EVAL_SET)
    spent = sum(i + o for i, o in _reported(gemini_api).values())
    largest = max(sum(c.usage.values()) for c in gemini_api.calls if c.usage)
    gemini_api.clear_calls()
    cap = spent // 2

    result = _run(cli, EVAL_SET, "--parallelism", "4", "--max-tokens", str(cap))

    assert result.exit_code == 2, result.output
    used = sum(i + o for i, o in _reported(gemini_api).values())
    assert used <= cap + largest, (used, cap, largest)
    [stop] = [e for e in load_json(example_repo / "r.json")["errors"] if e["kind"] == "budget"]
    calls = len(gemini_api.calls)
    assert re.fullmatch(
        rf"the budget's max_tokens {cap:,} (would have been passed by the next model call, "
        rf"which reserves ~[\d,]+ tokens|was reached) \({calls} model call\(s\), "
        rf"{used:,} tokens spent\); \d+ model call\(s\) were not made, so the eval cases "
        "they belonged to have no scores", stop["message"]), stop["message"]


def test_unreported_tokens_never_read_as_zero(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """A model that answers without usage: the comment, the job summary, the console and
    the outputs say the tokens are unknown, how many calls reported none, never 0."""
    gemini_api.faults = [Fault(kind="no_usage")]
    gemini_api.clear_calls()

    result = _run(cli, EVAL_SET)

    calls = len(gemini_api.calls)
    assert calls and all(c.usage is None for c in gemini_api.calls)
    results = load_json(example_repo / "r.json")
    assert sum(u["unreported"] for u in results["metadata"]["model_calls"]["usage"]) == calls
    comment = (example_repo / "c.md").read_text()
    [line] = [x for x in comment.splitlines() if x.startswith("Cost:")]
    assert line == (f"Cost: unknown tokens (agent unknown, judge unknown); {calls} of {calls} "
                    "model calls reported no token usage, so the tokens are unknown; "
                    "`gemini-2.5-flash`: tokens only (no price in adk-eval.yaml's `models:`).")
    assert "0 tokens" not in comment
    summary = (example_repo / "s.md").read_text()
    assert "<summary>Cost: unknown tokens</summary>" in summary
    assert "| unknown | unknown | unknown | unknown | unknown |" in summary
    assert f"model calls: {calls}; tokens unknown (no call reported usage)" in result.output


def test_partly_unreported_tokens_are_a_floor(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    """Judges that report no usage beside agents that do: the total is a floor (≥), the
    judge's tokens unknown, and the line says how many calls reported none."""
    gemini_api.faults = [Fault(kind="no_usage", role="judge")]
    gemini_api.clear_calls()

    _run(cli, EVAL_SET)

    judged = sum(1 for c in gemini_api.calls if c.role == "judge")
    calls = len(gemini_api.calls)
    agent = sum(i + o for role, (i, o) in _reported(gemini_api).items() if role == "agent")
    assert judged and agent
    [line] = [x for x in (example_repo / "c.md").read_text().splitlines()
              if x.startswith("Cost:")]
    assert line == (
        f"Cost: ≥ {agent:,} tokens (agent {agent:,}, judge unknown); {judged} of {calls} "
        "model calls reported no token usage, so their tokens are unknown; "
        "`gemini-2.5-flash`: tokens only (no price in adk-eval.yaml's `models:`).")


def test_a_plan_over_the_budget_is_refused_before_any_call(
    example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    planned = cli("plan", EVAL_SET)
    found = re.search(r"~(\d+) agent model calls .*, ~(\d+) judge model calls", planned.output)
    assert found, planned.output
    calls = int(found[1]) + int(found[2])
    assert calls > 5
    gemini_api.clear_calls()

    result = _run(cli, EVAL_SET, "--max-model-calls", "5")

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []
    [error] = load_json(example_repo / "r.json")["errors"]
    assert error["kind"] == "budget"
    assert error["message"] == (
        f"refused before any model call: the plan needs ~{calls} model calls (agents' and "
        "judges', as `plan` counts them) and the budget allows max_model_calls 5")
    comment = (example_repo / "c.md").read_text(encoding="utf-8")
    assert "**ADK eval incomplete** (over budget)" in comment
    assert f"\\~{calls} model calls" in comment
    refused = cli("plan", EVAL_SET, "--max-model-calls", "5")
    assert refused.exit_code == 2 and "would refuse" in refused.output


def _run_tokens(run: dict[str, Any], priced: bool) -> float:
    prices = ModelSettings(input_usd_per_1m_tokens=IN_USD, output_usd_per_1m_tokens=OUT_USD)
    if not priced:
        return sum(u["input_tokens"] + u["output_tokens"] + u["thoughts_tokens"]
                   for u in run["usage"])
    return sum((u["input_tokens"] * prices.input_usd_per_1m_tokens
                + u["output_tokens"] * prices.output_usd_per_1m_tokens) / 1e6
               for u in run["usage"])


def _estimate(baseline: dict[str, Any], runs: int, priced: bool) -> float:
    """Each eval case's mean per run in the baseline, times the planned runs."""
    total = 0.0
    for eval_set in baseline["suites"][0]["eval_sets"]:
        for case in eval_set["eval_cases"]:
            per_run = [_run_tokens(r, priced) for r in case["runs"]]
            total += runs * sum(per_run) / len(per_run)
    return total


def test_plan_estimates_tokens_and_dollars_from_a_baseline(
    good_run: SharedRun, example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    (example_repo / "adk-eval.yaml").write_text(PRICED, encoding="utf-8")
    baseline = load_json(good_run.results)
    gemini_api.clear_calls()

    without = cli("plan", "travel_agent")
    result = cli("plan", "travel_agent", "--num-runs", "2", "--baseline", str(good_run.results))

    assert "estimated cost: not estimated" in without.output
    assert "--baseline" in without.output
    tokens, usd = round(_estimate(baseline, 2, False)), _estimate(baseline, 2, True)
    assert result.exit_code == 0, result.output
    assert (f"estimated cost: ~{tokens:,} tokens, ~${usd:.4f}, from the baseline's runs of "
            "the same eval cases (10 case run(s)) or of their suite (0)") in result.output
    assert gemini_api.calls == []
    over = cli("plan", "travel_agent", "--baseline", str(good_run.results), "--max-usd",
               f"{usd / 4:.6f}")
    assert over.exit_code == 2
    said = re.search(r"the plan is estimated at ~\$([0-9.]+) from the baseline's runs",
                     over.output)
    assert said and float(said[1]) == pytest.approx(usd / 2, abs=1e-4)
    # Another project's baseline: its usage is of other suites, and the plan says so.
    for suite in baseline["suites"]:
        suite["name"] = "elsewhere"
    (example_repo / "other.json").write_text(json.dumps(baseline), encoding="utf-8")
    other = cli("plan", "travel_agent", "--baseline", "other.json")
    assert ("estimated cost: not estimated (the baseline file's suites (elsewhere) are not "
            "these (travel_agent): pass the results file of this project's base branch)"
            ) in other.output, other.output


def test_run_refuses_a_plan_whose_estimate_passes_the_token_budget(
    good_run: SharedRun, example_repo: Path, cli: CliRun, gemini_api: GeminiFake
):
    baseline = load_json(good_run.results)
    tokens = round(_estimate(baseline, 1, False))
    gemini_api.clear_calls()

    result = _run(cli, "travel_agent", "--baseline", str(good_run.results),
                  "--max-tokens", str(tokens // 2))

    assert result.exit_code == 2, result.output
    assert gemini_api.calls == []
    assert (f"the plan is estimated at ~{tokens:,} tokens from the baseline's runs and the "
            f"budget allows max_tokens {tokens // 2:,}") in result.output


def test_dollars_follow_the_price_rule():
    """By hand: 1,000,000 input tokens of which 400,000 cached, 10,000 output and 5,000
    thought tokens at $1 / $0.25 cached / $10 per million: 0.6 + 0.1 + 0.15."""
    usage = ModelUsage(model="m", role="agent", calls=3, input_tokens=1_000_000,
                       cached_tokens=400_000, output_tokens=10_000, thoughts_tokens=5_000)
    price = ModelSettings(input_usd_per_1m_tokens=1.0, output_usd_per_1m_tokens=10.0,
                          cached_input_usd_per_1m_tokens=0.25)
    assert usd_of(usage, price) == pytest.approx(0.85)
    uncached = ModelSettings(input_usd_per_1m_tokens=1.0, output_usd_per_1m_tokens=10.0)
    assert usd_of(usage, uncached) == pytest.approx(1.0 + 0.15)
    assert usd_of(usage, None) is None
    [merged] = merge_usage([usage.model_copy(update={"usd": 1.0})],
                           [usage.model_copy(update={"usd": None})])
    assert (merged.calls, merged.tokens, merged.usd) == (6, 2 * 1_015_000, None)


@pytest.mark.parametrize(("entry", "field"), [
    ({"output_usd_per_1m_tokens": 2.5}, "input_usd_per_1m_tokens is missing"),
    ({"input_usd_per_1m_tokens": 0.3}, "output_usd_per_1m_tokens is missing"),
    ({"input_usd_per_1m_tokens": -1, "output_usd_per_1m_tokens": 1}, "greater than or equal"),
])
def test_a_price_that_cannot_price_is_refused_naming_the_model(
    example_repo: Path, cli: CliRun, entry: dict[str, float], field: str
):
    config = {"models": {"gemini-2.5-flash": entry}}
    (example_repo / "adk-eval.yaml").write_text(json.dumps(config), encoding="utf-8")

    result = cli("plan", "travel_agent")

    assert result.exit_code == 2
    assert "models.gemini-2.5-flash" in result.output and field in result.output


def _side(agent: dict[str, list[int]], judge_tokens: int) -> Any:
    """A results side whose runs used ``agent[eval_id][run]`` agent tokens (half input,
    half output, $1 per million) and ``judge_tokens`` judge tokens each."""
    from adk_eval_action.results.model import ModelCallCounts
    from support.results_builder import metric, results

    side = results({eval_id: [[metric("response_match_score", 1.0)] for _ in runs]
                    for eval_id, runs in agent.items()})
    for case in side.suites[0].eval_sets[0].eval_cases:
        for run, used in zip(case.runs, agent[case.eval_id], strict=True):
            run.usage = [
                ModelUsage(model="m", role="agent", calls=2, input_tokens=used // 2,
                           output_tokens=used - used // 2, usd=used / 1e6),
                ModelUsage(model="j", role="judge", calls=1, input_tokens=judge_tokens),
            ]
    side.metadata.model_calls = ModelCallCounts(usage=merge_usage(*(
        r.usage or [] for c in side.suites[0].eval_sets[0].eval_cases for r in c.runs)))
    return side


def test_the_agents_cost_per_case_is_tested_as_a_metric_is():
    """12 eval cases x 2 runs; the head's agent uses 30 tokens more in every run, its
    judges any number: +30 per case, called regressed; a run whose agent reported no usage
    is left out, and so is a case with no such run on one side."""
    from support.tables import compare

    base = {f"c{i}": [100 + i, 102 + i] for i in range(12)}
    head = {k: [v + 30 for v in runs] for k, runs in base.items()}
    base_side, head_side = _side(base, 5000), _side(head, 9)
    [c11] = [c for c in head_side.suites[0].eval_sets[0].eval_cases if c.eval_id == "c11"]
    for run in c11.runs:
        assert run.usage is not None
        run.usage[0].unreported = 1

    [agent] = compare(head_side, base_side, "b").cost.agent

    kept = range(11)
    assert agent.n_cases == 11
    assert agent.baseline_tokens == pytest.approx(sum(101 + i for i in kept) / 11)
    assert agent.head_tokens == pytest.approx(sum(131 + i for i in kept) / 11)
    assert agent.delta == pytest.approx(30)
    assert agent.relative == pytest.approx(30 / (sum(101 + i for i in kept) / 11))
    assert agent.classification == "regressed"
    assert agent.interval is not None and agent.interval.low is not None
    assert agent.interval.low > 0
    assert agent.head_usd == pytest.approx(agent.head_tokens / 1e6)


@pytest.mark.parametrize(("reported", "counted"), [
    # Gemini: thoughts beside the answer's tokens; the total is all three.
    ({"prompt_token_count": 100, "cached_content_token_count": 40,
      "candidates_token_count": 30, "thoughts_token_count": 20, "total_token_count": 150},
     (100, 40, 30, 20)),
    # OpenAI through LiteLLM (google-adk's LiteLlm): completion_tokens include the reasoning.
    ({"prompt_token_count": 100, "candidates_token_count": 50, "thoughts_token_count": 20,
      "total_token_count": 150}, (100, 0, 30, 20)),
    # A tool-use prompt (Gemini's code execution, search) is input.
    ({"prompt_token_count": 100, "tool_use_prompt_token_count": 7,
      "candidates_token_count": 5, "total_token_count": 112}, (107, 0, 5, 0)),
])
def test_each_token_is_counted_once(reported: dict[str, int], counted: tuple[int, ...]):
    from google.genai import types

    from adk_eval_action.adk.runtime.spend import usage_of

    usage = usage_of("m", "agent", types.GenerateContentResponseUsageMetadata(**reported))
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens,
            usage.thoughts_tokens) == counted
    assert usage.tokens == reported["total_token_count"]
