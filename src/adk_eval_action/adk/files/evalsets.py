"""Loading eval set files in every shape found in real ADK repositories.

Accepted shapes (measured against google-adk 2.13 on the eval sets of public ADK repositories:
google/adk-python, google/adk-samples, GoogleCloudPlatform/agent-starter-pack, and ADK
TypeScript's camelCase output; one small file of each in the repository's
``tests/fixtures/evalsets``):

``evalset``
    ADK's ``EvalSet`` JSON (``eval_set_id``, ``eval_cases``), in ``*.evalset.json`` or
    ``*.test.json``; includes ``conversation_scenario`` cases.
``evalset-camel``
    The same with a camelCase top level (``evalSetId``, ``evalCases``), as ADK TypeScript
    writes it. ADK Python's ``EvalSet`` rejects it; nested models accept camelCase aliases.
``legacy-turns``
    The flat legacy list ``[{"query", "expected_tool_use", "reference"}]``. Converted as
    ``AgentEvaluator._get_eval_set_from_old_format`` does: the whole file is ONE eval case
    whose turns are the items. (``adk eval`` fails on it with ``KeyError: 'data'``.)
``legacy-cases``
    The wrapped legacy list ``[{"name", "data", "initial_session"}]``, converted with ADK's
    ``convert_eval_set_to_pydantic_schema`` (one case per item).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.local_eval_sets_manager import convert_eval_set_to_pydantic_schema
from pydantic import BaseModel, ConfigDict, ValidationError

from adk_eval_action.adk.files.lint import (
    LEGACY_TURN_KEYS,
    eval_set_warnings,
    legacy_warnings,
    non_finite_warnings,
)
from adk_eval_action.adk.files.rubrics import RubricFormatError, normalize_case_rubrics
from adk_eval_action.errors import EvalSetError, json_problem
from adk_eval_action.files import MAX_DATA_BYTES, FileLimitError, read_bytes
from adk_eval_action.project.config import first_error
from adk_eval_action.project.eval_ids import eval_id_lines
from adk_eval_action.text import has_invisible, visible

ACCEPTED_SHAPES = (
    "ADK EvalSet JSON ({eval_set_id, eval_cases}); the same with camelCase keys "
    "({evalSetId, evalCases}); a legacy list of turns ([{query, expected_tool_use, reference}]); "
    "or a legacy list of cases ([{name, data, initial_session}])"
)

_CAMEL_TOP_LEVEL = {
    "evalSetId": "eval_set_id",
    "evalCases": "eval_cases",
    "creationTimestamp": "creation_timestamp",
}


class LoadedEvalSet(BaseModel):
    """An eval set file loaded into ADK's ``EvalSet``.

    ``eval_id_lines`` maps each eval case id to the 1-based line of its ``eval_id`` in the
    file (for annotations); ``notes`` are things the console should say about the file;
    ``warnings`` name fields ADK accepts and never evaluates (:mod:`.lint`);
    ``empty_cases`` maps the eval id of each eval case left out of ``eval_set`` because its
    ``conversation`` is empty (:data:`NO_TURNS`) to its line, for the caller to report;
    ``refused_cases`` each eval case left out because google-adk would refuse one of its
    fields at run time (:func:`refused_fields`) to its line and why, naming the field.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    eval_set: EvalSet
    shape: str
    content_hash: str
    eval_id_lines: dict[str, int]
    notes: list[str] = []
    warnings: list[str] = []
    empty_cases: dict[str, int] = {}
    refused_cases: dict[str, tuple[int, str]] = {}


def content_hash(data: bytes) -> str:
    """``sha256:<hex>`` of the file bytes; used to tell whether baseline and head match."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _is_legacy_turn(item: Any) -> bool:
    return isinstance(item, dict) and "query" in item


def _is_legacy_case(item: Any) -> bool:
    return isinstance(item, dict) and "data" in item and isinstance(item["data"], list)


LEGACY_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "tool_trajectory_avg_score": ("query", "expected_tool_use"),
    "response_evaluation_score": ("query",),
    "response_match_score": ("query", "reference"),
}
"""Metric -> the keys every turn of a legacy eval set needs for it, as ADK's
``AgentEvaluator._validate_input`` (google.adk.evaluation.agent_evaluator) requires them
("Samples for tool_trajectory_avg_score must include 'query' and 'expected_tool_use' keys").
ADK checks the first turn only ("for efficiency"); every turn is checked here, since ADK's
converter reads the key missing from any turn as empty (:data:`.lint.LEGACY_TURN_KEYS`)
and the turn is then scored against no tool call or an empty reference."""

_LEGACY_FIX = {
    "query": 'add `"query": "<what the user says>"`',
    "expected_tool_use": (
        'add `"expected_tool_use": [{"tool_name": ..., "tool_input": {...}}]` '
        "(`[]` for a turn that calls no tool)"
    ),
    "reference": 'add `"reference": "<the reply expected>"`',
}
_LEGACY_READ = {"expected_tool_use": "no tool call expected", "reference": "an empty reference"}
"""What ADK's converter reads a missing key of a legacy turn as (``.get(key, [])``, ``""``)."""
_LEGACY_EMPTY = {
    "expected_tool_use": "without it the turn expects no tool call",
    "reference": "without it the reply is compared with an empty reference",
}


def _misspelt_legacy_key(turn: Any, key: str) -> str | None:
    """The key of ``turn`` that is perhaps ``key`` misspelt (one ADK never reads), or None."""
    written = [k for k in turn if isinstance(k, str) and k not in LEGACY_TURN_KEYS]
    typo = difflib.get_close_matches(key, written, n=1)
    return typo[0] if typo else None


def _missing_legacy_keys(
    path: Path, cases: list[tuple[str | None, list[Any]]], metrics: Iterable[str], refuse: bool
) -> list[str]:
    """Checks each legacy turn for the keys a metric of the eval config reads
    (:data:`LEGACY_REQUIRED_KEYS`); ``cases`` are ``(case name or None for a list of turns,
    turns)``. With ``refuse`` (the flat list of turns, which only ADK's AgentEvaluator
    loads) a missing key is refused, as AgentEvaluator refuses it. Without (the wrapped
    list, which ``adk eval`` loads: its converter reads a missing key as empty) a missing key
    is refused only when a key of the turn is perhaps it misspelt; otherwise the file is
    accepted and scored as ``adk eval`` scores it, and the absent key noted once per file.

    Returns:
        The notes (one per absent key).

    Raises:
        EvalSetError: naming the case, the turn (from 1), the key, the metric, the key
            perhaps misspelt in its place, and what to do.
    """
    needed = {key: metric for metric in metrics for key in LEGACY_REQUIRED_KEYS.get(metric, ())}
    absent: Counter[str] = Counter()
    turns_seen = 0
    for name, turns in cases:
        for number, turn in enumerate(turns, 1):
            turns_seen += 1
            for key in [k for k in needed if isinstance(turn, dict) and k not in turn]:
                typo = _misspelt_legacy_key(turn, key)
                if typo is None and not refuse:
                    absent[key] += 1
                    continue
                metric = needed[key]
                here = (f"legacy case `{name}`, turn {number}" if name is not None
                        else f"turn {number}")
                why = f": {_LEGACY_EMPTY[key]}" if key in _LEGACY_EMPTY else ""
                fix = (f"`{typo}` is perhaps `{key}` misspelt: rename it" if typo
                       else f"{_LEGACY_FIX[key]}, or remove `{metric}` from the eval config")
                raise EvalSetError(
                    path,
                    f"{here} has no `{key}`, which `{metric}` needs{why} ("
                    + ("ADK's AgentEvaluator requires it of legacy turns" if refuse
                       else "`adk eval` reads a missing one as empty") + f"); {fix}",
                )
    return [
        f"{path}: {count} of {turns_seen} turns have no `{key}`: `adk eval` reads that as "
        f"{_LEGACY_READ[key]}, and so does `{needed[key]}` here"
        for key, count in absent.items()
    ]


def _without_query(path: Path, turns: list[Any], here: str) -> EvalSetError:
    """The error for a legacy turn without ``query`` (the first), with the key perhaps meant."""
    number, turn = next((n, t) for n, t in enumerate(turns, 1) if not _is_legacy_turn(t))
    keys = [k for k in turn if isinstance(k, str)] if isinstance(turn, dict) else []
    typo = difflib.get_close_matches("query", keys, n=1)
    hint = (f": `{typo[0]}` is perhaps `query` misspelt: rename it" if typo
            else '; every turn needs `"query": "<what the user says>"`')
    return EvalSetError(path, f"{here}turn {number} has no `query`{hint}")


def _from_list(
    path: Path, data: list[Any], metrics: Iterable[str] = ()
) -> tuple[EvalSet, str, list[str]]:
    eval_set_id = _stem(path)
    metrics = list(metrics)
    if data and all(_is_legacy_turn(i) for i in data):
        _missing_legacy_keys(path, [(None, data)], metrics, refuse=True)
        # AgentEvaluator treats the whole file as one case whose turns are the items.
        wrapped = [{"name": eval_set_id, "data": data, "initial_session": {}}]
        note = (
            f"{path}: legacy list of {len(data)} turns: loaded as ONE eval case "
            f"`{eval_set_id}` with {len(data)} invocations, as ADK's AgentEvaluator does "
            "(`adk eval` itself rejects this shape with KeyError: 'data')"
        )
        return convert_eval_set_to_pydantic_schema(eval_set_id, wrapped), "legacy-turns", [note]
    if data and all(_is_legacy_case(i) for i in data):
        for item in data:
            if not all(_is_legacy_turn(t) for t in item["data"]):
                raise _without_query(path, item["data"], f"legacy case `{item.get('name')}`: ")
        notes = _missing_legacy_keys(
            path, [(i.get("name"), i["data"]) for i in data], metrics, refuse=False)
        return convert_eval_set_to_pydantic_schema(eval_set_id, data), "legacy-cases", notes
    if any(_is_legacy_turn(i) for i in data) and all(isinstance(i, dict) for i in data):
        raise _without_query(path, data, "a legacy list of turns whose ")
    raise EvalSetError(path, f"a JSON list, but not a legacy eval set; accepted: {ACCEPTED_SHAPES}")


NO_CASES = (
    "an eval set without eval cases evaluates nothing (ADK's AgentEvaluator refuses one: "
    '"No eval cases were evaluated"); add eval cases, or leave the file out '
    "(adk-eval.yaml `exclude`, or remove it)"
)
"""Why an eval set file without eval cases is refused, in either shape: a forgotten or
half-written eval set (``adk web`` saves a new one empty) would otherwise pass silently
beside the others."""


NO_TURNS = "the eval case has no turns (conversation is empty): add turns or remove the case"
"""Why an eval case whose ``conversation`` is an empty list is left out (``adk web`` saves
one when an eval case is created before any chat): ADK runs no invocation for it, and every
metric comes back NOT_EVALUATED, which would read as a failing agent. A case with a
``conversation_scenario`` has no ``conversation`` at all and is not concerned."""


def _without_empty_cases(eval_set: EvalSet) -> tuple[EvalSet, list[str]]:
    """``eval_set`` without its eval cases whose ``conversation`` is an empty list, and
    their eval ids (:data:`NO_TURNS`)."""
    empty = [c.eval_id for c in eval_set.eval_cases
             if c.conversation is not None and not c.conversation]
    if not empty:
        return eval_set, []
    kept = [c for c in eval_set.eval_cases if c.eval_id not in empty]
    return eval_set.model_copy(update={"eval_cases": kept}), empty


NO_APP_NAME = (
    "is empty: google-adk's Runner refuses it when the eval case runs (\"app_name is "
    "required when agent is provided without app.\"); give the app's name (`adk web` "
    "writes the agent folder's name) or leave `session_input` out"
)
"""Why an eval case whose ``session_input.app_name`` is "" is left out before any model call:
google.adk.runners.Runner refuses it for an agent (2.x: "app_name is required ...", 1.x:
"Either app or both app_name and agent must be provided."), and for an agent module with
an ``app`` google-adk creates the case's session under the empty name and looks it up
under the app's ("Session not found"); ``adk eval`` fails the case at run time."""


def _field_name(data: Any, index: int, path: tuple[tuple[str, str], ...]) -> str:
    """The field of eval case ``index`` spelt as the file spells it: each (snake_case,
    camelCase) key of ``path`` as the raw ``data`` has it (``eval_cases[2].session_input.
    app_name``, ``evalCases[2].sessionInput.appName``; ``[2].initial_session.app_name`` in
    the legacy list of cases)."""
    if isinstance(data, list):
        node: Any = data[index] if index < len(data) else {}
        spelt, keys = f"[{index}]", (("initial_session", "initial_session"), *path[1:])
    else:
        key = "evalCases" if "evalCases" in data and "eval_cases" not in data else "eval_cases"
        cases = data.get(key)
        node = cases[index] if isinstance(cases, list) and index < len(cases) else {}
        spelt, keys = f"{key}[{index}]", path
    for snake, camel in keys:
        key = camel if isinstance(node, dict) and camel in node and snake not in node else snake
        spelt += f".{key}"
        node = node.get(key) if isinstance(node, dict) else None
    return spelt


def refused_fields(eval_set: EvalSet, data: Any) -> dict[str, str]:
    """The eval cases of ``eval_set`` (loaded from the raw ``data``) with a field that
    google-adk accepts when it loads the file and refuses when the case runs, each eval id
    to ``field `…` <why>``: a ``session_input.app_name`` of "" (:data:`NO_APP_NAME`)."""
    refused = {}
    for index, case in enumerate(eval_set.eval_cases):
        if case.session_input is not None and case.session_input.app_name == "":
            field = _field_name(data, index, (("session_input", "sessionInput"),
                                              ("app_name", "appName")))
            refused[case.eval_id] = f"field `{field}` {NO_APP_NAME}"
    return refused


def _without_refused_cases(eval_set: EvalSet, data: Any) -> tuple[EvalSet, dict[str, str]]:
    """``eval_set`` without its eval cases of :func:`refused_fields`, and why each."""
    refused = refused_fields(eval_set, data)
    if not refused:
        return eval_set, {}
    kept = [c for c in eval_set.eval_cases if c.eval_id not in refused]
    return eval_set.model_copy(update={"eval_cases": kept}), refused


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".evalset.json", ".test.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _from_dict(path: Path, data: dict[str, Any]) -> tuple[EvalSet, str]:
    shape = "evalset"
    if any(k in data for k in _CAMEL_TOP_LEVEL) and "eval_cases" not in data:
        data = {_CAMEL_TOP_LEVEL.get(k, k): v for k, v in data.items()}
        shape = "evalset-camel"
    missing = [k for k in ("eval_set_id", "eval_cases") if k not in data]
    if missing:
        keys = [str(k) for k in data]
        meant = [f"`{close[0]}` is perhaps `{k}` misspelt" for k in missing
                 if (close := difflib.get_close_matches(k, keys, n=1, cutoff=0.75))]
        raise EvalSetError(
            path,
            "a JSON object without " + " and ".join(f"`{k}`" for k in missing)
            + (f" ({'; '.join(meant)})" if meant else "")
            + "; accepted: " + ACCEPTED_SHAPES,
        )
    for index, case in enumerate(
        data["eval_cases"] if isinstance(data["eval_cases"], list) else []
    ):
        if isinstance(case, dict):
            try:
                normalize_case_rubrics(case, f"eval_cases[{index}]")
            except RubricFormatError as e:
                raise EvalSetError(path, str(e)) from e
    try:
        return EvalSet.model_validate(data), shape
    except ValidationError as e:
        raise EvalSetError(
            path, f"{_validation_message(e, data)}; accepted: {ACCEPTED_SHAPES}"
        ) from e


def _validation_message(error: ValidationError, data: Any) -> str:
    # An unknown key names the key meant, in the file's own spelling (first_error).
    location, message = first_error(error, data, EvalSet)
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"invalid eval set at `{location}`: {message}{more}"


def _case_ids(path: Path, eval_set: EvalSet) -> list[str]:
    """The eval set's eval ids, in order, once it is known to be one ADK can evaluate.

    Raises:
        EvalSetError: no eval cases (:data:`NO_CASES`), an eval id given twice, or a case
            with neither a conversation nor a conversation scenario.
    """
    if not eval_set.eval_cases:
        raise EvalSetError(path, f"`eval_cases` is empty: {NO_CASES}")
    ids = [c.eval_id for c in eval_set.eval_cases]
    duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
    if duplicates:
        raise EvalSetError(path, f"duplicate eval_id(s): {', '.join(duplicates)}")
    for case in eval_set.eval_cases:
        if case.conversation is None and case.conversation_scenario is None:
            raise EvalSetError(
                path,
                f"eval case `{case.eval_id}` has neither `conversation` nor "
                "`conversation_scenario`",
            )
    return ids


def _id_warnings(path: Path, ids: list[str]) -> list[str]:
    """A warning per eval id holding a line break, control or bidi character (shown
    escaped, ``text.visible``): the comment and the log show it escaped, but a reader of
    the eval set file or of ADK's own output would not see it."""
    return [
        f"{path}: eval case id `{visible(i, keep='')}` holds a line break, control or bidi "
        "character (shown escaped here and in the comment): rename it to printable text"
        for i in ids if has_invisible(i)
    ]


def load_eval_set(path: Path, metrics: Iterable[str] = ()) -> LoadedEvalSet:
    """Loads one eval set file in any accepted shape (see the module docstring).

    ``metrics`` are the eval config's metrics (not its custom ones): a legacy turn must have
    the keys they need (:data:`LEGACY_REQUIRED_KEYS`); none are checked without them.

    Raises:
        EvalSetError: the file is unreadable, not a regular file, larger than
            ``files.MAX_DATA_BYTES``, not JSON (with line and column), or in no accepted
            shape (the message lists the accepted shapes), or without eval cases
            (:data:`NO_CASES`), or with a legacy turn without a key ``metrics`` need. An
            eval case with an empty ``conversation`` is not an error here: it is left out
            and named in ``empty_cases``; so is one with a field google-adk refuses at run
            time (``refused_cases``: :func:`refused_fields`).
    """
    try:
        raw = read_bytes(path, MAX_DATA_BYTES)
        text = raw.decode("utf-8-sig")
        data = json.loads(text)
    except FileLimitError as e:
        raise EvalSetError(path, str(e).removeprefix(f"{path}: ")) from e
    except OSError as e:
        raise EvalSetError(path, f"cannot read: {e.strerror or e}") from e
    except RecursionError as e:
        raise EvalSetError(path, "JSON nested too deeply") from e
    except UnicodeDecodeError as e:
        raise EvalSetError(path, f"not UTF-8 text: {e}") from e
    except json.JSONDecodeError as e:
        if not text.strip():
            raise EvalSetError(path, f"the file is empty; accepted: {ACCEPTED_SHAPES}") from e
        raise EvalSetError(path, json_problem(e)) from e
    notes: list[str] = []
    warnings: list[str] = []
    if data == []:
        raise EvalSetError(path, f"an empty JSON list: {NO_CASES}")
    if isinstance(data, list):
        warnings = legacy_warnings(data, str(path))
        eval_set, shape, notes = _from_list(path, data, metrics)
    elif isinstance(data, dict):
        top = {_CAMEL_TOP_LEVEL.get(k) or k: v for k, v in data.items()}
        warnings = eval_set_warnings(top, str(path))
        eval_set, shape = _from_dict(path, data)
    else:
        raise EvalSetError(path, f"JSON {type(data).__name__}; accepted: {ACCEPTED_SHAPES}")
    ids = _case_ids(path, eval_set)
    warnings += _id_warnings(path, ids) + non_finite_warnings(data, str(path))
    found = eval_id_lines(text)
    eval_set, empty = _without_empty_cases(eval_set)
    eval_set, refused = _without_refused_cases(eval_set, data)
    return LoadedEvalSet(
        path=path,
        eval_set=eval_set,
        shape=shape,
        content_hash=content_hash(raw),
        eval_id_lines={i: found.get(i, 1) for i in ids if i not in empty and i not in refused},
        notes=notes,
        warnings=warnings,
        empty_cases={i: found.get(i, 1) for i in empty},
        refused_cases={i: (found.get(i, 1), why) for i, why in refused.items()},
    )


def only_cases(
    eval_sets: list[LoadedEvalSet], wanted: dict[str, list[str]] | None
) -> list[LoadedEvalSet]:
    """The eval sets limited to ``wanted`` eval ids per eval set id (None: all of them);
    eval sets with none wanted are left out. Adaptive repeats run only the cases they
    pick (``adk_eval_action.run.adaptive_repeats``)."""
    if wanted is None:
        return eval_sets
    out = []
    for loaded in eval_sets:
        ids = set(wanted.get(loaded.eval_set.eval_set_id, ()))
        cases = [c for c in loaded.eval_set.eval_cases if c.eval_id in ids]
        if cases:
            eval_set = loaded.eval_set.model_copy(update={"eval_cases": cases})
            out.append(loaded.model_copy(update={"eval_set": eval_set}))
    return out
