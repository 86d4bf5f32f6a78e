"""Repositories as the community keeps them (tests/fixtures/community, its README): agents
loaded in every shape google-adk's loader loads, and messages that point at the right fix,
each said once. Each test copies a folder and runs ``adk-eval-action run ... --baseline
none`` in it through real google-adk with the stand-in models."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CliRun
from support.reported import Run, case_runs, reported_runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "community"


@pytest.fixture
def community(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Run:
    """``run(folder, *args)``: ``adk-eval-action run ARGS --baseline none`` on a copy of
    ``folder`` (exit code, console output, the results file's JSON or None)."""
    return reported_runner(FIXTURES, tmp_path, monkeypatch, cli)


def test_an_agent_exported_by_its_packages_init_is_found_and_run(community: Run) -> None:
    code, output, results = community("init_export")
    assert code == 0, output
    assert results is not None
    assert [s["name"] for s in results["suites"]] == ["shop_bot"]
    assert [r["status"] for r in case_runs(results)] == ["passed"]


def test_a_missing_third_party_package_says_to_install_the_agents_dependencies(
    community: Run,
) -> None:
    code, output, results = community("missing_package")
    assert code == 2, output
    assert output.count("No module named 'notes_store_client'") == 1, output
    (line,) = [x for x in output.splitlines() if "notes_store_client" in x]
    assert line.startswith("error (agent: notes_bot/agent.py): agent notes_bot failed to "
                           "import: ModuleNotFoundError: No module named 'notes_store_client' "
                           "(at notes_bot/agent.py:4)")
    assert ("`notes_store_client` is not installed where the evaluation runs: install the "
            "agent's dependencies: name notes_bot/requirements.txt, which lists it, as the "
            "suite's `requirements` in adk-eval.yaml (`adk-eval-action init` does), or in "
            "the action's `requirements` input (locally: `pip install -r "
            "notes_bot/requirements.txt`)") in line
    assert "fix the agent module" not in output
    assert results is not None
    (error,) = results["suites"][0]["errors"]
    assert (error["kind"], error["file"], error["line"]) == ("agent", "notes_bot/agent.py", 4)
    assert "requirements" in error["hint"]


def test_no_module_named_src_says_how_the_package_root_is_set(
    community: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    code, output, _ = community("package_root")
    assert code == 2, output
    # `src` itself, or `src.app` where the test process has another `src` on its path.
    (line,) = [x for x in output.splitlines() if "No module named 'src" in x]
    # Repository-relative, not the agent's parent folder's (`app/agent.py`).
    assert "(at backend/src/app/agent.py:7)" in line
    assert "`src` is this repository's own code (backend/src)" in line
    assert "add backend to PYTHONPATH" in line
    # And that is the fix: with the package root on the path (the second run's copy is in
    # folder 1), the agent runs. (The test process's own `src` set aside while it does.)
    monkeypatch.syspath_prepend(str(tmp_path / "1" / "package_root" / "backend"))
    monkeypatch.delitem(sys.modules, "src", raising=False)
    code, output, _ = community("package_root")
    assert code == 0, output


def test_an_exception_every_run_raises_before_the_first_model_call_is_an_agent_that_did_not_start(
    community: Run,
) -> None:
    code, output, results = community("missing_env")
    assert code == 2, output
    assert "gate INCOMPLETE (agent setup): 0 of 3 eval cases could be evaluated" in output
    assert "gate FAILED" not in output
    assert output.count("ORDERS_DB_URL") == 2, output  # the key and the variable, one line
    (line,) = [x for x in output.splitlines() if "ORDERS_DB_URL" in x]
    assert line.startswith("error (agent: orders_bot/agent.py): agent orders_bot failed to "
                           "start: every eval case run (3) raised before the agent's first "
                           "model call: the agent raised KeyError: 'ORDERS_DB_URL' (at "
                           "orders_bot/agent.py:12): the environment variable `ORDERS_DB_URL` "
                           "is not set")
    assert "progress: 3/3 eval case runs (100%), 3 with errors" in output
    assert results is not None
    (error,) = results["suites"][0]["errors"]
    assert (error["kind"], error["file"], error["line"]) == ("agent", "orders_bot/agent.py", 12)
    assert {(r["status"], r["error_kind"]) for r in case_runs(results)} == {("error", "agent")}


def test_with_the_variable_set_the_same_agent_runs(
    community: Run, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORDERS_DB_URL", "postgres://orders.example/db")
    code, output, _ = community("missing_env")
    assert code == 0, output
    assert "3/3 eval case runs (100%), 0 with errors" in output


def test_a_typescript_adk_repository_is_named_as_not_supported(community: Run) -> None:
    code, output, _ = community("typescript")
    assert code == 2, output
    assert ("package.json makes this an ADK for TypeScript project (`@google/adk`), which is "
            "not supported") in output
    assert "Traceback" not in output and "/tmp" not in output


# --------------------------------------------------------------------------- discovery


def test_a_makefiles_adk_eval_command_is_a_suite_with_its_agent_files_and_config(
    community: Run,
) -> None:
    """The Makefile names the agent (a variable), eval sets named `*_eval.json` and
    `*_evalset.json` (a shell glob) and the eval config: discovery runs what it runs."""
    code, output, results = community("makefile_evals")
    assert code == 0, output
    assert "suite helper: agent agents/helper (as Makefile:12 runs it)" in output
    assert results is not None
    (suite,) = results["suites"]
    assert [s["file"] for s in suite["eval_sets"]] == [
        "tests/eval/evalsets/core_eval.json", "tests/eval/evalsets/refunds_evalset.json"]
    assert suite["eval_config_file"] == "tests/eval/eval_config.json"


def test_eval_sets_of_other_names_without_an_agent_are_named_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    """Without the Makefile nothing ties the eval sets to the agent: `run` names the JSON
    eval sets it found and says how to give them an agent."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "makefile_evals", root)
    (root / "Makefile").unlink()
    monkeypatch.chdir(root)
    result = cli("run", "--baseline", "none")
    assert result.exit_code == 2, result.output
    assert ("eval sets found without an agent: tests/eval/evalsets/core_eval.json, "
            "tests/eval/evalsets/refunds_evalset.json") in result.output
    assert "`adk-eval-action init --agent PATH` writes it" in result.output


def test_an_agent_evaluator_test_is_a_suite(community: Run) -> None:
    """A pytest test calling AgentEvaluator.evaluate (parametrized over its eval data,
    the agent in a src layout) is the suite: both files, the test_config.json beside."""
    code, output, results = community("pytest_evals")
    assert code == 0, output
    assert "(as tests/integration/test_agent_eval.py:15 runs it)" in output
    assert results is not None
    (suite,) = results["suites"]
    assert suite["agent"] == "src/bank_bot"
    assert [s["file"] for s in suite["eval_sets"]] == [
        "tests/integration/data/balance.test.json", "tests/integration/data/statement.test.json"]


def _copy(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    monkeypatch.chdir(root)
    return root


def test_init_runs_what_the_makefile_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    root = _copy("makefile_evals", tmp_path, monkeypatch)
    result = cli("init", "--num-runs", "1")
    assert result.exit_code == 0, result.output
    assert "suite helper (as Makefile:12 runs it): agent agents/helper" in result.output
    text = (root / "adk-eval.yaml").read_text()
    assert "    # as Makefile:12 runs it\n    agent: agents/helper\n" in text
    assert yaml.safe_load(text)["suites"] == [{
        "name": "helper", "agent": "agents/helper",
        "eval_sets": ["tests/eval/evalsets/core_eval.json",
                      "tests/eval/evalsets/refunds_evalset.json"],
        "eval_config": "tests/eval/eval_config.json"}]
    ran = cli("run", "--baseline", "none", "--results-out", "r.json")
    assert ran.exit_code == 0, ran.output
    assert "gate PASSED: 3/3 eval cases passed" in ran.output


def test_init_writes_the_agent_to_fill_in_with_the_agent_folders_it_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    """The agent is neither at nor above its eval sets and nothing names it: init writes
    adk-eval.yaml anyway, with an `agent:` to fill in and the agent folders of the
    repository (one exported by an `__init__.py`); until it is filled in, `plan` says so."""
    root = _copy("agent_elsewhere", tmp_path, monkeypatch)
    result = cli("init", "--num-runs", "1")
    assert result.exit_code == 0, result.output
    assert ("warning: suite tests/eval: no agent found for its eval sets: fill in its `agent:` "
            "in adk-eval.yaml (agent folders in the repository: adk_apps/order_intake, "
            "backend/my_agent)") in result.output
    text = (root / "adk-eval.yaml").read_text()
    assert "Agent folders in this repository: adk_apps/order_intake, backend/my_agent" in text
    assert yaml.safe_load(text)["suites"][0]["agent"] == ""
    planned = cli("plan")
    assert planned.exit_code == 2, planned.output
    assert "suites[0].agent" in planned.output and "empty: fill in the folder" in planned.output


def test_init_with_agent_names_the_agent_kept_elsewhere_and_the_run_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    root = _copy("agent_elsewhere", tmp_path, monkeypatch)
    result = cli("init", "--num-runs", "1", "--agent", "backend/my_agent")
    assert result.exit_code == 0, result.output
    assert "suite my_agent (agent named with --agent): agent backend/my_agent" in result.output
    (suite,) = yaml.safe_load((root / "adk-eval.yaml").read_text())["suites"]
    assert (suite["agent"], suite["eval_sets"]) == ("backend/my_agent",
                                                    ["tests/eval/*.evalset.json"])
    ran = cli("run", "--baseline", "none")
    assert ran.exit_code == 0, ran.output
    # What is not an agent folder is refused, saying what google-adk loads.
    (root / "adk-eval.yaml").unlink()
    refused = cli("init", "--agent", "backend/persistence")
    assert refused.exit_code == 2
    assert "--agent: not an agent folder (google-adk loads an agent folder" in refused.output


def test_init_gives_eval_sets_the_repositorys_only_agent_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun,
) -> None:
    root = _copy("agent_elsewhere", tmp_path, monkeypatch)
    shutil.rmtree(root / "adk_apps")
    result = cli("init", "--num-runs", "1")
    assert result.exit_code == 0, result.output
    assert "given the repository's only agent folder, backend/my_agent" in result.output
    text = (root / "adk-eval.yaml").read_text()
    assert "    # agent: the repository's only agent folder, check it\n" in text
    assert yaml.safe_load(text)["suites"][0]["agent"] == "backend/my_agent"
