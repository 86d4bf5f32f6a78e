"""The history a recording run carries forward: the ``adk-eval-history.json`` in the
artifact the previous recording run uploaded, found as the ``artifact`` baseline finds
artifacts (:mod:`.artifact`): the pushed commit and its first-parent ancestors, nearest
first, this repository's non-pull-request runs only, newest artifact first within a commit.

The first artifact that holds a history wins, complete results or not (an incomplete
recording run still carried the history forward). Artifacts without one (recorded before
histories were, or by a run stopped before it wrote one) are passed over, at most
:data:`MAX_CANDIDATES` of them downloaded; none found starts a new history. Nothing here
ever stops the recording run: every failure is a note and a new history.
"""

from __future__ import annotations

import logging
import time

from adk_eval_action.baseline.artifact import (
    ClientFactory,
    candidate_artifacts,
    download_artifact_zip,
    first_parent_chain,
    history_from_zip,
)
from adk_eval_action.baseline.models import BaselineContext, BaselineUnavailable
from adk_eval_action.github.transport import GitHubClient, GitHubError, NotFound
from adk_eval_action.results.history_file import History
from adk_eval_action.results.history_file_io import HistoryUnusable

log = logging.getLogger(__name__)

#: Artifacts downloaded at most while looking for one that holds a history.
MAX_CANDIDATES = 5


def previous_history(
    context: BaselineContext, name: str, client_factory: ClientFactory | None = None,
) -> tuple[History | None, str]:
    """The history of the nearest earlier recording run of ``context.head_sha`` (module
    docstring) and a note saying where it came from, or why there is none. Never raises
    for the history's sake (an unexpected error is a note too)."""
    if not context.usable or not context.head_sha:
        return None, "no GitHub repository, token or commit to look up the previous history"
    make = client_factory or (lambda token, api: GitHubClient(token, api))
    client = make(context.token.get_secret_value(), context.api_url)
    try:
        return _search(client, context, name)
    except (GitHubError, BaselineUnavailable, HistoryUnusable) as e:
        return None, f"the previous history could not be read: {e}"
    except Exception as e:  # noqa: BLE001 - a recording run never fails for its history
        return None, f"the previous history lookup failed: {type(e).__name__}: {e}"


def _search(client: GitHubClient, context: BaselineContext,
            name: str) -> tuple[History | None, str]:
    head = context.head_sha or ""
    try:
        chain = first_parent_chain(client, context.repository, head)
    except NotFound:  # the pushed commit unknown to the API: nothing to walk
        chain = [head]
    tried = 0
    for match in candidate_artifacts(client, context.repository, name, chain):
        if tried >= MAX_CANDIDATES:
            break
        tried += 1
        data = download_artifact_zip(client, context.repository, match.artifact_id)
        started = time.monotonic()
        try:
            history = history_from_zip(data, f"artifact {name}",
                                       started + client.budget.remaining, context.repository)
        finally:
            client.budget.spend(time.monotonic() - started)
        if history is not None:
            where = (f"artifact {name} of commit {match.head_sha[:12]}"
                     + (f" ({match.run_url})" if match.run_url else ""))
            log.info("history: %d recorded run(s) from %s", len(history.runs), where)
            return history, f"carried forward from {where}"
        log.info("history: artifact %s of %s holds none", match.artifact_id,
                 match.head_sha[:12])
    searched = f"{len(chain)} commit(s) from {head[:12]}"
    if tried:
        return None, (f"no history in the {tried} newest artifact(s) {name} of {searched}: "
                      "a new one starts")
    return None, f"no artifact {name} of {searched}: a new history starts"
