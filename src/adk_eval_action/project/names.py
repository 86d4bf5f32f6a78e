"""Suite names and identities.

A discovered suite is named after its agent's folder (``home_automation_agent``), plus, only
where one agent has several suites, the folder of its eval sets relative to the agent's
(``home_automation_agent:test_files``; relative to the folder both share when the eval sets
are outside the agent's, as in google/adk-samples: ``customer_service:eval/eval_data``).
Agents of the same folder name in different places are told apart by as many of their
parent folders as needed (``adk/app``, ``adk_a2a/app``). A name is at most
:data:`MAX_SUITE_NAME` characters (cut in the middle, its start and end kept) and unique.

A suite's *identity* is where it is: its agent path and its eval set folder, relative to
the repository root (``<agent>:<folder>``). Results files record both (a suite's ``agent``
and each eval set's ``file``), so a suite renamed by a newer version of this tool (or in
adk-eval.yaml) is still matched with its baseline (:mod:`adk_eval_action.results.identity`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from adk_eval_action.text import shorten

MAX_SUITE_NAME = 60
NO_AGENT = "no-agent"


def eval_set_folder(files: Iterable[str]) -> str | None:
    """The deepest folder holding every one of ``files`` (POSIX paths relative to the
    repository root); None without files."""
    parents = [PurePosixPath(f).parent.as_posix() for f in files]
    if not parents:
        return None
    try:
        common = os.path.commonpath(parents)
    except ValueError:  # absolute and relative paths mixed
        return None
    return PurePosixPath(common or ".").as_posix()


def suite_identity(agent: str | None, files: Iterable[str]) -> str | None:
    """``<agent path>:<eval set folder>`` (both relative to the repository root, POSIX), or
    None when either is unknown (an ADK eval_history file records neither)."""
    folder = eval_set_folder(files)
    if agent is None or folder is None:
        return None
    return f"{PurePosixPath(agent).as_posix()}:{folder}"


def _agent_parts(agents: Sequence[PurePosixPath]) -> dict[PurePosixPath, str]:
    """Each agent path's shortest tail of folders (at least its own name) that no other
    agent path of ``agents`` shares."""
    out: dict[PurePosixPath, str] = {}
    distinct = sorted(set(agents))
    for agent in distinct:
        others = [a for a in distinct if a != agent]
        for k in range(1, len(agent.parts) + 1):
            tail = agent.parts[-k:]
            if not any(o.parts[-k:] == tail for o in others):
                break
        out[agent] = "/".join(tail) if agent.parts else "."
    return out


def _relative_folder(folder: PurePosixPath, agent: PurePosixPath) -> str:
    """``folder`` relative to ``agent``, or to the folder both are in when it is outside
    (``.`` when it is the agent's own folder)."""
    if folder == agent or agent in folder.parents:
        return folder.relative_to(agent).as_posix()
    common = PurePosixPath(os.path.commonpath([folder.as_posix(), agent.as_posix()]) or ".")
    return folder.relative_to(common).as_posix() if common != PurePosixPath(".") else (
        folder.as_posix())


def short_names(suites: Sequence[tuple[str | None, str]]) -> list[str]:
    """The names of suites given as ``(agent path or None, eval set folder)``, both
    relative to the repository root (POSIX), by the module docstring's rules; in order,
    each unique and at most :data:`MAX_SUITE_NAME` characters."""
    agents = [PurePosixPath(a) for a, _ in suites if a is not None]
    parts = _agent_parts(agents)
    per_agent = {a: sum(1 for x, _ in suites if x is not None and PurePosixPath(x) == a)
                 for a in agents}
    names = []
    for agent, folder in suites:
        if agent is None:
            name = f"{NO_AGENT}:{folder}"
        else:
            path = PurePosixPath(agent)
            name = parts[path]
            relative = _relative_folder(PurePosixPath(folder), path)
            if per_agent[path] > 1 and relative != ".":
                name = f"{name}:{relative}"
        names.append(shorten(name, MAX_SUITE_NAME))
    return _unique(names)


def _unique(names: list[str]) -> list[str]:
    """``names`` with a later duplicate made unique by `` #2``, `` #3`` (still at most
    :data:`MAX_SUITE_NAME` characters)."""
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            suffix = f" #{n}"
            candidate = shorten(name, MAX_SUITE_NAME - len(suffix)) + suffix
        seen.add(candidate)
        out.append(candidate)
    return out
