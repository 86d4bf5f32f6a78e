"""Shared fixtures: a copy of the bundled example repository, an in-process CLI runner, and
the evaluations a whole session shares.

Every test that evaluates runs real google-adk code (LocalEvalService, its evaluators and
judge prompts). The example agents run on ``gemini-2.5-flash`` through ADK's ``Gemini``
class and google-genai against the local fake of the Gemini API (``gemini_api``, one for
the session, answering from ``examples/gemini_fake.yaml``); agents and eval configs of
tests' own use the deterministic stand-ins of ``adk_eval_action.testing.standins``.

Keeping the suite fast (the quick loop is ``scripts/test.sh --quick``, see README
"Development"):

- Evaluate in this process. A new interpreter pays ~10 s importing google-adk before it
  evaluates anything; an in-process evaluation of the example takes about a second.
- A test that only reads an evaluation's results, comment or console output uses a shared
  run: ``good_run`` (the example agent, no baseline) or ``regressed_run`` (the regressed
  variant against ``good_run``). Their files are read-only; a test that must change the
  project or the results works in ``example_repo`` and runs its own evaluation.
- To share another evaluation, add a session fixture built with ``shared_run`` here.
- A test that must start a process (a second interpreter, git fetching from a clone) is
  marked ``slow``; so is one that waits on the clock (a retry backoff, a call timeout, a
  start-up limit: a second or more), and an end-to-end run whose check has a quick
  in-process twin (the hostile template rows, tests/unit/report/test_sandbox.py). Where a
  wait is not
  what a test is about, shorten it instead (``initial_delay_s: 0.01``, a 0.5 s budget).
  One that needs podman is marked ``container``. The quick loop leaves both out and runs
  on two pytest-xdist workers, so a session fixture is built once per worker;
  ``scripts/test.sh`` (CI) runs everything in one process.
- What the test process itself does to stay quick, each measured: the Vertex AI SDK that
  google-adk imports is deferred (:data:`DEFERRED_PACKAGES`); what lives for the whole
  process is frozen for the garbage collector (``_standins``); a worker ends without
  finalising the interpreter (``pytest_unconfigure``); LiteLLM's tests share one worker
  (``pytest_xdist_make_scheduler``); git's system configuration is a session file
  (``git_system_config``); the quick loop tries a quarter of the hypothesis examples
  (``examples``).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.abc
import io
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner, Result

from adk_eval_action.adk.files.eval_history import read_eval_history
from adk_eval_action.adk.runtime.case_failures import BEHAVIOUR_PREFIXES
from adk_eval_action.analysis.gate import decide
from adk_eval_action.cli import main
from adk_eval_action.github.logs import GitHubFormatter, PlainFormatter, log_to
from adk_eval_action.project.config import GateConfig
from adk_eval_action.results.io import load_results
from adk_eval_action.results.model import CaseStatus
from adk_eval_action.results.status import case_status, run_status
from adk_eval_action.settings import RunRequest, load_request
from support.tables import compare

if TYPE_CHECKING:
    from adk_eval_action.testing.gemini_fake import GeminiFake

#: Packages google-adk imports with its metric registry that no test uses: the Vertex AI
#: SDK, for the metrics that call Vertex AI's evaluation service (about 2.4 s of CPU per
#: process, a third of google-adk's import; no test can reach Vertex AI). The test process
#: defers them (:class:`_DeferredPackages`), so each pytest-xdist worker saves the import.
DEFERRED_PACKAGES = frozenset({"agentplatform", "vertexai"})


class _DeferredModule(types.ModuleType):
    """A module whose code runs when an attribute its import machinery did not set is
    first read. importlib's ``LazyLoader`` runs it on any attribute read, and hypothesis
    reads every module's ``__file__`` when it collects the constants of local code."""

    def __getattr__(self, name: str) -> Any:
        loader = self.__dict__.pop("_deferred_loader", None)
        if loader is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        loader.exec_module(self)
        return getattr(self, name)


class _DeferredLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        return _DeferredModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["_deferred_loader"] = self.loader


class _DeferredPackages(importlib.abc.MetaPathFinder):
    """Finds :data:`DEFERRED_PACKAGES` as the other finders do, with a deferring loader."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if name not in DEFERRED_PACKAGES:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _DeferredLoader(spec.loader)
                return spec
        return None


if not any(isinstance(f, _DeferredPackages) for f in sys.meta_path):
    sys.meta_path.insert(0, _DeferredPackages())

#: Set by ``scripts/test.sh --quick``: property tests then try fewer examples (``examples``).
QUICK_LOOP = os.environ.get("ADK_EVAL_QUICK_LOOP") == "1"


def examples(full: int) -> int:
    """How many examples a hypothesis property tries: ``full`` in the whole suite (CI), a
    quarter of them (at least 10) in the quick loop, where the largest property
    (tests/unit/analysis/test_compare_reference.py, 150 examples) took 3 s of CPU."""
    return max(10, full // 4) if QUICK_LOOP else full


#: tests/fixtures holds repositories as users keep them, their own pytest files among them
#: (an AgentEvaluator test is how some name their suites): data, not this suite's tests.
collect_ignore = ["fixtures"]

REPO = Path(__file__).resolve().parents[1]
#: The trust store this machine gives processes (tests/e2e/test_container.py mounts it for pip
#: in the image build); the session points SSL_CERT_FILE elsewhere (``gemini_api``).
HOST_CA_FILE = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
EXAMPLES = REPO / "examples"
SHARED = REPO.parent / "shared"


#: Tests that import LiteLLM (~2 s of CPU the first time in a process), by node id prefix.
#: The quick loop runs them on one pytest-xdist worker (``pytest_xdist_make_scheduler``), so
#: only one worker pays the import. A renamed test still runs, only perhaps on the other one.
LITELLM_TESTS = (
    "tests/integration/test_model_calls.py::test_litellm_banners_stay_off_the_console",
    "tests/integration/test_preflight.py::test_models_the_preflight_cannot_judge_are_not_refused",
    "tests/integration/test_preflight.py::test_a_litellm_model_without_its_providers_key_is_refused",
    "tests/integration/test_preflight.py::test_a_judge_model_no_registry_resolves_is_refused_naming_the_field"
    "[nosuchprovider/",
    "tests/integration/test_real_model_path.py::test_setup_errors_are_exit_2_naming_the_file_and_field"
    "[litellm-",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's ``load`` distribution, but :data:`LITELLM_TESTS` go to one worker.

    ``--dist loadgroup`` with an ``xdist_group`` mark is pytest-xdist's way; it groups
    nothing on pytest 9.2 (the mark's suffix on the node id no longer takes effect:
    pytest-dev/pytest-xdist#1386), so this scopes the tests by node id instead: one scope for
    the LiteLLM tests, one per test for the rest."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LiteLLMTogether(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
        def _split_scope(self, nodeid: str) -> str:
            return "litellm" if nodeid.startswith(LITELLM_TESTS) else nodeid

    return LiteLLMTogether(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A pytest-xdist worker ends here, once it has reported its last result (its
    ``workerfinished`` event is written to the controller before this hook): finalising the
    interpreter and pytest's clean-up freed a heap that holds google-adk, 1.5-3 s of CPU per
    worker while the controller waited (up to 10 s on a loaded machine) before printing the
    result. The controller, and a run without workers, end as usual with pytest's exit
    code."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)


@pytest.fixture(scope="session", autouse=True)
def _standins() -> None:
    """Registers the stand-in models (scripted-*, stand-in-judge*) with ADK's LLMRegistry:
    tests name them in agents and eval configs of their own, which do not all import the
    example agent that registers them. A fixture, not an import-time call, so pytest-xdist's
    controller process, which runs no test, does not import google-adk (~5 s)."""
    from adk_eval_action.testing.standins import register_standins

    register_standins()
    # What is alive now (google-adk, pydantic's schemas, the collected tests) lives as long
    # as the process: frozen, Python's full garbage collections no longer walk it, and
    # collections start after 20,000 net allocations, not 700. Garbage collection took
    # 4.5 s of CPU per pytest-xdist worker in the quick loop (full ones 0.2 s each), now
    # 1.7 s. Only the test process is tuned: a run of the action collects as Python does.
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


@pytest.fixture(scope="session", autouse=True)
def git_system_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """git's system configuration for the session (``GIT_CONFIG_SYSTEM``, git >= 2.32), a
    file of its own, empty at the start. The action trusts its workspace with
    ``git config --system --add safe.directory`` (as its container needs); run as root, the
    tests wrote that into the machine's /etc/gitconfig, which had 8,000 entries after a few
    hundred runs, read by every git call (8 ms a call instead of 2)."""
    path = tmp_path_factory.mktemp("git") / "gitconfig"
    path.touch()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GIT_CONFIG_SYSTEM", str(path))
        yield path


@pytest.fixture(scope="session", autouse=True)
def gemini_api(_standins: None, tmp_path_factory: pytest.TempPathFactory,
               ) -> Iterator[GeminiFake]:
    """The local fake of the Gemini API for the whole session, answering the example agents
    and ADK's judge from ``examples/gemini_fake.yaml``; google-genai is pointed at it
    (``GOOGLE_GEMINI_BASE_URL``) with a dummy ``GOOGLE_API_KEY`` in every test's
    environment, and processes the tests start inherit both. A test that injects faults
    or replaces the script has them undone after it (``_fresh_gemini_api``).

    ``SSL_CERT_FILE`` names a trust store of one certificate for the session: every
    google-genai client (ADK makes one per model instance and event loop, 400+ in the quick
    loop) builds three TLS contexts from that file, 20 ms each with the system's 144
    certificates (25 s of the quick loop's CPU), 0.3 ms with one. The fake speaks plain
    HTTP on 127.0.0.1, so no certificate is ever checked."""
    from adk_eval_action.testing.gemini_fake import GeminiFake, load_script

    script = load_script(EXAMPLES / "gemini_fake.yaml")
    trust_store = tmp_path_factory.mktemp("tls") / "one-root.pem"
    trust_store.write_text(_first_certificate(Path(HOST_CA_FILE)), encoding="ascii")
    with GeminiFake(script.agents) as fake, pytest.MonkeyPatch.context() as patch:
        for name, value in fake.env().items():
            patch.setenv(name, value)
        patch.setenv("SSL_CERT_FILE", str(trust_store))
        patch.delenv("GEMINI_API_KEY", raising=False)
        yield fake


def _first_certificate(bundle: Path) -> str:
    """The first PEM certificate of ``bundle`` (certifi's when the file is missing)."""
    if not bundle.is_file():
        import certifi

        bundle = Path(certifi.where())
    text = bundle.read_text(encoding="ascii", errors="replace")
    end = "-----END CERTIFICATE-----"
    return text[text.index("-----BEGIN CERTIFICATE-----"):text.index(end) + len(end)] + "\n"


@pytest.fixture(autouse=True)
def _litellm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undoes, after each test, what importing LiteLLM (a test of LiteLlm, or the preflight
    for a LiteLlm model) sets in the environment, TIKTOKEN_CACHE_DIR: later tests see the
    environment they started with (a variable named like a token is masked as a secret by
    the action, which the hostile rows check). Every test, as which test first imports
    LiteLLM in a worker depends on the order tests are given out."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")


@pytest.fixture(autouse=True)
def _fresh_gemini_api(gemini_api: GeminiFake) -> Iterator[None]:
    agents = gemini_api.agents
    yield
    gemini_api.faults = []
    gemini_api.agents = agents


def copy_examples(root: Path) -> Path:
    """``examples/`` copied to ``root`` (without caches or earlier results); returns root."""
    shutil.copytree(
        # examples/monorepo is a repository of its own (tests/e2e/test_monorepo.py).
        EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".adk", "adk-eval-*",
                                                      "monorepo")
    )
    return root


@pytest.fixture
def example_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of ``examples/`` as the current directory (a repository root)."""
    root = copy_examples(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


@contextlib.contextmanager
def as_adk_eval_starts(monkeypatch: pytest.MonkeyPatch, modules: tuple[str, ...]) -> Iterator[None]:
    """This process as google-adk's `adk eval` starts it: no ``modules`` (agent packages,
    with their submodules) left from another test, no .env loaded; afterwards ADK's logging
    set-up (``logging.basicConfig``, the google_adk level) and its agent imports undone
    (monkeypatch then puts back what was there before)."""
    def ours(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in modules)

    monkeypatch.setenv("ADK_DISABLE_LOAD_DOTENV", "1")
    for name in [n for n in sys.modules if ours(n)]:
        monkeypatch.delitem(sys.modules, name)
    root, adk_logger = logging.getLogger(), logging.getLogger("google_adk")
    handlers, root_level, adk_level = root.handlers[:], root.level, adk_logger.level
    yield
    root.handlers[:] = handlers
    root.setLevel(root_level)
    adk_logger.setLevel(adk_level)
    for name in [n for n in sys.modules if ours(n)]:
        del sys.modules[name]


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[Path]:
    """Runs the block in ``path`` and then returns to the previous working directory (for
    session fixtures, which cannot use ``monkeypatch.chdir``)."""
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield path
    finally:
        os.chdir(previous)


@dataclass(frozen=True)
class SharedRun:
    """One ``adk-eval-action run`` of a session, evaluated once in this process.

    ``root`` is the repository it ran in; ``results``, ``comment`` and ``summary`` are the
    files it wrote (absolute paths, read-only; None when the run was not asked for one);
    ``output`` is its console output and ``exit_code`` its exit code (0, 1 or 2); ``html``
    the HTML report (``--html-out``) when asked for.
    """

    root: Path
    exit_code: int
    output: str
    results: Path
    comment: Path | None = None
    summary: Path | None = None
    html: Path | None = None


def shared_run(root: Path, *args: str, results: str, comment: str | None = None,
               summary: str | None = None, html: str | None = None) -> SharedRun:
    """Runs ``adk-eval-action run ARGS --results-out RESULTS`` (plus ``--comment-out`` /
    ``--summary-out`` when named; file names relative to ``root``) in ``root`` in this
    process, then makes the files it wrote read-only so no test changes what others read."""
    extra = ["--results-out", results]
    extra += ["--comment-out", comment] if comment else []
    extra += ["--summary-out", summary] if summary else []
    extra += ["--html-out", html] if html else []
    with working_directory(root):
        result = CliRunner().invoke(main, ["run", *args, *extra], catch_exceptions=False)
    run = SharedRun(
        root=root, exit_code=result.exit_code, output=result.output, results=root / results,
        comment=root / comment if comment else None,
        summary=root / summary if summary else None, html=root / html if html else None,
    )
    for path in (run.results, run.comment, run.summary, run.html):
        if path is not None and path.exists():
            path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    if run.results.exists():
        check_statuses(run.results)
    return run


def check_statuses(path: Path) -> None:
    """The results file and the gate say the same of every eval case (issue 11, item 4):
    each run's recorded status is its metrics' (results.status.run_status), each case's
    status in the comparison is its runs' (results.status.case_status), and the gate fails
    exactly the cases that are not passed (``not_evaluated: fail``), or only the failed
    ones (``warn``)."""
    results = load_results(path, history=read_eval_history)
    comparison = compare(results, None, "none")
    recorded = {}
    for suite in results.suites:
        for eval_set in suite.eval_sets:
            for case in eval_set.eval_cases:
                for run in case.runs:
                    # adk.runtime.case_failures words what the agent or the model did so.
                    agent_raised = (run.error or "").startswith(BEHAVIOUR_PREFIXES)
                    expected = run_status(run.metrics, run.error, agent_raised)
                    assert run.status == expected, (case.eval_id, run)
                key = (suite.name, eval_set.eval_set_id, case.eval_id)
                recorded[key] = case_status(r.status for r in case.runs)
    assert {c.key: c.head_status for c in comparison.cases} == recorded
    for mode, failing in (("fail", {CaseStatus.FAILED, CaseStatus.ERROR,
                                    CaseStatus.NOT_EVALUATED}), ("warn", {CaseStatus.FAILED})):
        gate = decide(comparison, GateConfig(not_evaluated=mode))
        assert {c.key for c in gate.failing_cases} == {
            key for key, status in recorded.items() if status in failing
        }


def git(root: Path, *args: str) -> str:
    """``git ARGS`` in ``root`` as a test author ``t`` (no system config); its output."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True,
                          text=True).stdout.strip()


def commit_all(root: Path) -> str:
    """Makes ``root`` a git repository with everything in one commit; returns its sha."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "examples"]):
        subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=root, env=env,
                       check=True, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="session")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """``run travel_agent --print-comment --results-out adk-eval-results.json`` on a copy of
    ``examples/`` committed to a fresh git repository (so the results name a commit), with
    no baseline (none given, not on GitHub): the example agent, every eval case passing
    (exit 0)."""
    root = copy_examples(tmp_path_factory.mktemp("good") / "repo")
    commit_all(root)
    return shared_run(root, "travel_agent", "--print-comment", results="adk-eval-results.json")


@pytest.fixture(scope="session")
def regressed_run(good_run: SharedRun) -> SharedRun:
    """``run --config regressed.adk-eval.yaml --baseline adk-eval-results.json``
    (``good_run``'s results) in the same copy, writing ``head.json``, a comment
    (``comment.md``), a job summary (``sum.md``) and the HTML report (``report.html``): the
    regressed variant compared with ``good_run`` (the gate fails, exit 1)."""
    return shared_run(
        good_run.root, "--config", "regressed.adk-eval.yaml", "--baseline",
        good_run.results.name, results="head.json", comment="comment.md", summary="sum.md",
        html="report.html",
    )


CliRun = Callable[..., Result]


@pytest.fixture
def cli() -> CliRun:
    """Runs ``adk-eval-action ARGS`` in process; returns click's Result (exit_code, output)."""

    def run(*args: str) -> Result:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        if "--results-out" in args and args[0] == "run":
            written = Path(args[args.index("--results-out") + 1])
            if written.is_file():
                check_statuses(written)
        return result

    return run


def load_json(path: Path) -> Any:
    """Parsed JSON of a file."""
    return json.loads(path.read_text(encoding="utf-8"))


def case_runs(results: dict[str, Any], eval_id: str) -> list[dict[str, Any]]:
    """The runs of an eval case, searched through every suite and eval set."""
    for suite in results["suites"]:
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                if case["eval_id"] == eval_id:
                    return case["runs"]
    raise KeyError(eval_id)


def metric(run: dict[str, Any], name: str) -> dict[str, Any]:
    """One metric result of a run, by name."""
    return next(m for m in run["metrics"] if m["metric_name"] == name)


class Console:
    """What this package logs while a test runs, as the CLI prints it (``lines``) or as the
    runner's log takes it (with ``GitHubFormatter``)."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    @property
    def lines(self) -> list[str]:
        return self.stream.getvalue().splitlines()


@pytest.fixture
def console() -> Iterator[Console]:
    """The log as the CLI prints it (github.logs.PlainFormatter)."""
    out = Console()
    with log_to(out.stream, PlainFormatter()):
        yield out


@pytest.fixture
def runner_log() -> Iterator[Console]:
    """The log as the action prints it for the runner (github.logs.GitHubFormatter)."""
    out = Console()
    with log_to(out.stream, GitHubFormatter()):
        yield out


def request_for(**flags: Any) -> RunRequest:
    """The pipeline's run in the current directory, with these CLI flags (option names,
    as :data:`adk_eval_action.settings.OPTIONS`) over its adk-eval.yaml."""
    return load_request(Path.cwd(), flags=flags)


@pytest.fixture
def keep_cwd() -> Any:
    """Restores the working directory after a test that changes it."""
    cwd = Path.cwd()
    yield
    os.chdir(cwd)
