"""Google's own repository layouts discovered as their own tooling runs them
(project.layout, project.discovery), and a suite left on ADK's default criteria while an eval
config sits near its eval sets said so, naming the file and how to use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from google.adk.cli.cli_tools_click import main as adk_main

from adk_eval_action.adk.files.eval_history import load_any_results
from adk_eval_action.project.config import load_project_config
from adk_eval_action.project.discovery import discover_suites, suites_from_config
from adk_eval_action.project.layout import DEFAULT_CRITERIA
from conftest import CliRun, as_adk_eval_starts, load_json
from support.layouts import STARTER_PACK_CONFIG, adk_samples, starter_pack

GATED = "rubric_based_final_response_quality_v1"


def test_the_starter_pack_layout_is_discovered_as_its_makefile_runs_it(tmp_path: Path) -> None:
    """`make eval`: adk eval ./app tests/eval/evalsets/basic.evalset.json
    --config_file_path=tests/eval/eval_config.json (the fixture's Makefile says the same)."""
    root = starter_pack(tmp_path)
    assert "adk eval ./app" in (root / "Makefile").read_text()
    (suite,) = discover_suites([root], root)
    assert suite.name == "app"
    assert suite.agent_dir == root / "app"
    assert suite.eval_set_paths == [root / "tests/eval/evalsets/basic.evalset.json"]
    assert suite.eval_config_path == root / "tests/eval/eval_config.json"
    assert suite.warnings == [] and suite.nearby_configs == []


@pytest.fixture
def adk_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as `adk eval ./app` starts it (no `app` module of another test), and
    ADK's logging set-up and agent import undone afterwards."""
    with as_adk_eval_starts(monkeypatch, ("app",)):
        yield


def _scores(results: object) -> dict[tuple[str, str], float | None]:
    return {
        (case.eval_id, metric.metric_name): metric.score
        for suite in results.suites  # type: ignore[attr-defined]
        for eval_set in suite.eval_sets
        for case in eval_set.eval_cases
        for metric in case.runs[0].metrics
        if metric.metric_name == GATED or not metric.informational
    }


def test_the_starter_pack_scores_equal_its_make_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun, adk_process: None
) -> None:
    """Discovered with no adk-eval.yaml, the template's eval set is scored with its eval
    config: the same metric and scores as google-adk's own `adk eval` with the Makefile's
    arguments, not ADK's default criteria."""
    root = starter_pack(tmp_path)
    monkeypatch.chdir(root)
    done = CliRunner().invoke(adk_main, [
        "eval", "./app", "tests/eval/evalsets/basic.evalset.json",
        "--config_file_path=tests/eval/eval_config.json",
    ], catch_exceptions=False)
    # google-adk 2.x's `adk eval` exits 1 on a failed case; 1.x exits 0 and prints the same.
    assert "Tests failed: 1" in done.output and done.exit_code in (0, 1), done.output
    adk = _scores(load_any_results(root / "app" / ".adk" / "eval_history"))
    result = cli("run", "--baseline", "none", "--results-out", "ours.json")
    assert result.exit_code == 1, result.output  # the greeting does not mention the weather
    ours = load_json(root / "ours.json")
    (suite,) = ours["suites"]
    assert suite["eval_config_file"] == "tests/eval/eval_config.json"
    assert list(suite["eval_config"]["criteria"]) == list(STARTER_PACK_CONFIG["criteria"])
    assert suite["warnings"] == []
    scores = _scores(load_any_results(root / "ours.json"))
    assert scores == adk
    assert scores == {("greeting", GATED): 0.0, ("weather_query", GATED): 1.0}


def test_the_adk_samples_layout_is_discovered(tmp_path: Path) -> None:
    """google/adk-samples: the agent package beside eval/, as `adk eval customer_service
    eval/eval_data/simple.test.json` is run from the sample's folder."""
    project = adk_samples(tmp_path)
    (suite,) = discover_suites([tmp_path], tmp_path)
    assert suite.name == "customer_service"
    assert suite.agent_dir == project / "customer_service"
    assert suite.eval_config_path == project / "eval/eval_data/test_config.json"
    assert suite.warnings == []


def _agent(root: Path, name: str = "my_agent") -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("from . import agent\n")
    (root / name / "agent.py").write_text("root_agent = None\n")
    return root / name


def _eval_set(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"eval_set_id": path.stem.split(".")[0], "eval_cases": []}))
    return path


def _config(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))
    return path


@pytest.mark.parametrize(("eval_set", "config"), [
    ("my_agent/eval/cases.evalset.json", "my_agent/eval/eval_config.json"),  # same folder
    ("tests/eval/sets/cases.evalset.json", "tests/eval/eval_config.json"),  # a parent
    ("tests/eval/sets/cases.evalset.json", "tests/test_config.json"),  # a parent further up
    ("eval/data/cases.test.json", "eval/config/my_eval_config.yaml"),  # a sibling folder
    ("eval/data/cases.test.json", "agent_eval_config.json"),  # the repository root
])
def test_defaults_beside_an_eval_config_are_a_warning_naming_it(
    tmp_path: Path, eval_set: str, config: str
) -> None:
    _agent(tmp_path)
    _eval_set(tmp_path / eval_set)
    _config(tmp_path / config)
    (suite,) = discover_suites([tmp_path], tmp_path)
    assert suite.eval_config_path is None
    assert suite.nearby_configs == [tmp_path / config]
    folder = str(Path(eval_set).parent)
    assert suite.warnings == [
        f"suite `my_agent`: the eval sets in {folder} are scored with {DEFAULT_CRITERIA}, "
        f"but `{config}` looks like an eval config: name it as the suite's `eval_config:` "
        "in adk-eval.yaml (`adk-eval-action init` writes one naming every suite)"
    ]


def test_no_warning_for_another_suites_config_or_unrelated_files(tmp_path: Path) -> None:
    """A config another suite uses is not this suite's; files not named like an eval
    config, and eval set files, are not configs; nothing is searched outside the root."""
    _agent(tmp_path, "a_agent")
    _agent(tmp_path, "b_agent")
    _eval_set(tmp_path / "a_agent/eval/a.evalset.json")
    _config(tmp_path / "a_agent/eval/test_config.json")
    _eval_set(tmp_path / "b_agent/eval/b.evalset.json")
    _eval_set(tmp_path / "b_agent/eval/eval_config_cases.evalset.json")
    _config(tmp_path / "b_agent/eval/settings.json")
    _config(tmp_path.parent / "eval_config.json")  # outside the repository
    a, b = discover_suites([tmp_path], tmp_path)
    assert (a.name, a.eval_config_path) == ("a_agent", tmp_path / "a_agent/eval/test_config.json")
    assert (b.name, b.eval_config_path, b.warnings) == ("b_agent", None, [])


def test_a_suite_of_adk_eval_yaml_without_eval_config_is_warned_too(tmp_path: Path) -> None:
    _agent(tmp_path)
    _eval_set(tmp_path / "my_agent/eval/cases.evalset.json")
    _config(tmp_path / "my_agent/eval/eval_config.json")
    path = tmp_path / "adk-eval.yaml"
    path.write_text(yaml.safe_dump({"suites": [
        {"name": "mine", "agent": "my_agent", "eval_sets": ["my_agent/eval/*.evalset.json"]},
    ]}))
    (suite,) = suites_from_config(load_project_config(path), path)
    assert suite.eval_config_path is None
    assert suite.warnings[0].endswith(
        "`my_agent/eval/eval_config.json` looks like an eval config: name it as "
        "`eval_config:` of suite `mine` in adk-eval.yaml")
    # The starter-pack rule applies to a suite of the file as to discovery.
    starter = starter_pack(tmp_path / "starter")
    path = starter / "adk-eval.yaml"
    path.write_text(yaml.safe_dump({"suites": [
        {"name": "app", "agent": "app", "eval_sets": ["tests/eval/evalsets/*.evalset.json"]},
    ]}))
    (suite,) = suites_from_config(load_project_config(path), path)
    assert suite.eval_config_path == (starter / "tests/eval/eval_config.json").resolve()
    assert suite.warnings == []


def test_the_warning_reaches_the_results_the_comment_and_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun, adk_process: None
) -> None:
    """The starter-pack template with its eval sets moved out of `evalsets/`: ADK's
    defaults apply (as `adk eval` without --config_file_path), and the run says so."""
    root = starter_pack(tmp_path)
    (root / "tests/eval/evalsets").rename(root / "tests/eval/sets")
    monkeypatch.chdir(root)
    result = cli("run", "--baseline", "none", "--results-out", "ours.json",
                 "--comment-out", "comment.md")
    ours = load_json(root / "ours.json")
    (suite,) = ours["suites"]
    assert suite.get("eval_config_file") is None
    said = ("suite `app`: the eval sets in tests/eval/sets are scored with ADK's default "
            "criteria")
    (warning,) = [w for w in suite["warnings"] if w.startswith(said)]
    assert "`tests/eval/eval_config.json` looks like an eval config" in warning
    assert warning in ours["warnings"]
    comment = (root / "comment.md").read_text()
    assert ("> ⚠️ suite `app`: the eval sets in tests/eval/sets are scored with ADK's default "
            "criteria (tool\\_trajectory\\_avg\\_score 1.0, response\\_match\\_score 0.8), but "
            "`tests/eval/eval_config.json` looks like an eval config: name it as the suite's "
            "`eval_config:` in adk-eval.yaml") in comment
    assert f"warning: {warning}" in result.output
    planned = cli("plan")
    assert planned.exit_code == 0 and f"warning: {warning}" in planned.output, planned.output
