"""The GitHub Action entry points: `adk-eval-action action` and `adk-eval-action comment`.

`action` is the container's ENTRYPOINT. It reads the step's inputs from `INPUT_*`
(`settings.read_inputs`: both `INPUT_NUM_RUNS` and `INPUT_NUM-RUNS`; contract §1),
the `GITHUB_*` variables and the event payload, runs the pipeline, and publishes: one sticky
PR comment, the job summary, step outputs, error annotations and log groups. It exits with
the gate's code (0 pass, 1 gate failed, 2 usage/config/infrastructure error). The same
command works in a plain `run:` step or on a laptop with the inputs given as flags.

`comment` posts a comment rendered by an earlier run (the artifact of a fork PR's
`pull_request` run) from a privileged `workflow_run` workflow. The artifact is untrusted:
its PR number and head sha are checked against the API and the triggering run before
anything is posted (docs/action.md, "Pull requests from forks").

The environment is read once, in the click commands, into an `ActionRun`; the options are
those of `adk_eval_action.settings` (one per input).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import click
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adk_eval_action.baseline.models import BaselineContext
from adk_eval_action.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    EXIT_USAGE,
    AdkEvalActionError,
    ConfigError,
)
from adk_eval_action.github.client import (
    COMMENT_MAX_CHARS,
    CommentResult,
    EventContext,
    EventContextError,
    GitHubClient,
    GitHubError,
    NotFound,
    PermissionDenied,
    add_mask,
    append_job_summary,
    comment_marker,
    compose_comment_body,
    error_annotation,
    get_pull,
    group,
    notice,
    pulls_for_commit,
    strip_markers,
    upsert_sticky_comment,
    warning,
    write_outputs,
)
from adk_eval_action.results.model import package_version
from adk_eval_action.settings import (
    RunRequest,
    RunSettings,
    click_options,
    hide_secrets,
    load_request,
    read_inputs,
    resolve,
)

__all__ = [
    "ActionRun",
    "ArtifactError",
    "RequirementsError",
    "action_command",
    "comment_command",
    "post_artifact_comment",
    "run_action",
]

#: Files the action writes next to the results file; the fork recipe uploads all three.
COMMENT_FILE = "adk-eval-comment.md"
PR_FILE = "adk-eval-pr.json"
#: Room kept for the run link and marker that `compose_comment_body` adds to the rendering.
_FOOTER_RESERVE = 1_000

Console = Callable[[str], None]


class RequirementsError(AdkEvalActionError):
    """The user's requirements could not be installed, or moved google-adk out of range."""


class ArtifactError(AdkEvalActionError):
    """A comment artifact is missing, malformed or does not match the PR it names."""


# --------------------------------------------------------------------------- settings


class RunnerEnv(BaseModel):
    """What the runner's environment says beside the inputs: the event, the files of the
    step's outputs and job summary, and whether this is GitHub Actions (contract §1-2)."""

    model_config = ConfigDict(frozen=True)

    event: EventContext = Field(default_factory=EventContext)
    output_file: Path | None = None
    summary_file: Path | None = None
    in_actions: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RunnerEnv:
        """Raises EventContextError for an unreadable event payload."""
        return cls(
            event=EventContext.from_env(env),
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=(
                Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
            ),
            in_actions=env.get("GITHUB_ACTIONS") == "true",
        )


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
        base = start if start is not None else Path.cwd()
        return cls(
            inputs=inputs, flags=given, settings=settings, runner=RunnerEnv.from_env(env),
            workdir=(base / settings.working_directory).resolve(),
        )

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
        default = (event.payload.get("repository") or {}).get("default_branch")
        return not default or event.ref == f"refs/heads/{default}"

    def path(self, path: Path) -> Path:
        """A setting's path (relative to the working directory) as an absolute one."""
        return path if path.is_absolute() else self.workdir / path


# --------------------------------------------------------------------------- pipeline seam


class Outcome(Protocol):
    """The parts of `pipeline.PipelineOutcome` publishing reads."""

    exit_code: int
    passed: bool
    results_path: Path
    comment_markdown: str
    summary_markdown: str
    failures: list[Any]
    metrics: dict[str, dict]
    suites: list[str]


PipelineRunner = Callable[[RunRequest, Console], Outcome]


def _run_real_pipeline(request: RunRequest, console: Console) -> Outcome:
    """Import late: the pipeline imports google-adk, which the user's requirements may
    have just replaced."""
    from adk_eval_action.run.pipeline import run_pipeline

    return run_pipeline(request, console=console)


def pipeline_request(run: ActionRun) -> RunRequest:
    """The pipeline's run: the inputs resolved over adk-eval.yaml in the working directory,
    with what the action decides itself.

    The baseline search gets the GitHub context (docs/baselines.md): the PR head, not
    GITHUB_SHA's merge commit, and the base branch of the PR unless `base_ref` says. The
    comment and summary are written by `publish` (with marker and run link; the summary
    under its 1 MiB cap), so the pipeline writes neither.

    Raises:
        ConfigError: adk-eval.yaml is unreadable or invalid, or a value is out of range.
    """
    request = load_request(run.workdir, run.inputs, run.flags)
    event = run.event
    base_ref = request.settings.base_ref or event.base_ref
    settings = request.settings.model_copy(update={
        "record": run.records_baseline, "base_ref": base_ref,
        "comment_out": None, "summary_out": None,
    })
    return request.model_copy(update={
        "settings": settings,
        "github": BaselineContext(
            repository=event.repository, api_url=event.api_url, server_url=event.server_url,
            token=settings.github_token, head_sha=event.head_sha, base_ref=base_ref,
            event_name=event.event_name,
        ),
        "run_url": event.run_url,
        "max_comment_chars": COMMENT_MAX_CHARS - _FOOTER_RESERVE,
    })


# --------------------------------------------------------------------------- the action


def run_action(
    run: ActionRun,
    console: Console,
    *,
    pipeline: PipelineRunner = _run_real_pipeline,
    client_factory: Callable[[str, str], GitHubClient] | None = None,
    reexec: Callable[[], None] | None = None,
    skip_requirements: bool = False,
) -> int:
    """Run the evaluation and publish it; returns the process exit code.

    `reexec` restarts the process once the user's requirements are installed, so that the
    evaluation imports the packages they pinned (google-adk among them) fresh.
    """
    if run.settings.token:
        console(add_mask(run.settings.token))
    make_client = client_factory or (lambda token, api: GitHubClient(token, api))
    if run.settings.comment_artifact:
        return post_artifact_comment(
            run, run.path(run.settings.comment_artifact), console, make_client=make_client,
        )
    if run.event.event_name == "pull_request_target":
        console(warning(
            "This workflow runs on pull_request_target. Evaluating an agent runs its code; "
            "never check out and evaluate pull request code here (docs/action.md, Security).",
        ))
    if run.settings.requirements and not skip_requirements:
        with group("Install the agent's requirements", console):
            install_requirements(run.settings.requirements, console)
        if reexec is not None:
            reexec()  # does not return in production
    with group("Run evaluations", console):
        # Agent output is untrusted text in this log; stop the runner from obeying
        # workflow commands in it until the run is over (workflow-commands doc).
        resume = f"adk-eval-{uuid.uuid4().hex}"
        console(f"::stop-commands::{resume}")
        try:
            outcome = pipeline(pipeline_request(run), console)
        finally:
            console(f"::{resume}::")
    return publish(run, outcome, console, make_client)


def publish(
    run: ActionRun,
    outcome: Outcome,
    console: Console,
    make_client: Callable[[str, str], GitHubClient],
) -> int:
    """Log groups, annotations, PR comment, job summary, outputs; returns the exit code.

    A comment that could not be posted turns a passing run into exit 2 (infrastructure),
    except with a fork's read-only token, where it is saved for the fork recipe.
    """
    event = run.event
    log_suites(outcome, event.workspace, run.workdir, console)
    results_dir = run.path(run.settings.results_path).parent
    results_dir.mkdir(parents=True, exist_ok=True)
    marker = comment_marker(run.settings.comment_key)
    comment_path = results_dir / COMMENT_FILE
    body = compose_comment_body(outcome.comment_markdown, marker, event.run_url)
    comment_path.write_text(body, encoding="utf-8")
    (results_dir / PR_FILE).write_text(json.dumps({
        "repository": event.repository, "pr_number": event.pr_number,
        "head_sha": event.head_sha, "comment_key": run.settings.comment_key,
        "run_id": event.run_id,
    }, indent=2) + "\n", encoding="utf-8")

    comment_url, note, infra_failed = "", "", False
    if run.settings.comment != "off":
        comment_url, note, infra_failed = publish_comment(
            run, body, marker, _shown(comment_path, event.workspace, run.workdir), console,
            make_client,
        )
    if run.runner.summary_file is not None:
        summary = outcome.summary_markdown
        if note:
            summary = summary.rstrip("\n") + "\n\n" + note + "\n"
        append_job_summary(run.runner.summary_file, summary)
    if run.runner.output_file is not None:
        write_outputs(run.runner.output_file, {
            "passed": "true" if outcome.passed else "false",
            "results_path": _shown(Path(outcome.results_path), event.workspace, run.workdir),
            "comment_path": _shown(comment_path, event.workspace, run.workdir),
            "comment_url": comment_url,
            "metrics": json.dumps(outcome.metrics, sort_keys=True, default=str),
        })
    if infra_failed and outcome.exit_code == EXIT_PASS:
        return EXIT_USAGE
    return outcome.exit_code


# The runner attaches at most 10 annotations per type per step (ExecutionContext.cs).
MAX_ANNOTATIONS = 10


def log_suites(
    outcome: Outcome, workspace: Path | None, workdir: Path, console: Console,
) -> None:
    """One log group per suite, then an error annotation per failing eval case at the line
    of its eval_id, worst first: the runner attaches only 10 per step (ExecutionContext.cs)."""
    for suite in outcome.suites:
        with group(f"Suite {suite}", console):
            failed = [f for f in outcome.failures if f.suite == suite]
            console(f"{len(failed)} failing eval case(s)" if failed else "all eval cases pass")
            for failure in failed:
                console(f"  {failure.eval_id}: {failure.message}")
    ranked = sorted(outcome.failures, key=lambda f: -f.severity)
    if len(ranked) > MAX_ANNOTATIONS:
        console(f"{len(ranked) - MAX_ANNOTATIONS} more failing eval case(s) are listed in the "
                "suite groups above and in the job summary")
    for failure in ranked[:MAX_ANNOTATIONS]:
        line = failure.line or _eval_id_line(workdir / failure.eval_set_file, failure.eval_id)
        console(error_annotation(
            failure.message, line=line, title=f"{failure.suite}: {failure.eval_id}",
            # Relative to the workspace: the repository root that annotations refer to.
            file=_shown(Path(failure.eval_set_file), workspace, workdir),
        ))


def publish_comment(
    run: ActionRun, body: str, marker: str, saved_as: str, console: Console,
    make_client: Callable[[str, str], GitHubClient],
) -> tuple[str, str, bool]:
    """Post the sticky comment; returns (comment URL or "", note for the summary,
    whether publishing failed for a reason other than a fork's read-only token)."""
    try:
        result = _post_run_comment(run, body, marker, console, make_client)
    except GitHubError as exc:
        if isinstance(exc, PermissionDenied) and exc.read_only_token:
            # A fork's token: the evaluation stands and the comment waits in a file.
            console(warning(str(exc), title="PR comment not posted"))
            return "", (
                "The PR comment could not be posted with this read-only token (a pull "
                f"request from a fork?). It is saved as `{saved_as}`; the fork recipe in "
                "the action's docs posts it from a workflow_run workflow."
            ), False
        # The evaluation stands too; say loudly that publishing did not.
        console(error_annotation(str(exc), title="PR comment not posted"))
        return "", f"The PR comment could not be posted: {exc}", True
    if result is None:
        return "", "", False
    console(f"PR comment {result.action}: {result.url}")
    return result.url, f"PR comment {result.action}: {result.url}", False


def _post_run_comment(
    run: ActionRun, body: str, marker: str, console: Console,
    make_client: Callable[[str, str], GitHubClient],
) -> CommentResult | None:
    """Find this run's PR (over REST for push/issue_comment) and upsert the comment."""
    event = run.event
    if not run.settings.token:
        console(notice("No github_token: the PR comment is only written to a file."))
        return None
    if not event.repository:
        return None
    client = make_client(run.settings.token, event.api_url)
    if event.pr_number is None and event.event_name in ("push", "workflow_dispatch") \
            and event.head_sha:
        pulls = [
            p for p in pulls_for_commit(client, event.repository, event.head_sha)
            if p.get("state") == "open" and (p.get("head") or {}).get("sha") == event.head_sha
        ]
        if not pulls:
            console("No open pull request has this commit as its head: no PR comment.")
            return None
        event = event.with_pull(pulls[0])
    elif event.pr_number is not None and event.head_sha is None:
        event = event.with_pull(get_pull(client, event.repository, event.pr_number))
    if event.pr_number is None:
        console("This run is not about a pull request: no PR comment.")
        return None
    return upsert_sticky_comment(
        client, event.repository, event.pr_number, body, marker=marker,
        mode="new" if run.settings.comment == "new" else "update",
    )


def _shown(path: Path, workspace: Path | None, workdir: Path) -> str:
    """A path as later steps on the host can use it: relative to the workspace if inside.
    A relative ``path`` is relative to the run's working directory."""
    absolute = path if path.is_absolute() else workdir / path
    if workspace is not None:
        try:
            return absolute.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()




def _eval_id_line(path: Path, eval_id: str) -> int | None:
    """1-based line of `"eval_id": "<id>"` (or evalId/name) in an eval set file, if found."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    needle = json.dumps(eval_id)
    fallback = None
    for number, line in enumerate(lines, start=1):
        if needle in line:
            if any(key in line for key in ('"eval_id"', '"evalId"', '"name"')):
                return number
            fallback = fallback or number
    return fallback


# --------------------------------------------------------------------------- requirements


def install_requirements(
    specs: Sequence[str], console: Console,
    run: Callable[..., subprocess.CompletedProcess] | None = None,
) -> None:
    """pip-install the user's agent dependencies into this environment.

    Each spec is a requirements file (`pip install -r`), a `pyproject.toml`, or a folder
    holding one (`pip install <folder>`). Our image does not carry the agent's own
    dependencies, so this runs before the evaluation. Raises RequirementsError when a spec
    is missing, pip fails, or google-adk ends outside the range this package supports.
    """
    args: list[str] = []
    for spec in specs:
        path = Path(spec)
        if path.name == "pyproject.toml" and path.is_file():
            args.append(str(path.parent.resolve()))
        elif path.is_dir() and (path / "pyproject.toml").is_file():
            args.append(str(path.resolve()))
        elif path.is_file():
            args += ["-r", str(path)]
        else:
            raise RequirementsError(f"requirements: {spec} is not a file or a project folder")
    before = _dist_version("google-adk")
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    console("$ " + " ".join(command))
    completed = (run or subprocess.run)(command, check=False)
    if completed.returncode != 0:
        raise RequirementsError(f"pip could not install {', '.join(specs)} "
                                f"(exit {completed.returncode}); see the log above")
    importlib.invalidate_caches()
    after = _dist_version("google-adk")
    if after != before:
        supported = _supported_adk_range()
        if after is None or (supported is not None and not _in_range(after, supported)):
            raise RequirementsError(
                f"Installing {', '.join(specs)} changed google-adk from {before} to {after}, "
                f"outside the range this action supports ({supported}). Pin google-adk to a "
                "supported version in your requirements, or remove it from them."
            )
        console(notice(f"Your requirements changed google-adk from {before} to {after}."))


def _dist_version(name: str) -> str | None:
    return package_version(name)


def _supported_adk_range() -> str | None:
    """The google-adk specifier this package declares (its pyproject dependencies, read
    from the installed metadata and parsed with ``packaging``, as pip reads them)."""
    for line in importlib.metadata.requires("adk-eval-action") or []:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "google-adk" and requirement.marker is None:
            return str(requirement.specifier)
    return None


def _in_range(version: str, specifier: str) -> bool:
    return SpecifierSet(specifier).contains(version, prereleases=True)


def _reexec_without_requirements(start_dir: Path) -> None:
    """Start this command again, in a process that sees the freshly installed packages.

    It starts from `start_dir`, where this process started, because it applies
    working_directory again.
    """
    argv = [sys.executable, "-c", "from adk_eval_action.cli import main; main()",
            *sys.argv[1:], "--skip-requirements"]
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(start_dir)
    os.execv(sys.executable, argv)


def _ensure_safe_directory(workspace: Path | None, console: Console) -> None:
    """Let git work on the runner's checkout, which another user created (contract §1).

    The image already trusts /github/workspace; a different GITHUB_WORKSPACE is added to
    the container's system config. Best effort: outside a container this may not be ours
    to change, and git is then usually fine anyway.
    """
    if workspace is None:
        return
    try:
        listed = subprocess.run(
            ["git", "config", "--system", "--get-all", "safe.directory"],
            capture_output=True, text=True, check=False,
        ).stdout.split()
        if str(workspace) not in listed and "*" not in listed:
            subprocess.run(
                ["git", "config", "--system", "--add", "safe.directory", str(workspace)],
                capture_output=True, check=False,
            )
    except OSError as exc:
        console(f"git safe.directory not set: {exc}")


# --------------------------------------------------------------------------- fork recipe


class ArtifactContext(BaseModel):
    """`adk-eval-pr.json` as written by `publish`; untrusted when read back."""

    repository: str | None = None
    pr_number: int | None = Field(default=None, ge=1)
    head_sha: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    comment_key: str | None = None
    run_id: str | None = None


def post_artifact_comment(
    run: ActionRun,
    artifact: Path,
    console: Console,
    *,
    make_client: Callable[[str, str], GitHubClient],
    pr_number: int | None = None,
    head_sha: str | None = None,
) -> int:
    """Post a comment rendered by an earlier run, after checking it belongs to this PR.

    `artifact` is the downloaded folder (holding adk-eval-comment.md and adk-eval-pr.json)
    or the comment file itself (then pr_number/head_sha must be given). Checks, with the
    API as the authority: the PR exists in this repository; its head sha equals the
    claimed one; on a workflow_run event, the claimed sha is the triggering run's head sha
    and the number is among its pull_requests when GitHub lists any. A PR whose head moved
    on is left alone (exit 0: the newer run comments). Returns the exit code.
    """
    event = run.event
    comment_file, context = _read_artifact(artifact)
    number = pr_number or context.pr_number
    claimed_sha = head_sha or context.head_sha
    if not number or not claimed_sha:
        raise ArtifactError("the artifact names no pull request number and head sha")
    if not run.settings.token:
        raise ArtifactError("no github_token to post the comment with")
    if not event.repository:
        raise ArtifactError("GITHUB_REPOSITORY is not set")
    if context.repository and context.repository.lower() != event.repository.lower():
        raise ArtifactError(f"the artifact is for {context.repository}, "
                            f"not {event.repository}")
    if event.event_name == "workflow_run":
        listed = [p.get("number") for p in
                  (event.payload.get("workflow_run") or {}).get("pull_requests") or []]
        if event.head_sha and claimed_sha != event.head_sha:
            raise ArtifactError("the artifact's head sha is not the head sha of the run "
                                "that triggered this workflow")
        if listed and number not in listed:
            raise ArtifactError(f"PR #{number} is not among the triggering run's pull requests")
    client = make_client(run.settings.token, event.api_url)
    try:
        pull = get_pull(client, event.repository, number)
    except NotFound as exc:
        raise ArtifactError(f"PR #{number} does not exist in {event.repository}") from exc
    actual_sha = (pull.get("head") or {}).get("sha")
    if actual_sha != claimed_sha:
        console(notice(f"PR #{number} moved on to {actual_sha}; this comment is for "
                       f"{claimed_sha} and is not posted."))
        return EXIT_PASS
    key = run.settings.comment_key if run.settings.comment_key != "default" else (
        context.comment_key or "default")
    marker = comment_marker(key)
    untrusted = strip_markers(comment_file.read_text(encoding="utf-8", errors="replace"))
    body = compose_comment_body(untrusted, marker)
    result = upsert_sticky_comment(
        client, event.repository, number, body, marker=marker,
        mode="new" if run.settings.comment == "new" else "update",
    )
    console(f"PR comment {result.action}: {result.url}")
    if run.runner.output_file is not None:
        write_outputs(run.runner.output_file, {"comment_url": result.url})
    return EXIT_PASS


def _read_artifact(artifact: Path) -> tuple[Path, ArtifactContext]:
    if artifact.is_dir():
        comment_file, context_file = artifact / COMMENT_FILE, artifact / PR_FILE
    else:
        comment_file, context_file = artifact, artifact.with_name(PR_FILE)
    if not comment_file.is_file():
        raise ArtifactError(f"{comment_file} not found")
    context = ArtifactContext()
    if context_file.is_file():
        try:
            context = ArtifactContext.model_validate_json(context_file.read_text("utf-8"))
        except (ValidationError, OSError) as exc:
            raise ArtifactError(f"{context_file} is not a valid PR context: {exc}") from exc
    return comment_file, context


# --------------------------------------------------------------------------- click


def _run_or_exit(flags: dict[str, Any], console: Console) -> ActionRun:
    try:
        return ActionRun.from_sources(flags, dict(os.environ))
    except (ConfigError, EventContextError) as exc:
        console(error_annotation(str(exc), title="adk-eval-action"))
        raise SystemExit(EXIT_USAGE) from None


def report_failure(run: ActionRun, exc: Exception) -> None:
    """When nothing could be evaluated, still say so in the job summary and outputs, so a
    later `if:` on `passed` and a reader of the summary both see the failure."""
    if run.runner.summary_file is not None:
        append_job_summary(run.runner.summary_file,
                           f"### ADK evaluation\n\n❌ adk-eval-action could not run: {exc}\n")
    if run.runner.output_file is not None:
        write_outputs(run.runner.output_file, {
            "passed": "false", "results_path": "", "comment_path": "", "comment_url": "",
            "metrics": "{}",
        })


def _exit_for(exc: Exception, console: Console) -> int:
    """Named errors caught at the top become one clear annotation and an exit code."""
    console(error_annotation(str(exc), title="adk-eval-action"))
    return getattr(exc, "exit_code", EXIT_USAGE)


@click.command("action")
@click_options("action")
@click.option("--skip-requirements", is_flag=True, hidden=True)
def action_command(skip_requirements: bool, **flags: Any) -> None:
    """Run as the GitHub Action: inputs from INPUT_* (or these flags), publish, gate."""
    console: Console = click.echo
    run = _run_or_exit(flags, console)
    if run.runner.in_actions:
        _ensure_safe_directory(run.event.workspace, console)
    start_dir = Path.cwd()
    try:
        # The agent's own code may read files relative to the current directory.
        os.chdir(run.workdir)
    except OSError as exc:
        console(error_annotation(f"working_directory: {exc}", title="adk-eval-action"))
        sys.exit(EXIT_USAGE)
    try:
        code = run_action(
            run, console, reexec=lambda: _reexec_without_requirements(start_dir),
            skip_requirements=skip_requirements,
        )
    except (AdkEvalActionError, GitHubError) as exc:
        code = _exit_for(exc, console)
        report_failure(run, exc)
    sys.exit(code if code in (EXIT_PASS, EXIT_GATE_FAILED) else EXIT_USAGE)


@click.command("comment")
@click.argument("artifact", type=click.Path(path_type=Path))
@click.option("--pr-number", "pr_number", type=int, help="PR to comment on (else from the "
              "artifact's adk-eval-pr.json).")
@click.option("--head-sha", "head_sha", help="Head sha the comment was rendered for.")
@click.option("--comment-key", "comment_key", help="Keeps one comment per key.")
@click.option("--comment", type=click.Choice(["update", "new"]), help="Sticky comment mode.")
@click.option("--github-token", "github_token", help="Token (default: $GITHUB_TOKEN).")
def comment_command(
    artifact: Path, pr_number: int | None, head_sha: str | None, **flags: Any,
) -> None:
    """Post a previously rendered comment ARTIFACT (folder or .md file) on its PR.

    For the fork recipe: run in a workflow_run workflow on the artifact that the
    pull_request run uploaded; the PR number and head sha are re-checked with the API.
    """
    console: Console = click.echo
    run = _run_or_exit({**flags, "comment_artifact": str(artifact)}, console)
    if run.settings.token:
        console(add_mask(run.settings.token))
    client_for = lambda token, api: GitHubClient(token, api)  # noqa: E731 - one-liner seam
    try:
        code = post_artifact_comment(
            run, artifact, console, make_client=client_for,
            pr_number=pr_number, head_sha=head_sha,
        )
    except (AdkEvalActionError, GitHubError) as exc:
        code = _exit_for(exc, console)
    sys.exit(code)
