"""The main job as one short pipeline: discover → evaluate → results → baseline → compare →
render → gate. The CLI's ``run`` command and the action both call :func:`run_pipeline`.

Exit codes: 0 the gate passed, 1 the gate failed, 2 a usage, config or infrastructure error
(a broken eval set or eval config, an agent that does not import, no eval sets found). On
exit 2 the results file and the comment are still written with everything that did run.
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from adk_eval_action.analysis.compare import Comparison, compare
from adk_eval_action.analysis.gate import GateResult, decide
from adk_eval_action.baseline.models import (
    DEFAULT_ARTIFACT_NAME,
    BaselineContext,
    BaselineRequest,
    BaselineUnreadable,
)
from adk_eval_action.baseline.resolve import Rescore, file_baseline, resolve_baseline
from adk_eval_action.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
    ResultsFileError,
)
from adk_eval_action.git import Git
from adk_eval_action.project.config import (
    GateConfig,
    ProjectConfig,
    first_error,
    load_project_config,
)
from adk_eval_action.project.discovery import Suite, discover_suites, suites_from_config
from adk_eval_action.report.chart import metric_chart_markdown
from adk_eval_action.report.render import CommentContext, render_comment, render_summary
from adk_eval_action.results.io import gc_paused, save_results
from adk_eval_action.results.model import (
    ErrorRecord,
    RunMetadata,
    RunResults,
    utc_now,
)
from adk_eval_action.results.scoretable import ScoreTable

Console = Callable[[str], None]
PROJECT_CONFIG_NAMES = ("adk-eval.yaml", "adk-eval.yml", "adk-eval.json")
USAGE_ERROR_KINDS = {"config", "eval_set", "agent", "internal"}


class RunOptions(BaseModel):
    """Options of one run (CLI flags, action inputs). ``None`` means "from adk-eval.yaml or
    the default"."""

    paths: list[Path] = Field(default_factory=lambda: [Path(".")])
    config: Path | None = None
    # auto | artifact | rerun | none | a results file (baseline.py); None is auto.
    baseline: str | Path | None = None
    record: bool = False
    base_ref: str | None = None
    artifact_name: str = DEFAULT_ARTIFACT_NAME
    baseline_rerun: bool = False
    github: BaselineContext | None = None
    results_out: Path = Path("adk-eval-results.json")
    comment_out: Path | None = None
    summary_out: Path | None = None
    num_runs: int | None = None
    parallelism: int | None = None
    template: Path | None = None
    fail_on: str | None = None
    max_regression: float | None = None
    min_effect: float | None = None
    require_significance: bool | None = None
    max_token_increase: float | None = None
    on_token_increase: str | None = None
    min_pass_rate: float | None = None
    gate_mode: str | None = None
    not_evaluated: str | None = None
    max_comment_chars: int = 65_536
    run_url: str | None = None


class CaseFailure(BaseModel):
    """A failing eval case, for annotations. ``severity``: larger is worse."""

    suite: str
    eval_set_file: str
    eval_id: str
    line: int | None
    message: str
    severity: float


class PipelineOutcome(BaseModel):
    """What a run produced; see the module docstring for ``exit_code``."""

    exit_code: int
    passed: bool
    results_path: Path
    comment_markdown: str
    summary_markdown: str
    comment_path: Path | None = None
    failures: list[CaseFailure] = Field(default_factory=list)
    metrics: dict[str, dict] = Field(default_factory=dict)
    suites: list[str] = Field(default_factory=list)
    comparison: Comparison | None = None
    gate: GateResult | None = None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _metadata(root: Path) -> RunMetadata:
    return RunMetadata(
        tool_version=_version("adk-eval-action"),
        adk_version=_version("google-adk"),
        python_version=platform.python_version(),
        git_sha=Git(root, timeout=10).value("rev-parse", "HEAD"),
        git_ref=Git(root, timeout=10).value("rev-parse", "--abbrev-ref", "HEAD"),
        started_at=utc_now(),
    )


def _project(options: RunOptions, root: Path) -> tuple[ProjectConfig, Path | None]:
    path = options.config
    if path is None:
        path = next((root / n for n in PROJECT_CONFIG_NAMES if (root / n).is_file()), None)
    if path is None:
        return ProjectConfig(root=root), None
    return load_project_config(path), path


def _gate_config(project: ProjectConfig, options: RunOptions) -> GateConfig:
    overrides = {
        "fail_on": options.fail_on,
        "max_regression": options.max_regression,
        "min_effect": options.min_effect,
        "require_significance": options.require_significance,
        "max_token_increase": options.max_token_increase,
        "on_token_increase": options.on_token_increase,
        "min_pass_rate": options.min_pass_rate,
        "mode": options.gate_mode,
        "not_evaluated": options.not_evaluated,
    }
    data = project.gate.model_dump()
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return GateConfig.model_validate(data)
    except ValidationError as e:
        field, message = first_error(e)
        flag = "--" + field.split(".")[0].replace("_", "-")
        raise ConfigError(f"gate setting {flag}", message) from e


def find_suites(options: RunOptions, console: Console) -> tuple[list[Suite], ProjectConfig]:
    """Suites from ``adk-eval.yaml`` when present (``--config`` or in the current folder),
    else discovered under ``options.paths``.

    Raises:
        ConfigError: invalid config, missing path, or no eval set found.
    """
    root = Path.cwd()
    missing = [str(p) for p in options.paths if not p.exists()]
    if missing:
        raise ConfigError(", ".join(missing), "no such file or folder")
    project, path = _project(options, root)
    if path is not None:
        console(f"config: {path}")
        suites = suites_from_config(project, path) if project.suites else []
        if suites:
            return suites, project
    suites = discover_suites(options.paths, root, project.exclude)
    if not suites:
        raise ConfigError(
            ", ".join(str(p) for p in options.paths),
            "no eval sets found (*.evalset.json or *.test.json); pass the folder that holds "
            "them, or name suites in adk-eval.yaml",
        )
    return suites, project


def evaluate(
    options: RunOptions, console: Console = print
) -> tuple[RunResults, ProjectConfig, list[Suite]]:
    """Discovers and evaluates every suite; never loses a suite's results to another's error.

    Raises:
        AdkEvalActionError: the config is invalid or nothing was found (exit 2, nothing ran).
    """
    root = Path.cwd()
    suites, project = find_suites(options, console)
    _gate_config(project, options)  # a bad gate flag is exit 2 before any agent runs
    # Imported here: google-adk's evaluation modules take seconds to import, which
    # `compare` and `render` (no agent runs) and refused runs need not pay.
    from adk_eval_action.adk.engine import EngineSettings, evaluate_suite

    results = RunResults(metadata=_metadata(root))
    start = time.monotonic()
    settings = EngineSettings(
        num_runs=options.num_runs or project.num_runs,
        parallelism=options.parallelism or project.parallelism,
        repo_root=root,
    )
    for suite in suites:
        if options.num_runs is not None:
            suite.num_runs = options.num_runs  # a flag given on the command line wins
        try:
            results.suites.append(evaluate_suite(suite, settings, console))
        except Exception as e:  # noqa: BLE001 - keep the other suites' results
            results.errors.append(
                ErrorRecord(
                    kind="internal",
                    suite=suite.name,
                    message=f"{type(e).__name__}: {e}",
                    hint="please report this as a bug",
                )
            )
    results.warnings.extend(w for s in results.suites for w in s.warnings)
    results.metadata.finished_at = utc_now()
    results.metadata.duration_seconds = round(time.monotonic() - start, 3)
    cases = sum(len(e.eval_cases) for s in results.suites for e in s.eval_sets)
    if cases == 0 and not results.all_errors():
        results.errors.append(
            ErrorRecord(
                kind="config",
                message="the eval sets found hold no eval cases, so nothing was evaluated",
                hint="add eval cases, or point PATHS or adk-eval.yaml at eval sets that have them",
            )
        )
    return results, project, suites


def load_table(path: Path) -> ScoreTable:
    """A results file (or ADK eval_history) as the table compare reads; the loaded objects
    are dropped at once, so comparing two large files holds one side's objects at a time.

    Raises:
        ResultsFileError: as :func:`adk_eval_action.adk.history.load_any_results`.
    """
    from adk_eval_action.adk.history import load_any_results

    # The objects are made and freed with the GC paused: enabled in between, it walked all
    # of them several times over (4 s instead of 1 at 10,000 cases x 8 metrics x 3 runs).
    with gc_paused():
        return ScoreTable.from_results(load_any_results(path))


def load_head_table(path: Path) -> ScoreTable:
    """:func:`load_table` for the head of ``compare``/``render``: a head without eval cases
    and without errors saying why is refused (``run`` refuses zero eval cases too), rather
    than passing a gate that checked nothing.

    Raises:
        ResultsFileError: unreadable, or no eval cases and no errors.
    """
    table = load_table(path)
    if not table.case_keys and not table.skeleton.all_errors():
        raise ResultsFileError(
            path,
            "holds no eval cases and no errors, so there is nothing to compare or gate; "
            "give the results file of a run that evaluated eval cases",
        )
    return table


def load_baseline(path: Path | None, console: Console) -> tuple[ScoreTable | None, str]:
    """Loads the baseline results file as a table; an unreadable baseline becomes "no
    baseline" with the reason, never an error of the run. The note is the one ``run`` shows
    (baseline.py)."""
    if path is None:
        return None, "none given (pass --baseline with a results file of the base branch)"
    with gc_paused():  # as in load_table
        try:
            resolved = file_baseline(Path(path))
        except BaselineUnreadable as e:
            console(f"warning: baseline not used: {e}")
            return None, str(e)
        return ScoreTable.from_results(resolved.results), resolved.note()


def _failures(gate: GateResult) -> list[CaseFailure]:
    failures = []
    for index, case in enumerate(gate.failing_cases):
        failed = [
            f"{d.metric_name} {format(d.head, '.3g') if d.head is not None else 'n/a'}"
            + (f" ({d.reason})" if d.reason else "")
            for d in case.metrics
            if d.head_status and d.head_status.value in ("failed", "error", "not_evaluated")
        ]
        message = f"eval case {case.eval_id} {case.change.replace('_', ' ')}: " + (
            "; ".join(failed) or case.error or case.head_status.value if case.head_status else ""
        )
        failures.append(
            CaseFailure(
                suite=case.suite,
                eval_set_file=case.file or "",
                eval_id=case.eval_id,
                line=case.line,
                message=message,
                severity=float(len(gate.failing_cases) - index),
            )
        )
    return failures


def _metrics_output(comparison: Comparison) -> dict[str, dict]:
    return {
        f"{m.suite}/{m.metric_name}": {
            "head": m.head.mean if m.head else None,
            "baseline": m.baseline.mean if m.baseline else None,
            "delta": m.delta,
            "threshold": (m.head or m.baseline).threshold if (m.head or m.baseline) else None,
            "classification": m.classification,
        }
        for m in comparison.metrics
    }


def print_table(
    comparison: Comparison, gate: GateResult, console: Console, usage_error: bool = False
) -> None:
    """A short per-metric table and the verdict on the console."""
    console("")
    console(f"{'suite':<20} {'metric':<42} {'baseline':>9} {'head':>9} {'delta':>9} {'thr':>6}")
    for m in comparison.metrics:
        base = "" if not m.baseline or m.baseline.mean is None else f"{m.baseline.mean:.3f}"
        head = "" if not m.head or m.head.mean is None else f"{m.head.mean:.3f}"
        delta = "" if m.delta is None else f"{m.delta:+.3f}"
        side = m.head or m.baseline
        thr = "" if not side or side.threshold is None else f"{side.threshold:g}"
        console(
            f"{m.suite[:20]:<20} {m.metric_name[:42]:<42} {base:>9} {head:>9} {delta:>9} {thr:>6}"
        )
    for warning in comparison.warnings:
        console(f"warning: {warning}")
    for error in comparison.errors:
        where = ", ".join(x for x in (error.file, error.eval_id) if x)
        console(f"error ({error.kind}{': ' + where if where else ''}): {error.message}")
    verdict = "PASSED" if gate.passed else "FAILED"
    if usage_error:
        verdict = "INCOMPLETE (errors above; exit 2)" + ("" if gate.passed else ", and FAILED")
    console(f"gate {verdict}: {gate.cases_passed}/{gate.cases_total} eval cases passed")
    for reason in gate.reasons:
        console(f"  - {reason}")


def write_text(path: Path | None, text: str) -> None:
    """Writes ``text`` to ``path`` (None: nothing), creating parent folders.

    Raises:
        ConfigError: the file cannot be written (names it).
    """
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # errors="replace": a lone surrogate from agent text (valid in JSON, not in UTF-8)
        # becomes "?" rather than losing the whole comment.
        path.write_text(text, encoding="utf-8", errors="replace")
    except OSError as e:
        raise ConfigError(path, f"cannot write: {e.strerror or e}") from e


def comment_context(
    results: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    gate_config: GateConfig,
    options: RunOptions,
) -> CommentContext:
    """Compares and gates, and returns what the comment and summary templates render."""
    comparison = compare(results, baseline, baseline_note, min_effect=gate_config.min_effect_for)
    return CommentContext(
        comparison=comparison,
        gate=decide(comparison, gate_config),
        run_url=options.run_url,
        results_path=str(options.results_out),
        chart=metric_chart_markdown(comparison),
    )


def finish(
    results: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    baseline_note: str,
    gate_config: GateConfig,
    options: RunOptions,
    console: Console,
) -> PipelineOutcome:
    """Compare, gate, render and write files for results that are already computed (or
    their tables: :func:`load_table`)."""
    # No cyclic GC while these allocate: it would re-scan every loaded result (gc_paused).
    with gc_paused():
        context = comment_context(results, baseline, baseline_note, gate_config, options)
        comparison, gate = context.comparison, context.gate
        comment = render_comment(context, options.template, options.max_comment_chars)
        summary = render_summary(context)
    write_text(options.comment_out, comment)
    write_text(options.summary_out, summary)
    skeleton = results.skeleton if isinstance(results, ScoreTable) else results
    usage_error = any(e.kind in USAGE_ERROR_KINDS for e in skeleton.all_errors())
    print_table(comparison, gate, console, usage_error)
    exit_code = EXIT_USAGE if usage_error else EXIT_PASS if gate.passed else EXIT_GATE_FAILED
    return PipelineOutcome(
        exit_code=exit_code,
        passed=gate.passed and not usage_error,
        results_path=options.results_out,
        comment_markdown=comment,
        summary_markdown=summary,
        comment_path=options.comment_out,
        failures=_failures(gate),
        metrics=_metrics_output(comparison),
        suites=[s.name for s in skeleton.suites],
        comparison=comparison,
        gate=gate,
    )


def baseline_request(options: RunOptions) -> BaselineRequest:
    """What the baseline stage needs of the run's options."""
    return BaselineRequest(
        spec=options.baseline,
        record=options.record,
        base_ref=options.base_ref,
        artifact_name=options.artifact_name,
        baseline_rerun=options.baseline_rerun,
        github=options.github,
        paths=options.paths,
        config=options.config,
        num_runs=options.num_runs,
        parallelism=options.parallelism,
    )


def _rescorer(suites: list[Suite], options: RunOptions) -> Rescore:
    """Re-scoring of the baseline under the head's suites (imported late: google-adk)."""
    from adk_eval_action.adk.rescore import rescore_baseline

    return partial(
        rescore_baseline, suites=suites, parallelism=options.parallelism or 4,
        repo_root=Path.cwd(),
    )


def run_pipeline(options: RunOptions, console: Console = print) -> PipelineOutcome:
    """Runs the whole job (module docstring).

    Raises:
        AdkEvalActionError: invalid config or nothing to evaluate (exit 2; nothing ran).
    """
    results, project, suites = evaluate(options, console)
    try:
        save_results(results, options.results_out)
    except OSError as e:
        raise ConfigError(options.results_out, f"cannot write the results file: {e}") from e
    console(f"results: {options.results_out}")
    baseline, note = resolve_baseline(
        baseline_request(options), results, console, rescore=_rescorer(suites, options)
    )
    return finish(results, baseline, note, _gate_config(project, options), options, console)


__all__ = ["AdkEvalActionError", "CaseFailure", "PipelineOutcome", "RunOptions", "run_pipeline"]
