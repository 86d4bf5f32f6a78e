"""`adk-eval-action action` / `comment` as the runner starts them: INPUT_* and GITHUB_* env,
an event payload, output and summary files, and the REST stand-in as GitHub.

The end-to-end tests run the real pipeline on a copy of examples/ (offline stand-in model);
the others use a fake pipeline only to reach publishing paths cheaply.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from adk_eval_action.action import (
    ActionRun,
    action_command,
    comment_command,
    run_action,
)
from adk_eval_action.baseline.request import baseline_request
from adk_eval_action.github.fork import ArtifactError, post_artifact_comment
from adk_eval_action.github.logs import GitHubFormatter, log_to
from adk_eval_action.github.publish import PublishTarget
from adk_eval_action.github.rest import DEFAULT_BOT_LOGIN
from adk_eval_action.github.sticky import comment_marker
from adk_eval_action.github.transport import GitHubClient
from adk_eval_action.outcome import CaseFailure, PipelineOutcome
from adk_eval_action.run import requirements as requirements_module
from adk_eval_action.run.pipeline import comment_limit, html_path
from adk_eval_action.run.requirements import RequirementsError, install_requirements
from adk_eval_action.settings import RunRequest, read_inputs
from conftest import Console, shared_run
from support.github_stub import GitHubStub, Token
from support.runner import runner_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"
REPO = "octo/agents"
TOKEN = "ghs_actiontoken987"
HEAD = "a" * 40
SUITE_YAML = """\
suites:
  - name: travel
    agent: {agent}
    eval_sets: ["travel_agent/eval/travel.evalset.json"]
    eval_config: travel_agent/eval/test_config.json
"""


def make_workspace(root: Path) -> Path:
    """examples/ plus a config whose suite `travel` is the regressed agent (the PR head)
    and `baseline.yaml` with the same suite on the good agent (the base branch)."""
    ws = root / "workspace"
    shutil.copytree(EXAMPLES, ws, ignore=shutil.ignore_patterns(".adk", "__pycache__",
                                                                "monorepo"))
    (ws / "adk-eval.yaml").write_text(SUITE_YAML.format(agent="travel_agent_regressed"))
    (ws / "baseline.yaml").write_text(SUITE_YAML.format(agent="travel_agent"))
    return ws


@pytest.fixture(scope="session")
def baseline_results(tmp_path_factory) -> Path:
    """Results of the good agent, as a push to main would record them (real pipeline, in
    this process; read-only, shared by the session)."""
    ws = make_workspace(tmp_path_factory.mktemp("base"))
    run = shared_run(ws, "--config", "baseline.yaml", results="baseline-results.json")
    assert run.exit_code == 0, run.output
    return run.results


def declared_outputs() -> set[str]:
    """The outputs action.yml declares."""
    return set(yaml.safe_load(ACTION_YML.read_text())["outputs"])


def test_every_output_is_documented() -> None:
    """docs/action.md's Outputs table has a row for each output action.yml declares."""
    docs = (ACTION_YML.parent / "docs" / "action.md").read_text()
    table = docs.split("## Outputs", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `(\w+)` \|", table, re.M)) == declared_outputs()


def pull_request_event(path: Path, number: int = 12, head_sha: str = HEAD,
                       fork: bool = False) -> Path:
    path.write_text(json.dumps({
        "action": "synchronize", "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": head_sha, "ref": "feature",
                     "repo": {"full_name": "forker/agents" if fork else REPO, "fork": fork}},
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO},
    }))
    return path


def action_yml_defaults() -> dict[str, str]:
    """INPUT_* as the runner sets them when `with:` gives nothing: each input's default
    from action.yml ("" when none; the token expression as the token it evaluates to)."""
    return runner_inputs(ACTION_YML, token=TOKEN)


def test_runner_inputs_are_every_declared_input_as_the_runner_sets_them(tmp_path):
    """The contract's rule (§1), applied by hand to a small action.yml: every declared input
    is set, ``INPUT_`` + the name with spaces as ``_``, upper-cased, hyphens kept; to its
    default when not given ("" without one); the token expression evaluated."""
    action_yml = tmp_path / "action.yml"
    action_yml.write_text(yaml.safe_dump({"name": "x", "inputs": {
        "fail-below": {"default": "0.5"}, "two words": {}, "github_token": {
            "default": "${{ github.token }}"}}}))
    assert runner_inputs(action_yml, {"two words": "yes"}, token="t0k") == {
        "INPUT_FAIL-BELOW": "0.5", "INPUT_TWO_WORDS": "yes", "INPUT_GITHUB_TOKEN": "t0k"}
    assert runner_inputs(action_yml)["INPUT_TWO_WORDS"] == ""
    with pytest.raises(KeyError, match="fail_below"):
        runner_inputs(action_yml, {"fail_below": "1"})


def runner_env(ws: Path, stub: GitHubStub, event: Path, event_name: str = "pull_request",
               files: Path | None = None, **inputs: str) -> dict[str, str]:
    """What the runner sets: every declared input (its action.yml default unless given),
    GITHUB_*. The output and summary files go to `files` (default: beside the workspace)."""
    files = files or ws.parent
    env = action_yml_defaults()
    env.update({
        "INPUT_WORKING_DIRECTORY": str(ws),
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": stub.api_url, "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "4242", "GITHUB_SHA": "f" * 40, "GITHUB_WORKSPACE": str(ws),
        "GITHUB_OUTPUT": str(files / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(files / "summary.md"),
    })
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    return env


def read_outputs(path: Path) -> dict[str, str]:
    text = path.read_text()
    return {m.group(1): m.group(3) for m in
            re.finditer(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.S | re.M)}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """The action runs in its working directory; tests run in theirs."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def stub():
    with GitHubStub(tokens={
        TOKEN: Token(DEFAULT_BOT_LOGIN, installation=True),
        "ro": Token(DEFAULT_BOT_LOGIN, writable=False, installation=True),
    }) as server:
        yield server


# --------------------------------------------------------------------------- real pipeline


def test_pull_request_run_comments_gates_and_updates(tmp_path, stub, baseline_results,
                                                     monkeypatch, git_system_config):
    ws = make_workspace(tmp_path)
    shutil.copy(baseline_results, ws / "base.json")
    stub.add_pull(12, HEAD)
    env = runner_env(ws, stub, pull_request_event(tmp_path / "event.json"),
                     baseline="base.json", config="adk-eval.yaml")
    monkeypatch.chdir(tmp_path)

    first = CliRunner().invoke(action_command, [], env=env)
    assert first.exit_code == 1, first.output  # the regressed agent fails the gate
    lines = first.output.splitlines()
    assert lines[0] == f"::add-mask::{TOKEN}"
    assert TOKEN not in "\n".join(lines[1:])

    comments = stub.comments(12)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert comment_marker("default") in body
    assert "https://github.example/octo/agents/actions/runs/4242" in body
    assert re.search(r"`politeness`[^|]* \| 1\.000 \| 0\.333 \| −0\.667", body)  # per-metric delta
    assert "`states_celsius`" in body and "| 1.000 | 0.000 | −1.000" in body  # per-rubric delta

    annotations = [x for x in lines if x.startswith("::error ")]
    assert annotations and all(
        "file=travel_agent/eval/travel.evalset.json,line=" in a for a in annotations)
    assert "::group::Suite travel" in lines
    stop = next(x for x in lines if x.startswith("::stop-commands::"))
    assert f"::{stop.split('::')[2]}::" in lines  # commands resumed after the run

    outputs = read_outputs(tmp_path / "output.txt")
    assert set(outputs) == declared_outputs()  # every output set, none undeclared
    assert outputs["passed"] == "false"
    assert outputs["results_path"] == "adk-eval-results.json"
    assert outputs["comment_path"] == "adk-eval-comment.md"
    assert outputs["comment_url"] == comments[0]["html_url"]
    metrics = json.loads(outputs["metrics"])
    assert metrics["travel/politeness"]["delta"] == pytest.approx(-2 / 3)
    # Every gated metric got worse; the gate failed on thresholds, not on these drops.
    regressed = {d["metric"]: d for d in json.loads(outputs["regressed"])}
    assert set(regressed) == {"tool_trajectory_avg_score", "response_match_score",
                              "rubric_based_final_response_quality_v1", "politeness", "brevity"}
    assert regressed["politeness"]["delta"] == pytest.approx(-2 / 3)
    assert {(d["gated"], d["note"]) for d in regressed.values()} == {
        (False, "not gated: fail_on threshold")}
    assert (ws / "adk-eval-results.json").is_file()
    assert "ADK eval" in (tmp_path / "summary.md").read_text()
    usage = json.loads((ws / "adk-eval-results.json").read_text())["metadata"]["model_calls"]
    tokens = sum(u["input_tokens"] + u["output_tokens"] + u["thoughts_tokens"]
                 for u in usage["usage"])
    assert tokens > 0 and outputs["tokens"] == str(tokens)
    assert outputs["cost_usd"] == ""  # adk-eval.yaml prices no model
    # The HTML report beside the results, which the comment and the summary link to (the
    # run page's artifacts); every eval case of the results has its row.
    report = (ws / "adk-eval-report.html").read_text()
    artifacts = "https://github.example/octo/agents/actions/runs/4242#artifacts"
    assert f"[the HTML report]({artifacts})" in body
    assert f"[the HTML report]({artifacts})" in (tmp_path / "summary.md").read_text()
    ids = [c["eval_id"] for s in json.loads((ws / "adk-eval-results.json").read_text())[
        "suites"] for e in s["eval_sets"] for c in e["eval_cases"]]
    assert ids and all(f'<code class="cid">{i}</code>' in report for i in ids)
    written = [ws / "adk-eval-results.json", ws / "adk-eval-comment.md",
               ws / "adk-eval-pr.json", ws / "adk-eval-report.html", tmp_path / "summary.md",
               tmp_path / "output.txt"]
    assert not [p for p in written if TOKEN in p.read_text()]  # no secret in any file

    second = CliRunner().invoke(action_command, [], env=env)
    assert second.exit_code == 1, second.output
    again = stub.comments(12)
    assert len(again) == 1 and again[0]["id"] == comments[0]["id"]
    assert len(stub.requests("PATCH")) == 1 and len(stub.requests("POST")) == 1
    # git trusts the checkout through its system configuration (the container's; here the
    # session's file, tests/conftest.py), added by the first run only.
    trusted = git_system_config.read_text().splitlines()
    assert [x.strip() for x in trusted].count(f"directory = {ws}") == 1


def test_paths_in_outputs_are_relative_without_a_workspace(tmp_path, stub):
    """A plain `run:` step has no GITHUB_WORKSPACE: paths stay relative to the working
    directory, as given."""
    run = settings_for(tmp_path, stub, comment="off", results_path="out/r.json")
    run = run.model_copy(update={"runner": run.runner.model_copy(update={
        "event": run.event.model_copy(update={"workspace": None})})})
    outcome = fake_outcome(tmp_path).model_copy(update={"results_path": tmp_path / "out/r.json"})
    run_fake(run, outcome)
    outputs = read_outputs(tmp_path / "output.txt")
    assert (outputs["results_path"], outputs["comment_path"]) == (
        "out/r.json", "out/adk-eval-comment.md")


def test_cli_flags_work_without_the_runner(tmp_path, baseline_results, monkeypatch):
    """A plain `run:` step / laptop: same inputs as flags, no GitHub at all."""
    ws = make_workspace(tmp_path)
    monkeypatch.chdir(ws)
    result = CliRunner().invoke(action_command, [
        "--config", "baseline.yaml", "--baseline", str(baseline_results),
        "--comment", "off", "--results-path", "out/results.json",
    ], env={"GITHUB_TOKEN": ""})
    assert result.exit_code == 0, result.output
    assert (ws / "out" / "results.json").is_file()
    assert (ws / "out" / "adk-eval-comment.md").read_text().rstrip().endswith(
        comment_marker())


# --------------------------------------------------------------------------- fake pipeline


def fake_outcome(tmp: Path, exit_code: int = 0, failures: list[CaseFailure] | None = None,
                 ) -> PipelineOutcome:
    return PipelineOutcome(
        exit_code=exit_code, passed=exit_code == 0, results_path=tmp / "r.json",
        comment_markdown="### ADK evaluation\n\nall good\n", summary_markdown="# Summary\n",
        failures=failures or [], metrics={"s/m": {"head": 1.0, "delta": 0.0}},
        suites=sorted({f.suite for f in failures or []}) or ["s"],
    )


def settings_for(tmp_path: Path, stub: GitHubStub, event: Path | None = None,
                 event_name: str = "pull_request", **inputs: Any) -> ActionRun:
    env = runner_env(tmp_path, stub, event or pull_request_event(tmp_path / "event.json"),
                     event_name, files=tmp_path, **inputs)
    return ActionRun.from_sources({}, env)


def run_fake(run: ActionRun, outcome: PipelineOutcome, seen: list[RunRequest] | None = None,
             targets: list[PublishTarget] | None = None, **kw: Any) -> tuple[int, list]:
    """run_action with a pipeline that returns `outcome`; the request it was given is
    appended to `seen`, where it publishes to `targets`."""
    def pipeline(request: RunRequest, target: PublishTarget) -> PipelineOutcome:
        if seen is not None:
            seen.append(request)
        if targets is not None:
            targets.append(target)
        return outcome

    def client(token: str, api: str) -> GitHubClient:
        return GitHubClient(token, api, sleep=lambda s: None)

    log = Console()
    with log_to(log.stream, GitHubFormatter()):
        code = run_action(run, pipeline=pipeline, client_factory=client, **kw)
    return code, log.lines


def test_inputs_read_in_both_spellings_and_flags_win(tmp_path, stub):
    env = {"INPUT_NUM-RUNS": "3", "INPUT_COMMENT_KEY": "e2e", "INPUT_FAIL-ON": "Regression",
           "INPUT_PATHS": "agents/a\nagents/b, agents/c", "INPUT_PARALLELISM": ""}
    assert read_inputs(env) == {"num_runs": "3", "comment_key": "e2e",
                                "fail_on": "Regression", "paths": "agents/a\nagents/b, agents/c"}
    settings = ActionRun.from_sources({"comment_key": "flag"}, env).settings
    assert (settings.num_runs, settings.comment_key, settings.gate.fail_on) == (
        3, "flag", "regression")
    assert settings.paths == [Path("agents/a"), Path("agents/b"), Path("agents/c")]
    assert settings.parallelism == 4
    assert TOKEN not in repr(ActionRun.from_sources({"github_token": TOKEN}, {}))
    assert TOKEN not in repr(ActionRun.from_sources({}, {"INPUT_GITHUB_TOKEN": TOKEN}))


def test_gate_rule_inputs_reach_the_pipeline(tmp_path, stub):
    inputs: dict[str, Any] = {
        "MAX_REGRESSION": "0.05", "MIN-EFFECT": "0.02", "REQUIRE_SIGNIFICANCE": "true",
        "MAX_TOKEN_INCREASE": "0.2", "FAIL_ON": "any", "ON_TOKEN_INCREASE": "fail",
        "MIN_PASS_RATE": "0.5", "GATE_MODE": "Mean", "NOT_EVALUATED": "warn",
    }
    run = settings_for(tmp_path, stub, **inputs)
    seen: list[RunRequest] = []
    run_fake(run, fake_outcome(tmp_path), seen)
    gate = seen[0].settings.gate
    assert (gate.max_regression, gate.min_effect, gate.require_significance,
            gate.max_token_increase, gate.fail_on) == (0.05, 0.02, True, 0.2, "any")
    assert (gate.on_token_increase, gate.min_pass_rate, gate.mode, gate.not_evaluated) == (
        "fail", 0.5, "mean", "warn")


def test_adk_eval_yaml_settings_reach_the_action_unless_an_input_gives_them(tmp_path, stub):
    """The runner sets every input to its action.yml default; adk-eval.yaml's parallelism,
    num_runs and gate must still apply (they did not: the action passed parallelism=4)."""
    (tmp_path / "adk-eval.yaml").write_text(
        "parallelism: 7\nnum_runs: 3\ngate: {fail_on: any, min_effect: 0.1}\n")
    seen: list[RunRequest] = []
    run_fake(settings_for(tmp_path, stub, comment="off"), fake_outcome(tmp_path), seen)
    settings = seen[0].settings
    assert (settings.parallelism, settings.num_runs) == (7, 3)
    assert (settings.gate.fail_on, settings.gate.min_effect) == ("any", 0.1)
    assert seen[0].config_path == tmp_path / "adk-eval.yaml"
    run_fake(settings_for(tmp_path, stub, comment="off", parallelism="2", fail_on="none"),
             fake_outcome(tmp_path), seen)
    settings = seen[1].settings
    assert (settings.parallelism, settings.num_runs, settings.gate.fail_on) == (2, 3, "none")
    assert settings.gate.min_effect == 0.1


def test_bad_input_is_a_usage_error(tmp_path, stub, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = runner_env(tmp_path, stub, pull_request_event(tmp_path / "e.json"), files=tmp_path,
                     comment="maybe")
    result = CliRunner().invoke(action_command, [], env=env)
    assert result.exit_code == 2 and "::error title=adk-eval-action::invalid input comment" in \
        result.output


def test_annotations_worst_first_and_grouped_per_suite(tmp_path, stub):
    (tmp_path / "set.evalset.json").write_text('{\n  "eval_cases": [\n    {\n'
                                               '      "eval_id": "late"\n    }\n  ]\n}\n')
    failures = [
        CaseFailure(suite="b", eval_set_file="set.evalset.json", eval_id="late", line=None,
                    message="mild", severity=1.0),
        CaseFailure(suite="a", eval_set_file="set.evalset.json", eval_id="x", line=9,
                    message="worst: 100%, really", severity=5.0),
    ]
    stub.add_pull(12, HEAD)
    code, printed = run_fake(settings_for(tmp_path, stub, comment="off"),
                             fake_outcome(tmp_path, 1, failures))
    assert code == 1
    errors = [p for p in printed if p.startswith("::error ")]
    assert errors[0] == ("::error file=set.evalset.json,line=9,title=a%3A x::"
                         "worst: 100%25, really")
    assert errors[1].startswith("::error file=set.evalset.json,line=4,title=b%3A late::")
    assert printed.index("::group::Suite a") < printed.index("::group::Suite b")
    assert stub.requests() == []  # comment: off makes no REST call


def test_fork_pull_request_read_only_token_keeps_the_verdict(tmp_path, stub):
    stub.add_pull(12, HEAD, fork=True)
    event = pull_request_event(tmp_path / "event.json", fork=True)
    settings = settings_for(tmp_path, stub, event, github_token="ro")
    code, printed = run_fake(settings, fake_outcome(tmp_path, 0))
    assert code == 0 and settings.runner.event.is_fork
    assert any(p.startswith("::warning title=PR comment not posted::") for p in printed)
    assert stub.comments() == []
    assert "fork recipe" in (tmp_path / "summary.md").read_text()
    saved = (tmp_path / "adk-eval-comment.md").read_text()
    assert "all good" in saved and comment_marker() in saved
    context = json.loads((tmp_path / "adk-eval-pr.json").read_text())
    assert context == {"repository": REPO, "pr_number": 12, "head_sha": HEAD,
                       "comment_key": "default", "run_id": "4242"}


def test_nothing_to_evaluate_is_exit_2_with_summary_and_outputs(tmp_path, stub):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = runner_env(empty, stub, pull_request_event(tmp_path / "e.json"), files=tmp_path)
    result = CliRunner().invoke(action_command, [], env=env)
    assert result.exit_code == 2, result.output
    assert "::error title=adk-eval-action::" in result.output
    summary = (tmp_path / "summary.md").read_text()
    assert "ADK eval incomplete" in summary and "no eval sets found" in summary
    outputs = read_outputs(tmp_path / "output.txt")
    assert (outputs["passed"], outputs["results_path"]) == ("false", "adk-eval-results.json")
    assert stub.comments() == []  # the stub has no PR 12
    assert Path.cwd() == tmp_path.resolve()  # the action ran in `empty`, then came back


@pytest.mark.parametrize("gate_code", [0, 1])
def test_a_failed_comment_post_never_changes_the_exit_code(tmp_path, stub, gate_code):
    stub.add_pull(12, HEAD)
    stub.fail_next(500, method="POST", times=5)
    code, printed = run_fake(settings_for(tmp_path, stub), fake_outcome(tmp_path, gate_code))
    assert code == gate_code
    assert any(p.startswith("::error title=PR comment not posted::") for p in printed)
    assert "could not be posted" in (tmp_path / "summary.md").read_text()
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["passed"] == ("true" if gate_code == 0 else "false")
    assert outputs["comment_url"] == ""


def test_push_comments_on_the_open_pr_of_that_commit(tmp_path, stub):
    stub.add_pull(31, "c" * 40)
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"after": "c" * 40, "ref": "refs/heads/feature"}))
    code, _ = run_fake(settings_for(tmp_path, stub, event, "push"), fake_outcome(tmp_path))
    assert code == 0 and len(stub.comments(31)) == 1


def test_push_without_pr_writes_results_and_summary_only(tmp_path, stub):
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"after": "d" * 40, "ref": "refs/heads/main"}))
    code, printed = run_fake(settings_for(tmp_path, stub, event, "push"),
                             fake_outcome(tmp_path))
    assert code == 0 and stub.comments() == [] and not stub.requests("POST")
    assert (tmp_path / "summary.md").read_text().startswith("# Summary")
    assert any("No open pull request" in p for p in printed)


def test_issue_comment_looks_up_the_pull_request(tmp_path, stub):
    stub.add_pull(8, "e" * 40)
    event = tmp_path / "ic.json"
    event.write_text(json.dumps({"issue": {"number": 8, "pull_request": {"url": "u"}}}))
    run_fake(settings_for(tmp_path, stub, event, "issue_comment"), fake_outcome(tmp_path))
    assert len(stub.comments(8)) == 1


def test_pull_request_target_warns(tmp_path, stub):
    stub.add_pull(12, HEAD)
    _, printed = run_fake(settings_for(tmp_path, stub, event_name="pull_request_target",
                                       comment="off"), fake_outcome(tmp_path))
    assert any(p.startswith("::warning::") and "pull_request_target" in p for p in printed)


def test_pipeline_options_follow_inputs(tmp_path, stub):
    settings = settings_for(tmp_path, stub, comment="off", num_runs="3", fail_on="any",
                            results_path="out/r.json", template="t.md.j2")
    seen: list[RunRequest] = []
    targets: list[PublishTarget] = []
    run_fake(settings, fake_outcome(tmp_path), seen, targets)
    [request], [target] = seen, targets
    assert request.settings.num_runs == 3 and request.settings.gate.fail_on == "any"
    assert request.settings.results_path == Path("out/r.json")
    assert request.settings.template == Path("t.md.j2")
    assert request.workdir == tmp_path.resolve()
    # The pipeline renders for where the action publishes: room for the run link and
    # marker, the run link, the HTML report beside the results file.
    assert comment_limit(target) < 65_536
    assert target.runner.event.run_url == "https://github.example/octo/agents/actions/runs/4242"
    assert html_path(request, target) == tmp_path.resolve() / "out" / "adk-eval-report.html"


def test_baseline_search_gets_the_pr_context(tmp_path, stub):
    run = settings_for(tmp_path, stub)
    request = baseline_request(run.request, run.event)
    assert (str(request.spec), request.record, request.base_ref) == ("auto", False, "main")
    github = request.github
    assert github is not None
    assert (github.repository, github.head_sha, github.api_url) == (REPO, HEAD, stub.api_url)
    assert github.token.get_secret_value() == TOKEN and TOKEN not in repr(github)
    run = settings_for(tmp_path, stub, baseline="main.json", artifact_name="evals",
                       baseline_rerun="true", base_ref="release")
    request = baseline_request(run.request, run.event)
    assert (request.spec.file, request.artifact_name, request.baseline_rerun,
            request.base_ref) == (Path("main.json"), "evals", True, "release")


@pytest.mark.parametrize(("ref", "record", "expected"), [
    ("refs/heads/main", "", True), ("refs/heads/feature", "", False),
    ("refs/heads/feature", "true", True), ("refs/heads/main", "false", False),
])
def test_push_to_the_default_branch_records(tmp_path, stub, ref, record, expected):
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"after": "d" * 40, "ref": ref,
                                 "repository": {"default_branch": "main"}}))
    env = runner_env(tmp_path, stub, event, "push", files=tmp_path, record=record)
    env["GITHUB_REF"] = ref
    run = ActionRun.from_sources({}, env)
    assert baseline_request(run.request, run.event).record is expected


# --------------------------------------------------------------------------- requirements


def test_requirements_are_installed_then_the_process_restarts(tmp_path, stub, monkeypatch):
    (tmp_path / "requirements.txt").write_text("six\n")
    calls: list[list[str]] = []
    envs: list[dict[str, str] | None] = []

    def installer(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess:
        calls.append(cmd)
        envs.append(kw.get("env"))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", installer)  # the module run/requirements calls
    monkeypatch.chdir(tmp_path)
    environ = {"PATH": "/usr/bin", "INPUT_GITHUB_TOKEN": "ghs_x" * 4, "GITHUB_TOKEN": "t" * 20,
               "GOOGLE_API_KEY": "k" * 20}

    class Restarted(Exception):
        pass

    def reexec(_failed: object) -> None:
        raise Restarted

    settings = settings_for(tmp_path, stub, requirements="requirements.txt", comment="off")
    with pytest.raises(Restarted):
        run_fake(settings, fake_outcome(tmp_path), reexec=reexec, environ=environ)
    pip = [c for c in calls if c[0] != "git"]
    assert pip and pip[0][-2:] == ["-r", "requirements.txt"]
    # The installer runs without the action's inputs and tokens (the agent's environment),
    # and the process's own environment is left for the restart to read its inputs from.
    assert envs[-1] == {"PATH": "/usr/bin", "GOOGLE_API_KEY": "k" * 20}
    assert environ["INPUT_GITHUB_TOKEN"] == "ghs_x" * 4
    # What the installer prints quotes repository content: the runner obeys no workflow
    # command from it (stopped before the installer starts, resumed after).
    _, lines = run_fake(settings, fake_outcome(tmp_path), reexec=lambda _failed: None,
                        environ=environ)
    start = next(i for i, x in enumerate(lines) if x.startswith("$ "))
    stop = [i for i, x in enumerate(lines) if x.startswith("::stop-commands::")]
    assert stop and stop[0] < start
    token = lines[stop[0]].removeprefix("::stop-commands::")
    assert lines.index(f"::{token}::") > start
    code, _ = run_fake(settings, fake_outcome(tmp_path), reexec=reexec,
                       skip_requirements=True)
    assert code == 0


def test_requirements_moving_adk_out_of_range_is_said_clearly(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='agent'\ndependencies=['six']\n")
    versions = iter(["2.13.0", "1.2.0"])
    monkeypatch.setattr(requirements_module, "package_version", lambda name: next(versions))

    def ok(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 0)

    supported = re.escape(f"({requirements_module.supported_adk_range()})")
    moved = rf"from 2\.13\.0 to 1\.2\.0, outside .*{supported}"
    with pytest.raises(RequirementsError, match=moved):
        install_requirements(["pyproject.toml"], tmp_path, run=ok)
    with pytest.raises(RequirementsError, match="not a file"):
        install_requirements(["missing.txt"], tmp_path, run=ok)


APP_PYPROJECT = """\
[project]
name = "customer-service"
version = "0.1.0"
dependencies = [
    "google-adk>=1.23",
    "requests[socks] >= 2.31 ; python_version >= '3.10'",
    "tabulate",
]

[project.optional-dependencies]
dev = ["pytest"]
"""


def test_a_pyproject_installs_its_dependencies_without_building_the_project(tmp_path):
    """adk-samples' shape: an app pyproject (no [build-system]) beside the agent package
    and an ``eval/`` folder, which setuptools refuses to build ("Multiple top-level
    packages discovered in a flat-layout"). ``requirements: pyproject.toml`` (what ``init``
    writes) and the folder alike give the installer the [project].dependencies, as packaging
    normalises them, and never the project's folder; optional dependencies are left out."""
    app = tmp_path / "python" / "agents" / "customer-service"
    for package in ("customer_service", "eval"):
        (app / package).mkdir(parents=True)
        (app / package / "__init__.py").write_text("")
    (app / "pyproject.toml").write_text(APP_PYPROJECT)
    wanted = ["google-adk>=1.23", 'requests[socks]>=2.31; python_version >= "3.10"',
              "tabulate"]
    commands: list[list[str]] = []

    def installer(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess:
        commands.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    for spec in ("pyproject.toml", "."):
        commands.clear()
        install_requirements([spec], app, run=installer, root=tmp_path)
        [command] = commands
        assert command[len(requirements_module.installer_command()):] == wanted
        assert not any(str(app) in arg for arg in command)


def test_installer_without_pip_is_the_uv_on_path(tmp_path, monkeypatch):
    """A virtualenv made by ``uv venv`` has no pip and no uv beside its Python: the
    installer is then the uv on PATH, installing into this Python; with pip, pip."""
    uv = tmp_path / "bin" / "uv"
    uv.parent.mkdir()
    uv.write_text("")
    monkeypatch.setattr(shutil, "which", lambda name: str(uv))
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name: None if name == "pip" else real_find_spec(name))
    assert requirements_module.installer_command() == [
        str(uv), "pip", "install", "--python", sys.executable]
    monkeypatch.setattr(importlib.util, "find_spec", real_find_spec)
    assert requirements_module.installer_command()[:4] == [
        sys.executable, "-m", "pip", "install"]


@pytest.mark.parametrize(("text", "says"), [
    ('[tool.poetry]\nname = "a"\n', "pyproject.toml has no [project] table"),
    ('[project]\nname = "a"\ndynamic = ["dependencies"]\n', "declares its dependencies dynamic"),
    ('[project]\nname = "a"\ndependencies = ["--index-url=http://evil.example/simple"]\n',
     "'--index-url=http://evil.example/simple' in [project].dependencies is not a requirement"),
    ("[project\n", "pyproject.toml: cannot read it as TOML"),
])
def test_a_pyproject_whose_dependencies_cannot_be_read_is_refused(tmp_path, text, says):
    (tmp_path / "pyproject.toml").write_text(text)
    ran: list[Any] = []
    with pytest.raises(RequirementsError, match=re.escape(says)):
        install_requirements(["pyproject.toml"], tmp_path, run=lambda *a, **k: ran.append(a))
    assert not ran


def test_a_pyproject_without_dependencies_installs_nothing(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "a"\n')
    ran: list[Any] = []
    install_requirements(["pyproject.toml"], tmp_path, run=lambda *a, **k: ran.append(a))
    assert not ran


# --------------------------------------------------------------------------- fork recipe


def write_artifact(folder: Path, number: int = 12, head_sha: str = HEAD,
                   body: str = "### ADK evaluation\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adk-eval-comment.md").write_text(body)
    (folder / "adk-eval-pr.json").write_text(json.dumps({
        "repository": REPO, "pr_number": number, "head_sha": head_sha,
        "comment_key": "default", "run_id": "1"}))
    return folder


def workflow_run_event(path: Path, head_sha: str = HEAD) -> Path:
    path.write_text(json.dumps({"workflow_run": {
        "head_sha": head_sha, "head_branch": "feature", "pull_requests": [],
        "repository": {"full_name": REPO}, "head_repository": {"full_name": "forker/agents"},
    }}))
    return path


def test_comment_command_posts_a_verified_artifact(tmp_path, stub, monkeypatch):
    stub.add_pull(12, HEAD, fork=True)
    evil = f"hi {comment_marker('other-suite')}\n"
    artifact = write_artifact(tmp_path / "artifact", body=evil)
    env = runner_env(tmp_path, stub, workflow_run_event(tmp_path / "wr.json"), "workflow_run",
                     files=tmp_path)
    env["INPUT_GITHUB_TOKEN"] = ""
    env["GITHUB_TOKEN"] = TOKEN
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(comment_command, [str(artifact)], env=env)
    assert result.exit_code == 0, result.output
    [posted] = stub.comments(12)
    assert comment_marker("other-suite") not in posted["body"]
    assert posted["body"].rstrip().endswith(comment_marker("default"))
    again = CliRunner().invoke(comment_command, [str(artifact)], env=env)
    assert again.exit_code == 0 and len(stub.comments(12)) == 1


def test_comment_artifact_for_an_older_head_is_not_posted(tmp_path, stub, runner_log):
    stub.add_pull(12, "9" * 40)
    settings = settings_for(tmp_path, stub, workflow_run_event(tmp_path / "wr.json"),
                            "workflow_run")
    code = post_artifact_comment(settings.target, write_artifact(tmp_path / "a"),
                                 make_client=lambda t, a: GitHubClient(t, a))
    assert code == 0 and stub.comments() == []
    assert runner_log.lines[-1].startswith("::notice::PR #12 has moved on to 9999")


def test_comment_artifact_not_from_the_triggering_run_is_refused(tmp_path, stub):
    stub.add_pull(12, HEAD)
    settings = settings_for(tmp_path, stub, workflow_run_event(tmp_path / "wr.json", "1" * 40),
                            "workflow_run")
    with pytest.raises(ArtifactError, match="triggered this workflow"):
        post_artifact_comment(settings.target, write_artifact(tmp_path / "a"),
                              make_client=lambda t, a: GitHubClient(t, a))
    with pytest.raises(ArtifactError, match="does not exist"):
        post_artifact_comment(
            settings_for(tmp_path, stub).target, write_artifact(tmp_path / "b", number=99),
            make_client=lambda t, a: GitHubClient(t, a))
    assert stub.comments() == []


def test_comment_artifact_input_of_the_action(tmp_path, stub):
    stub.add_pull(12, HEAD)
    artifact = write_artifact(tmp_path / "art")
    settings = settings_for(tmp_path, stub, workflow_run_event(tmp_path / "wr.json"),
                            "workflow_run", comment_artifact=str(artifact))
    code, _ = run_fake(settings, fake_outcome(tmp_path))
    assert code == 0 and len(stub.comments(12)) == 1


def test_a_shard_uploads_its_part_without_comment_or_gate(tmp_path, stub):
    """shard: 2/4 reaches the pipeline; its part is not commented on nor gated (the merge
    job does both); the outputs name the part's results file."""
    seen: list[RunRequest] = []
    part = fake_outcome(tmp_path).model_copy(update={
        "shard": "2/4", "comment_markdown": "", "passed": True,
    })
    code, log = run_fake(settings_for(tmp_path, stub, shard="2/4"), part, seen)
    assert code == 0
    assert str(seen[0].settings.shard) == "2/4"
    assert stub.comments() == []
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["results_path"] == "r.json" and outputs["comment_url"] == ""
    assert any("shard 2/4 finished: upload r.json as an artifact" in line for line in log)


def test_merge_and_only_changed_inputs_reach_the_pipeline(tmp_path, stub):
    seen: list[RunRequest] = []
    run_fake(settings_for(tmp_path, stub, merge="parts/*.json\nmore/part.json",
                          only_changed="true"), fake_outcome(tmp_path), seen)
    assert seen[0].settings.merge == ["parts/*.json", "more/part.json"]
    assert seen[0].settings.only_changed is True


def test_an_agent_that_does_not_import_is_one_annotation_on_its_line(tmp_path, stub,
                                                                       monkeypatch):
    """The agent's import error is the one error annotation, redacted, on the agent file's
    line that raised; its eval cases (no runs) get no "cut short" annotations of their own."""
    ws = make_workspace(tmp_path)
    agent = ws / "travel_agent_regressed" / "agent.py"
    source = agent.read_text().splitlines(keepends=True)
    anchor = next(i for i, x in enumerate(source) if x.startswith("from __future__")) + 1
    source.insert(anchor, "import os; raise RuntimeError('cannot start, key=' + "
                          "os.environ['GOOGLE_API_KEY'])\n")
    agent.write_text("".join(source))
    key = os.environ["GOOGLE_API_KEY"]
    stub.add_pull(12, HEAD)
    env = runner_env(ws, stub, pull_request_event(tmp_path / "event.json"), baseline="none",
                     config="adk-eval.yaml")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(action_command, [], env=env)
    assert result.exit_code == 2, result.output
    errors = [x for x in result.output.splitlines() if x.startswith("::error ")]
    # anchor is 0-based: the inserted statement is the file's line anchor + 1.
    assert errors == [
        f"::error file=travel_agent_regressed/agent.py,line={anchor + 1},"
        "title=travel%3A agent::"
        "agent travel_agent_regressed failed to import: RuntimeError: cannot start, key=*** "
        f"(at travel_agent_regressed/agent.py:{anchor + 1}) (fix the agent's code that raised "
        "while it was imported (`adk eval` would fail the same way))"
    ]
    # Said once: the annotation; the suite's log group points to it, the table leaves it.
    assert result.output.count("cannot start, key=") == 1
    shown = [x for x in result.output.splitlines() if x != f"::add-mask::{key}"]
    assert not [x for x in shown if key in x] and "cut short" not in result.output
    results = json.loads((ws / "adk-eval-results.json").read_text())
    [error] = results["suites"][0]["errors"]
    assert (error["kind"], error["file"], error["line"]) == (
        "agent", "travel_agent_regressed/agent.py", anchor + 1)
