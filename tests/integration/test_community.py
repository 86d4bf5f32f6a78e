"""Repositories as the community keeps them (tests/fixtures/community, its README): agents
loaded in every shape google-adk's loader loads, and messages that point at the right fix,
each said once. Each test copies a folder and runs ``adk-eval-action run ... --baseline
none`` in it through real google-adk with the stand-in models."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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
            "agent's dependencies: name notes_bot/requirements.txt, which lists it, in the "
            "action's `requirements` input (locally: `pip install -r "
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
