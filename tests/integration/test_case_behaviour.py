"""Errors where they belong: an exception raised while one eval case runs because of what the
model or the agent did (a transfer to an agent that is not in the tree, a tool that raises,
in the repository or in an installed package) fails that case with the exception in its
evidence (exit 1); a network error of a tool stays infrastructure (exit 2, incomplete); an
eval case field google-adk refuses at run time (``session_input.app_name`` empty) is found
before any model call and named at file:field (exit 2), the other cases still run. Real
google-adk runs (its Runner, transfer and tool calling) on the scripted stand-in model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adk_eval_action.adk.runtime.case_failures import classify_inference_failure
from adk_eval_action.results.model import CaseStatus
from conftest import CliRun, load_json

AGENT = '''
from google.adk.agents import LlmAgent
from adk_eval_action.testing.scripted import ScriptRule, ScriptedToolCall
from adk_eval_action.testing.standins import ScriptedLlm
from {library} import lookup, fetch_rates


def get_weather(city: str) -> dict:
    """The weather of a city."""
    if city == "Atlantis":
        raise LookupError("Atlantis sank")
    return {{"city": city, "sky": "sunny"}}


def _call(pattern, name, **args):
    return ScriptRule(pattern=pattern, reply="{{result}}",
                      tool_calls=[ScriptedToolCall(name=name, args=args)])


helper = LlmAgent(name="helper", instruction="Help.",
                  model=ScriptedLlm(model="scripted-helper", default_reply="helped"))
root_agent = LlmAgent(
    name="router", instruction="Route.", tools=[get_weather, lookup, fetch_rates],
    sub_agents=[helper],
    model=ScriptedLlm(model="scripted-router", rules=[
        _call("billing", "transfer_to_agent", agent_name="billing"),
        _call("atlantis", "get_weather", city="Atlantis"),
        _call("lookup", "lookup", city="Atlantis"),
        _call("rates", "fetch_rates"),
        _call("weather", "get_weather", city="Paris"),
    ]),
)
'''
LIBRARY = '''
def lookup(city: str) -> dict:
    """Looks a city up (an installed package's tool)."""
    raise KeyError(f"no such city: {city}")


def fetch_rates() -> dict:
    """Exchange rates from a service that is down."""
    raise ConnectionError("rates.example: connection refused")
'''


def _case(eval_id: str, text: str, reply: str, **session: Any) -> dict[str, Any]:
    return {"eval_id": eval_id,
            "conversation": [{"invocation_id": f"{eval_id}-1",
                              "user_content": {"role": "user", "parts": [{"text": text}]},
                              "final_response": {"role": "model", "parts": [{"text": reply}]}}],
            "session_input": {"app_name": "router", "user_id": "u", "state": {}, **session}}


SUNNY = '{"city": "Paris", "sky": "sunny"}'


def _repo(root: Path, library: str, cases: list[dict[str, Any]], camel: bool = False) -> Path:
    """The router agent (its tools ``lookup``/``fetch_rates`` from ``library``, a module
    outside the repository) with one eval set of ``cases``."""
    (root / "repo/router/eval").mkdir(parents=True)
    (root / "site").mkdir()
    (root / "site" / f"{library}.py").write_text(LIBRARY)
    (root / "repo/router/__init__.py").write_text("from . import agent\n")
    (root / "repo/router/agent.py").write_text(AGENT.format(library=library))
    data: dict[str, Any] = {"eval_set_id": "calls", "eval_cases": cases}
    if camel:
        data = {"evalSetId": "calls", "evalCases": [
            {"evalId": c["eval_id"], "conversation": c["conversation"],
             "sessionInput": {"appName": c["session_input"]["app_name"], "userId": "u"}}
            for c in cases]}
    (root / "repo/router/eval/calls.evalset.json").write_text(json.dumps(data, indent=1))
    (root / "repo/router/eval/test_config.json").write_text(
        json.dumps({"criteria": {"response_match_score": 0.5}}))
    return root / "repo"


def _runs(results: Path) -> dict[str, dict[str, Any]]:
    return {c["eval_id"]: c["runs"][0] for s in load_json(results)["suites"]
            for e in s["eval_sets"] for c in e["eval_cases"]}


def test_what_the_model_or_a_tool_did_fails_its_case_with_evidence(
        tmp_path, monkeypatch, cli: CliRun):
    repo = _repo(tmp_path, "behaviour_tools_a", [
        _case("transfer", "send me to billing", "done"),
        _case("own_tool", "weather in atlantis", "done"),
        _case("library_tool", "lookup please", "done"),
        _case("ok", "weather please", SUNNY),
    ])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(repo)
    done = cli("run", "router", "--results-out", "r.json", "--comment-out", "c.md")
    assert done.exit_code == 1, done.output  # scores failed the gate; nothing is incomplete
    runs = _runs(repo / "r.json")
    assert {i: r["status"] for i, r in runs.items()} == {
        "transfer": "failed", "own_tool": "failed", "library_tool": "failed", "ok": "passed"}
    # google-adk's own words: 2.x "Transfer target agent 'billing' not found.", 1.x
    # "Agent billing not found in the agent tree."
    assert runs["transfer"]["error"] in (
        "the model transferred to agent `billing`, which is not in the agent tree "
        f"(google-adk: {said})" for said in ("Transfer target agent 'billing' not found.",
                                             "Agent billing not found in the agent tree."))
    assert runs["own_tool"]["error"] == (
        "the agent raised LookupError: Atlantis sank (at router/agent.py:11)")
    assert runs["library_tool"]["error"] == (
        "a tool raised KeyError: 'no such city: Atlantis' (at behaviour_tools_a.py:4, "
        "outside the repository)")
    assert all(r.get("error_kind") is None for r in runs.values())
    assert load_json(repo / "r.json")["complete"] is True
    comment = (repo / "c.md").read_text()
    assert "incomplete" not in comment.splitlines()[2]
    assert "run error: the model transferred to agent `billing`, which is not in the agent " \
        "tree" in comment
    assert "run error: a tool raised KeyError: 'no such city: Atlantis'" in comment


def test_a_tool_whose_service_is_down_stays_infrastructure(tmp_path, monkeypatch, cli: CliRun):
    repo = _repo(tmp_path, "behaviour_tools_b", [_case("rates", "rates please", "done"),
                                                 _case("ok", "weather please", SUNNY)])
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(repo)
    done = cli("run", "router", "--results-out", "r.json")
    assert done.exit_code == 2, done.output
    runs = _runs(repo / "r.json")
    assert runs["rates"]["status"] == "error" and runs["rates"]["error_kind"] == "inference"
    assert "connection refused" in runs["rates"]["error"]
    assert runs["ok"]["status"] == "passed"


@pytest.mark.parametrize("camel", [False, True], ids=["snake_case", "camelCase"])
def test_an_empty_app_name_is_named_at_its_field_before_any_model_call(
        tmp_path, monkeypatch, cli: CliRun, camel: bool):
    repo = _repo(tmp_path, f"behaviour_tools_{'c' if camel else 'd'}", [
        _case("ok", "weather please", SUNNY),
        _case("no_app", "weather please", SUNNY, app_name=""),
    ], camel=camel)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(repo)
    field = "evalCases[1].sessionInput.appName" if camel else "eval_cases[1].session_input.app_name"
    said = (f"router/eval/calls.evalset.json: eval case `no_app`: field `{field}` is empty: "
            "google-adk's Runner refuses it when the eval case runs")
    planned = cli("plan", "router")
    assert planned.exit_code == 2 and said in planned.output, planned.output
    done = cli("run", "router", "--results-out", "r.json")
    assert done.exit_code == 2 and said in done.output, done.output
    results = load_json(repo / "r.json")
    (error,) = results["suites"][0]["errors"]
    assert (error["kind"], error["eval_id"], error["file"]) == (
        "eval_set", "no_app", "router/eval/calls.evalset.json")
    text = (repo / "router/eval/calls.evalset.json").read_text().splitlines()
    assert '"no_app"' in text[error["line"] - 1]
    assert error["hint"].startswith("found before any model call")
    # The case never ran (no model call for it); the other one did.
    assert list(_runs(repo / "r.json")) == ["ok"] and _runs(repo / "r.json")["ok"]["status"] == \
        "passed"


@pytest.mark.parametrize(("raised", "status", "kind", "said"), [
    # google-adk 1.x's words for the same refusals (base_llm_flow, flows/llm_flows/functions).
    (ValueError("Agent billing not found in the agent tree."), CaseStatus.FAILED, None,
     "the model transferred to agent `billing`, which is not in the agent tree (google-adk: "
     "Agent billing not found in the agent tree.)"),
    (ValueError("Tool 'refund' not found.\nAvailable tools: get_weather\n\nPossible causes:"),
     CaseStatus.FAILED, None, "the model called tool `refund`, which the agent does not have "
     "(google-adk: Tool 'refund' not found.)"),
    (ValueError("Cannot transfer from 'helper' to unrelated agent 'billing'.\nAvailable "
                "agents: router"), CaseStatus.FAILED, None,
     "the model transferred from `helper` to agent `billing`, which it may not transfer to "
     "(google-adk: Cannot transfer from 'helper' to unrelated agent 'billing'.)"),
    (ValueError("app_name is required when agent is provided without app."), CaseStatus.ERROR,
     "eval_set", "the eval case's `session_input.app_name` is empty"),
    (RuntimeError("Session not found"), CaseStatus.ERROR, "inference", "inference failed: "),
])
def test_google_adk_refusals_are_told_apart(tmp_path, raised, status, kind, said):
    try:
        raise RuntimeError("while running the case") from raised
    except RuntimeError as e:
        failure = classify_inference_failure(e, str(raised), tmp_path)
    assert (failure.status, failure.kind) == (status, kind)
    assert failure.message.startswith(said)


def test_an_empty_app_name_is_refused_when_the_agent_module_names_its_app_too(
        tmp_path, monkeypatch, cli: CliRun):
    """With an ``App`` google-adk creates the eval case's session under the empty name and
    looks it up under the app's ("Session not found"): the case is refused before any
    model call all the same."""
    repo = _repo(tmp_path, "behaviour_tools_e", [
        _case("ok", "weather please", SUNNY), _case("no_app", "weather please", SUNNY,
                                                    app_name="")])
    agent = repo / "router/agent.py"
    agent.write_text(agent.read_text() + "\nfrom google.adk.apps import App\n\n"
                     "app = App(name=\"router\", root_agent=root_agent)\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.chdir(repo)
    done = cli("run", "router", "--results-out", "r.json")
    assert done.exit_code == 2, done.output
    assert "eval case `no_app`: field `eval_cases[1].session_input.app_name` is empty" in \
        done.output
    assert list(_runs(repo / "r.json")) == ["ok"]
