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
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from adk_eval_action.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
    Interrupted,
    describe_exception,
)
from adk_eval_action.git import trust_in_container
from adk_eval_action.github.event import EventContext, EventContextError
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
    PublishTarget,
    RunnerEnv,
    publish,
    publish_part,
    report_failure,
)
from adk_eval_action.github.transport import GitHubClient
from adk_eval_action.logscope import diverted
from adk_eval_action.outcome import PipelineOutcome
from adk_eval_action.project.dependencies import DependencyFailure
from adk_eval_action.redaction import Redactor, scrub_environment, secret_values
from adk_eval_action.run.requirements import (
    install_requirements,
    install_suite_requirements,
    read_install_failures,
    restart_without_requirements,
    suite_conflicts,
)
from adk_eval_action.run.signals import interrupt_on_signals
from adk_eval_action.settings import (
    PUBLISHING_OPTIONS,
    RunRequest,
    RunSettings,
    click_options,
    hide_secrets,
    input_option,
    load_request,
    publishing_settings,
    read_inputs,
    repository_root,
    where_settings,
)

__all__ = [
    "ActionRun",
    "action_command",
    "comment_command",
    "run_action",
]

log = logging.getLogger(__name__)
#: Exit codes the action passes on; anything else is reported as 2.
EXIT_CODES = (EXIT_PASS, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_SIGINT, EXIT_SIGTERM)


class ActionRun(BaseModel):
    """One start of the action: the option layers it was given (``inputs`` from
    ``INPUT_*``, ``flags`` from the command line), the run they make, its settings resolved
    once over the working directory's adk-eval.yaml (``request``), and the runner's
    environment. Everything else is built from these by the stage that uses it: where the
    run is published (:attr:`target`, ``github.publish.PublishTarget.from_settings``),
    what the baseline search is asked (``baseline.request.baseline_request``).
    """

    model_config = ConfigDict(frozen=True)

    inputs: dict[str, Any] = Field(default_factory=dict)
    flags: dict[str, Any] = Field(default_factory=dict)
    request: RunRequest
    runner: RunnerEnv = Field(default_factory=RunnerEnv)
    secrets: tuple[str, ...] = Field(default=(), repr=False)

    @property
    def redactor(self) -> Redactor:
        """Redacts the token and the environment's secret values (``redaction``)."""
        return Redactor(self.secrets)

    @property
    def settings(self) -> RunSettings:
        return self.request.settings

    @property
    def workdir(self) -> Path:
        """The run's working directory (absolute)."""
        return self.request.workdir

    @classmethod
    def from_sources(
        cls, flags: Mapping[str, Any], env: Mapping[str, str], start: Path | None = None,
    ) -> ActionRun:
        """Read the inputs and the runner's environment once, and resolve the settings
        once over adk-eval.yaml (not for posting a comment artifact, which evaluates
        nothing); ``start`` is the folder the process started in (``working_directory`` is
        relative to it). Where the run works and writes is checked to be inside the
        workspace before any file of it is read.

        Raises:
            ConfigError: an invalid input or flag, a path outside the workspace, an
                unreadable or invalid adk-eval.yaml.
            EventContextError: an unreadable event payload.
        """
        inputs = read_inputs(env)
        given = hide_secrets({k: v for k, v in flags.items() if v is not None and v != ()})
        where = where_settings(inputs, given)
        workdir = ((start if start is not None else Path.cwd()) / where.working_directory)
        if outside := where.outside_workspace(env, workdir.resolve()):
            raise outside
        runner = RunnerEnv.from_env(env)
        secrets = tuple(secret_values(env, [where.token]))
        request = load_request(workdir, inputs, given, secrets,
                               read_config=where.comment_artifact is None)
        return cls(inputs=inputs, flags=given, request=request, runner=runner, secrets=secrets)

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
        secrets = tuple(secret_values(env, [settings.token]))
        request = RunRequest(settings=settings, workdir=workdir.resolve(),
                             root=repository_root(workdir.resolve()),
                             secrets=tuple(SecretStr(s) for s in secrets))
        return cls(inputs=inputs, flags=given, request=request, runner=runner, secrets=secrets)

    @classmethod
    def start(
        cls, flags: Mapping[str, Any], env: Mapping[str, str], start: Path | None = None,
    ) -> tuple[ActionRun, Exception | None]:
        """The run from its sources (:meth:`from_sources`) and None; when they refuse it
        (an invalid input or flag, an unreadable event payload or adk-eval.yaml, a bug
        reading them), the run as far as recording that error needs it (:meth:`fallback`)
        and the error, which :func:`run_action` publishes as the run's stop.

        Raises:
            Exception: the error again when not even the publishing inputs are usable.
        """
        try:
            return cls.from_sources(flags, env, start), None
        except Exception as exc:  # noqa: BLE001 - a named error or a bug: the run's stop
            fallback = cls.fallback(flags, env, start)
            if fallback is None:
                raise
            return fallback, exc

    @property
    def event(self) -> EventContext:
        return self.runner.event

    def path(self, path: Path) -> Path:
        """A setting's path (relative to the working directory) as an absolute one."""
        return self.request.path(path)

    @property
    def target(self) -> PublishTarget:
        """Where and how this run is published (``PublishTarget.from_settings``)."""
        return PublishTarget.from_settings(self.settings, self.runner, self.workdir,
                                           self.secrets)


# --------------------------------------------------------------------------- pipeline seam

PipelineRunner = Callable[[RunRequest, PublishTarget], PipelineOutcome]


def _run_real_pipeline(request: RunRequest, target: PublishTarget) -> PipelineOutcome:
    """Import late: the pipeline imports google-adk, which the user's requirements may
    have just replaced."""
    from adk_eval_action.run.pipeline import run_pipeline

    return run_pipeline(request, target)


# --------------------------------------------------------------------------- the action


def run_action(
    run: ActionRun,
    *,
    pipeline: PipelineRunner = _run_real_pipeline,
    client_factory: Callable[[str, str], GitHubClient] | None = None,
    reexec: Callable[[dict[str, DependencyFailure]], None] | None = None,
    skip_requirements: bool = False,
    install_failures: Mapping[str, DependencyFailure] | None = None,
    environ: MutableMapping[str, str] | None = None,
    stopped_by: Exception | None = None,
) -> int:
    """Run the evaluation and publish it; returns the process exit code.

    `reexec` restarts the process once the user's requirements are installed (the
    ``requirements`` input, then each suite's own: ``install_suite_requirements``), so that
    the evaluation imports the packages they pinned (google-adk among them) fresh; it is
    given the suites whose own dependencies did not install, which the restarted process
    gets as `install_failures` (recorded incomplete, naming the file, never imported). `environ`
    (the process environment) loses the action's inputs and tokens before the pipeline
    imports the agent (:func:`scrub_environment`). `stopped_by` is an error that refused
    the run's inputs (:meth:`ActionRun.start`; ``run`` is then the fallback run): nothing
    runs, and the stop is published as any run's.
    """
    for secret in run.secrets:
        mask(log, secret)
    for warning in run.event.warnings:  # what of the event is missing or invalid
        log.warning("%s", warning, extra=annotation("warning", title="adk-eval-action"))
    make_client = client_factory or (lambda token, api: GitHubClient(token, api))
    if stopped_by is not None:
        return _publish(run, _stopped(run, stopped_by), make_client)
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
    try:  # the action's one stop path (its settings were refused before: stopped_by)
        restart = _install(run, environ, skip_requirements)
        installed = None if skip_requirements else _install_suites(run, environ)
    except Exception as exc:  # noqa: BLE001 - published as any stop
        return _publish(run, _stopped(run, exc), make_client)
    if (restart or installed is not None) and reexec is not None:
        reexec(installed or {})  # does not return in production
    failures = {**(install_failures or {}), **(installed or {})}
    if failures:
        run = run.model_copy(update={"request": run.request.model_copy(
            update={"dependency_failures": failures})})
    if environ is not None:
        scrub_environment(environ)
    # Agent output is untrusted text in this log: the runner obeys no workflow command
    # in it until the run is over. What stops the pipeline is its own to record.
    with group(log, "Run evaluations"), commands_stopped(log):
        outcome = pipeline(run.request, run.target)
    return _publish(run, outcome, make_client)


def _install(
    run: ActionRun, environ: MutableMapping[str, str] | None, skip_requirements: bool,
) -> bool:
    """Install the user's requirements (the ``requirements`` input; not when
    ``skip_requirements``: the restarted process); whether it did, so the process restarts.
    The installer gets the agent's environment (no token); what it prints quotes the
    requirements, repository content.

    Raises:
        RequirementsError: the install failed."""
    if not run.settings.requirements or skip_requirements:
        return False
    installer_env = dict(os.environ if environ is None else environ)
    scrub_environment(installer_env)
    with group(log, "Install the agent's requirements"), commands_stopped(log):
        install_requirements(run.settings.requirements, run.workdir,
                             root=repository_root(run.workdir), env=installer_env)
    return True


def _install_suites(
    run: ActionRun, environ: MutableMapping[str, str] | None,
) -> dict[str, DependencyFailure] | None:
    """Install the own dependencies of the suites this run evaluates (their
    ``requirements``: adk-eval.yaml's, else the file beside each agent); the suites whose
    install failed, or None when none has any. Suites that cannot be found are left to
    the pipeline, which says why; dependencies that cannot live together are said first."""
    from adk_eval_action.run import evaluation

    try:  # the pipeline finds them again, and says what it found then
        with diverted([logging.getLogger(evaluation.__name__)], [], logging.CRITICAL):
            suites = [s for s in evaluation.find_suites(run.request)
                      if s.requirements and _in_this_shard(s.shard, run.settings)]
    except AdkEvalActionError:
        return None
    if not suites:
        return None
    installer_env = dict(os.environ if environ is None else environ)
    scrub_environment(installer_env)
    with group(log, "Install the suites' own dependencies"), commands_stopped(log):
        for conflict in suite_conflicts(suites, run.workdir):
            log.warning("%s", conflict.line(), extra=annotation("warning"))
        return install_suite_requirements(suites, run.workdir, repository_root(run.workdir),
                                          env=installer_env)


def _in_this_shard(pinned: int | None, settings: RunSettings) -> bool:
    """Whether a suite pinned to shard ``pinned`` (None: spread) may run in this job."""
    return pinned is None or settings.shard is None or pinned == settings.shard.index


def _stopped(run: ActionRun, exc: Exception) -> PipelineOutcome:
    """The outcome of a run that ``exc`` stopped before evaluation started: an empty
    results file recording the error, and the "incomplete" comment and summary
    (``run.stop_outcomes.stopped_run``), published like any run's."""
    from adk_eval_action.run.stop_outcomes import stopped_run

    return stopped_run(run.request, exc)


def _publish(
    run: ActionRun, outcome: PipelineOutcome, make_client: Callable[[str, str], GitHubClient],
) -> int:
    """Publish ``outcome`` (a shard's as a part: no comment, no gate); the exit code."""
    if outcome.shard:
        return publish_part(run.target, outcome)
    return publish(run.target, outcome, make_client)


# --------------------------------------------------------------------------- click


@contextmanager
def _runner_log() -> Iterator[GitHubFormatter]:
    """The log on stdout in the runner's format, restored when the command ends; the
    formatter is yielded so the run's secrets can be given to it once they are known."""
    formatter = GitHubFormatter()
    with log_to(sys.stdout, formatter):
        yield formatter


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
@click.option("--install-failures", type=click.Path(path_type=Path), hidden=True)
def action_command(skip_requirements: bool, install_failures: Path | None,
                   **flags: Any) -> None:
    """Run as the GitHub Action: inputs from INPUT_* (or these flags), publish, gate."""
    with _runner_log() as formatter:
        failed = read_install_failures(install_failures)
        code = _act(flags, formatter, skip_requirements, failed)
    sys.exit(code if code in EXIT_CODES else EXIT_USAGE)


def _act(flags: dict[str, Any], formatter: GitHubFormatter, skip_requirements: bool,
         install_failures: dict[str, DependencyFailure] | None = None) -> int:
    """The action from the process's environment, in its working directory, with signals
    as ``Interrupted``; the exit code. A refused input or event payload is published as a
    run stopped before evaluation when the inputs that say where results and comment go
    are usable (:meth:`ActionRun.start`). The one catch: whatever still escapes (those
    inputs unusable, publishing failed, a signal before evaluation, a bug) is one
    annotation, exit 2 (130/143 for a signal), and still said in the job summary and the
    outputs. ``formatter`` redacts the environment's secret values from the start."""
    env = dict(os.environ)
    formatter.redact = Redactor(secret_values(env))
    start_dir = Path.cwd()
    run: ActionRun | None = None
    try:
        run, stopped_by = ActionRun.start(flags, env)
        formatter.redact = run.redactor
        if run.runner.in_actions and stopped_by is None:
            trust_in_container(run.event.workspace)
        with _inside(run.workdir, start_dir), interrupt_on_signals():
            return run_action(
                run, reexec=lambda failed: restart_without_requirements(start_dir, failed),
                skip_requirements=skip_requirements, stopped_by=stopped_by,
                install_failures=install_failures,
                environ=os.environ if stopped_by is None else None,
            )
    except (Exception, Interrupted) as exc:  # noqa: BLE001 - every failure: an exit code
        code = _exit_for(exc)
        report_failure(run.runner if run else RunnerEnv.files_from_env(env), exc,
                       formatter.redact)
        return code


@contextmanager
def _inside(workdir: Path, start_dir: Path) -> Iterator[None]:
    """The agent's own code may read files relative to the current directory: the run's
    working directory for the block, ``start_dir`` again after (an in-process caller, a
    test, keeps its directory).

    Raises:
        ConfigError: the working directory cannot be entered."""
    try:
        os.chdir(workdir)
    except OSError as exc:
        raise ConfigError("working_directory", str(exc)) from exc
    try:
        yield
    finally:
        os.chdir(start_dir)


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
        env = dict(os.environ)
        formatter.redact = Redactor(secret_values(env))
        run: ActionRun | None = None
        try:
            run = ActionRun.from_sources({**flags, "comment_artifact": str(artifact)}, env)
            formatter.redact = run.redactor
            for secret in run.secrets:
                mask(log, secret)
            code = post_artifact_comment(
                run.target, artifact, make_client=lambda token, api: GitHubClient(token, api),
                pr_number=pr_number, head_sha=head_sha,
            )
        except Exception as exc:  # noqa: BLE001 - every failure: an exit code
            code = _exit_for(exc)
            if run is None:  # the inputs or the event: still said in the summary, outputs
                report_failure(RunnerEnv.files_from_env(env), exc, formatter.redact)
                code = EXIT_USAGE
    sys.exit(code)
