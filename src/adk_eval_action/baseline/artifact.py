"""The ``artifact`` baseline: the results file a run on the default branch uploaded for the
merge-base of the PR (or its nearest first-parent ancestor), found and downloaded through
GitHub's REST API (https://docs.github.com/en/rest/actions/artifacts,
https://docs.github.com/en/rest/commits/commits).
"""

from __future__ import annotations

import io
import logging
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from pydantic import BaseModel, ConfigDict

from adk_eval_action.adk.files.eval_history import load_any_results
from adk_eval_action.baseline.models import (
    ArtifactDownloadError,
    BaselineContext,
    BaselineUnavailable,
    BaselineUnreadable,
    NoArtifact,
    ResolvedBaseline,
)
from adk_eval_action.errors import ResultsFileError
from adk_eval_action.github.answers import read_body
from adk_eval_action.github.pages import paginate
from adk_eval_action.github.publish import PR_FILE
from adk_eval_action.github.rest import repo_path
from adk_eval_action.github.transport import (
    GitHubClient,
    GitHubError,
    NotFound,
    TransientError,
)
from adk_eval_action.results.completeness import complete_suites
from adk_eval_action.results.history_file import HISTORY_FILE_NAME, MAX_HISTORY_BYTES, History
from adk_eval_action.results.history_file_io import HistoryUnusable, history_from_bytes
from adk_eval_action.results.model import RESULTS_FILE_NAME, RunResults

log = logging.getLogger(__name__)
ClientFactory = Callable[[str, str], GitHubClient]

#: How many first-parent ancestors of the merge-base are searched for an artifact.
ANCESTOR_LIMIT = 20
#: Pages of 100 artifacts listed at most (GitHub keeps artifacts 90 days by default).
ARTIFACT_PAGE_LIMIT = 10
#: Refuse zip members larger than this (bytes): a results file is far smaller.
MAX_RESULTS_BYTES = 256 * 1024 * 1024
#: Bytes of an artifact's zip downloaded at most (it holds one results file).
MAX_ZIP_BYTES = MAX_RESULTS_BYTES
_CHUNK_BYTES = 1024 * 1024


def merge_base_via_api(client: GitHubClient, repository: str, base_ref: str, head: str) -> str:
    """The merge-base sha of ``base_ref`` and ``head``: ``GET /repos/{o}/{r}/compare/
    {base}...{head}`` answers ``merge_base_commit`` without any local history
    (rest/commits/commits#compare-two-commits).

    Raises:
        GitHubError: the call failed (404 when a ref is unknown).
    """
    basehead = f"{quote(base_ref, safe='')}...{quote(head, safe='')}"
    data = client.get_json(f"{repo_path(repository)}/compare/{basehead}", params={"per_page": 1})
    sha = ((data or {}).get("merge_base_commit") or {}).get("sha")
    if not sha:
        raise GitHubError(f"compare {base_ref}...{head} named no merge-base commit")
    return str(sha)


def first_parent_chain(
    client: GitHubClient, repository: str, sha: str, limit: int = ANCESTOR_LIMIT,
) -> list[str]:
    """``sha`` and up to ``limit`` first-parent ancestors, nearest first.

    One ``GET /repos/{o}/{r}/commits?sha=`` page (rest/commits/commits#list-commits) holds
    the history from ``sha``; following ``parents[0]`` inside it keeps the first-parent line
    (merged branches' commits are skipped, as they never had the default branch's record).
    """
    commits = client.get_json(
        f"{repo_path(repository)}/commits", params={"sha": sha, "per_page": 100}
    ) or []
    by_sha = {c.get("sha"): c for c in commits if isinstance(c, dict)}
    chain, current = [sha], by_sha.get(sha)
    while current is not None and len(chain) <= limit:
        parents = current.get("parents") or []
        if not parents:
            break
        parent = parents[0].get("sha")
        chain.append(parent)
        current = by_sha.get(parent)
    return chain[: limit + 1]


def _from_this_repository(artifact: Mapping[str, Any]) -> bool:
    """Only artifacts of this repository's own branches: a fork's pull_request run can
    upload an artifact of the same name with any head sha (a fork's pull request runs the
    workflow in the base repository: GitHub's "Events that trigger workflows",
    https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#pull_request)."""
    run = artifact.get("workflow_run") or {}
    head_repo, repo = run.get("head_repository_id"), run.get("repository_id")
    return head_repo is None or repo is None or head_repo == repo


def list_artifacts(client: GitHubClient, repository: str, name: str) -> list[dict[str, Any]]:
    """Unexpired artifacts named exactly ``name`` of this repository's branches, newest
    first (``GET /repos/{o}/{r}/actions/artifacts?name=``, rest/actions/artifacts)."""
    items = paginate(
        client, f"{repo_path(repository)}/actions/artifacts", {"name": name}, key="artifacts",
        max_pages=ARTIFACT_PAGE_LIMIT,
    )
    usable = [
        a for a in items
        if isinstance(a, dict) and a.get("name") == name and not a.get("expired")
        and _from_this_repository(a)
    ]
    return sorted(usable, key=lambda a: str(a.get("created_at") or ""), reverse=True)


class ArtifactMatch(BaseModel):
    """An artifact chosen as the baseline, and the run that uploaded it."""

    artifact_id: int
    head_sha: str
    created_at: str | None = None
    run_url: str | None = None
    distance: int = 0
    conclusion: str | None = None


def candidate_artifacts(
    client: GitHubClient, repository: str, name: str, chain: list[str],
) -> Iterator[ArtifactMatch]:
    """Artifacts ``name`` of the runs on ``chain``, nearest commit first and newest artifact
    first within a commit. Runs of pull requests are skipped (their workflow is the PR's
    own), and so are deleted runs; the run's conclusion is not looked at: a recording run
    whose gate failed still recorded its commit (whether the results are complete is read
    from the file itself, :func:`artifact_baseline`).

    Raises:
        GitHubError: a REST call failed.
    """
    by_sha: dict[str, list[dict[str, Any]]] = {}
    for artifact in list_artifacts(client, repository, name):
        sha = (artifact.get("workflow_run") or {}).get("head_sha")
        if sha:
            by_sha.setdefault(sha, []).append(artifact)
    runs: dict[int, dict[str, Any]] = {}
    for distance, sha in enumerate(chain):
        for artifact in by_sha.get(sha, []):
            run_id = (artifact.get("workflow_run") or {}).get("id")
            if run_id is None:
                continue
            if run_id not in runs:
                try:
                    runs[run_id] = client.get_json(
                        f"{repo_path(repository)}/actions/runs/{int(run_id)}"
                    )
                except NotFound:  # the run was deleted; its artifact is not trusted
                    runs[run_id] = {}
            run = runs[run_id]
            if not run or str(run.get("event", "")).startswith("pull_request"):
                continue
            yield ArtifactMatch(
                artifact_id=int(artifact["id"]), head_sha=sha,
                created_at=artifact.get("created_at"), run_url=run.get("html_url"),
                distance=distance, conclusion=run.get("conclusion"),
            )


def _no_artifact(name: str, chain: list[str], incomplete: list[ArtifactMatch]) -> NoArtifact:
    skipped = (
        f"; {len(incomplete)} artifact(s) were skipped because no suite of their results is "
        "complete "
        f"(nearest: commit {incomplete[0].head_sha[:12]})" if incomplete else ""
    )
    return NoArtifact(
        f"no artifact {name} with a complete suite for the merge-base {chain[0][:12]} or its "
        f"{len(chain) - 1} first-parent ancestors (it is uploaded by runs on the default "
        f"branch, kept 90 days){skipped}"
    )


class ArtifactFound(BaseModel):
    """The artifact chosen, its results, and the default branch's history it holds (None:
    none, or unusable, and then ``history_note`` says why)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    match: ArtifactMatch
    results: RunResults
    history: History | None = None
    history_note: str | None = None


def find_artifact(
    client: GitHubClient, repository: str, name: str, chain: list[str],
) -> ArtifactFound:
    """The first of :func:`candidate_artifacts` whose results file has a complete suite
    (:func:`adk_eval_action.results.completeness.complete_suites`: a run incomplete for
    some suites is still the baseline of the others), downloaded and read, with the
    history in the same zip (:func:`history_from_zip`; one that cannot be used is logged
    and left out, never the baseline). One without any complete suite is skipped with a
    log line; an unreadable one ends the search (it says what is wrong with it).

    Raises:
        NoArtifact: no candidate, or only ones without a complete suite.
        BaselineUnreadable: a candidate's zip or results file cannot be read.
        ArtifactDownloadError: a download failed.
        GitHubError: a REST call failed.
    """
    incomplete: list[ArtifactMatch] = []
    for match in candidate_artifacts(client, repository, name, chain):
        data = download_artifact_zip(client, repository, match.artifact_id)
        started = time.monotonic()
        deadline = started + client.budget.remaining
        try:
            results = results_from_zip(data, f"artifact {name}", deadline)
            if complete_suites(results):
                history, note = _history_of(data, f"artifact {name}", deadline, repository)
                return ArtifactFound(match=match, results=results, history=history,
                                     history_note=note)
        finally:  # reading counts against the lookup's time budget too
            client.budget.spend(time.monotonic() - started)
        log.warning(
            "baseline: artifact %s of %s skipped: no suite of its results is complete "
            "(errors kept their scores from being computed)", match.artifact_id,
            match.head_sha[:12],
        )
        incomplete.append(match)
    raise _no_artifact(name, chain, incomplete)


def _history_of(data: bytes, label: str, deadline: float | None,
                repository: str) -> tuple[History | None, str | None]:
    """:func:`history_from_zip`, with a history that cannot be used logged and left out
    (its reason as the note): the baseline is used without it."""
    try:
        return history_from_zip(data, label, deadline, repository), None
    except (HistoryUnusable, BaselineUnreadable) as e:
        log.warning("history not used: %s", e)
        return None, str(e)


def download_artifact_zip(
    client: GitHubClient, repository: str, artifact_id: int,
    fetch: Callable[..., requests.Response] = requests.get,
) -> bytes:
    """The artifact's zip: ``GET …/actions/artifacts/{id}/zip`` answers 302 with a
    ``Location`` valid one minute; that URL is fetched *without* the Authorization header,
    which the blob host rejects (GitHub's REST "Download an artifact",
    https://docs.github.com/en/rest/actions/artifacts#download-an-artifact). ``fetch`` is a
    plain ``requests.get`` (no session headers, hence no token). Both requests count
    against the client's time budget (``transport.ApiBudget``), and the zip is read within
    it and up to :data:`MAX_ZIP_BYTES`.

    Raises:
        ArtifactDownloadError: 401/403/404/410 (expired), a network failure, the budget
            spent, or a zip larger than :data:`MAX_ZIP_BYTES`.
    """
    url = client.url(f"{repo_path(repository)}/actions/artifacts/{int(artifact_id)}/zip")
    left = client.budget.remaining
    if left <= 0:
        raise ArtifactDownloadError("artifact download not tried: the GitHub API time budget "
                                    f"({client.budget.seconds:.0f} s) is spent")
    started = time.monotonic()
    timeout = (min(client.timeout[0], left), min(client.timeout[1], left))
    what = f"artifact {artifact_id} download"
    try:
        response = client.session.get(url, allow_redirects=False, timeout=timeout, stream=True)
        if response.status_code in (301, 302, 303, 307, 308):
            response.close()
            location = response.headers.get("Location", "")
            response = fetch(location, timeout=timeout, allow_redirects=True, stream=True)
        if response.status_code == 200:
            return read_body(response, started + left, MAX_ZIP_BYTES, what)
    except requests.RequestException as e:
        raise ArtifactDownloadError(f"artifact download failed: {type(e).__name__}") from e
    except TransientError as e:
        raise ArtifactDownloadError(str(e)) from e
    finally:
        client.budget.spend(time.monotonic() - started)
    response.close()
    status = response.status_code
    hint = {
        401: "the token was rejected",
        403: "the token may not read artifacts: give the job `permissions: actions: read`",
        404: "not found, or the token lacks `actions: read`",
        410: "the artifact has expired",
    }.get(status, "unexpected answer")
    raise ArtifactDownloadError(f"artifact {artifact_id} download failed ({status}: {hint})")


def results_from_zip(data: bytes, label: str = "artifact",
                     deadline: float | None = None) -> RunResults:
    """The results file inside an artifact zip: ``adk-eval-results.json`` (in any folder),
    else the one other JSON member when there is exactly one (a renamed ``results_path``;
    ``adk-eval-pr.json`` and ``adk-eval-history.json``, which the upload recipe adds, do not
    count). That one member
    is read, in memory (never extracted, so a crafted name cannot write outside a
    folder), at most :data:`MAX_RESULTS_BYTES` decompressed, before ``deadline``
    (monotonic seconds; the lookup's time budget).

    Raises:
        BaselineUnreadable: not a zip, no results file (or several JSON members none of
            which is named so), too large, past the deadline, or unreadable results.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, OSError) as e:
        raise BaselineUnreadable(f"the {label} is not a valid zip file ({e})") from e
    preferred = [m for m in members if Path(m.filename).name == RESULTS_FILE_NAME]
    others = [m for m in members if m.filename.endswith(".json")
              and Path(m.filename).name not in (PR_FILE, HISTORY_FILE_NAME)]
    if not preferred and len(others) != 1:
        several = f" (it holds {len(others)} other JSON files)" if others else ""
        raise BaselineUnreadable(f"the {label} holds no {RESULTS_FILE_NAME}{several}")
    member = (preferred or others)[0]
    raw = read_member(archive, member, label, deadline)
    with tempfile.TemporaryDirectory(prefix="adk-eval-artifact-") as folder:
        path = Path(folder) / Path(member.filename).name
        path.write_bytes(raw)
        try:
            return load_any_results(path)
        except ResultsFileError as e:
            message = str(e).split(": ", 1)[-1]
            raise BaselineUnreadable(f"{member.filename}: {message}") from e


def read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, label: str,
                deadline: float | None, limit: int | None = None) -> bytes:
    """``member`` decompressed, at most ``limit`` bytes (default
    :data:`MAX_RESULTS_BYTES`; its declared size is checked
    first, and zipfile reads no more than a member declares) and before ``deadline``.

    Raises:
        BaselineUnreadable: too large, past the deadline, or a corrupt zip.
    """
    limit = MAX_RESULTS_BYTES if limit is None else limit
    if member.file_size > limit:
        raise BaselineUnreadable(f"{member.filename} in the {label} is too large "
                                 f"({member.file_size:,} bytes)")
    chunks: list[bytes] = []
    try:
        with archive.open(member) as handle:
            while chunk := handle.read(_CHUNK_BYTES):
                chunks.append(chunk)
                if deadline is not None and time.monotonic() > deadline:
                    raise BaselineUnreadable(f"reading {member.filename} of the {label} "
                                             "outlasted the baseline lookup's time budget")
    except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, zlib.error) as e:
        raise BaselineUnreadable(f"the {label} zip is corrupt ({e})") from e
    return b"".join(chunks)


def history_from_zip(data: bytes, label: str = "artifact", deadline: float | None = None,
                     repository: str | None = None) -> History | None:
    """The default branch's history in an artifact zip: its ``adk-eval-history.json`` (in
    any folder; no other member is read), at most
    :data:`~adk_eval_action.results.history_file.MAX_HISTORY_BYTES` decompressed and before
    ``deadline``, checked as any history (``results.history_file_io``); None when the zip
    holds none (an artifact recorded before histories were, or by a run that wrote none).

    Raises:
        BaselineUnreadable: not a zip, or the member is too large or corrupt.
        HistoryUnusable: the history is malformed, from a newer version or another
            repository.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist()
                   if not m.is_dir() and Path(m.filename).name == HISTORY_FILE_NAME]
    except (zipfile.BadZipFile, OSError) as e:
        raise BaselineUnreadable(f"the {label} is not a valid zip file ({e})") from e
    if not members:
        return None
    raw = read_member(archive, members[0], label, deadline, MAX_HISTORY_BYTES)
    return history_from_bytes(raw, f"{members[0].filename} of the {label}",
                              repository=repository)


def unusable_reason(context: BaselineContext) -> str:
    """Why the REST API cannot be asked for an artifact: what of the repository
    (``GITHUB_REPOSITORY``) and the token is missing, and what to do."""
    token = bool(context.token.get_secret_value())
    missing = " and ".join(
        ([] if context.repository else ["no GitHub repository (GITHUB_REPOSITORY is not set)"])
        + ([] if token else ["no GitHub token (the github_token input is empty)"]))
    return (f"{missing}: pass the github_token input (it needs actions: read); outside "
            "GitHub use --baseline rerun or a results file")


def artifact_baseline(
    context: BaselineContext, name: str, base_ref: str | None,
    client_factory: ClientFactory | None = None,
) -> ResolvedBaseline:
    """The ``artifact`` strategy (module docstring).

    Raises:
        BaselineUnavailable: no context, no artifact, or it could not be downloaded or read.
    """
    if not context.usable:
        raise BaselineUnavailable(unusable_reason(context))
    make = client_factory or (lambda token, api: GitHubClient(token, api))
    client = make(context.token.get_secret_value(), context.api_url)
    repo = context.repository
    try:
        base = base_ref or context.base_ref or str(
            client.get_json(repo_path(repo)).get("default_branch") or "main"
        )
        head = context.head_sha or "HEAD"
        merge_base = merge_base_via_api(client, repo, base, head)
        try:
            chain = first_parent_chain(client, repo, merge_base)
        except NotFound:  # history not listable: the merge-base alone
            chain = [merge_base]
        found = find_artifact(client, repo, name, chain)
    except GitHubError as e:
        raise ArtifactDownloadError(f"artifact search failed: {e}") from e
    match, results = found.match, found.results
    red = match.conclusion not in (None, "success")
    whole = "the results are complete" if results.is_complete() else "some suites complete"
    gate = f" (its run concluded {match.conclusion}; {whole})" if red else ""
    log.info("baseline: artifact %s of %s%s", match.artifact_id, match.head_sha[:12], gate)
    if not results.metadata.git_sha:
        results.metadata.git_sha = match.head_sha
    relation = (
        f"merge-base with {base}" if match.distance == 0
        else f"{match.distance} first-parent commit(s) before the merge-base with {base}"
    )
    return ResolvedBaseline(
        results=results, source="artifact", label=f"artifact {name}", commit=match.head_sha,
        relation=relation, run_url=match.run_url,
        recorded_at=results.metadata.finished_at or match.created_at,
        merge_base=merge_base, behind=match.distance, base_ref=base,
        commit_url=f"{context.server_url.rstrip('/')}/{repo}/commit/{match.head_sha}",
        changed_since=_changed_files(client, repo, match.head_sha, merge_base),
        history=found.history, history_note=found.history_note,
    )


#: Files of a compare GitHub lists at most (rest/commits/commits#compare-two-commits).
COMPARE_FILES = 300


def _changed_files(client: GitHubClient, repository: str, commit: str,
                   merge_base: str) -> list[str] | None:
    """The files changed between ``commit`` (the baseline's) and ``merge_base``: [] when
    they are the same commit; None when GitHub could not say (or listed its 300 files,
    which may not be all). ``GET /repos/{o}/{r}/compare/{commit}...{merge_base}``."""
    if commit == merge_base:
        return []
    try:
        data = client.get_json(f"{repo_path(repository)}/compare/{commit}...{merge_base}")
    except GitHubError as e:
        log.info("note: the files changed since the baseline's commit are unknown: %s", e)
        return None
    files = (data or {}).get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or len(files) >= COMPARE_FILES:
        return None
    return [str(f.get("filename")) for f in files if isinstance(f, dict) and f.get("filename")]
