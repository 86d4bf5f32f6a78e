"""The GitHub Action entry points: `adk-eval-action action` and `adk-eval-action comment`.

`action` is the container's ENTRYPOINT. It reads the step's inputs from `INPUT_*`
(`settings.read_inputs`), the `GITHUB_*` variables and the event payload, runs the pipeline,
and publishes: one sticky PR comment, the job summary, outputs, annotations and log groups.
It exits with the gate's code (0 pass, 1 gate failed, 2 usage/config/infrastructure error).
The same command works in a plain `run:` step or on a laptop with the inputs as flags.

`comment` posts a comment rendered by an earlier run (the artifact of a fork PR's
`pull_request` run) from a privileged `workflow_run` workflow. The artifact is untrusted:
its PR number and head sha are checked against the API and the triggering run before
anything is posted (docs/action.md, "Pull requests from forks").

The environment is read once, in the click commands, into an `ActionRun`; the options are
those of `adk_eval_action.settings` (one per input). Publishing is `github.publish` and
`github.fork`; installing requirements is `run.requirements`; the log goes to stdout in the
runner's format (`github.logs.GitHubFormatter`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ConfigDict, Field

from adk_eval_action.baseline.models import BaselineContext
from adk_eval_action.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
    AdkEvalActionError,
    Interrupted,
    describe_exception,
)
from adk_eval_action.git import Git, GitError
from adk_eval_action.github.event import EventContext, EventContextError, credentials_note
from adk_eval_action.github.fork import post_artifact_comment
from adk_eval_action.github.logs import (
    GitHubFormatter,
    annotation,
    commands_stopped,
    group,
    log_to,
    mask,
)
from adk_eval_action.github.publish import (
    RENDER_MAX_CHARS,
    Outcome,
    PublishTarget,
    RunnerEnv,
    publish,
    publish_part,
    report_failure,
)
from adk_eval_action.github.transport import GitHubClient
from adk_eval_action.redaction import Redactor, secret_values
from adk_eval_action.run.requirements import install_requirements
from adk_eval_action.run.signals import interrupt_on_signals
from adk_eval_action.settings import (
    PUBLISHING_OPTIONS,
    RunRequest,
    RunSettings,
    click_options,
    fallback_request,
    hide_secrets,
    input_option,
    load_request,
    publishing_settings,
    read_inputs,
    repository_root,
    resolve,
)

__all__ = [
    "ActionRun",
    "action_command",
    "comment_command",
    "pipeline_request",
    "run_action",
]

log = logging.getLogger(__name__)
#: Exit codes the action passes on; anything else is reported as 2.
EXIT_CODES = (EXIT_PASS, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_SIGINT, EXIT_SIGTERM)


class ActionRun(BaseModel):
    """One start of the action: the option layers it was given (``inputs`` from
    ``INPUT_*``, ``flags`` from the command line), the settings they resolve to without
    adk-eval.yaml (enough for the action's own options, which the file does not hold), the
    runner's environment, and the working directory (absolute).

    The pipeline's settings are resolved again over adk-eval.yaml by :func:`pipeline_request`
    once the working directory and the user's requirements are in place.
    """

    model_config = ConfigDict(frozen=True)

    inputs: dict[str, Any] = Field(default_factory=dict)
    flags: dict[str, Any] = Field(default_factory=dict)
    settings: RunSettings = Field(default_factory=RunSettings)
    runner: RunnerEnv = Field(default_factory=RunnerEnv)
    workdir: Path = Path(".")
    secrets: tuple[str, ...] = Field(default=(), repr=False)

    @property
    def redactor(self) -> Redactor:
        """Redacts the token and the environment's secret values (``redaction``)."""
        return Redactor(self.secrets)

    @classmethod
    def from_sources(
        cls, flags: Mapping[str, Any], env: Mapping[str, str], start: Path | None = None,
    ) -> ActionRun:
        """Read the inputs and the runner's environment once; ``start`` is the folder the
        process started in (``working_directory`` is relative to it).

        Raises ConfigError for an invalid input or flag and EventContextError for an
        unreadable event payload.
        """
        inputs = read_inputs(env)
        given = hide_secrets({k: v for k, v in flags.items() if v is not None and v != ()})
        settings = resolve(None, inputs, given)
        workdir = ((start if start is not None else Path.cwd()) / settings.working_directory)
        if outside := settings.outside_workspace(env, workdir.resolve()):
            raise outside
        return cls(
            inputs=inputs, flags=given, settings=settings, runner=RunnerEnv.from_env(env),
            workdir=workdir.resolve(), secrets=tuple(secret_values(env, [settings.token])),
        )

    @classmethod
    def fallback(
        cls, flags: Mapping[str, Any], env: Mapping[str, str], start: Path | None = None,
    ) -> ActionRun | None:
        """The run as far as recording an error needs it, when :meth:`from_sources`
        refused the inputs or the event payload: the inputs that say where the results and
        comment go and how it is posted (``settings.PUBLISHING_OPTIONS``), and the event
        when it is readable. None when even those inputs are invalid, or the working
        directory is not a folder or it or the results path lies outside the workspace."""
        inputs = {k: v for k, v in read_inputs(env).items() if k in PUBLISHING_OPTIONS}
        given = hide_secrets({k: v for k, v in flags.items() if v is not None and v != ()
                              and k in PUBLISHING_OPTIONS})
        settings = publishing_settings(inputs, given)
        if settings is None:
            return None
        try:
            runner = RunnerEnv.from_env(env)
        except EventContextError:  # no PR to comment on; the files are still written
            runner = RunnerEnv.files_from_env(env)
        workdir = ((start if start is not None else Path.cwd()) / settings.working_directory)
        if not workdir.is_dir() or settings.outside_workspace(env, workdir.resolve()):
            return None  # (never a results file or comment outside the checkout)
        return cls(inputs=inputs, flags=given, settings=settings, runner=runner,
                   workdir=workdir.resolve(), secrets=tuple(secret_values(env, [settings.token])))

    @property
    def event(self) -> EventContext:
        return self.runner.event

    @property
    def records_baseline(self) -> bool:
        """Whether this run's results are the next baseline: the `record` input, else a
        push to the repository's default branch (the event names it), else any push."""
        if self.settings.record is not None:
            return self.settings.record
        event = self.event
        if event.event_name != "push":
            return False
        default = event.default_branch
        return not default or event.ref == f"refs/heads/{default}"

    def path(self, path: Path) -> Path:
        """A setting's path (relative to the working directory) as an absolute one."""
        return path if path.is_absolute() else self.workdir / path

    @property
    def target(self) -> PublishTarget:
        """Where and how this run is published."""
        settings = self.settings
        return PublishTarget(
            runner=self.runner, workdir=self.workdir, github_token=settings.github_token,
            comment=settings.comment, comment_key=settings.comment_key,
            results_path=settings.results_path, secrets=self.secrets,
        )


# --------------------------------------------------------------------------- pipeline seam

PipelineRunner = Callable[[RunRequest], Outcome]


def _run_real_pipeline(request: RunRequest) -> Outcome:
    """Import late: the pipeline imports google-adk, which the user's requirements may
    have just replaced."""
    from adk_eval_action.run.pipeline import run_pipeline

    return run_pipeline(request)


def pipeline_request(run: ActionRun) -> RunRequest:
    """The pipeline's run: the inputs resolved over adk-eval.yaml in the working directory,
    with what the action decides itself.

    The baseline search gets the GitHub context (docs/baselines.md): the PR head, not
    GITHUB_SHA's merge commit, and the base branch of the PR unless `base_ref` says.
    `publish` writes the comment and summary; the pipeline the HTML report, for upload.

    Raises:
        ConfigError: adk-eval.yaml is unreadable or invalid, or a value is out of range.
    """
    request = load_request(run.workdir, run.inputs, run.flags, secrets=run.secrets)
    event = run.event
    base_ref = request.settings.base_ref or event.base_ref
    settings = request.settings.model_copy(update={
        "record": run.records_baseline, "base_ref": base_ref,
        "comment_out": None, "summary_out": None,
        "html_out": request.settings.results_path.parent / "adk-eval-report.html",
    })
    return request.model_copy(update={
        "settings": settings,
        "github": BaselineContext(
            repository=event.repository, api_url=event.api_url, server_url=event.server_url,
            token=settings.github_token, head_sha=event.head_sha, base_ref=base_ref,
            event_name=event.event_name,
        ),
        "run_url": event.run_url,
        "max_comment_chars": RENDER_MAX_CHARS,
        "credentials_note": credentials_note(
            event, skipping=settings.on_missing_credentials == "skip"),
        "job_summary": run.runner.summary_file is not None,
    })


# --------------------------------------------------------------------------- the action


#: Variables removed from the environment before the agent is imported: the action's own
#: inputs (the token among them) and the runner's tokens, which an agent never needs.
SCRUBBED_PREFIXES = ("INPUT_",)
SCRUBBED_NAMES = ("GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN")


def scrub_environment(environ: MutableMapping[str, str]) -> list[str]:
    """Remove :data:`SCRUBBED_PREFIXES`/:data:`SCRUBBED_NAMES` from ``environ`` (the
    process environment the agent is imported in); returns the names removed."""
    names = [n for n in environ if n.startswith(SCRUBBED_PREFIXES) or n in SCRUBBED_NAMES]
    for name in names:
        del environ[name]
    return names


def run_action(
    run: ActionRun,
    *,
    pipeline: PipelineRunner = _run_real_pipeline,
    client_factory: Callable[[str, str], GitHubClient] | None = None,
    reexec: Callable[[], None] | None = None,
    skip_requirements: bool = False,
    environ: MutableMapping[str, str] | None = None,
) -> int:
    """Run the evaluation and publish it; returns the process exit code.

    `reexec` restarts the process once the user's requirements are installed, so that the
    evaluation imports the packages they pinned (google-adk among them) fresh. `environ`
    (the process environment) loses the action's inputs and tokens before the pipeline
    imports the agent (:func:`scrub_environment`).
    """
    for secret in run.secrets:
        mask(log, secret)
    for warning in run.event.warnings:  # what of the event is missing or invalid
        log.warning("%s", warning, extra=annotation("warning", title="adk-eval-action"))
    make_client = client_factory or (lambda token, api: GitHubClient(token, api))
    if run.settings.comment_artifact:
        return post_artifact_comment(
            run.target, run.path(run.settings.comment_artifact), make_client=make_client,
        )
    if run.event.event_name == "pull_request_target":
        log.warning(
            "This workflow runs on pull_request_target. Evaluating an agent runs its code; "
            "never check out and evaluate pull request code here (docs/action.md, Security).",
            extra=annotation("warning"),
        )
    # Whatever stops the run before evaluation starts is recorded and published as the
    # run's outcome (run.outcome.stopped_outcome).
    if run.settings.requirements and not skip_requirements:
        try:
            _install(run, environ)
        except Exception as exc:  # noqa: BLE001 - published below, as any stop
            return _publish(run, _stopped(run, exc), make_client)
        if reexec is not None:
            reexec()  # does not return in production
    if environ is not None:
        scrub_environment(environ)
    # Agent output is untrusted text in this log: the runner obeys no workflow command
    # in it until the run is over.
    with group(log, "Run evaluations"), commands_stopped(log):
        try:
            request = pipeline_request(run)
        except Exception as exc:  # noqa: BLE001 - published below, as any stop
            outcome = _stopped(run, exc)
        else:
            outcome = pipeline(request)
    return _publish(run, outcome, make_client)


def _install(run: ActionRun, environ: MutableMapping[str, str] | None) -> None:
    """Install the user's requirements. The installer gets the agent's environment (no
    token); what it prints quotes the requirements, repository content.

    Raises:
        RequirementsError: the install failed."""
    installer_env = dict(os.environ if environ is None else environ)
    scrub_environment(installer_env)
    with group(log, "Install the agent's requirements"), commands_stopped(log):
        install_requirements(run.settings.requirements, run.workdir,
                             root=repository_root(run.workdir), env=installer_env)


def _stopped(run: ActionRun, exc: Exception) -> Outcome:
    """The outcome of a run that ``exc`` stopped before evaluation started: an empty
    results file recording the error, and the "incomplete" comment and summary
    (``run.outcome.stopped_outcome``), published like any run's.

    Raises:
        Exception: ``exc`` again when not even the publishing inputs are usable."""
    from adk_eval_action.run.outcome import stopped_outcome

    request = fallback_request(run.workdir, run.inputs, run.flags, run.secrets)
    if request is None:
        raise exc
    return stopped_outcome(request, exc)


def _publish(
    run: ActionRun, outcome: Outcome, make_client: Callable[[str, str], GitHubClient],
) -> int:
    """Publish ``outcome`` (a shard's as a part: no comment, no gate); the exit code."""
    if getattr(outcome, "shard", None):
        return publish_part(run.target, outcome)
    return publish(run.target, outcome, make_client)


def _reexec_without_requirements(start_dir: Path) -> None:
    """Start this command again, in a process that sees the freshly installed packages,
    from `start_dir`, where this process started (it applies working_directory again)."""
    argv = [sys.executable, "-c", "from adk_eval_action.cli import entry; entry()",
            *sys.argv[1:], "--skip-requirements"]
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(start_dir)
    os.execv(sys.executable, argv)


def _ensure_safe_directory(workspace: Path | None) -> None:
    """Let git work on the runner's checkout, which another user created (:mod:`.git`).

    The image already trusts /github/workspace; a different GITHUB_WORKSPACE is added to
    the container's system config. Best effort: outside a container this may not be ours
    to change, and git is then usually fine anyway.
    """
    if workspace is None:
        return
    git = Git(workspace)
    listed = (git.value("config", "--system", "--get-all", "safe.directory") or "").split()
    if str(workspace) in listed or "*" in listed:
        return
    try:
        git("config", "--system", "--add", "safe.directory", str(workspace))
    except GitError as exc:
        log.info("git safe.directory not set: %s", exc)


# --------------------------------------------------------------------------- click


@contextmanager
def _runner_log() -> Iterator[GitHubFormatter]:
    """The log on stdout in the runner's format, restored when the command ends; the
    formatter is yielded so the run's secrets can be given to it once they are known."""
    formatter = GitHubFormatter()
    with log_to(sys.stdout, formatter):
        yield formatter


def _run_or_exit(
    flags: dict[str, Any], formatter: GitHubFormatter, evaluates: bool = False,
) -> ActionRun:
    """The action's run from the environment; an unusable input or event payload (or a
    bug reading them) is exit 2. When the command ``evaluates`` (``action``) and the
    inputs that say where results and comment go are usable (:meth:`ActionRun.fallback`),
    the error is published as a run stopped before evaluation (results file, "incomplete"
    sticky comment, summary, outputs); else it is still in the job summary and the
    outputs. ``formatter`` redacts the environment's secret values from then on."""
    env = dict(os.environ)
    formatter.redact = Redactor(secret_values(env))
    try:
        return ActionRun.from_sources(flags, env)
    except Exception as exc:  # noqa: BLE001 - a named error or a bug: exit 2, never 1
        fallback = ActionRun.fallback(flags, env) if evaluates else None
        if fallback is None:
            _exit_for(exc)
            report_failure(RunnerEnv.files_from_env(env), exc, formatter.redact)
            raise SystemExit(EXIT_USAGE) from None
        formatter.redact = fallback.redactor
        for secret in fallback.secrets:
            mask(log, secret)
        client_for = lambda token, api: GitHubClient(token, api)  # noqa: E731 - one-liner seam
        try:
            code = _publish(fallback, _stopped(fallback, exc), client_for)
        except Exception as error:  # noqa: BLE001 - publishing failed too: exit 2 still
            _exit_for(error)
            report_failure(fallback.runner, exc, fallback.redactor)
            code = EXIT_USAGE
        raise SystemExit(code if code in EXIT_CODES else EXIT_USAGE) from None


def _exit_for(exc: BaseException) -> int:
    """An error caught at the top becomes one clear annotation and an exit code: a named
    error its own (2), a signal 130/143, anything else 2 "internal error"."""
    if isinstance(exc, (AdkEvalActionError, Interrupted)):
        log.error("%s", exc, extra=annotation(title="adk-eval-action"))
        return exc.exit_code
    log.error("internal error: %s (please report this as a bug)", describe_exception(exc),
              extra=annotation(title="adk-eval-action"))
    return EXIT_USAGE


@click.command("action")
@click_options("action")
@click.option("--skip-requirements", is_flag=True, hidden=True)
def action_command(skip_requirements: bool, **flags: Any) -> None:
    """Run as the GitHub Action: inputs from INPUT_* (or these flags), publish, gate."""
    with _runner_log() as formatter:
        run = _run_or_exit(flags, formatter, evaluates=True)
        formatter.redact = run.redactor
        if run.runner.in_actions:
            _ensure_safe_directory(run.event.workspace)
        start_dir = Path.cwd()
        try:
            # The agent's own code may read files relative to the current directory.
            os.chdir(run.workdir)
        except OSError as exc:
            log.error("working_directory: %s", exc, extra=annotation(title="adk-eval-action"))
            report_failure(run.runner, exc)
            sys.exit(EXIT_USAGE)
        try:
            with interrupt_on_signals():
                try:
                    code = run_action(
                        run, reexec=lambda: _reexec_without_requirements(start_dir),
                        skip_requirements=skip_requirements, environ=os.environ,
                    )
                except (Exception, Interrupted) as exc:  # noqa: BLE001 - every failure
                    code = _exit_for(exc)
                    report_failure(run.runner, exc, run.redactor)
        finally:
            os.chdir(start_dir)  # an in-process caller (a test) keeps its directory
    sys.exit(code if code in EXIT_CODES else EXIT_USAGE)


@click.command("comment")
@click.argument("artifact", type=click.Path(path_type=Path))
@click.option("--pr-number", "pr_number", type=int, help="PR to comment on (else from the "
              "artifact's adk-eval-pr.json).")
@click.option("--head-sha", "head_sha", help="Head sha the comment was rendered for.")
@input_option("comment_key")
@input_option("comment", choices=("update", "new"))
@input_option("github_token")
def comment_command(
    artifact: Path, pr_number: int | None, head_sha: str | None, **flags: Any,
) -> None:
    """Post a previously rendered comment ARTIFACT (folder or .md file) on its PR.

    For the fork recipe: run in a workflow_run workflow on the artifact that the
    pull_request run uploaded; the PR number and head sha are re-checked with the API.
    """
    with _runner_log() as formatter:
        run = _run_or_exit({**flags, "comment_artifact": str(artifact)}, formatter)
        formatter.redact = run.redactor
        for secret in run.secrets:
            mask(log, secret)
        client_for = lambda token, api: GitHubClient(token, api)  # noqa: E731 - one-liner seam
        try:
            code = post_artifact_comment(
                run.target, artifact, make_client=client_for,
                pr_number=pr_number, head_sha=head_sha,
            )
        except Exception as exc:  # noqa: BLE001 - every failure: an exit code
            code = _exit_for(exc)
    sys.exit(code)
