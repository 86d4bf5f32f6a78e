"""A cost plan before spending: what an evaluation will ask of the models, counted without
calling any.

Counted from the eval sets and the eval config, as ADK would run them:

* **Agent model calls**, per expected invocation: one call for the reply, plus one for
  each model turn that calls tools. With ADK's legacy ``intermediate_data`` the tools of a
  turn are taken to be called in one model response (parallel function calling, as
  ``ScriptedLlm`` and Gemini do for independent tools), so an invocation with tool uses
  costs 2 calls, and each ``intermediate_responses`` entry (a sub-agent's reply) one more;
  ``agent_calls_max`` counts one call per tool use instead (tools called one at a time).
  With ``invocation_events`` each event holding a function call is one call. A
  ``conversation_scenario`` case has no expected turns: it is counted apart, not estimated.
  When the agent was imported (``plan``), each call is a call of the model of the agent
  that makes it, as the agent tree says (:mod:`adk_eval_action.adk.evaluate.call_models`:
  a pipeline's sub-agents each reply, an agent used as a tool replies to its caller), so
  a workflow agent's calls can outnumber the expected turns' count.
* **Judge calls** (google.adk.evaluation.llm_as_judge and its subclasses): per-invocation
  judges (``final_response_match_v2``, ``rubric_based_final_response_quality_v1``,
  ``rubric_based_tool_use_quality_v1``) call the judge ``num_samples`` times per judged
  invocation (a rubric metric judges only the turns that have rubrics of its type, unless
  its criterion has rubrics: adk.evaluate.recording);
  ``rubric_based_multi_turn_trajectory_quality_v1``
  ``num_samples`` times per case (the last turn, with the whole dialogue);
  ``hallucinations_v1`` twice per invocation with a final response (segmenter, then
  validator; intermediate replies too when ``evaluate_intermediate_nl_responses``).
  Metrics evaluated by Vertex AI, custom metrics and ``per_turn_user_simulator_quality_v1``
  are listed as not estimated. A google-adk metric not named here (one a later google-adk
  adds, such as ``tool_parameter_match``, google/adk-python#6726) is read from its
  criterion: without judge model options it calls no model (:func:`model_free`); with them
  its judge calls are listed as not estimated.

The wall time estimate is model time only (add the start-up, about the time to import
google-adk): each case run is a chain of calls one after another (its agent calls, then
each judge metric's calls in rounds of ``parallelism_limit``); chains share ``parallelism``
slots, and a model with ``max_concurrency`` takes at least its calls × latency ÷ limit. The
estimate is the largest of: all chains ÷ parallelism, the longest chain, and each limited
model's bound.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from google.adk.evaluation.eval_case import IntermediateData, Invocation, InvocationEvents
from google.adk.evaluation.eval_config import get_eval_metrics_from_config
from google.adk.evaluation.eval_metrics import EvalMetric, JudgeModelOptions
from google.adk.evaluation.eval_set import EvalCase
from pydantic import BaseModel, Field

from adk_eval_action.adk.evaluate.call_models import AgentTree
from adk_eval_action.adk.files.convert import judge_model
from adk_eval_action.adk.files.criteria import criterion_field, criterion_rubrics, judge_options
from adk_eval_action.adk.files.evalconfig import LoadedEvalConfig
from adk_eval_action.adk.files.rubrics import RUBRIC_METRIC_TYPES
from adk_eval_action.project.layout import EFFICIENCY_METRICS
from adk_eval_action.results.agenttree import AgentRecord

PER_INVOCATION_JUDGES = frozenset(
    {
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "rubric_based_tool_use_quality_v1",
    }
)
PER_CASE_JUDGES = frozenset({"rubric_based_multi_turn_trajectory_quality_v1"})
VERTEX_METRICS = frozenset(
    {
        "response_evaluation_score",
        "safety_v1",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    }
)
MODEL_FREE_METRICS = frozenset(
    {
        "tool_trajectory_avg_score",
        "response_match_score",
        "tool_call_count_v1",
        "inference_call_count_v1",
        "token_usage_v1",
        "invocation_duration_v1",
    }
)


class CasePlan(BaseModel):
    """One eval case's cost per run: ``turns`` (expected invocations; 0 for a
    conversation scenario, whose calls are not estimated: ``scenario``), agent model calls
    (``agent_calls``, and ``agent_calls_max`` when tools are called one at a time),
    ``judge_calls`` by judge model name, and ``chain`` (calls made one after another: the
    agent's, then each judge metric's rounds)."""

    suite: str
    eval_set_id: str
    eval_id: str
    turns: int
    scenario: bool = False
    agent_calls: int = 0
    agent_calls_max: int = 0
    agent_models: dict[str, int] = Field(default_factory=dict)
    judge_calls: dict[str, int] = Field(default_factory=dict)
    chain: int = 0
    #: False when a turn lists no expected tool calls (no ``intermediate_data``, as
    #: agent-starter-pack's eval sets): its tool turns are not counted, so
    #: ``agent_calls_max`` is no upper bound.
    tools_known: bool = True


class SuitePlan(BaseModel):
    """One suite's plan: ``num_runs`` runs of each case in ``cases``; ``eval_sets``
    counted; ``metrics`` of the eval config; ``agent_models`` (the agent tree's model
    names, when the agent was imported); ``not_estimated``: metrics whose calls are not
    counted, each with why."""

    name: str
    num_runs: int
    eval_sets: int
    metrics: list[str] = Field(default_factory=list)
    agent_models: list[str] = Field(default_factory=list)
    cases: list[CasePlan] = Field(default_factory=list)
    not_estimated: dict[str, str] = Field(default_factory=dict)
    #: The metrics that call no model (:func:`model_free`).
    model_free: list[str] = Field(default_factory=list)

    @property
    def case_runs(self) -> int:
        """Cases × runs."""
        return len(self.cases) * self.num_runs

    def renamed(self, name: str) -> SuitePlan:
        """This plan as suite ``name``'s (a suite of the same agent and files)."""
        return self.model_copy(update={"name": name, "cases": [
            c.model_copy(update={"suite": name}) for c in self.cases]})

    @property
    def gated_metrics(self) -> list[str]:
        """The metrics a comparison tests as gated (ADK's efficiency metrics are
        informational)."""
        return [m for m in self.metrics if m not in EFFICIENCY_METRICS]


class Plan(BaseModel):
    """What an evaluation will cost (module docstring). ``latency_s``: seconds per model
    call assumed by :meth:`wall_s`; ``model_limits``: ``max_concurrency`` per model name."""

    suites: list[SuitePlan] = Field(default_factory=list)
    parallelism: int = 4
    latency_s: float = 1.0
    model_limits: dict[str, int] = Field(default_factory=dict)

    def _runs(self) -> Iterable[tuple[SuitePlan, CasePlan]]:
        for suite in self.suites:
            for case in suite.cases:
                yield suite, case

    @property
    def case_runs(self) -> int:
        """Eval case runs of all suites."""
        return sum(s.case_runs for s in self.suites)

    @property
    def agent_calls(self) -> int:
        """Agent model calls of all case runs (tools of a turn in one response)."""
        return sum(c.agent_calls * s.num_runs for s, c in self._runs())

    @property
    def agent_calls_max(self) -> int:
        """Agent model calls when every tool is called in a response of its own."""
        return sum(c.agent_calls_max * s.num_runs for s, c in self._runs())

    @property
    def scenario_runs(self) -> int:
        """Case runs of conversation scenario cases, whose calls are not estimated."""
        return sum(s.num_runs for s, c in self._runs() if c.scenario)

    @property
    def unbounded_cases(self) -> int:
        """Eval cases (not scenarios) that list no expected tool calls for some turn: no
        upper bound of their agent calls is known."""
        return sum(1 for _, c in self._runs() if not c.scenario and not c.tools_known)

    @property
    def judge_calls(self) -> int:
        """Judge model calls of all case runs (estimated metrics only)."""
        return sum(sum(c.judge_calls.values()) * s.num_runs for s, c in self._runs())

    def calls_by_model(self) -> dict[str, int]:
        """Calls per model name: judges by name; the agent's calls under the model of the
        agent that makes each (:attr:`CasePlan.agent_models`), else, when the agent tree is
        not known, under ``"agent"``."""
        calls: dict[str, int] = {}
        for suite, case in self._runs():
            if case.scenario:  # not estimated, not zero
                continue
            for model, count in (case.agent_models or {"agent": case.agent_calls}).items():
                calls[model] = calls.get(model, 0) + count * suite.num_runs
            for judge, count in case.judge_calls.items():
                calls[judge] = calls.get(judge, 0) + count * suite.num_runs
        return calls

    def wall_s(self) -> float:
        """Estimated seconds of model time (module docstring), start-up not included."""
        # Computed from each case's chain and its runs, not listed run by run.
        runs = [(c.chain, s.num_runs) for s, c in self._runs() if s.num_runs > 0]
        if not runs:
            return 0.0
        bounds = [sum(chain * n for chain, n in runs) / self.parallelism,
                  max(chain for chain, _ in runs)]
        calls = self.calls_by_model()
        bounds += [calls.get(name, 0) / limit for name, limit in self.model_limits.items()]
        return max(bounds) * self.latency_s

    def summary(self) -> str:
        """The one line ``run`` prints first."""
        eval_sets = sum(s.eval_sets for s in self.suites)
        cases = sum(len(s.cases) for s in self.suites)
        return (
            f"plan: {len(self.suites)} suite(s), {eval_sets} eval set(s), {cases} eval case(s), "
            f"{self.case_runs} case run(s); ~{self.agent_calls} agent and ~{self.judge_calls} "
            f"judge model calls{_scenarios_left_out(self.scenario_runs)}; "
            f"~{_duration(self.wall_s())} of model time at "
            f"{self.latency_s:g} s per call and parallelism {self.parallelism}"
        )

    def lines(self, notes: Mapping[str, list[str]] | None = None) -> list[str]:
        """The ``plan`` command's printout: one block per suite (with ``notes[suite name]``
        at its end, e.g. what its cases x runs can detect), the totals, the estimate, and
        what is not estimated."""
        out = []
        for suite in self.suites:
            out += _suite_lines(suite)
            out += [f"  {note}" for note in (notes or {}).get(suite.name, [])]
        return out + self._total_lines()

    def _total_lines(self) -> list[str]:
        """The totals, the calls by model and the wall time of :meth:`lines`; not
        estimated when every case run is a conversation scenario's."""
        limits = ", ".join(f"{n} {k}" for n, k in self.model_limits.items())
        left_out = _scenarios_left_out(self.scenario_runs)
        start_up = ", plus the start-up (importing google-adk, about 10-20 s)"
        if self.scenario_runs == self.case_runs > 0:
            return [f"total: {self.case_runs} case run(s), model calls not estimated (all "
                    "conversation scenario case runs)",
                    "estimated wall time: not estimated" + start_up]
        by_model = ", ".join(f"{n} ~{k}" for n, k in self.calls_by_model().items())
        return [
            f"total: {self.case_runs} case run(s), ~{self.agent_calls} agent model calls "
            f"({_upper_bound(self.agent_calls_max, self.unbounded_cases)}), "
            f"~{self.judge_calls} judge model calls{left_out}",
            f"calls by model: {by_model}",
            f"estimated wall time: ~{_duration(self.wall_s())} of model calls at "
            f"{self.latency_s:g} s per call, parallelism {self.parallelism}"
            + (f", max_concurrency {limits}" if limits else "") + start_up + left_out,
        ]


def _scenarios_left_out(runs: int) -> str:
    """What a total leaves out: the conversation scenario case runs (none: "")."""
    return f" (not estimated: {runs} conversation scenario case run(s))" if runs else ""


def _upper_bound(calls_max: int, unbounded: int) -> str:
    """The agent calls' upper bound as the plan says it: none when ``unbounded`` eval
    cases list no expected tool calls (their tool turns are not counted)."""
    if unbounded:
        return (f"no upper bound: {unbounded} eval case(s) list no expected tool calls, "
                "so their tool calls are not counted")
    return f"up to {calls_max} if tools are called one at a time"


def _suite_lines(suite: SuitePlan) -> list[str]:
    """One suite's block of the printout (:meth:`Plan.lines`): its cases and runs, metrics,
    agent and judge calls (scenario cases and unknown tool calls said, not counted as 0),
    and what is not estimated."""
    runs = suite.num_runs
    counted = [c for c in suite.cases if not c.scenario]
    scenarios = len(suite.cases) - len(counted)
    judges = _sum_dicts(c.judge_calls for c in counted)
    unbounded = sum(1 for c in counted if not c.tools_known)
    agent = (f"~{sum(c.agent_calls for c in counted) * runs} ("
             f"{_upper_bound(sum(c.agent_calls_max for c in counted) * runs, unbounded)})"
             if counted else "not estimated")
    judged = ", ".join(f"{n} ~{k * runs}" for n, k in judges.items())
    if not judged:
        judges_used = any(m not in suite.model_free for m in suite.metrics)
        judged = "not estimated" if scenarios and judges_used else "none"
    out = [
        f"suite {suite.name}: {suite.eval_sets} eval set(s), {len(suite.cases)} eval "
        f"case(s) x {runs} run(s) = {suite.case_runs} case run(s)",
        f"  metrics: {', '.join(suite.metrics) or 'none'}",
        f"  agent model(s): {', '.join(suite.agent_models) or 'not known'}; agent calls "
        + agent,
        "  judge calls: " + judged,
    ]
    if scenarios:
        out.append(f"  {scenarios} conversation scenario case(s): not estimated (the "
                   "simulated user decides the turns)")
    out += [f"  not estimated: {m} ({why})" for m, why in suite.not_estimated.items()]
    return out


def _sum_dicts(items: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for item in items:
        for key, value in item.items():
            total[key] = total.get(key, 0) + value
    return total


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def agent_calls(invocation: Invocation) -> tuple[int, int]:
    """``(calls, calls_max)`` of the agent model for one expected invocation (module
    docstring)."""
    data = invocation.intermediate_data
    if isinstance(data, InvocationEvents):
        turns = sum(
            1
            for event in data.invocation_events
            if event.content and any(p.function_call for p in event.content.parts or [])
        )
        return 1 + turns, 1 + turns
    if isinstance(data, IntermediateData):
        extra = len(data.intermediate_responses)
        tools = len(data.tool_uses)
        return 1 + extra + (1 if tools else 0), 1 + extra + tools
    return 1, 1


def _judged_turns(metric: EvalMetric, case: EvalCase) -> int:
    """Turns a per-invocation judge metric judges (adk.evaluate.recording's rubric scoping)."""
    turns = case.conversation or []
    rubric_type = RUBRIC_METRIC_TYPES.get(metric.metric_name)
    if rubric_type is None:
        return len(turns)
    if criterion_rubrics(metric.metric_name, metric.criterion):
        return len(turns)
    case_rubrics = any(r.type == rubric_type for r in case.rubrics or [])
    return sum(
        1 for inv in turns if case_rubrics or any(r.type == rubric_type for r in inv.rubrics or [])
    )


def _judge_options(metric: EvalMetric) -> tuple[int, int]:
    """``(num_samples, parallelism_limit)`` of a judge metric, as its evaluator reads them
    (:func:`adk_eval_action.adk.files.criteria.judge_options`; ADK's defaults: 5 and 1, and 1
    where google-adk has no ``parallelism_limit``)."""
    options = judge_options(metric) or JudgeModelOptions()
    # google-adk 1.x's JudgeModelOptions has no parallelism_limit: its judge calls one
    # sample after another, as the default of 1 says.
    return options.num_samples, getattr(options, "parallelism_limit", 1)


KNOWN_JUDGES = PER_INVOCATION_JUDGES | PER_CASE_JUDGES | VERTEX_METRICS | {
    "hallucinations_v1", "per_turn_user_simulator_quality_v1"}
"""The google-adk metrics that call a model, whose calls :func:`judge_cost` knows."""


def model_free(metric: EvalMetric, custom: Collection[str] = ()) -> bool:
    """Whether ``metric`` calls no model: ADK's metrics that compare with the expected
    invocations or count (:data:`MODEL_FREE_METRICS`), and any other google-adk metric whose
    criterion model has no judge model options (``judge_model`` None; a metric a later
    google-adk adds, such as ``tool_parameter_match``). A custom metric (in ``custom``) may
    call what its function calls: not model-free."""
    name = metric.metric_name
    if name in MODEL_FREE_METRICS:
        return True
    return name not in custom and name not in KNOWN_JUDGES and judge_model(metric) is None


def judge_cost(
    metric: EvalMetric, case: EvalCase, custom: Collection[str] = ()
) -> tuple[int, int] | str:
    """``(calls, rounds)`` one run of ``case`` costs for a judge metric (rounds: calls
    made one after another), or why it is not estimated; ``custom`` names the eval
    config's custom metrics."""
    name = metric.metric_name
    if name in PER_INVOCATION_JUDGES:
        samples, limit = _judge_options(metric)
        calls = _judged_turns(metric, case) * samples
        return calls, math.ceil(calls / max(1, limit))
    if name in PER_CASE_JUDGES:
        samples, limit = _judge_options(metric)
        return samples, math.ceil(samples / max(1, limit))
    if name == "hallucinations_v1":
        intermediate = bool(criterion_field(metric, "evaluate_intermediate_nl_responses"))
        steps = sum(_nl_steps(inv, intermediate) for inv in case.conversation or [])
        return 2 * steps, 2 * steps
    if name in VERTEX_METRICS:
        return "evaluated by Vertex AI's eval service (remote calls, not counted)"
    if name == "per_turn_user_simulator_quality_v1":
        return "judges simulated turns, which are not known before the run"
    if name in custom:
        return "a custom metric: its model calls, if any, are not known"
    return ("a google-adk metric with a judge whose calls this plan does not know how to "
            "count")


def _nl_steps(invocation: Invocation, intermediate: bool) -> int:
    steps = 1 if invocation.final_response else 0
    data = invocation.intermediate_data
    if intermediate and isinstance(data, IntermediateData):
        steps += len(data.intermediate_responses)
    return steps


def plan_case(
    suite: str, eval_set_id: str, case: EvalCase, metrics: list[EvalMetric],
    custom: Collection[str] = (), tree: AgentTree | None = None,
) -> tuple[CasePlan, dict[str, str]]:
    """The cost of one run of ``case`` and the metrics not estimated (name -> why);
    ``custom`` names the eval config's custom metrics; ``tree``: the agent's, which splits
    the agent calls by model (module docstring)."""
    if case.conversation_scenario is not None:
        plan = CasePlan(
            suite=suite, eval_set_id=eval_set_id, eval_id=case.eval_id, turns=0, scenario=True
        )
        return plan, {}
    turns = case.conversation or []
    counts = [agent_calls(inv) for inv in turns]
    plan = CasePlan(
        suite=suite,
        eval_set_id=eval_set_id,
        eval_id=case.eval_id,
        turns=len(turns),
        agent_calls=sum(c for c, _ in counts),
        agent_calls_max=sum(m for _, m in counts),
        tools_known=all(inv.intermediate_data is not None for inv in turns),
    )
    if tree is not None:
        by_model = sum((tree.invocation_models(inv, c) for inv, (c, _) in zip(
            turns, counts, strict=True)), Counter[str]())
        plan.agent_models = dict(by_model)
        extra = max(0, by_model.total() - plan.agent_calls)  # a workflow's own replies
        plan.agent_calls += extra
        plan.agent_calls_max += extra
    plan.chain = plan.agent_calls
    skipped: dict[str, str] = {}
    for metric in metrics:
        judge = judge_model(metric)
        if model_free(metric, custom):
            continue
        cost = judge_cost(metric, case, custom)
        if isinstance(cost, str):
            skipped[metric.metric_name] = cost
            continue
        calls, rounds = cost
        key = judge or "judge"
        plan.judge_calls[key] = plan.judge_calls.get(key, 0) + calls
        plan.chain += rounds
    return plan, skipped


def plan_suite(
    name: str,
    num_runs: int,
    config: LoadedEvalConfig,
    eval_sets: Iterable[Any],
    agents: Sequence[AgentRecord] | None = None,
) -> SuitePlan:
    """The plan of one suite from its eval config and its (prepared) ADK eval sets;
    ``agents``: the agent tree when the agent was imported (the root first), which names
    the models and splits the agent calls among them."""
    metrics = get_eval_metrics_from_config(config.eval_config)
    custom = frozenset(config.eval_config.custom_metrics or {})
    sets = list(eval_sets)
    tree = AgentTree(agents) if agents else None
    plan = SuitePlan(
        name=name,
        num_runs=num_runs,
        eval_sets=len(sets),
        metrics=[m.metric_name for m in metrics],
        agent_models=tree.models if tree is not None else [],
        model_free=[m.metric_name for m in metrics if model_free(m, custom)],
    )
    for eval_set in sets:
        for case in eval_set.eval_cases:
            case_plan, skipped = plan_case(name, eval_set.eval_set_id, case, metrics, custom,
                                           tree)
            plan.cases.append(case_plan)
            plan.not_estimated.update(skipped)
    return plan
