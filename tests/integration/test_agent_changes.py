"""What changed in the agent is shown beside what changed in the scores (analysis.agentchanges,
report.agentchange_text): an agent run through real google-adk with the scripted stand-in model,
changed between the baseline and the head in each way a pull request changes an agent, its
instruction built at run time by a function (an ADK ``InstructionProvider``, not in the
pull request's diff)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.analysis.agentchanges import AgentChanges
from adk_eval_action.results.io import load_results
from adk_eval_action.run.pipeline import run_pipeline
from conftest import SharedRun, request_for

pytestmark = pytest.mark.usefixtures("keep_cwd")

AGENT_PY = '''
from google.adk.agents import LlmAgent
from google.genai import types

from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule

POLICY = {policy!r}


def get_weather({weather_args}) -> dict:
    """{weather_doc}"""
    return {{"city": city, "condition": "sunny"}}


def get_time(city: str) -> dict:
    """The local time of a city."""
    return {{"city": city, "time": "12:00"}}


def instruction(context) -> str:
    # Built per model request: its text is nowhere in the repository's files.
    return "You report the weather.\\n" + "\\n".join(POLICY)


RULES = [ScriptRule(pattern=r"weather in (?P<city>\\w+)",
                    tool_calls=[ScriptedToolCall(name="get_weather", args={{"city": "{{city}}"}})],
                    reply="{reply}")]
{sub_agents}
root_agent = LlmAgent(
    name="forecaster",
    model=ScriptedLlm(model="{model}", rules=RULES),
    instruction=instruction,
    tools=[{tools}],
    generate_content_config=types.GenerateContentConfig(temperature={temperature}),
    sub_agents=[{sub_agent_names}],
)
'''

SUB_AGENT = '''
{name} = LlmAgent(name="{name}", model="scripted-{name}", instruction="Help.")
'''

BASELINE = {
    "policy": ["Say the city.", "Say the condition.", "Be polite."],
    "weather_args": "city: str",
    "weather_doc": "The weather of a city.",
    "reply": "It is sunny in {city}.",
    "model": "scripted-forecaster",
    "tools": "get_weather",
    "temperature": 0.2,
    "subs": ["helper"],
}
HEAD = {
    **BASELINE,
    "policy": ["Say the city.", "Say the condition.", "Be blunt."],
    "weather_args": "city: str, units: str = 'C'",
    "model": "scripted-forecaster-2",
    "tools": "get_weather, get_time",
    "temperature": 0.9,
    "subs": ["critic"],
}


def write_agent(root: Path, version: dict[str, Any]) -> None:
    folder = root / "forecaster"
    (folder / "eval").mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    subs = version["subs"]
    (folder / "agent.py").write_text(AGENT_PY.format(
        **{k: v for k, v in version.items() if k != "subs"},
        sub_agents="".join(SUB_AGENT.format(name=n) for n in subs),
        sub_agent_names=", ".join(subs)))
    case = {"eval_id": "paris", "session_input": {"app_name": "forecaster", "user_id": "u"},
            "conversation": [{
                "user_content": {"role": "user", "parts": [{"text": "weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]},
                "intermediate_data": {"tool_uses": [{"name": "get_weather",
                                                     "args": {"city": "Paris"}}]}}]}
    (folder / "eval" / "weather.evalset.json").write_text(json.dumps(
        {"eval_set_id": "weather", "eval_cases": [case]}))
    (folder / "eval" / "test_config.json").write_text(json.dumps(
        {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5}}))


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The baseline run of the agent, then the head's run of the changed agent compared
    with it (comment, job summary, HTML report, comparison JSON written)."""
    root = tmp_path_factory.mktemp("agent_changes")
    write_agent(root, BASELINE)
    previous = Path.cwd()
    try:
        os.chdir(root)
        base = run_pipeline(request_for(results_path=root / "base.json"))
        assert base.exit_code == 0, base.comment_markdown
        write_agent(root, HEAD)
        outcome = run_pipeline(request_for(
            baseline=str(root / "base.json"), results_path=root / "head.json",
            summary_out=root / "sum.md", html_out=root / "r.html",
            comparison_out=root / "comparison.json"))
    finally:
        os.chdir(previous)
    return root, outcome


def test_the_engine_records_what_adk_does_not(changed: tuple[Path, Any]) -> None:
    root, _ = changed
    [suite] = load_results(root / "base.json").suites
    agents = {a.name: a for a in suite.agents or []}
    assert set(agents) == {"forecaster", "helper"}
    forecaster = agents["forecaster"]
    assert (forecaster.kind, forecaster.model) == ("LlmAgent", "scripted-forecaster")
    assert forecaster.instruction_provider and not agents["helper"].instruction_provider
    assert forecaster.generate_config == {"temperature": 0.2}
    assert (forecaster.sub_agents, forecaster.tools) == (["helper"], ["get_weather"])
    assert agents["helper"].model == "scripted-helper"


def _changes(changed: tuple[Path, Any]) -> AgentChanges:
    _, outcome = changed
    [changes] = outcome.comparison.agent_changes
    return changes


def test_every_kind_of_change_is_found(changed: tuple[Path, Any]) -> None:
    changes = _changes(changed)
    assert changes.suite == "forecaster"
    assert [(m.agent, m.baseline, m.head) for m in changes.models] == [
        ("forecaster", "scripted-forecaster", "scripted-forecaster-2")]
    assert [(c.agent, c.key, c.baseline, c.head) for c in changes.generate_config] == [
        ("forecaster", "temperature", "0.2", "0.9")]
    assert (changes.agents_added, changes.agents_removed) == (["critic"], ["helper"])
    tools = {(t.tool, t.change): t.parts for t in changes.tools}
    # ADK's transfer tool lists the agents it can transfer to: the sub-agent's change.
    assert tools == {("get_time", "added"): [],
                     ("get_weather", "changed"): ["parameter `units` added"],
                     ("transfer_to_agent", "changed"): ["parameter `agent_name` changed"]}
    [instruction] = changes.instructions
    assert instruction.agent == "forecaster" and instruction.built_at_run_time
    lines = [line for hunk in instruction.hunks for line in hunk]
    # The policy line the function builds, and ADK's transfer text naming the sub-agent.
    assert "-Be polite." in lines and "+Be blunt." in lines
    assert any(line.startswith("-") and "helper" in line for line in lines)
    assert any(line.startswith("+") and "critic" in line for line in lines)


def test_the_comment_summary_and_report_show_them(changed: tuple[Path, Any]) -> None:
    root, outcome = changed
    comment = outcome.comment_markdown
    start = comment.index("<details><summary>🔧 The agent changed since the baseline: ")
    section = comment[start:comment.index("</details>", start)]
    assert "the instruction of forecaster" in section.split("\n")[0]
    assert "- Model of `forecaster`: `scripted-forecaster` → `scripted-forecaster-2`" in section
    assert "built at run time by a function, so not in this pull request's diff" in section
    assert "- Tools of `forecaster`: added `get_time`; changed " in section
    assert "changed `get_weather` (parameter `units` added)" in section
    assert "- Agents added: `critic`" in section and "- Agents removed: `helper`" in section
    assert "- Generate config of `forecaster`: `temperature` `0.2` → `0.9`" in section
    assert "+Be blunt." in section
    summary = (root / "sum.md").read_text(encoding="utf-8")
    assert "+Be blunt." in summary and "`scripted-forecaster-2`" in summary
    report = (root / "r.html").read_text(encoding="utf-8")
    agent = report[report.index('<section id="agent">'):]
    agent = agent[:agent.index("</section>")]
    assert '<span class="da">+Be blunt.</span>' in agent
    assert "<code>scripted-forecaster</code> → <code>scripted-forecaster-2</code>" in agent
    saved = json.loads((root / "comparison.json").read_text(encoding="utf-8"))
    assert saved["agent_changes"][0]["models"][0]["head"] == "scripted-forecaster-2"


def test_nothing_is_shown_when_nothing_changed(regressed_run: SharedRun,
                                               good_run: SharedRun) -> None:
    """The example's regressed agent changes only its instruction: only that is shown; the
    good agent compared with itself shows no section."""
    assert regressed_run.comment is not None
    comment = regressed_run.comment.read_text(encoding="utf-8")
    title = ("<details><summary>🔧 The agent changed since the baseline: the instruction of "
             "travel_agent (+1 −1 lines)</summary>")
    assert title in comment
    section = comment[comment.index(title):]
    section = section[:section.index("</details>")]
    assert "+You are a travel assistant." in section and "Be blunt" in section
    assert "Model of" not in section and "Tools of" not in section
    from support.tables import compare

    same = load_results(good_run.results)
    assert compare(same, load_results(good_run.results), "itself").agent_changes == []


def test_the_engine_records_how_each_judge_metric_is_judged(good_run: SharedRun) -> None:
    """The example's rubric metric: the samples its eval config asks for, and the version of
    the prompt google-adk's evaluator fills in, read here from google-adk's module."""
    import hashlib

    from google.adk.evaluation import rubric_based_final_response_quality_v1 as evaluator

    from adk_eval_action.results.judgesetup import JudgeSetup

    [suite] = load_results(good_run.results).suites
    config = json.loads((good_run.root / "travel_agent" / "eval" / "test_config.json")
                        .read_text(encoding="utf-8"))
    rubric = "rubric_based_final_response_quality_v1"
    samples = config["criteria"][rubric]["judge_model_options"]["num_samples"]
    template = evaluator._RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1_PROMPT
    assert suite.judge_setup == {rubric: JudgeSetup(
        num_samples=samples, prompt=hashlib.sha256(template.encode()).hexdigest()[:12])}
