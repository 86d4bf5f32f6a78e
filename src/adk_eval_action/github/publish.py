"""Publishing a run to GitHub: log groups and annotations, the sticky PR comment, the job
summary and the step outputs (one REST call or file command each: github.rest, .sticky,
.files), and
what the runner's environment says about where they go (:class:`RunnerEnv`).

Called by the action entry point with a :class:`PublishTarget` (the action's options that
publishing needs) and the pipeline's outcome; nothing here reads ``os.environ``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from adk_eval_action.errors import (
    AdkEvalActionError,
    OutputError,
    describe_exception,
    error_kind,
)
from adk_eval_action.files import write_atomic
from adk_eval_action.github.event import EventContext
from adk_eval_action.github.freshness import StaleRun, comment_body, stale_reason
from adk_eval_action.github.logs import annotation, case_title, group
from adk_eval_action.github.rest import get_pull, pulls_for_commit
from adk_eval_action.github.runner_files import append_job_summary, write_outputs, write_runner_file
from adk_eval_action.github.sticky import (
    COMMENT_MAX_CHARS,
    CommentResult,
    comment_marker,
    upsert_sticky_comment,
)
from adk_eval_action.github.transport import GitHubClient, GitHubError, PermissionDenied
from adk_eval_action.outcome import CaseFailure, PipelineOutcome, cost_outputs
from adk_eval_action.project.eval_ids import eval_id_line
from adk_eval_action.redaction import Redactor
from adk_eval_action.report.format import md
from adk_eval_action.report.headline import incomplete_cause
from adk_eval_action.results.model import CaseStatus, ErrorRecord
from adk_eval_action.settings import RunSettings
from adk_eval_action.text import without_surrogates

__all__ = [
    "COMMENT_FILE",
    "MAX_ANNOTATIONS",
    "PR_FILE",
    "REPORT_FILE",
    "RENDER_MAX_CHARS",
    "PublishTarget",
    "RunnerEnv",
    "annotate_outcome",
    "log_suites",
    "place",
    "post_run_comment",
    "publish",
    "publish_comment",
    "publish_part",
    "report_failure",
    "shown",
]

log = logging.getLogger(__name__)

#: Files the action writes next to the results file; the fork recipe uploads all three.
COMMENT_FILE = "adk-eval-comment.md"
PR_FILE = "adk-eval-pr.json"
#: The HTML report the action writes next to the results file (``--html-out``).
REPORT_FILE = "adk-eval-report.html"
#: The rendered comment's bound: GitHub's limit less room for the run link and marker that
#: `compose_comment_body` adds.
RENDER_MAX_CHARS = COMMENT_MAX_CHARS - 1_000
# The runner attaches at most 10 annotations per type per step (ExecutionContext.cs).
MAX_ANNOTATIONS = 10


class RunnerEnv(BaseModel):
    """What the runner's environment says beside the inputs: the event, the files of the
    step's outputs and job summary, and whether this is GitHub Actions (GitHub's
    "Variables reference",
    https://docs.github.com/en/actions/reference/workflows-and-actions/variables)."""

    model_config = ConfigDict(frozen=True)

    event: EventContext = Field(default_factory=EventContext)
    output_file: Path | None = None
    summary_file: Path | None = None
    in_actions: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RunnerEnv:
        """Raises EventContextError for an unreadable event payload."""
        return cls.files_from_env(env).model_copy(update={"event": EventContext.from_env(env)})

    @classmethod
    def files_from_env(cls, env: Mapping[str, str]) -> RunnerEnv:
        """The output and summary files alone (no event): what a failure can still be
        reported to when the event payload itself is unusable."""
        return cls(
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=(
                Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
            ),
            in_actions=env.get("GITHUB_ACTIONS") == "true",
        )


class PublishTarget(BaseModel):
    """Where and how a run is published: the runner's environment, the run's working
    directory (absolute; relative paths are relative to it), and the action's options
    ``github_token``, ``comment``, ``comment_key`` and ``results_path``
    (adk_eval_action.settings)."""

    model_config = ConfigDict(frozen=True)

    runner: RunnerEnv
    workdir: Path
    github_token: SecretStr
    comment: Literal["update", "new", "off"]
    comment_key: str
    results_path: Path
    secrets: tuple[str, ...] = Field(default=(), repr=False)

    @property
    def token(self) -> str:
        return self.github_token.get_secret_value()

    @property
    def redactor(self) -> Redactor:
        """Redacts the run's secret values (the token among them) from what is written."""
        return Redactor((self.token, *self.secrets))

    def path(self, path: Path) -> Path:
        """A path of the run (relative to its working directory) as an absolute one."""
        return path if path.is_absolute() else self.workdir / path

    @classmethod
    def from_settings(
        cls, settings: RunSettings, runner: RunnerEnv, workdir: Path, secrets: tuple[str, ...],
    ) -> PublishTarget:
        """The target of a run with these resolved ``settings`` (``github_token``,
        ``comment``, ``comment_key``, ``results_path``), in ``runner``'s environment."""
        return cls(
            runner=runner, workdir=workdir, github_token=settings.github_token,
            comment=settings.comment, comment_key=settings.comment_key,
            results_path=settings.results_path, secrets=secrets,
        )

    @property
    def report_path(self) -> Path:
        """The HTML report the action writes beside the results file, for upload."""
        return self.path(self.results_path).parent / REPORT_FILE


def publish(
    target: PublishTarget,
    outcome: PipelineOutcome,
    make_client: Callable[[str, str], GitHubClient],
) -> int:
    """Log groups, annotations, PR comment, job summary, outputs; returns the gate's exit
    code. A comment that could not be posted (or was not, for a stale run: .freshness) is
    said in the log and the job summary and never changes the exit code: the check's colour
    is the evaluation's. With a fork's read-only token the comment waits in a file for the
    fork recipe.
    """
    event = target.runner.event
    log_suites(outcome, event.workspace, target.workdir)
    annotate_outcome(outcome, event.workspace, target.workdir)
    results_dir = target.path(target.results_path).parent
    marker = comment_marker(target.comment_key)
    comment_path = results_dir / COMMENT_FILE
    body = comment_body(outcome.comment_markdown, marker, event.head_sha, event.run_url)
    _write_files(results_dir, body, event, target.comment_key)

    comment_url, note = "", ""
    if outcome.interrupted:
        # A stopped run (often a superseded one) does not replace the PR's comment.
        note = "The PR comment was not posted: the run was stopped by a signal."
    elif target.comment != "off":
        comment_url, note = publish_comment(
            target, body, marker, shown(comment_path, event.workspace, target.workdir),
            make_client,
        )
    summary = outcome.summary_markdown
    if note:  # may quote GitHub's answers: escaped, and redacted as the summary was
        summary = summary.rstrip("\n") + "\n\n" + target.redactor(note) + "\n"
    write_runner_file("GITHUB_STEP_SUMMARY", target.runner.summary_file,
                      lambda path: append_job_summary(path, summary))
    skipped = outcome.skipped
    if skipped:
        log.info("ADK eval skipped: %s", skipped,
                 extra=annotation("notice", title="ADK eval skipped"))
    write_runner_file("GITHUB_OUTPUT", target.runner.output_file, lambda path: write_outputs(
        path, {
            # Empty when skipped: neither a pass nor a failure (docs/action.md).
            "passed": "" if skipped else "true" if outcome.passed else "false",
            "results_path": shown(outcome.results_path, event.workspace, target.workdir)
            if outcome.results_written else "",
            "comment_path": shown(comment_path, event.workspace, target.workdir),
            "comment_url": comment_url,
            "metrics": json.dumps(outcome.metrics, sort_keys=True, default=str),
            "regressed": json.dumps(outcome.regressed, default=str),
            **cost_outputs(outcome),
        }))
    return outcome.exit_code


def publish_part(target: PublishTarget, outcome: PipelineOutcome) -> int:
    """One shard of a sharded run (``shard`` input): no comment and no gate (the merge job
    posts and gates once); the step outputs name the part's results file. Returns 2 when
    errors kept scores from being computed, else 0."""
    event = target.runner.event
    annotate_outcome(outcome, event.workspace, target.workdir)
    log.info(
        "shard %s finished: upload %s as an artifact and merge the parts in one job "
        "(docs/scaling.md, \"Sharding on a matrix\")",
        outcome.shard, shown(outcome.results_path, event.workspace, target.workdir),
    )
    write_runner_file("GITHUB_OUTPUT", target.runner.output_file, lambda path: write_outputs(
        path, {
            "passed": "true" if outcome.passed else "false",
            "results_path": shown(outcome.results_path, event.workspace, target.workdir),
            "comment_path": "", "comment_url": "", "metrics": "{}", "regressed": "[]",
            **cost_outputs(outcome),
        }))
    return outcome.exit_code


def annotate_outcome(outcome: PipelineOutcome, workspace: Path | None, workdir: Path) -> None:
    """An error annotation for what stopped an incomplete run (``outcome.error``), on its
    file and line when known (``error_file``, relative to ``workdir``; the annotation's
    ``file`` is relative to the repository root, ``workspace``: workflow commands,
    "error"), and a warning annotation for each of its ``warnings`` (a baseline asked for
    by name and not used). Printed after the run's log window, where the runner obeys
    commands again; the formatter escapes them (github.logs)."""
    if outcome.error:
        log.error("%s", outcome.error, extra=annotation(title="adk-eval-action", **place(
            outcome.error_file, outcome.error_line, workspace, workdir)))
    for warning in outcome.warnings:
        log.warning("%s", warning, extra=annotation("warning", title="adk-eval-action"))


def _write_files(results_dir: Path, body: str, event: EventContext, key: str) -> None:
    """The comment file and the PR context beside the results file (for the fork recipe),
    each whole or not at all; a file that cannot be written is said in the log (a full
    disk as such), and publishing goes on."""
    context = json.dumps({
        "repository": event.repository, "pr_number": event.pr_number,
        "head_sha": event.head_sha, "comment_key": key, "run_id": event.run_id,
    }, indent=2) + "\n"
    for name, text in ((COMMENT_FILE, without_surrogates(body)), (PR_FILE, context)):
        try:  # whole or not at all: a full disk leaves no empty comment file
            write_atomic(results_dir / name, text)
        except OSError as exc:
            log.error("%s", OutputError(results_dir / name, exc),
                      extra=annotation(title="adk-eval-action"))


def log_suites(
    outcome: PipelineOutcome, workspace: Path | None, workdir: Path,
) -> None:
    """One log group per suite, then an error annotation per suite whose agent could not be
    had (``outcome.error_annotations``: at the file and line it raised, when known), then
    one per failing eval case at the line of its eval_id, worst first: the runner attaches
    only 10 per step (ExecutionContext.cs)."""
    errors = outcome.error_annotations
    for suite in outcome.suites:
        with group(log, f"Suite {suite}"):
            failed = [f for f in outcome.failures if f.suite == suite]
            log.info("%s", _suite_line(outcome, suite, failed))
            for failure in failed:
                log.info("  %s: %s", failure.eval_id, failure.message)
            for error in (e for e in errors if e.suite == suite and e.kind != "agent"):
                log.info("  error: %s", error.message)
    for error in errors[:MAX_ANNOTATIONS]:
        title = case_title(error.suite, error.kind) if error.suite else "adk-eval-action"
        log.error("%s", error.message, extra=annotation(
            title=title, **place(error.file, error.line, workspace, workdir)))
    room = max(0, MAX_ANNOTATIONS - len(errors))
    ranked = sorted(outcome.failures, key=lambda f: -f.severity)
    if len(ranked) > room:
        log.info("%s more failing eval case(s) are listed in the suite groups above and in "
                 "the job summary", len(ranked) - room)
    for failure in ranked[:room]:
        line = failure.line or eval_id_line(workdir / failure.eval_set_file, failure.eval_id)
        log.error("%s", failure.message, extra=annotation(
            line=line, title=case_title(failure.suite, failure.eval_id),
            # Relative to the workspace: the repository root that annotations refer to.
            file=shown(Path(failure.eval_set_file), workspace, workdir),
        ))


def _suite_line(outcome: PipelineOutcome, suite: str, failed: list[CaseFailure]) -> str:
    """The first line of a suite's log group: why its agent could not be had, else its
    failing eval cases, else how many of its eval cases passed ("all N eval cases pass"
    only when every one of them did; none when the run stopped before scoring any)."""
    errors = outcome.error_annotations
    agent = [(i, e.message) for i, e in enumerate(errors) if e.suite == suite and e.kind == "agent"]
    if agent:
        # Once: an annotation (the first MAX_ANNOTATIONS) says it; the line only points to it.
        return "; ".join("its agent did not load or start (the error annotation below)"
                         if i < MAX_ANNOTATIONS else message for i, message in agent)
    if failed:
        return f"{len(failed)} failing eval case(s)"
    cases = [c for c in (outcome.comparison.cases if outcome.comparison else [])
             if c.suite == suite and c.change != "removed"]
    passed = sum(1 for c in cases if c.head_status == CaseStatus.PASSED)
    if not cases or not passed:
        return "no eval case was scored" + (": the run stopped" if outcome.error else "")
    if passed < len(cases):
        return f"{passed} of {len(cases)} eval cases passed; the others were not scored"
    return f"all {len(cases)} eval case{'s' if len(cases) != 1 else ''} pass"


def publish_comment(
    target: PublishTarget, body: str, marker: str, saved_as: str,
    make_client: Callable[[str, str], GitHubClient],
) -> tuple[str, str]:
    """Post the sticky comment; returns (comment URL or "", note for the summary)."""
    try:
        result = post_run_comment(target, body, marker, make_client)
    except StaleRun as exc:
        log.info("%s", exc, extra=annotation("notice", title="PR comment not posted"))
        return "", f"The PR comment was not posted: {md(str(exc), 2000)}."
    except GitHubError as exc:
        if isinstance(exc, PermissionDenied) and exc.read_only_token:
            # A fork's token: the evaluation stands and the comment waits in a file.
            log.warning("%s", exc, extra=annotation("warning", title="PR comment not posted"))
            return "", (
                "The PR comment could not be posted with this read-only token (a pull "
                f"request from a fork?). It is saved as `{saved_as}`; the fork recipe in "
                "the action's docs posts it from a workflow_run workflow."
            )
        # The evaluation stands too; say loudly that publishing did not.
        log.error("%s", exc, extra=annotation(title="PR comment not posted"))
        return "", f"The PR comment could not be posted: {md(str(exc), 2000)}"
    except Exception as exc:  # noqa: BLE001 - the comment never changes the check's colour
        log.error("%s", describe_exception(exc), extra=annotation(title="PR comment not posted"))
        return "", ("The PR comment could not be posted: "
                    f"{md(f'{type(exc).__name__}: {exc}', 2000)}")
    if result is None:
        return "", ""
    log.info("PR comment %s: %s", result.action, result.url)
    return result.url, f"PR comment {result.action}: {result.url}"


def post_run_comment(
    target: PublishTarget, body: str, marker: str,
    make_client: Callable[[str, str], GitHubClient],
) -> CommentResult | None:
    """Find this run's PR (over REST for push/issue_comment) and upsert the comment, unless
    the PR's head, read right before posting, is not the head this run evaluated.

    Raises:
        StaleRun: the PR moved on (.freshness.stale_reason); nothing was posted.
        GitHubError: a REST call failed.
    """
    event = target.runner.event
    if not target.token:
        log.info("No github_token: the PR comment is only written to a file.",
                 extra=annotation("notice"))
        return None
    if not event.repository:
        return None
    client = make_client(target.token, event.api_url)
    if event.pr_number is None and event.event_name in ("push", "workflow_dispatch") \
            and event.head_sha:
        pulls = [
            p for p in pulls_for_commit(client, event.repository, event.head_sha)
            if p.get("state") == "open" and (p.get("head") or {}).get("sha") == event.head_sha
        ]
        if not pulls:
            log.info("No open pull request has this commit as its head: no PR comment.")
            return None
        event = event.with_pull(pulls[0])
    elif event.pr_number is not None and event.head_sha is None:
        event = event.with_pull(get_pull(client, event.repository, event.pr_number))
    if event.pr_number is None:
        if event.is_pull_request_event:  # never silent: the warning above says why
            log.warning("This %s event names no pull request: no PR comment.",
                        event.event_name, extra=annotation("warning", title="PR comment"))
        else:
            log.info("This run is not about a pull request: no PR comment.")
        return None
    stale = stale_reason(get_pull(client, event.repository, event.pr_number), event.head_sha)
    if stale:
        raise StaleRun(stale)
    return upsert_sticky_comment(
        client, event.repository, event.pr_number, body, marker=marker,
        mode="new" if target.comment == "new" else "update",
    )


def place(
    file: str | None, line: int | None, workspace: Path | None, workdir: Path,
) -> dict[str, Any]:
    """An annotation's ``file`` and ``line`` for an error's ``file`` (relative to
    ``workdir``, or absolute) and ``line``: the file relative to the repository root (the
    workspace), where GitHub places annotations (workflow commands, "error"); nothing
    when the error names no file, or a "file" that is not there (a label such as "the
    default criteria"), as the annotation could not be placed."""
    if not file or not (workdir / file).exists():
        return {}
    return {"file": shown(Path(file), workspace, workdir), "line": line}


def shown(path: Path, workspace: Path | None, workdir: Path) -> str:
    """A path as later steps on the host can use it: relative to the workspace if inside,
    else relative to the run's working directory if inside, else as given. A relative
    ``path`` is relative to the working directory."""
    absolute = (path if path.is_absolute() else workdir / path).resolve()
    for base in (workspace, workdir):
        if base is not None:
            try:
                return absolute.relative_to(base.resolve()).as_posix()
            except ValueError:
                pass
    return path.as_posix()


def report_failure(
    runner: RunnerEnv, exc: BaseException, redact: Callable[[str], str] | None = None,
) -> None:
    """When the run could not be published normally, still say so in the job summary and
    outputs (``passed=false``), so a later ``if:`` on ``passed`` and a reader of the
    summary both see the failure. Never raises (it is the last thing a failing run does)."""
    said = (redact or (lambda text: text))(f"{type(exc).__name__}: {exc}" if not isinstance(
        exc, AdkEvalActionError) else str(exc))
    # The job summary's heading and an incomplete run's headline (report.headline).
    cause = incomplete_cause([ErrorRecord(kind=error_kind(exc), message=said)])
    write_runner_file("GITHUB_STEP_SUMMARY", runner.summary_file, lambda path: append_job_summary(
        path, "## ADK evaluation\n\n⚠️ **ADK eval incomplete** "
        f"({cause}): adk-eval-action could not run: {md(said, 2000)}\n"))
    write_runner_file("GITHUB_OUTPUT", runner.output_file, lambda path: write_outputs(path, {
        "passed": "false", "results_path": "", "comment_path": "", "comment_url": "",
        "metrics": "{}", "regressed": "[]", **cost_outputs(None),
    }))
