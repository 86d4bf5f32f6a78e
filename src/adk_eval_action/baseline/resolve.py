"""Baselines: which results a run is compared with, where they come from, and whether they
can be compared at all.

The ``baseline`` input / ``--baseline`` flag is one of (docs/baselines.md):

``auto`` (default)
    ``artifact``; else ``rerun`` when ``baseline_rerun`` is on; else none.
``artifact``
    The newest unexpired artifact named ``artifact_name`` (default ``adk-eval-results``, the
    name docs/action.md's workflow uploads) from a successful, non-pull-request run of this
    repository whose head sha is the merge-base of the base branch and the PR head, else
    of the nearest first-parent ancestor of the merge-base that has one (at most
    :data:`ANCESTOR_LIMIT` commits back). Needs the GitHub context and a token with
    ``actions: read`` (contract §5, "Artifacts from another run").
``rerun``
    Evaluates the merge-base in a ``git worktree`` with the same suites and settings, in a
    child process so the base commit's agent code never shares ``sys.modules`` with the
    head's; then removes the worktree (contract §5, "Baseline tree"). Costs the LLM calls of
    a second evaluation.
``none``
    No baseline.
anything else
    A results file (ours, or ADK eval_history file/folder), as ``pipeline.load_baseline``.

``record`` (a push to the default branch, or ``run --record``) skips the search: that run's
results file *is* the next baseline, uploaded by the documented workflow as the artifact.

A baseline that cannot be found, downloaded or read becomes "no baseline" with the reason in
the note; it never fails the run. When the eval sets are unchanged and only the eval config
changed, the baseline is re-scored under the head's eval config (:mod:`.rescore`).

How the action passes the GitHub context (action.py)::

    from adk_eval_action.baseline.resolve import BaselineContext

    github = BaselineContext(
        repository=event.repository,          # "owner/name"
        api_url=event.api_url,                # GITHUB_API_URL (GHES: https://HOST/api/v3)
        server_url=event.server_url,          # GITHUB_SERVER_URL, for run links
        token=settings.token,                 # needs `actions: read` for artifacts
        head_sha=event.head_sha,              # the PR head, not GITHUB_SHA's merge commit
        base_ref=event.base_ref,              # e.g. "main"; None: the repo's default branch
        event_name=event.event_name,
    )
    RunOptions(..., baseline=settings.baseline or "auto", github=github,
               record=event.event_name == "push", artifact_name=..., baseline_rerun=...)
"""

from __future__ import annotations

import datetime as dt
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import requests
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from adk_eval_action.errors import AdkEvalActionError, ResultsFileError
from adk_eval_action.github.client import GitHubClient, GitHubError, NotFound
from adk_eval_action.results.model import SCHEMA_VERSION, RunResults, load_results

if TYPE_CHECKING:
    from adk_eval_action.run.pipeline import RunOptions

Console = Callable[[str], None]
ClientFactory = Callable[[str, str], GitHubClient]

DEFAULT_ARTIFACT_NAME = "adk-eval-results"
#: How many first-parent ancestors of the merge-base are searched for an artifact.
ANCESTOR_LIMIT = 20
#: Pages of 100 artifacts listed at most (GitHub keeps artifacts 90 days by default).
ARTIFACT_PAGE_LIMIT = 10
#: Refuse zip members larger than this (bytes): a results file is far smaller.
MAX_RESULTS_BYTES = 256 * 1024 * 1024
GIT_TIMEOUT = 600.0
RESULTS_FILE_NAME = "adk-eval-results.json"
MODES = ("auto", "artifact", "rerun", "none")

BaselineSource = Literal["file", "artifact", "rerun", "none"]


# --------------------------------------------------------------------------- errors


class BaselineUnavailable(AdkEvalActionError):
    """A strategy found or produced no baseline; ``str()`` says why, for the comment."""


class NoArtifact(BaselineUnavailable):
    """No usable artifact for the merge-base or its first-parent ancestors."""


class ArtifactDownloadError(BaselineUnavailable):
    """Listing or downloading an artifact failed (permissions, expiry, network)."""


class RerunError(BaselineUnavailable):
    """The base commit could not be found, checked out or evaluated."""


class BaselineUnreadable(BaselineUnavailable):
    """The baseline exists but cannot be used: corrupt zip, wrong schema version, no suite
    in common with the head."""


# --------------------------------------------------------------------------- models


class BaselineContext(BaseModel):
    """What the GitHub run tells the baseline search (see the module docstring).

    ``api_url``/``server_url`` come from ``GITHUB_API_URL``/``GITHUB_SERVER_URL`` so GitHub
    Enterprise Server works (contract §6). The token is a SecretStr so no repr shows it.
    """

    model_config = ConfigDict(frozen=True)

    repository: str = ""
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    token: SecretStr = SecretStr("")
    head_sha: str | None = None
    base_ref: str | None = None
    event_name: str = ""

    @property
    def usable(self) -> bool:
        """True when the REST API can be asked (a repository and a token)."""
        return bool(self.repository and self.token.get_secret_value())


class ResolvedBaseline(BaseModel):
    """The baseline a run compares with, or why there is none.

    ``recorded_at`` is ISO 8601 UTC; ``rescored`` names the suites re-scored under the
    head's eval config.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    results: RunResults | None = None
    source: BaselineSource = "none"
    label: str = ""
    commit: str | None = None
    relation: str | None = None
    run_url: str | None = None
    recorded_at: str | None = None
    reason: str | None = None
    rescored: list[str] = Field(default_factory=list)
    extra: list[str] = Field(default_factory=list)

    def note(self, now: dt.datetime | None = None) -> str:
        """One line for the comment: source, commit, run link and age; or why none.

        Kept short: the comment template cuts the note at 300 characters.
        """
        if self.results is None:
            return self.reason or "none"
        parts = [self.label]
        if self.commit:
            parts.append(f"commit {self.commit[:12]}" + (f" ({self.relation})" if self.relation
                                                         else ""))
        if self.run_url:
            parts.append(f"run {self.run_url}")
        age = format_age(self.recorded_at, now)
        if age:
            parts.append(f"recorded {age} ago")
        parts += self.extra
        if self.rescored:
            # A re-run baseline did run the base agent; the re-score only skipped a third run.
            how = "" if self.source == "rerun" else ", no agent run"
            parts.append(
                "re-scored under the head's eval config (" + ", ".join(self.rescored) + ")" + how
            )
        return ", ".join(p for p in parts if p)


def parse_spec(value: str | Path | None) -> tuple[str, Path | None]:
    """``(mode, path)`` of a ``--baseline`` value: a mode of :data:`MODES` (None and "" are
    ``auto``), else ``("file", Path(value))``."""
    if value is None or str(value).strip() == "":
        return "auto", None
    text = str(value).strip()
    if text.lower() in MODES:
        return text.lower(), None
    return "file", Path(text)


def format_age(recorded_at: str | None, now: dt.datetime | None = None) -> str | None:
    """``"3 days"``, ``"5 h"`` or ``"less than an hour"`` since an ISO 8601 time; None if
    unknown."""
    if not recorded_at:
        return None
    try:
        then = dt.datetime.fromisoformat(recorded_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=dt.timezone.utc)
    seconds = ((now or dt.datetime.now(dt.timezone.utc)) - then).total_seconds()
    if seconds < 0:
        return None
    if seconds < 3600:
        # Coarse on purpose: a comment rendered again a minute later reads the same.
        return "less than an hour"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


# --------------------------------------------------------------------------- checks


def check_usable(baseline: RunResults, head: RunResults) -> None:
    """Refuses a baseline that shares no suite with the head.

    Raises:
        BaselineUnreadable: neither side's suite names match (names both lists).
    """
    if baseline.schema_version != SCHEMA_VERSION:
        raise BaselineUnreadable(
            f"schema_version {baseline.schema_version} is not {SCHEMA_VERSION}"
        )
    base_names = {s.name for s in baseline.suites}
    head_names = {s.name for s in head.suites}
    if head_names and not base_names & head_names:
        raise BaselineUnreadable(
            "its suites (" + (", ".join(sorted(base_names)) or "none") + ") are not the head's ("
            + ", ".join(sorted(head_names)) + ")"
        )


# --------------------------------------------------------------------------- REST: artifacts

_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


def _repo(repository: str) -> str:
    owner, _, name = repository.partition("/")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _wrapped_pages(
    client: GitHubClient, path: str, key: str, params: Mapping[str, Any], max_pages: int,
) -> Iterator[dict[str, Any]]:
    """Items of a list endpoint that wraps its list (``{"total_count", key: [...]}``), such
    as rest/actions/artifacts, across ``link: rel="next"`` pages."""
    url: str | None = path
    query: Mapping[str, Any] | None = {"per_page": 100, **params}
    for _ in range(max_pages):
        if url is None:
            return
        response = client.request("GET", url, params=query)
        yield from (response.json() or {}).get(key) or []
        match = _LINK_NEXT.search(response.headers.get("link", ""))
        url, query = (match.group(1), None) if match else (None, None)


def merge_base_via_api(client: GitHubClient, repository: str, base_ref: str, head: str) -> str:
    """The merge-base sha of ``base_ref`` and ``head``: ``GET /repos/{o}/{r}/compare/
    {base}...{head}`` answers ``merge_base_commit`` without any local history
    (rest/commits/commits#compare-two-commits).

    Raises:
        GitHubError: the call failed (404 when a ref is unknown).
    """
    basehead = f"{quote(base_ref, safe='')}...{quote(head, safe='')}"
    data = client.get_json(f"{_repo(repository)}/compare/{basehead}", params={"per_page": 1})
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
        f"{_repo(repository)}/commits", params={"sha": sha, "per_page": 100}
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
    upload an artifact of the same name with any head sha (contract §3, "Forks")."""
    run = artifact.get("workflow_run") or {}
    head_repo, repo = run.get("head_repository_id"), run.get("repository_id")
    return head_repo is None or repo is None or head_repo == repo


def list_artifacts(client: GitHubClient, repository: str, name: str) -> list[dict[str, Any]]:
    """Unexpired artifacts named exactly ``name`` of this repository's branches, newest
    first (``GET /repos/{o}/{r}/actions/artifacts?name=``, rest/actions/artifacts)."""
    items = _wrapped_pages(
        client, f"{_repo(repository)}/actions/artifacts", "artifacts", {"name": name},
        ARTIFACT_PAGE_LIMIT,
    )
    usable = [
        a for a in items
        if a.get("name") == name and not a.get("expired") and _from_this_repository(a)
    ]
    return sorted(usable, key=lambda a: str(a.get("created_at") or ""), reverse=True)


class ArtifactMatch(BaseModel):
    """An artifact chosen as the baseline, and the run that uploaded it."""

    artifact_id: int
    head_sha: str
    created_at: str | None = None
    run_url: str | None = None
    distance: int = 0


def find_artifact(
    client: GitHubClient, repository: str, name: str, chain: list[str],
) -> ArtifactMatch:
    """The newest artifact ``name`` of a successful run on the first sha of ``chain`` that
    has one. Runs of pull requests are skipped (their workflow is the PR's own).

    Raises:
        NoArtifact: none of the shas has one.
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
                        f"{_repo(repository)}/actions/runs/{int(run_id)}"
                    )
                except NotFound:  # the run was deleted; its artifact is not trusted
                    runs[run_id] = {}
            run = runs[run_id]
            if run.get("conclusion") != "success" or str(run.get("event", "")).startswith(
                "pull_request"
            ):
                continue
            return ArtifactMatch(
                artifact_id=int(artifact["id"]), head_sha=sha,
                created_at=artifact.get("created_at"), run_url=run.get("html_url"),
                distance=distance,
            )
    raise NoArtifact(
        f"no artifact {name} from a successful run for the merge-base {chain[0][:12]} or its "
        f"{len(chain) - 1} first-parent ancestors (it is uploaded by runs on the default "
        "branch, kept 90 days)"
    )


def download_artifact_zip(
    client: GitHubClient, repository: str, artifact_id: int,
    fetch: Callable[..., requests.Response] = requests.get,
) -> bytes:
    """The artifact's zip: ``GET …/actions/artifacts/{id}/zip`` answers 302 with a
    ``Location`` valid one minute; that URL is fetched *without* the Authorization header,
    which the blob host rejects (contract §5). ``fetch`` is a plain ``requests.get`` (no
    session headers, hence no token).

    Raises:
        ArtifactDownloadError: 401/403/404/410 (expired) or a network failure.
    """
    url = client.url(f"{_repo(repository)}/actions/artifacts/{int(artifact_id)}/zip")
    try:
        response = client.session.get(url, allow_redirects=False, timeout=client.timeout)
        if response.status_code in (301, 302, 303, 307, 308):
            location = response.headers.get("Location", "")
            response = fetch(location, timeout=client.timeout, allow_redirects=True)
    except requests.RequestException as e:
        raise ArtifactDownloadError(f"artifact download failed: {type(e).__name__}") from e
    if response.status_code == 200:
        return response.content
    status = response.status_code
    hint = {
        401: "the token was rejected",
        403: "the token may not read artifacts: give the job `permissions: actions: read`",
        404: "not found, or the token lacks `actions: read`",
        410: "the artifact has expired",
    }.get(status, "unexpected answer")
    raise ArtifactDownloadError(f"artifact {artifact_id} download failed ({status}: {hint})")


def results_from_zip(data: bytes, label: str = "artifact") -> RunResults:
    """The results file inside an artifact zip: ``adk-eval-results.json`` if present, else
    the only JSON member with a ``schema_version``. Members are read in memory, never
    extracted, so a crafted name cannot write outside a folder.

    Raises:
        BaselineUnreadable: not a zip, no results file, too large, or unreadable results.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if not m.is_dir()]
    except (zipfile.BadZipFile, OSError) as e:
        raise BaselineUnreadable(f"the {label} is not a valid zip file ({e})") from e
    preferred = [m for m in members if Path(m.filename).name == RESULTS_FILE_NAME]
    candidates = preferred or [m for m in members if m.filename.endswith(".json")]
    for member in candidates:
        if member.file_size > MAX_RESULTS_BYTES:
            raise BaselineUnreadable(f"{member.filename} in the {label} is too large")
        try:
            raw = archive.read(member)
        except (zipfile.BadZipFile, OSError, RuntimeError) as e:
            raise BaselineUnreadable(f"the {label} zip is corrupt ({e})") from e
        with tempfile.TemporaryDirectory(prefix="adk-eval-artifact-") as folder:
            path = Path(folder) / Path(member.filename).name
            path.write_bytes(raw)
            try:
                return load_results(path)
            except ResultsFileError as e:
                if preferred or len(candidates) == 1:
                    message = str(e).split(": ", 1)[-1]
                    raise BaselineUnreadable(f"{member.filename}: {message}") from e
    raise BaselineUnreadable(f"the {label} holds no {RESULTS_FILE_NAME}")


def artifact_baseline(
    context: BaselineContext, name: str, base_ref: str | None, console: Console,
    client_factory: ClientFactory | None = None,
) -> ResolvedBaseline:
    """The ``artifact`` strategy (module docstring).

    Raises:
        BaselineUnavailable: no context, no artifact, or it could not be downloaded or read.
    """
    if not context.usable:
        raise BaselineUnavailable(
            "artifact: no GitHub repository and token (pass the github_token input; "
            "outside GitHub use --baseline rerun or a results file)"
        )
    make = client_factory or (lambda token, api: GitHubClient(token, api))
    client = make(context.token.get_secret_value(), context.api_url)
    repo = context.repository
    try:
        base = base_ref or context.base_ref or str(
            client.get_json(_repo(repo)).get("default_branch") or "main"
        )
        head = context.head_sha or "HEAD"
        merge_base = merge_base_via_api(client, repo, base, head)
        try:
            chain = first_parent_chain(client, repo, merge_base)
        except NotFound:  # history not listable: the merge-base alone
            chain = [merge_base]
        match = find_artifact(client, repo, name, chain)
        console(f"baseline: artifact {match.artifact_id} of {match.head_sha[:12]}")
        data = download_artifact_zip(client, repo, match.artifact_id)
    except GitHubError as e:
        raise ArtifactDownloadError(f"artifact search failed: {e}") from e
    results = results_from_zip(data, f"artifact {name}")
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
    )


# --------------------------------------------------------------------------- git: rerun


class Git:
    """Runs git in a folder. ``safe.directory`` is set on the command line of our own calls
    only: in a container action the workspace belongs to another uid and git refuses it
    ("dubious ownership", contract §1); nothing is written to the global config."""

    def __init__(self, cwd: Path, timeout: float = GIT_TIMEOUT) -> None:
        self.cwd = cwd
        self.timeout = timeout

    def __call__(self, *args: str, check: bool = True) -> str:
        """Output of ``git args`` (stripped).

        Raises:
            RerunError: git is missing, timed out, or (``check``) exited non-zero.
        """
        command = ["git", "-c", "safe.directory=*", *args]
        try:
            done = subprocess.run(
                command, cwd=self.cwd, capture_output=True, text=True, timeout=self.timeout,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise RerunError(f"git {args[0]} failed: {type(e).__name__}: {e}") from e
        if check and done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            # git's first "fatal:"/"error:" line says what went wrong; later lines are advice.
            detail = next((x for x in lines if x.startswith(("fatal:", "error:"))), None)
            detail = detail or (lines[0] if lines else f"exit {done.returncode}")
            raise RerunError(f"git {' '.join(args[:2])} failed: {detail}")
        return done.stdout.strip()

    def ok(self, *args: str) -> bool:
        """True when ``git args`` exits 0."""
        try:
            self(*args)
        except RerunError:
            return False
        return True


def default_base_ref(git: Git) -> str:
    """The remote's default branch (``origin/HEAD``), else ``main`` or ``master`` when one
    exists.

    Raises:
        RerunError: none of them is known.
    """
    head = git("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False)
    if head:
        return head.split("/", 1)[1] if head.startswith("origin/") else head
    for name in ("main", "master"):
        if git.ok("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}") or git.ok(
            "rev-parse", "--verify", "--quiet", f"origin/{name}^{{commit}}"
        ):
            return name
    raise RerunError("cannot tell the base branch: pass --base-ref REF")


def _resolve(git: Git, ref: str) -> str | None:
    for candidate in (f"refs/remotes/origin/{ref}", ref):
        sha = git("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", check=False)
        if sha:
            return sha
    return None


def find_merge_base(git: Git, base_ref: str, head: str, console: Console) -> str:
    """The merge-base commit of ``base_ref`` and ``head``, fetching what a shallow or
    partial checkout lacks (``git fetch origin <base_ref>``, with ``--unshallow`` when the
    checkout is shallow; contract §5). The fetch uses the checkout's persisted credentials.

    Raises:
        RerunError: the ref cannot be found or the histories share no commit.
    """
    shallow = git("rev-parse", "--is-shallow-repository", check=False) == "true"
    base = _resolve(git, base_ref)
    if base is None or shallow:
        console(f"baseline: fetching {base_ref}" + (" (unshallow)" if shallow else ""))
        refspec = f"+refs/heads/{base_ref}:refs/remotes/origin/{base_ref}"
        extra = ["--unshallow"] if shallow else []
        wanted = [head] if re.fullmatch(r"[0-9a-f]{40}", head) else []
        if not git.ok("fetch", "--no-tags", *extra, "origin", refspec, *wanted):
            git("fetch", "--no-tags", *extra, "origin", refspec)
        base = _resolve(git, base_ref)
    if base is None:
        raise RerunError(f"base ref {base_ref} not found, locally or on origin")
    if not git.ok("cat-file", "-e", f"{head}^{{commit}}"):
        head = "HEAD"
    merge_base = git("merge-base", base, head, check=False)
    if not merge_base:
        raise RerunError(f"{base_ref} and {head[:12]} share no commit (unrelated histories?)")
    return merge_base


def _map_into(path: Path, repo_root: Path, cwd: Path, worktree: Path) -> str:
    """A path of the head run, as the same path inside the worktree."""
    absolute = path if path.is_absolute() else cwd / path
    try:
        return str(worktree / absolute.resolve().relative_to(repo_root))
    except ValueError:
        return str(path)


def rerun_command(
    options: RunOptions, repo_root: Path, cwd: Path, worktree: Path, results: Path,
) -> list[str]:
    """The ``adk-eval-action run`` command line that evaluates the worktree with the
    head run's suites and settings (paths, config, num_runs, parallelism)."""
    command = [sys.executable, "-m", "adk_eval_action.cli", "run"]
    command += [_map_into(p, repo_root, cwd, worktree) for p in options.paths]
    if options.config is not None:
        command += ["--config", _map_into(options.config, repo_root, cwd, worktree)]
    command += ["--baseline", "none", "--results-out", str(results)]
    if options.num_runs:
        command += ["--num-runs", str(options.num_runs)]
    if options.parallelism:
        command += ["--parallelism", str(options.parallelism)]
    return command


def rerun_baseline(
    options: RunOptions, context: BaselineContext | None, console: Console,
) -> ResolvedBaseline:
    """The ``rerun`` strategy: evaluate the merge-base in a git worktree, then remove it.

    Raises:
        RerunError: not a git checkout, no base, or the base evaluation wrote no results.
    """
    cwd = Path.cwd().resolve()
    git = Git(cwd)
    top = git("rev-parse", "--show-toplevel", check=False)
    if not top:
        raise RerunError("rerun: not inside a git checkout")
    repo_root = Path(top).resolve()
    git = Git(repo_root)
    base_ref = options.base_ref or (context.base_ref if context else None) or default_base_ref(git)
    head = (context.head_sha if context else None) or "HEAD"
    merge_base = find_merge_base(git, base_ref, head, console)
    folder = Path(tempfile.mkdtemp(prefix="adk-eval-base-"))
    worktree = folder / "tree"
    results_path = folder / RESULTS_FILE_NAME
    try:
        git("worktree", "add", "--detach", str(worktree), merge_base)
        console(f"baseline: evaluating {merge_base[:12]} ({base_ref}) in {worktree}")
        run_cwd = worktree / cwd.relative_to(repo_root)
        command = rerun_command(options, repo_root, cwd, worktree, results_path)
        _run_child(command, run_cwd, console)
        if not results_path.is_file():
            raise RerunError(
                f"the evaluation of {merge_base[:12]} wrote no results (its eval sets or "
                "config may not exist there; see the log)"
            )
        try:
            results = load_results(results_path)
        except ResultsFileError as e:
            raise RerunError(f"the base evaluation's results are unreadable: {e}") from e
    finally:
        git("worktree", "remove", "--force", str(worktree), check=False)
        git("worktree", "prune", check=False)
        shutil.rmtree(folder, ignore_errors=True)
    results.metadata.git_sha = merge_base
    return ResolvedBaseline(
        results=results, source="rerun", label="re-run in a git worktree", commit=merge_base,
        relation=f"merge-base with {base_ref}", recorded_at=results.metadata.finished_at,
        extra=["this check made the LLM calls of two evaluations"],
    )


def _run_child(command: list[str], cwd: Path, console: Console) -> int:
    """Runs the base evaluation, echoing its log with a prefix; returns its exit code.

    A child process, because the base commit's agent package usually has the head's
    module name and must not share ``sys.modules`` with it. Its gate result (exit 1) does
    not matter; only its results file does.
    """
    # The child is the same tool; it inherits the environment (model keys, PATH) and, like
    # our own git calls, must accept the worktree's owner inside a container.
    count = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    env = {
        **os.environ,
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": "safe.directory",
        f"GIT_CONFIG_VALUE_{count}": "*",
    }
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )
    except OSError as e:
        raise RerunError(f"cannot start the base evaluation: {e}") from e
    assert process.stdout is not None
    for line in process.stdout:
        console(f"  base| {line.rstrip()}")
    return process.wait()


# --------------------------------------------------------------------------- resolution


def file_baseline(path: Path) -> ResolvedBaseline:
    """A results file (ours or ADK eval_history).

    Raises:
        BaselineUnreadable: the file cannot be read (names it and why).
    """
    try:
        results = load_results(path)
    except ResultsFileError as e:
        raise BaselineUnreadable(f"the baseline file could not be read ({e})") from e
    meta = results.metadata
    label = f"file {path.name}" + (" (ADK eval_history)" if meta.source == "adk-eval-history"
                                   else "")
    return ResolvedBaseline(
        results=results, source="file", label=label, commit=meta.git_sha,
        recorded_at=meta.finished_at,
    )


def find_baseline(
    options: RunOptions, console: Console, client_factory: ClientFactory | None = None,
) -> ResolvedBaseline:
    """Runs the strategy ``options.baseline`` names (module docstring). Never raises for a
    baseline that cannot be had: the result then has no ``results`` and a ``reason``."""
    mode, path = parse_spec(options.baseline)
    context = options.github
    name = options.artifact_name or DEFAULT_ARTIFACT_NAME
    if mode == "none":
        return ResolvedBaseline(reason="baseline none requested")
    if options.record and mode != "file":
        return ResolvedBaseline(
            reason=f"this run records the baseline (results uploaded as artifact {name})"
        )
    try:
        if mode == "file":
            assert path is not None
            return file_baseline(path)
        if mode == "artifact":
            return artifact_baseline(context or BaselineContext(), name, options.base_ref,
                                     console, client_factory)
        if mode == "rerun":
            return rerun_baseline(options, context, console)
    except BaselineUnavailable as e:
        console(f"warning: baseline not used: {e}")
        return ResolvedBaseline(reason=str(e))
    return _auto(options, context, name, console, client_factory)


def _auto(
    options: RunOptions, context: BaselineContext | None, name: str, console: Console,
    client_factory: ClientFactory | None,
) -> ResolvedBaseline:
    """``auto``: artifact, else rerun when ``baseline_rerun``, else none (with both
    reasons, so the comment says what was tried)."""
    reasons = []
    if context is not None and context.usable:
        try:
            return artifact_baseline(context, name, options.base_ref, console, client_factory)
        except BaselineUnavailable as e:
            reasons.append(str(e))
    else:
        reasons.append("no GitHub context to look up an artifact")
    if options.baseline_rerun:
        try:
            return rerun_baseline(options, context, console)
        except BaselineUnavailable as e:
            reasons.append(f"rerun: {e}")
    else:
        reasons.append("baseline_rerun is off")
    reason = "; ".join(reasons)
    if context is None or not context.usable:
        reason = (f"none given (auto: {reason}; pass --baseline rerun, --baseline-rerun or a "
                  "results file)")
    console(f"note: no baseline: {reason}")
    return ResolvedBaseline(reason=reason)


def resolve_baseline(
    options: RunOptions,
    head: RunResults,
    console: Console = print,
    *,
    now: dt.datetime | None = None,
    client_factory: ClientFactory | None = None,
) -> tuple[RunResults | None, str]:
    """The baseline for ``head`` and the note the comment shows (source, commit, run link,
    age; or why there is none). Re-scores suites whose eval config alone changed.

    Never raises for the baseline's sake: a baseline that cannot be found or read becomes
    ``(None, reason)`` and nothing of the head's results is lost (issue: "Baselines").
    """
    resolved = find_baseline(options, console, client_factory)
    if resolved.results is not None:
        try:
            check_usable(resolved.results, head)
        except BaselineUnreadable as e:
            console(f"warning: baseline not used: {e}")
            resolved = ResolvedBaseline(reason=f"{resolved.label} not usable: {e}")
    if resolved.results is not None:
        from adk_eval_action.adk.rescore import rescore_baseline

        try:
            resolved.rescored = rescore_baseline(resolved.results, head, options, console)
        except Exception as e:  # noqa: BLE001 - a failed re-score leaves the baseline as it was
            console(f"warning: re-scoring the baseline failed: {type(e).__name__}: {e}")
            resolved.extra.append("re-scoring failed, compared as recorded")
    return resolved.results, resolved.note(now)


__all__ = [
    "ANCESTOR_LIMIT",
    "DEFAULT_ARTIFACT_NAME",
    "ArtifactDownloadError",
    "ArtifactMatch",
    "BaselineContext",
    "BaselineUnavailable",
    "BaselineUnreadable",
    "NoArtifact",
    "RerunError",
    "ResolvedBaseline",
    "artifact_baseline",
    "check_usable",
    "download_artifact_zip",
    "find_artifact",
    "find_baseline",
    "first_parent_chain",
    "format_age",
    "list_artifacts",
    "merge_base_via_api",
    "parse_spec",
    "rerun_baseline",
    "resolve_baseline",
    "results_from_zip",
]
