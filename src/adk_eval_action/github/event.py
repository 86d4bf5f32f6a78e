"""What a run is about: :class:`EventContext`, from ``GITHUB_EVENT_PATH`` and the
``GITHUB_*`` variables (GitHub's "Variables reference",
https://docs.github.com/en/actions/reference/workflows-and-actions/variables, and
"Events that trigger workflows",
https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows).

The payload is untrusted input: a field of the wrong type is an :class:`EventContextError`
naming it, never a crash. ``GITHUB_API_URL`` and ``GITHUB_REPOSITORY`` are checked where
they are used (``transport.GitHubClient``, ``rest.repo_path``), so a bad one costs the
comment, not the evaluation. Nothing here reads ``os.environ``; callers pass the mapping.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from adk_eval_action.errors import AdkEvalActionError
from adk_eval_action.files import FileLimitError, read_bytes

__all__ = ["EVENT_MAX_BYTES", "EventContext", "EventContextError", "credentials_note"]

#: GitHub caps webhook payloads at 25 MB; an event file larger than that is not GitHub's.
EVENT_MAX_BYTES = 25 * 1024 * 1024


class EventContextError(AdkEvalActionError):
    """The event payload or GITHUB_* variables do not describe a usable run (exit 2)."""


#: A pull request number as the payload may spell it: ASCII digits (``str.isdigit`` also
#: takes ``"²"``, which ``int`` refuses), few enough to be a number GitHub gives out.
_PR_NUMBER = re.compile(r"[0-9]{1,18}")


def _number(value: Any, where: str) -> int | None:
    """A PR number from the payload: a positive int (or its ASCII digits), None when
    absent.

    Raises:
        EventContextError: present but not a positive whole number below 10**18.
    """
    if value is None or value == "":
        return None
    text = str(value).strip() if isinstance(value, (int, str)) else ""
    if isinstance(value, bool) or not _PR_NUMBER.fullmatch(text) or int(text) < 1:
        raise EventContextError(f"event payload: {where} is not a pull request number: "
                                f"{str(value)[:40]!r}")
    return int(text)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise EventContextError(f"event payload: {where} is not an object")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class EventContext(BaseModel):
    """What the run is about, from ``GITHUB_EVENT_PATH`` and the ``GITHUB_*`` variables.

    ``pr_number``/``head_sha``/``base_ref`` are None where the event does not name a pull
    request (push, workflow_dispatch, fork workflow_run): the caller may resolve them over
    REST (``rest.pulls_for_commit``, ``rest.get_pull``) and :meth:`with_pull` them in. All
    URLs come from ``GITHUB_API_URL``/``GITHUB_SERVER_URL``, so GitHub Enterprise Server
    works (https://docs.github.com/en/actions/reference/workflows-and-actions/variables).
    """

    model_config = ConfigDict(frozen=True)

    event_name: str = ""
    repository: str = ""  # "owner/name"
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    sha: str = ""  # GITHUB_SHA: the merge commit on pull_request events, not the PR head
    ref: str = ""
    run_id: str = ""
    run_attempt: str = ""
    workspace: Path | None = None
    pr_number: int | None = None
    head_sha: str | None = None
    head_ref: str | None = None
    base_ref: str | None = None
    is_fork: bool = False
    default_branch: str | None = None  # the payload's repository.default_branch
    author: str | None = None  # the PR's author, else the event's sender (a login)
    listed_pulls: tuple[int, ...] = ()  # workflow_run: the triggering run's pull requests
    head_repository: str | None = None  # pull_request: "owner/name" the head comes from
    payload: dict[str, Any] = {}
    #: What of the event is missing or invalid but does not stop the run (a warning
    #: annotation each): a payload file that is not there, no PR number, a bad input.
    warnings: tuple[str, ...] = ()

    @property
    def run_url(self) -> str | None:
        """``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`` (the default
        variables of https://docs.github.com/en/actions/reference/workflows-and-actions/variables)."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def is_pull_request_event(self) -> bool:
        return self.event_name in ("pull_request", "pull_request_target")

    @property
    def records_baseline(self) -> bool:
        """Whether a run of this event records the next baseline when the ``record``
        setting does not say: a push to the repository's default branch (the payload names
        it), else any push."""
        if self.event_name != "push":
            return False
        return not self.default_branch or self.ref == f"refs/heads/{self.default_branch}"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> EventContext:
        """Build from the runner's variables; reads the file ``GITHUB_EVENT_PATH`` names
        (at most :data:`EVENT_MAX_BYTES`). A missing variable or file gives an empty
        context (a plain local run).

        Raises:
            EventContextError: the payload is unreadable, not a JSON object, or has a field
                of the wrong type.
        """
        event_path = env.get("GITHUB_EVENT_PATH", "")
        payload = _read_payload(event_path)
        base = cls(
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            repository=env.get("GITHUB_REPOSITORY", ""),
            api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            sha=env.get("GITHUB_SHA", ""),
            ref=env.get("GITHUB_REF", ""),
            run_id=env.get("GITHUB_RUN_ID", ""),
            run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""),
            workspace=Path(env["GITHUB_WORKSPACE"]) if env.get("GITHUB_WORKSPACE") else None,
            head_ref=env.get("GITHUB_HEAD_REF") or None,
            base_ref=env.get("GITHUB_BASE_REF") or None,
            payload=payload,
        )
        fields = {**_common_fields(payload),
                  **_pull_request_fields(base.event_name, payload, base.sha)}
        return _checked(base.model_copy(update=fields), event_path, env.get("GITHUB_REF", ""))

    def with_pull(self, pull: Mapping[str, Any]) -> EventContext:
        """A copy naming ``pull`` (a REST pull request object) as the PR of this run.

        Raises:
            EventContextError: ``pull`` has no valid number or a field of the wrong type.
        """
        head = _mapping(pull.get("head"), "pull.head")
        base = _mapping(pull.get("base"), "pull.base")
        number = _number(pull.get("number"), "pull.number")
        if number is None:
            raise EventContextError("the pull request GitHub answered has no number")
        return self.model_copy(update={
            "pr_number": number,
            "head_sha": _text(head.get("sha")) or self.head_sha,
            "head_ref": _text(head.get("ref")) or self.head_ref,
            "base_ref": _text(base.get("ref")) or self.base_ref,
            "is_fork": _is_fork(head.get("repo"), base.get("repo")),
        })


def _read_payload(event_path: str) -> dict[str, Any]:
    if not event_path or not Path(event_path).exists():
        return {}
    try:
        loaded = json.loads(read_bytes(Path(event_path), EVENT_MAX_BYTES))
    except (OSError, ValueError, RecursionError, FileLimitError) as exc:
        raise EventContextError(f"cannot read event payload {event_path}: {exc}") from exc
    if not isinstance(loaded, dict):
        raise EventContextError(f"event payload {event_path} is not a JSON object")
    return loaded


#: ``GITHUB_REF`` of a pull_request event: ``refs/pull/<number>/merge`` (or ``/head``).
_PULL_REF = re.compile(r"refs/pull/([0-9]{1,18})/(?:merge|head)")


def _checked(event: EventContext, event_path: str, ref: str) -> EventContext:
    """``event`` with a warning for each thing that keeps it from naming its pull request:
    a ``GITHUB_EVENT_PATH`` that is not there, a pull_request event whose payload names no
    number (then the number of ``GITHUB_REF``, ``refs/pull/N/merge``, is used, as GitHub
    sets it for these events: "Events that trigger workflows"), a workflow_dispatch
    ``pr_number`` input that is not one."""
    warnings = list(event.warnings)
    if event_path and not Path(event_path).exists():
        warnings.append(f"GITHUB_EVENT_PATH names {event_path}, which does not exist: the "
                        f"{event.event_name or 'event'} payload is missing")
    if not event.is_pull_request_event or event.pr_number is not None:
        return event.model_copy(update={"warnings": tuple(warnings)})
    found = _PULL_REF.fullmatch(ref)
    if found:
        warnings.append(f"the {event.event_name} event names no pull request number (the "
                        f"payload's number and pull_request.number): using {found.group(1)} "
                        f"from GITHUB_REF ({ref})")
        return event.model_copy(update={"pr_number": int(found.group(1)),
                                        "warnings": tuple(warnings)})
    warnings.append(f"the {event.event_name} event names no pull request number (the "
                    f"payload's number and pull_request.number, or GITHUB_REF "
                    f"refs/pull/N/merge; GITHUB_REF is {ref[:80]!r}): no PR comment")
    return event.model_copy(update={"warnings": tuple(warnings)})


def _is_fork(head_repo: Any, base_repo: Any) -> bool:
    """A deleted fork shows as ``head.repo: null``; treat it as a fork (least privilege)."""
    if not isinstance(head_repo, Mapping):
        return True
    base_name = base_repo.get("full_name") if isinstance(base_repo, Mapping) else None
    return bool(head_repo.get("fork")) or head_repo.get("full_name") != base_name


def _common_fields(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Fields every event may carry: the repository's default branch and the sender."""
    repository = _mapping(payload.get("repository"), "repository")
    sender = _mapping(payload.get("sender"), "sender")
    return {"default_branch": _text(repository.get("default_branch")),
            "author": _text(sender.get("login"))}


def _pull_request_fields(
    event_name: str, payload: Mapping[str, Any], sha: str
) -> dict[str, Any]:
    """Per-event PR fields, from each event's webhook payload
    (https://docs.github.com/en/webhooks/webhook-events-and-payloads)."""
    if event_name in ("pull_request", "pull_request_target"):
        pull = _mapping(payload.get("pull_request"), "pull_request")
        number = payload.get("number") or pull.get("number")
        head = _mapping(pull.get("head"), "pull_request.head")
        base = _mapping(pull.get("base"), "pull_request.base")
        fields: dict[str, Any] = {
            "pr_number": _number(number, "number"),
            "head_sha": _text(head.get("sha")),
            "head_ref": _text(head.get("ref")),
            "base_ref": _text(base.get("ref")),
            "is_fork": _is_fork(head.get("repo"), base.get("repo")),
        }
        head_repo = head.get("repo")
        if isinstance(head_repo, Mapping):
            fields["head_repository"] = _text(head_repo.get("full_name"))
        author = _text(_mapping(pull.get("user"), "pull_request.user").get("login"))
        return {**fields, "author": author} if author else fields
    if event_name == "push":
        # The PR, if any, is found over REST (`pulls_for_commit`).
        return {"head_sha": _text(payload.get("after")) or sha or None}
    if event_name == "workflow_run":
        return _workflow_run_fields(_mapping(payload.get("workflow_run"), "workflow_run"))
    if event_name == "issue_comment":
        issue = _mapping(payload.get("issue"), "issue")
        if issue.get("pull_request") and issue.get("number"):
            # The head sha is not in this payload; `get_pull` + `with_pull` fill it in.
            return {"pr_number": _number(issue["number"], "issue.number")}
        return {}
    if event_name == "workflow_dispatch":
        return _dispatch_fields(_mapping(payload.get("inputs"), "inputs"), sha)
    return {"head_sha": sha or None}


def _dispatch_fields(inputs: Mapping[str, Any], sha: str) -> dict[str, Any]:
    """A workflow_dispatch run's PR: its ``pr_number`` (or ``pr``) input when that is a
    pull request number; one that is not is a warning, and the PR is then looked for by
    the commit, as when none is given."""
    name = "pr_number" if inputs.get("pr_number") not in (None, "") else "pr"
    value = inputs.get(name)
    fields: dict[str, Any] = {"head_sha": sha or None}
    if value in (None, ""):
        return fields
    try:
        fields["pr_number"] = _number(value, f"inputs.{name}")
    except EventContextError:
        fields["warnings"] = (
            f"the workflow_dispatch input {name} is not a pull request number: "
            f"{str(value)[:40]!r}; the pull request is looked for by the commit instead",)
    return fields


def _workflow_run_fields(run: Mapping[str, Any]) -> dict[str, Any]:
    pulls = run.get("pull_requests") or []  # empty for fork PRs
    fields: dict[str, Any] = {
        "head_sha": _text(run.get("head_sha")),
        "head_ref": _text(run.get("head_branch")),
        "is_fork": _is_fork(run.get("head_repository"), run.get("repository")),
    }
    if not isinstance(pulls, list):
        raise EventContextError("event payload: workflow_run.pull_requests is not a list")
    listed = [_mapping(p, f"workflow_run.pull_requests[{i}]") for i, p in enumerate(pulls)]
    numbers = [_number(p.get("number"), f"workflow_run.pull_requests[{i}].number")
               for i, p in enumerate(listed)]
    fields["listed_pulls"] = tuple(n for n in numbers if n is not None)
    if listed:
        fields["pr_number"] = numbers[0]
        fields["base_ref"] = _text(_mapping(listed[0].get("base"), "base").get("ref"))
    return fields


def credentials_note(event: EventContext, skipping: bool = False) -> str | None:
    """Why a pull request's run may have no model credentials, for the preflight's message:
    workflows of pull requests from forks get no repository secrets, Dependabot's get only
    Dependabot secrets (GitHub's "Using secrets in GitHub Actions",
    https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions).
    With ``skipping`` (``on_missing_credentials: skip`` is set) it does not advise setting
    it. None for other events (``pull_request_target`` runs with the base repository's
    secrets)."""
    if event.event_name != "pull_request":
        return None
    skip = "" if skipping else ", or set on_missing_credentials: skip"
    if event.author == "dependabot[bot]":
        return (
            "This pull request is Dependabot's, and its workflows get only Dependabot "
            f"secrets: add the model key as a Dependabot secret{skip}"
        )
    if not event.is_fork:
        return None
    head = event.head_repository or "a fork"
    skip = "" if skipping else "set on_missing_credentials: skip to skip such runs, or "
    return (
        f"This pull request comes from {head}, and GitHub gives workflows of pull requests "
        f"from forks no repository secrets: {skip}evaluate them as docs/action.md (Pull "
        "requests from forks) describes"
    )
