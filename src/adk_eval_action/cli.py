"""Command line: ``adk-eval-action run | compare | render`` (and ``action`` / ``comment`` for
GitHub). Exit codes: 0 gate passed, 1 gate failed, 2 usage, config or infrastructure error.
"""

from __future__ import annotations

import logging
import math
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from adk_eval_action.errors import EXIT_USAGE, AdkEvalActionError


class _Amount(click.FloatRange):
    """A finite number >= 0 (and <= ``max``): a NaN or infinite gate amount would compare
    false with everything and silently change what fails."""

    name = "amount"

    def __init__(self, max: float | None = None) -> None:  # noqa: A002 - click's name
        super().__init__(min=0, max=max)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


GATE_OPTIONS: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "--fail-on",
        type=click.Choice(["threshold", "regression", "any", "none"]),
        help="Which rule fails the gate (default: threshold).",
    ),
    click.option(
        "--max-regression",
        type=_Amount(),
        help="Largest allowed drop of a metric's mean, in the metric's units.",
    ),
    click.option("--min-effect", type=_Amount(), help="Smallest delta worth calling a change."),
    click.option(
        "--require-significance/--no-require-significance",
        default=None,
        help="Only fail a regression whose interval lies wholly beyond max_regression.",
    ),
    click.option(
        "--max-token-increase",
        type=_Amount(),
        help="Largest allowed relative growth of token_usage_v1 (0.2 = +20%).",
    ),
    click.option(
        "--on-token-increase",
        type=click.Choice(["warn", "fail"]),
        help="Whether exceeding --max-token-increase warns or fails (default warn).",
    ),
    click.option(
        "--min-pass-rate",
        type=_Amount(max=1),
        help="Fraction of eval cases that must pass (default 1.0).",
    ),
    click.option(
        "--gate-mode",
        type=click.Choice(["status", "mean"]),
        help="status: a case fails when any metric failed (as adk eval); "
        "mean: each metric's mean vs its threshold.",
    ),
    click.option(
        "--not-evaluated",
        type=click.Choice(["fail", "warn"]),
        help="Whether NOT_EVALUATED / errored metrics fail their case (default fail).",
    ),
]


def gate_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the gate flags shared by ``run`` and ``compare``."""
    for option in reversed(GATE_OPTIONS):
        func = option(func)
    return func


def _quiet_adk() -> None:
    # ADK marks its eval classes experimental and warns on every use; that is noise here.
    warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")
    # ADK logs each failed inference or metric with a full traceback; the results keep the
    # reason and the console prints it once, so ADK's own log stays quiet.
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    logging.basicConfig(level=logging.ERROR)


def _exit_on_sigterm() -> None:
    # A cancelled job, `timeout` and `docker stop` send SIGTERM; turning it into SystemExit
    # lets `finally` blocks run, so a baseline re-run removes its git worktree.
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _fail(error: AdkEvalActionError) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)


@click.group()
@click.version_option(package_name="adk-eval-action")
def main() -> None:
    """Run google-adk evaluations, compare with a baseline, render the PR comment, gate."""
    _quiet_adk()
    _exit_on_sigterm()


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="adk-eval.yaml naming suites (default: ./adk-eval.yaml if present).",
)
@click.option(
    "--baseline",
    default="auto",
    show_default=True,
    help="auto | artifact | rerun | none | a results file of the base branch (ours, or ADK "
    "eval_history file/folder). See docs/baselines.md.",
)
@click.option(
    "--record",
    is_flag=True,
    help="This run records the baseline (push to the default branch): no lookup.",
)
@click.option(
    "--base-ref", help="Base branch for rerun/artifact (default: the remote's default branch)."
)
@click.option(
    "--artifact-name",
    default="adk-eval-results",
    show_default=True,
    help="Name of the baseline artifact the recording workflow uploads.",
)
@click.option(
    "--baseline-rerun/--no-baseline-rerun",
    default=False,
    help="With --baseline auto: re-run the merge-base when no artifact is found "
    "(twice the LLM calls).",
)
@click.option(
    "--results-out",
    type=click.Path(path_type=Path),
    default="adk-eval-results.json",
    show_default=True,
)
@click.option("--comment-out", type=click.Path(path_type=Path), help="Write the PR comment here.")
@click.option("--summary-out", type=click.Path(path_type=Path), help="Write the job summary here.")
@click.option("--print-comment", is_flag=True, help="Print the rendered comment to stdout.")
@click.option("--num-runs", type=click.IntRange(min=1), help="Repeat each eval case N times.")
@click.option("--parallelism", type=click.IntRange(min=1), help="Concurrent inferences.")
@click.option(
    "--template",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Your own Jinja2 comment template.",
)
@gate_options
def run(paths: tuple[Path, ...], print_comment: bool, **kwargs: Any) -> None:
    """Evaluate the eval sets under PATHS (default: .) with google-adk and gate."""
    from adk_eval_action.run.pipeline import RunOptions, run_pipeline

    options = RunOptions(paths=list(paths) or [Path(".")], **kwargs)
    try:
        _explicit_baseline(options.baseline)
        outcome = run_pipeline(options, console=_console)
    except AdkEvalActionError as e:
        _fail(e)
        return
    if print_comment:
        click.echo(outcome.comment_markdown)
    sys.exit(outcome.exit_code)


def _console(line: str) -> None:
    click.echo(line, err=True)


def _explicit_baseline(value: Path | None) -> Path | None:
    """A baseline file named on the command line must exist: a typo would otherwise turn
    regression gating off without a word.

    Raises:
        ConfigError: the file does not exist.
    """
    from adk_eval_action.baseline.models import parse_spec
    from adk_eval_action.errors import ConfigError

    mode, path = parse_spec(value)
    if mode == "file" and path is not None and not path.exists():
        raise ConfigError(path, "baseline file not found (--baseline)")
    return path if mode == "file" else None


@main.command("compare")
@click.argument("head", type=click.Path(path_type=Path, exists=True))
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline results file.")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False),
              help="adk-eval.yaml whose `gate:` applies (default: ./adk-eval.yaml if present).")
@click.option("--comment-out", type=click.Path(path_type=Path))
@click.option("--summary-out", type=click.Path(path_type=Path))
@click.option("--print-comment", is_flag=True, help="Print the rendered comment to stdout.")
@click.option("--template", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@gate_options
def compare_command(head: Path, print_comment: bool, **kwargs: Any) -> None:
    """Compare a HEAD results file with --baseline and gate, without running any agent."""
    from adk_eval_action.run.pipeline import (
        RunOptions,
        _gate_config,
        _project,
        finish,
        load_baseline,
        load_head_table,
    )

    try:
        baseline_path = _explicit_baseline(kwargs.pop("baseline"))
        results = load_head_table(head)
        options = RunOptions(results_out=head, baseline=baseline_path, **kwargs)
        project, _ = _project(options, Path.cwd())
        baseline, note = load_baseline(baseline_path, _console)
        outcome = finish(results, baseline, note, _gate_config(project, options), options,
                         _console)
    except AdkEvalActionError as e:
        _fail(e)
        return
    if print_comment:
        click.echo(outcome.comment_markdown)
    sys.exit(outcome.exit_code)


@main.command("render")
@click.argument("head", type=click.Path(path_type=Path, exists=True))
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline results file.")
@click.option("--template", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--summary", is_flag=True, help="Render the job summary instead of the comment.")
@click.option("--out", type=click.Path(path_type=Path), help="Write here instead of stdout.")
def render_command(
    head: Path, baseline: Path | None, template: Path | None, summary: bool, out: Path | None
) -> None:
    """Render the PR comment (or job summary) from results files; exits 0 when it rendered,
    2 when an input or the template is unusable."""
    from adk_eval_action.report.render import render_comment, render_summary
    from adk_eval_action.run.pipeline import (
        RunOptions,
        _gate_config,
        _project,
        comment_context,
        load_baseline,
        load_head_table,
        write_text,
    )

    try:
        baseline_path = _explicit_baseline(baseline)
        results = load_head_table(head)
        base, note = load_baseline(baseline_path, _console)
        options = RunOptions(results_out=head)
        project, _ = _project(options, Path.cwd())
        context = comment_context(results, base, note, _gate_config(project, options), options)
        text = render_summary(context) if summary else render_comment(context, template)
        if out:
            write_text(out, text)
    except AdkEvalActionError as e:
        _fail(e)
        return
    if not out:
        click.echo(text)


def _register_github_commands() -> None:
    try:
        from adk_eval_action.action import action_command, comment_command
    except ImportError:  # the GitHub commands are optional for the offline CLI
        return
    main.add_command(action_command, "action")
    main.add_command(comment_command, "comment")


_register_github_commands()

if __name__ == "__main__":  # pragma: no cover
    main()

__all__ = ["main", "EXIT_USAGE"]
