"""Many agents in one repository (google/adk-samples' layout): `init` finds each agent's own
dependency file, names it in adk-eval.yaml and says so; names the dependencies that cannot
live together, as `plan` does, with what to do; and, past what one job should evaluate or
with such conflicts, splits the suites into agent groups (each suite's `shard`) and writes
a matrix workflow (one job per group, a merge job: actionlint-clean). The groups' shards,
merged, are the run one job would have made."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from adk_eval_action.errors import ConfigError
from adk_eval_action.project.config import load_project_config
from adk_eval_action.project.discovery import suites_from_config
from adk_eval_action.results.model import package_version
from adk_eval_action.run.evaluation import find_suites
from adk_eval_action.settings import load_request
from conftest import CliRun, load_json
from repo.test_workflows import lint, node  # noqa: F401 - the fixture
from support.layouts import agent_monorepo

ADK = package_version("google-adk")
OTHER_ADK = "1.23.0" if ADK != "1.23.0" else "1.24.0"  # in range, not the one running
DEPENDENCIES = {
    1: "requests==2.31.0\n",
    2: "# pinned elsewhere\nrequests==2.32.3\n",
    3: '[tool.poetry.dependencies]\npython = "^3.11"\nrequests = "^2"\n',
    4: f'[project]\nname = "a4"\ndependencies = ["google-adk=={OTHER_ADK}"]\n',
    5: '[project]\nname = "a5"\ndependencies = ["PyYAML>=6", "pydantic"]\n',
}


def _repository(root: Path) -> Path:
    agent_monorepo(root, 12, DEPENDENCIES)
    for args in (["init", "-q", "-b", "main"],
                 ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Twelve agents after `init`; and what it printed."""
    from click.testing import CliRunner

    from adk_eval_action.cli import main

    root = _repository(tmp_path_factory.mktemp("monorepo") / "repo")
    cwd = Path.cwd()
    try:
        os.chdir(root)
        done = CliRunner().invoke(main, ["init", "--num-runs", "1"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert done.exit_code == 0, done.output
    return root, done.output


def _suites(root: Path) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((root / "adk-eval.yaml").read_text())
    return {s["name"]: s for s in data["suites"]}


def test_each_agents_own_dependencies_are_named_and_said(initialised):
    root, output = initialised
    suites = _suites(root)
    assert suites["agent_01"]["requirements"] == ["python/agents/agent-01/requirements.txt"]
    assert suites["agent_05"]["requirements"] == ["python/agents/agent-05/pyproject.toml"]
    assert "requirements" not in suites["agent_00"]
    # A pyproject without [project].dependencies (Poetry's) cannot be installed: none is
    # tried, and the file says why.
    assert suites["agent_03"]["requirements"] == []
    text = (root / "adk-eval.yaml").read_text()
    assert "    # not installable: python/agents/agent-03/pyproject.toml declares its " \
        "dependencies in [tool.poetry.dependencies] (Poetry)" in text
    assert "suite agent_05: own dependencies python/agents/agent-05/pyproject.toml (2 " \
        "requirements), installed by the action before the suite runs" in output
    assert "warning: suite agent_03: its dependencies cannot be installed: python/agents/" \
        "agent-03/pyproject.toml declares its dependencies in [tool.poetry.dependencies] " \
        "(Poetry)" in output
    # What run and plan read back is what init wrote.
    config = load_project_config(root / "adk-eval.yaml")
    read = {s.name: s for s in suites_from_config(config, root / "adk-eval.yaml")}
    assert read["agent_01"].requirements == [(root / suites["agent_01"]["requirements"][0])
                                             .resolve()]
    assert read["agent_03"].requirements == []


def test_conflicts_are_named_and_kept_apart_in_agent_groups(initialised, node):  # noqa: F811
    root, output = initialised
    assert ("warning: dependencies that cannot live together: no version of requests "
            "satisfies both of them (suite agent_01: requests==2.31.0 (python/agents/agent-01/"
            "requirements.txt); suite agent_02: requests==2.32.3 (python/agents/agent-02/"
            "requirements.txt)); evaluate them in separate jobs") in output
    assert f"is not the google-adk {ADK} this action runs: installing it replaces google-adk " \
        "for every suite of the job" in output
    shards = {name: s.get("shard") for name, s in _suites(root).items()}
    assert shards["agent_04"] == 1 and list(shards.values()).count(1) == 1
    assert shards["agent_01"] != shards["agent_02"]
    assert sorted(set(shards.values())) == [1, 2, 3]
    assert "3 agent groups, one matrix job each" in output
    workflow = yaml.safe_load((root / ".github/workflows/adk-eval.yml").read_text())
    assert workflow["jobs"]["eval"]["strategy"] == {"fail-fast": False,
                                                    "matrix": {"shard": [1, 2, 3]}}
    (group,) = [s for s in workflow["jobs"]["eval"]["steps"] if s.get("id") == "eval"]
    assert group["with"]["shard"] == "${{ matrix.shard }}/3"
    merge = workflow["jobs"]["merge"]
    assert merge["needs"] == "eval" and merge["if"] == "always()"
    (joined,) = [s for s in merge["steps"] if s.get("id") == "eval"]
    assert joined["with"] == {"merge": "adk-eval-parts/*.json"}
    uploads = [s["with"]["name"] for s in merge["steps"] if "upload-artifact" in s.get("uses", "")]
    assert uploads == ["adk-eval-results", "adk-eval-report"]
    done = lint(node, root / ".github/workflows/adk-eval.yml")
    assert done.returncode == 0 and "0 problem(s)" in done.stdout, done.stdout + done.stderr


def test_plan_names_the_same_dependencies_and_conflicts(initialised, monkeypatch, cli: CliRun):
    root, _ = initialised
    monkeypatch.chdir(root)
    planned = cli("plan")
    assert planned.exit_code == 0, planned.output
    assert "suite agent_01: own dependencies python/agents/agent-01/requirements.txt " \
        "(installed by the action before it runs)" in planned.output
    assert "warning: dependencies that cannot live together: no version of requests " \
        "satisfies both of them" in planned.output


def test_a_shard_count_below_the_groups_is_refused(initialised):
    root, _ = initialised
    request = load_request(root, flags={"shard": "1/2"})
    with pytest.raises(ConfigError, match=r"adk-eval\.yaml \(field `suites\[\d+\]\.shard`\): "
                       r"suite agent_\d+ is evaluated by shard 3, but this run is shard 1/2"):
        find_suites(request)


def test_the_groups_shards_merged_are_the_one_job_run(initialised, tmp_path, monkeypatch,
                                                       cli: CliRun):
    root, _ = initialised
    monkeypatch.chdir(root)
    suites = _suites(root)
    for k in (1, 2, 3):
        done = cli("run", "--shard", f"{k}/3", "--results-out", str(tmp_path / f"p{k}.json"))
        assert done.exit_code == 0, done.output
        part = load_json(tmp_path / f"p{k}.json")
        # Each job evaluates its group's suites whole, and nothing else.
        assert {c[0] for c in part["shard"]["cases"]} == {
            name for name, s in suites.items() if s["shard"] == k}
    merged = cli("merge", *(str(tmp_path / f"p{k}.json") for k in (1, 2, 3)),
                 "--results-out", str(tmp_path / "merged.json"))
    assert merged.exit_code == 0, merged.output
    compared = cli("compare", str(tmp_path / "merged.json"),
                   "--json-out", str(tmp_path / "merged-comparison.json"))
    assert compared.exit_code == 0, compared.output
    whole = cli("run", "--results-out", str(tmp_path / "whole.json"),
                "--json-out", str(tmp_path / "whole-comparison.json"))
    assert whole.exit_code == 0, whole.output

    def gated(path: Path) -> Any:
        data = json.loads(path.read_text())
        return ([(m["suite"], m["metric_name"], m["head"]["mean"], m["head"]["passed"])
                 for m in data["metrics"] if not m["head"]["informational"]],
                [(c["suite"], c["eval_id"], c["head_status"]) for c in data["cases"]])

    assert gated(tmp_path / "merged-comparison.json") == gated(tmp_path / "whole-comparison.json")


def test_a_named_requirements_file_that_is_not_there_is_refused(tmp_path):
    root = agent_monorepo(tmp_path / "repo", 1)
    (root / "adk-eval.yaml").write_text(yaml.safe_dump({"suites": [{
        "name": "a", "agent": "python/agents/agent-00/agent_00",
        "eval_sets": ["python/agents/agent-00/eval/*.evalset.json"],
        "requirements": ["python/agents/agent-00/requirements.txt"]}]}))
    with pytest.raises(ConfigError, match=r"adk-eval\.yaml \(field `suites\[0\]\.requirements`"
                       r"\): requirements file python/agents/agent-00/requirements\.txt not "
                       r"found"):
        find_suites(load_request(root))
