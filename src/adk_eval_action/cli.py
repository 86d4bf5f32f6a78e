"""Command line: ``adk-eval-action run | compare | render | plan | init`` (and ``action`` /
``comment`` for GitHub). Exit codes: 0 gate passed, 1 gate failed, 2 usage, config or
infrastructure error (an unexpected exception too: "internal error"), 130/143 stopped by
SIGINT/SIGTERM.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from adk_eval_action.errors import (
    EXIT_USAGE,
    AdkEvalActionError,
    Interrupted,
    describe_exception,
)
from adk_eval_action.github.logs import (
    PlainFormatter,
    inert,
    log_to,
)
from adk_eval_action.redaction import Redactor, secret_values
from adk_eval_action.settings import (
    MODES,
    BaselineSpec,
    click_options,
    fallback_request,
    load_request,
)
from adk_eval_action.text import visible, without_surrogates

if TYPE_CHECKING:
    from pydantic import BaseModel

    from adk_eval_action.outcome import PipelineOutcome

# Named, not __name__: under `python -m adk_eval_action.cli` (the baseline re-run's child)
# __name__ is "__main__", outside the package's logger, and every line would be lost.
log = logging.getLogger("adk_eval_action.cli")


@contextmanager
def _console() -> Iterator[Redactor]:
    """The command's scope: its log on stderr as plain lines (stdout is the comment's),
    redacted of the environment's secret values (``redaction``); SIGINT/SIGTERM as
    ``Interrupted`` (``run.signals``); every error as its exit code: a named one as its
    own (2), a signal as 130/143, anything unexpected as 2 "internal error". All of it is
    restored when the command ends."""
    from adk_eval_action.run.signals import interrupt_on_signals

    redact = Redactor(secret_values(os.environ))
    with log_to(sys.stderr, PlainFormatter(redact)), interrupt_on_signals():
        try:
            yield redact
        except AdkEvalActionError as e:
            log.error("%s", e)
            sys.exit(e.exit_code)
        except Interrupted as e:
            log.error("%s", e)
            sys.exit(e.exit_code)
        except Exception as e:  # noqa: BLE001 - never a traceback and exit 1 for a bug
            log.error("internal error: %s (please report this as a bug)", describe_exception(e))
            sys.exit(EXIT_USAGE)


def _show(outcome: PipelineOutcome) -> None:
    """What stopped the run (``outcome.error``, after the file it names when the message
    does not) or why it was skipped, once: the pipeline leaves both to the entry point (the
    action makes them annotations, with the file as their ``file``)."""
    if outcome.error:
        where = outcome.error_file
        said = outcome.error if not where or where in outcome.error else f"{where}: {outcome.error}"
        log.error("%s", said)
    if outcome.skipped:
        log.info("ADK eval skipped: %s", outcome.skipped)


def _echo(text: str, redact: Redactor) -> None:
    """Print the comment to stdout, each line inert for the runner (github.logs.inert)."""
    click.echo("\n".join(inert(x) for x in redact(without_surrogates(text)).split("\n")))


@click.group()
@click.version_option(package_name="adk-eval-action")
def main() -> None:
    """Run google-adk evaluations, compare with a baseline, render the PR comment, gate."""


@main.command()
@click_options("run")
def run(**flags: Any) -> None:
    """Evaluate the eval sets under PATHS (default: .) with google-adk and gate.

    Flags win over adk-eval.yaml, which wins over the defaults (docs/architecture.md)."""
    from adk_eval_action.run.pipeline import run_pipeline
    from adk_eval_action.run.stop_outcomes import stopped_run

    with _console() as redact:
        try:
            request = load_request(Path.cwd(), flags=flags, secrets=redact.values)
            _explicit_baseline(request.settings.baseline, request.workdir, modes=True)
        except AdkEvalActionError as e:
            # The results file and comment still record why (settings.fallback_request).
            fallback = fallback_request(Path.cwd(), flags=flags, secrets=redact.values)
            if fallback is None:
                raise
            request, outcome = fallback, stopped_run(fallback, e)
        else:
            outcome = run_pipeline(request)
        _show(outcome)
    if request.settings.print_comment:
        _echo(outcome.comment_markdown, redact)
    sys.exit(outcome.exit_code)


def _explicit_baseline(
    value: BaselineSpec | str | Path | None, workdir: Path, modes: bool = False
) -> Path | None:
    """A baseline file named on the command line must exist: a typo would otherwise turn
    regression gating off without a word. (One that exists but cannot be read is reported
    with the head's scores, which are kept: ``compare`` can then use them.) ``modes``: the
    option also takes the keywords of ``baseline.models.MODES`` (``run``).

    Raises:
        ConfigError: the file does not exist (with ``modes``, naming the keyword it was
            perhaps meant to be).
    """
    import difflib

    from adk_eval_action.errors import ConfigError

    path = BaselineSpec.model_validate(value).file
    if path is None:
        return None
    if not (workdir / path).exists() and not modes:
        raise ConfigError(path, "baseline file not found (--baseline)")
    if not (workdir / path).exists():
        close = difflib.get_close_matches(str(path).lower(), MODES, n=1)
        keywords = ", ".join(MODES)
        hint = (f"; did you mean `--baseline {close[0]}`?" if close
                else f"; --baseline takes a results file or one of {keywords}")
        raise ConfigError(path, f"baseline file not found (--baseline){hint}")
    return path


def _refuse_clashes(workdir: Path, outputs: list[tuple[str, Path | None]],
                    inputs: list[tuple[str, Path | None]]) -> None:
    """The command's ``outputs`` checked against each other and its ``inputs`` before any
    work (run.outputs), each keyed by its flag or argument.

    Raises:
        OutputPathError: an output is an input, another output, or no file."""
    from adk_eval_action.run.outputs import command_files, refuse_clashes

    refuse_clashes(*command_files(workdir, outputs, inputs))


@main.command("compare")
@click.argument("head", type=click.Path(path_type=Path, exists=True))
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline results file.")
@click_options("compare")
def compare_command(head: Path, baseline: Path | None, **flags: Any) -> None:
    """Compare a HEAD results file with --baseline and gate, without running any agent.

    The gate is adk-eval.yaml's `gate:` (--config, else ./adk-eval.yaml) under these flags."""
    from adk_eval_action.baseline.resolve import usable_baseline
    from adk_eval_action.run.branch_history import file_history
    from adk_eval_action.run.pipeline import (
        finish,
        load_baseline,
        load_head_table,
    )

    with _console() as redact:
        request = load_request(Path.cwd(), flags={**flags, "results_path": head},
                               secrets=redact.values)
        baseline_path = _explicit_baseline(baseline, request.workdir)
        settings = request.settings
        _refuse_clashes(request.workdir, [
            ("--comment-out", settings.comment_out), ("--summary-out", settings.summary_out),
            ("--html-out", settings.html_out), ("--comparison-out", settings.comparison_out),
        ], [("HEAD", head), ("--baseline", baseline_path), ("--history", settings.history),
            ("--template", settings.template), ("--config", request.config_path)])
        whole = request.settings.html_out is not None  # every case's evidence in the report
        results = load_head_table(head, whole)
        base, note = usable_baseline(results, *load_baseline(baseline_path, whole),
                                     baseline_path)
        outcome = finish(results, base, note, request,
                         history=file_history(request, base, baseline_path))
        _show(outcome)
    if request.settings.print_comment:
        _echo(outcome.comment_markdown, redact)
    sys.exit(outcome.exit_code)


@main.command("render")
@click.argument("head", type=click.Path(path_type=Path, exists=True))
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline results file.")
@click.option("--template", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="Your own Jinja2 comment template (docs/action.md); the job summary "
              "(--summary) always uses the built-in one.")
@click.option("--summary", is_flag=True, help="Render the job summary instead of the comment.")
@click.option("--out", type=click.Path(path_type=Path), help="Write here instead of stdout.")
@click.option("--html-out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the HTML report here too (one self-contained file).")
@click.option("--history", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="The default branch's history (adk-eval-history.json): trends, known "
              "flaky eval cases, pooled baseline runs (docs/baselines.md).")
def render_command(head: Path, baseline: Path | None, template: Path | None, summary: bool,
                   out: Path | None, html_out: Path | None, history: Path | None) -> None:
    """Render the PR comment (or job summary) from results files, and with --html-out the
    HTML report; exits 0 when it rendered, 2 when an input or the template is unusable."""
    from adk_eval_action.baseline.resolve import usable_baseline
    from adk_eval_action.report.fallback import short_markdown
    from adk_eval_action.report.render import render_comment, render_summary
    from adk_eval_action.results.scoretable import ScoreTable
    from adk_eval_action.run.branch_history import file_history
    from adk_eval_action.run.pipeline import (
        comment_context,
        comment_limit,
        load_baseline,
        load_head_table,
        write_text,
    )
    from adk_eval_action.run.report_file import write_html_report

    with _console() as redact:
        request = load_request(Path.cwd(), flags={"results_path": head, "history": history,
                                                    "html_out": html_out},
                               secrets=redact.values)
        baseline_path = _explicit_baseline(baseline, request.workdir)
        _refuse_clashes(request.workdir, [("--out", out), ("--html-out", html_out)], [
            ("HEAD", head), ("--baseline", baseline_path), ("--history", history),
            ("--template", template)])
        results = load_head_table(head, whole=html_out is not None)
        base, note = usable_baseline(
            results, *load_baseline(baseline_path, whole=html_out is not None), baseline_path)
        skeleton = results.skeleton if isinstance(results, ScoreTable) else results
        # What the action posted for a file of a run that evaluated nothing (run.stop_outcomes).
        short = short_markdown(skeleton, str(request.settings.results_path),
                               "##" if summary else "###")
        if short is not None:
            text = redact(short)
        else:
            context = comment_context(results, base, note, request,
                                      history=file_history(request, base, baseline_path))
            text = redact(render_summary(context) if summary else
                          render_comment(context, template, comment_limit()))
            write_html_report(html_out, context, results, base, redact)
        if out:
            write_text(out, text, "--out")
    if not out:
        _echo(text, redact)


@main.command("init")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--num-runs", type=click.IntRange(min=1), default=None,
              help="num_runs written to adk-eval.yaml: runs of each eval case (default: the "
                   "fewest with which the regression gate calls one eval case collapsing "
                   "from all-pass to all-fail, as `plan` estimates it).")
@click.option("--agent", type=click.Path(path_type=Path),
              help="The agent folder of the eval sets found without one (an agent kept away "
                   "from its eval sets, as backend/my_agent beside tests/eval/).")
def init_command(paths: tuple[Path, ...], num_runs: int | None, agent: Path | None) -> None:
    """Write adk-eval.yaml naming the suites found under PATHS (default: .), with the
    regression gate and the runs it needs, and .github/workflows/adk-eval.yml, the
    workflow that evaluates every pull request.

    Suites are found as `run` finds them: the repository's own `adk eval` commands
    (Makefile, scripts, workflows, pyproject.toml, README) and AgentEvaluator tests, then
    eval sets (any JSON file that holds one) and the agent at or beside them. Eval sets
    whose agent is not found get --agent, else the repository's only agent folder, else an
    `agent:` line to fill in with the agent folders seen. A file that exists is never
    overwritten (it is named and left as it is); exits 2 when nothing was written (both
    exist, or no eval set was found)."""
    from adk_eval_action.adk.deferred import deferred_scoring_imports
    from adk_eval_action.run.init import init_project

    with _console(), deferred_scoring_imports():  # init never scores
        result = init_project(Path.cwd(), list(paths) or [Path(".")], num_runs, agent)
        if not result.written:
            log.error("nothing written: %s", ", ".join(
                os.path.relpath(p) for p in result.kept))
            sys.exit(EXIT_USAGE)
        unfilled = [e.name for e in result.suites if not e.agent]
        if unfilled:
            log.info("first: fill in `agent:` of suite %s in adk-eval.yaml (or remove the file "
                     "and run `adk-eval-action init --agent PATH`)", ", ".join(unfilled))
        log.info("next: `adk-eval-action plan` shows what a run costs and which models "
                 "it calls; add their API key to the repository's Actions secrets "
                 "(GOOGLE_API_KEY for Gemini, as the workflow's `env:` passes it; change "
                 "`env:` for another provider), commit the files and push: the first push to "
                 "the default branch records the baseline")


@main.command("plan")
@click_options("plan")
def plan_command(**flags: Any) -> None:
    """Print what evaluating PATHS will cost, without calling any model: suites, eval sets,
    eval cases x runs, metrics, agent and judge model calls, and the wall time at --latency
    and --parallelism; what each suite's eval cases x runs can call against a baseline; the
    tokens and dollars estimated from --baseline FILE (a results file of the base branch);
    the warnings `run` would give of the suites (an eval config near eval sets left on ADK's
    default criteria); each suite's own dependency file, and the dependencies that cannot
    live together in one job. Exits 2 on the errors `run` would report (config, eval sets, agents)
    and on a plan the budget (--max-model-calls, --max-tokens, --max-usd, budget: in
    adk-eval.yaml) would refuse.
    """
    import asyncio

    from adk_eval_action.adk.deferred import deferred_scoring_imports
    from adk_eval_action.run.budget import plan_cost
    from adk_eval_action.run.evaluation import detection_notes, plan

    with _console() as redact, deferred_scoring_imports():  # plan never scores
        request = load_request(Path.cwd(), flags=flags, secrets=redact.values)
        found, records, problems, dependencies, conflicts = asyncio.run(plan(request))
        cost, refused = plan_cost(request, found)
    click.echo("\n".join([*found.lines(detection_notes(found)), cost, *(
        visible(f"suite {name}: own dependencies {', '.join(files)} (installed by the action "
                "before it runs)", keep="") for name, files in dependencies.items())]))
    warnings = dict.fromkeys(w for record in records for w in record.warnings)
    # Missing credentials are what a laptop without a key has: `run` would stop, `plan` has
    # all it needs; everything else the preflight finds, `run` refuses, so `plan` does.
    warnings.update(dict.fromkeys(
        f"`run` would stop: {p.message}" for p in problems if p.kind == "credentials"))
    errors = [e.message for record in records for e in record.errors] + [
        p.message + (f" (field `{p.field}`)" if p.field else "")
        + (f" in {p.file}" if p.file and p.file not in p.message else "")
        for p in problems if p.kind != "credentials"
    ]
    with _console():
        for warning in warnings:  # what `run` would warn of too (an eval config not used)
            log.warning("%s", warning)
        for conflict in conflicts:
            log.warning("%s", conflict.line())
        for error in errors:
            log.error("%s", error)
        if refused:
            log.error("budget: `run` would refuse this plan before any model call: %s",
                      refused)
    if errors or refused:
        sys.exit(EXIT_USAGE)


@main.command("merge")
@click.argument("parts", nargs=-1, required=True)
@click_options("merge")
def merge_command(parts: tuple[str, ...], **flags: Any) -> None:
    """Merge the results files of all shards of a run (PARTS: files or glob patterns, from
    `run --shard K/N`) into one (--results-out), which compare, render and the gate read.
    Refuses (exit 2, naming them) parts of different runs or recorded at different commits,
    a shard given twice or missing, and an eval case in two parts or in none."""
    from adk_eval_action.errors import OutputError
    from adk_eval_action.files import expand_glob
    from adk_eval_action.run.pipeline import merge_files, results_writer

    with _console() as redact:
        request = load_request(Path.cwd(), flags=flags, secrets=redact.values)
        _refuse_clashes(request.workdir, [("--results-out", request.settings.results_path)], [
            ("PARTS", Path(os.path.relpath(found, request.workdir))) for pattern in parts
            for found in expand_glob(str(request.workdir / pattern))])
        writer = results_writer(request)  # the one writer of a results file, merged too
        writer.take(merge_files(request.workdir, list(parts)))
        try:
            writer.save()
        except OutputError as e:
            log.error("cannot write the merged results: %s", e)
            sys.exit(EXIT_USAGE)
        log.info("merged results: %s", request.settings.results_path)


SCHEMA_URL = "https://raw.githubusercontent.com/adk-eval-action/adk-eval-action/v1/schemas/"
SCHEMA_FILES = {
    "config": "adk-eval.schema.json",
    "results": "results.schema.json",
    "comparison": "comparison.schema.json",
    "history": "history.schema.json",
}


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``adk-eval.yaml`` (``config``, from
    project.config.ProjectConfig), of a results file (``results``, from
    results.model.RunResults), of the default branch's history (``history``, from
    results.history_file.History), as pydantic generates them for validation, or of the
    comparison file ``--comparison-out`` writes (``comparison``, from
    analysis.comparison.Comparison, as it is serialized); ``$id`` is the file's URL under
    schemas/ on the v1 tag. Raises KeyError for another kind."""
    from adk_eval_action.analysis.comparison import Comparison
    from adk_eval_action.project.config import ProjectConfig
    from adk_eval_action.results.history_file import History
    from adk_eval_action.results.model import RunResults

    kinds: dict[str, tuple[type[BaseModel], str, str]] = {
        "config": (ProjectConfig, "adk-eval.yaml",
                   "adk-eval-action's project config: suites, num_runs, parallelism, gate."),
        "results": (RunResults, "adk-eval-action results",
                    "One run's results file (results.json), schema_version 2."),
        "comparison": (Comparison, "adk-eval-action comparison",
                       "The comparison --comparison-out writes: per metric, per rubric and "
                       "per eval case, head against baseline, with the gate's tests."),
        "history": (History, "adk-eval-action history",
                    "The default branch's recorded runs (adk-eval-history.json), schema_version "
                    "1: per run the commit, versions, judges, suite inputs hashes, metric means "
                    "and each eval case's run scores."),
    }
    model, title, about = kinds[kind]
    mode: Literal["validation", "serialization"] = (
        "serialization" if kind == "comparison" else "validation")
    generated = model.model_json_schema(mode=mode)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_URL + SCHEMA_FILES[kind],
            **generated, "title": title, "description": about}


@main.command()
@click.argument("kind", type=click.Choice(sorted(SCHEMA_FILES)))
def schema(kind: str) -> None:
    """Print the JSON Schema of adk-eval.yaml (config), of results files (results), of
    the comparison file --comparison-out writes (comparison) or of the default branch's
    history file (history).

    The repository keeps them under schemas/ (tests check that they are current); point an
    editor at the config one with `# yaml-language-server: $schema=<its $id>`.
    """
    click.echo(json.dumps(json_schema(kind), indent=2, ensure_ascii=False))


def _register_github_commands() -> None:
    try:
        from adk_eval_action.action import action_command, comment_command
    except ImportError:  # the GitHub commands are optional for the offline CLI
        return
    main.add_command(action_command, "action")
    main.add_command(comment_command, "comment")


_register_github_commands()


GC_THRESHOLDS = (20_000, 10, 10)
"""The collector's thresholds in the console script (CPython's default: 700, 10, 10)."""


def entry() -> None:
    """The console script: :func:`main` with the collector tuned for a run's heap.

    A run allocates many short-lived objects (ADK's events, sessions, pydantic models) on
    top of everything google-adk's import created. At CPython's default thresholds a full
    collection, which walks the whole heap, comes after every 100 young ones (700
    allocations each): the collector took 9.9 of the 13.1 s of CPU of 600 eval case runs
    of benchmarks/bench_throughput.py's input (docs/scaling.md). :data:`GC_THRESHOLDS`
    makes young collections rarer, so short-lived objects are freed by reference counting
    first and full collections all but vanish (gc.set_threshold:
    https://docs.python.org/3/library/gc.html); cyclic garbage
    is still collected. At exit ``gc.freeze()`` moves every object out of the collector's
    reach, so finalization skips them (2-3 s after evaluating 200 eval cases with
    google-adk loaded); nothing is skipped that exit handlers or files need. Only the
    console script does this: in-process callers (tests) keep the interpreter's defaults.

    The command's exit code ends the process even when the agent's code left threads
    running (``run.ending.end_process``: named once in a warning, in the command's
    console format).
    """
    from adk_eval_action.run.ending import console_warning, end_process

    gc.set_threshold(*GC_THRESHOLDS)
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    finally:
        gc.freeze()
    if code is None or isinstance(code, int):
        end_process(code or 0, console_warning(sys.argv[1:]))
    raise SystemExit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()

__all__ = ["main", "entry", "EXIT_USAGE"]
