"""A suite's inputs ready for ADK: its eval config and eval sets, with our rubric rules.

Used alike by the engine (which evaluates them) and re-scoring (which evaluates a
baseline's recorded invocations under them), so both score under the same rules
(:mod:`adk_eval_action.adk.files.rubrics`): untyped rubrics typed, final-only rubrics on the last
turn, duplicate rubric ids refused, eval set ids unique within a suite, and an eval case a
rubric metric has nothing to judge on left out with a config error (:class:`UnjudgedCase`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_action.adk.compat import CASE_RUBRICS_ALONE
from adk_eval_action.adk.files.criteria import criterion_rubrics
from adk_eval_action.adk.files.evalconfig import LoadedEvalConfig, Overrides, load_eval_config
from adk_eval_action.adk.files.evalsets import NO_TURNS, LoadedEvalSet, load_eval_set
from adk_eval_action.adk.files.rubrics import (
    RUBRIC_METRIC_TYPES,
    assign_default_type,
    duplicate_ids,
)
from adk_eval_action.errors import AdkEvalActionError, ConfigError, EvalSetError
from adk_eval_action.files import MAX_DATA_BYTES, FileLimitError, read_bytes
from adk_eval_action.project.discovery import Suite, relative_path
from adk_eval_action.results.model import ErrorRecord
from adk_eval_action.text import visible


class SuiteInputs(BaseModel):
    """What a suite's files gave: the eval config (None when it failed to load), the eval
    sets that loaded (in the suite's order), one :class:`ErrorRecord` per file that did not
    (kind ``config`` or ``eval_set``, paths relative to the repository root), and what the
    log should say about the files (``notes``; the config's lint findings are
    ``config.warnings``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    config: LoadedEvalConfig | None
    eval_sets: list[LoadedEvalSet] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def may_have_scenarios(suite: Suite) -> bool:
    """Whether an eval set of ``suite`` may hold a case with a conversation scenario: a
    file that names the field (in either spelling ADK's models read: ``conversation_scenario``
    or ``conversationScenario``). A cheap look at the bytes, so a caller that needs only
    this (the preflight) parses no eval set that has none; a file that cannot be read says
    no (the evaluation reports it)."""
    for path in suite.eval_set_paths:
        try:
            raw = read_bytes(path, MAX_DATA_BYTES)
        except (OSError, FileLimitError):
            continue
        if b"conversation_scenario" in raw or b"conversationScenario" in raw:
            return True
    return False


def load_suite_inputs(suite: Suite, repo_root: Path, eval_sets: bool = True) -> SuiteInputs:
    """Loads the eval config and every eval set of ``suite`` (none when ``eval_sets`` is
    False: the config alone) and applies the rubric rules (:func:`prepare_eval_set`). Never
    raises for a problem in the user's files: a broken eval config leaves no eval sets to
    load; a broken eval set is skipped; each becomes an error record naming the file. An
    eval case with no turns, or one a rubric metric has nothing to judge on
    (:func:`unjudged_cases`), is left out with an error naming its file and line."""

    def rel(path: Path | None) -> str | None:
        return None if path is None else relative_path(path, repo_root)

    config_file = rel(suite.eval_config_path)
    overrides = Overrides(
        thresholds=suite.thresholds, higher_is_better=suite.higher_is_better,
        file=rel(suite.declared_in), field=suite.declared_field,
    )
    try:
        config = load_eval_config(suite.eval_config_path, overrides, display_path=config_file)
    except AdkEvalActionError as e:
        said = e.relative_to(repo_root) if isinstance(e, ConfigError) else e
        # The file it names: the eval config, or adk-eval.yaml for its overrides.
        declared = (isinstance(said, ConfigError) and overrides.file is not None
                    and said.path == overrides.file)
        file = overrides.file if declared else config_file
        error = ErrorRecord(kind="config", message=str(said), suite=suite.name, file=file)
        return SuiteInputs(config=None, errors=[error])
    inputs = SuiteInputs(config=config)
    live = getattr(config.eval_config, "live_model_config", None)
    if live is not None:
        inputs.notes.append(
            f"{config_file or 'the eval config'}: live_model_config: every eval case is run in "
            f"live (bidirectional streaming) mode, as `adk eval` runs it; a turn waits at most "
            f"{live.timeout_seconds} s for the model to end it")
    # A custom metric of a built-in's name is its function's; it reads no legacy key.
    custom = set(config.eval_config.custom_metrics or {})
    metrics = [m for m in config.eval_config.criteria if m not in custom]
    for path in suite.eval_set_paths if eval_sets else []:
        shown = rel(path) or str(path)
        try:
            loaded = load_eval_set(path, metrics)
            _refuse_repeated_id(loaded, inputs.eval_sets, rel)
            notes = [*loaded.notes, *prepare_eval_set(loaded, config)]
        except EvalSetError as e:
            inputs.errors.append(
                ErrorRecord(
                    kind="eval_set",
                    message=str(e).replace(str(path), shown),
                    suite=suite.name,
                    file=shown,
                    hint="fix the file; the other eval sets still ran",
                )
            )
            continue
        inputs.errors += _empty_case_errors(loaded, suite.name, shown)
        inputs.errors += _left_out_unjudged(loaded, config, suite.name, shown)
        inputs.notes.extend(note.replace(str(path), shown) for note in notes)
        if loaded.eval_set.eval_cases:
            inputs.eval_sets.append(loaded.model_copy(
                update={"warnings": [w.replace(str(path), shown) for w in loaded.warnings]}))
    return inputs


class SharedInputs:
    """:func:`load_suite_inputs` for many suites that name the same files: what suites of
    the same eval config, eval sets and adk-eval.yaml overrides gave is loaded once and
    given to each with its errors named after it (an adk-eval.yaml of 5,000 suites of one
    agent parsed its files 5,000 times, and ``plan`` ran for minutes). For readers only
    (``plan``, the preflight): the suites share the loaded eval sets, which the evaluation
    must not (it loads each suite's own).

    Calling it returns the suite's inputs and whether they were loaded just now (False: a
    suite before it gave them, so their notes were said already)."""

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = repo_root
        self._loaded: dict[tuple[object, ...], SuiteInputs] = {}

    @staticmethod
    def key(suite: Suite, eval_sets: bool = True) -> tuple[object, ...]:
        """What ``suite``'s inputs are made of: suites of one key load the same."""
        # The field of adk-eval.yaml (suites[3]) is named only by errors in its overrides.
        overrides = (tuple(sorted(suite.thresholds.items())),
                     tuple(sorted(suite.higher_is_better.items())))
        return (suite.eval_config_path, tuple(suite.eval_set_paths), eval_sets, overrides,
                suite.declared_in, suite.declared_field if any(overrides) else None)

    def __call__(self, suite: Suite, eval_sets: bool = True) -> tuple[SuiteInputs, bool]:
        key = self.key(suite, eval_sets)
        found = self._loaded.get(key)
        if found is None:
            self._loaded[key] = load_suite_inputs(suite, self.repo_root, eval_sets)
            return self._loaded[key], True
        errors = [e.model_copy(update={"suite": suite.name}) for e in found.errors]
        return found.model_copy(update={"errors": errors}), False


def _empty_case_errors(loaded: LoadedEvalSet, suite: str, shown: str) -> list[ErrorRecord]:
    """An ``eval_set`` error per eval case left out for its empty conversation
    (:data:`~adk_eval_action.adk.files.evalsets.NO_TURNS`) or for a field google-adk refuses
    at run time (``refused_cases``), naming the file, line and case (its id with line breaks
    and control characters escaped, ``text.visible``) and the field."""
    left_out = [(i, line, NO_TURNS, "") for i, line in loaded.empty_cases.items()] + [
        (i, line, why, "found before any model call; ")
        for i, (line, why) in loaded.refused_cases.items()]
    return [
        ErrorRecord(
            kind="eval_set",
            message=f"{shown}: eval case `{visible(eval_id, keep='')}`: {why}",
            suite=suite,
            file=shown,
            line=line,
            eval_set_id=loaded.eval_set.eval_set_id,
            eval_id=eval_id,
            hint=f"{before}fix the eval case; the other eval cases still ran",
        )
        for eval_id, line, why, before in left_out
    ]


def prepare_eval_set(loaded: LoadedEvalSet, config: LoadedEvalConfig) -> list[str]:
    """Applies the suite's rubric rules to an eval set in place; returns console notes.

    Raises:
        EvalSetError: duplicate rubric ids across config, case and invocation (names the
            case and id).
    """
    notes: list[str] = []
    rubric_metrics = config.rubric_types()
    if not rubric_metrics:
        return notes
    default_metric, default_type = rubric_metrics[0]
    typed = 0
    for case in loaded.eval_set.eval_cases:
        typed += assign_default_type(case.rubrics, default_type)
        for invocation in case.conversation or []:
            typed += assign_default_type(invocation.rubrics, default_type)
        for metric, rubrics in config.final_rubrics.items():
            copies = [r.model_copy(update={"type": RUBRIC_METRIC_TYPES[metric]}) for r in rubrics]
            if case.conversation:
                last = case.conversation[-1]
                last.rubrics = [*(last.rubrics or []), *copies]
            else:
                case.rubrics = [*(case.rubrics or []), *copies]
        _check_duplicates(loaded, case, config)
    if typed:
        notes.append(
            f"{loaded.path}: {typed} untyped case/invocation rubric(s) given type "
            f"{default_type} so `{default_metric}` judges them (google-adk drops untyped ones)"
        )
    return notes


def _refuse_repeated_id(
    loaded: LoadedEvalSet, earlier: list[LoadedEvalSet], rel: Callable[[Path], str | None]
) -> None:
    """Raises EvalSetError when an earlier eval set of the suite has the same eval_set_id:
    results key cases by (suite, eval set id, eval id), and ADK refuses it too."""
    for other in earlier:
        if other.eval_set.eval_set_id == loaded.eval_set.eval_set_id:
            raise EvalSetError(
                loaded.path,
                f"eval_set_id `{loaded.eval_set.eval_set_id}` is also the id of "
                f"{rel(other.path)}; give each eval set of a suite its own eval_set_id",
            )


def _check_duplicates(loaded: LoadedEvalSet, case: Any, config: LoadedEvalConfig) -> None:
    for metric, _ in config.rubric_types():
        config_rubrics = criterion_rubrics(metric, config.eval_config.criteria[metric])
        for invocation in case.conversation or [None]:
            inv_rubrics = invocation.rubrics if invocation is not None else None
            dupes = duplicate_ids(config_rubrics, case.rubrics, inv_rubrics)
            if dupes:
                raise EvalSetError(
                    loaded.path,
                    f"eval case `{case.eval_id}`: rubric id(s) {', '.join(dupes)} defined more "
                    "than once across the eval config, the case and its invocations; give "
                    "each rubric a unique id",
                )


class UnjudgedCase(BaseModel):
    """An eval case a rubric metric has nothing to judge on: the metric's criterion has no
    rubrics, and neither the case nor any of its turns has one of the metric's rubric type
    (google-adk's ``RubricBasedEvaluator.create_effective_rubrics_list`` keeps only those,
    then raises "Rubrics are required."). ``others`` counts the case's rubrics by type."""

    file: str
    eval_id: str
    metric: str
    rubric_type: str
    others: dict[str, int] = Field(default_factory=dict)

    @property
    def message(self) -> str:
        """What is wrong, then what to do (adk-docs' rubric types)."""
        if self.others:
            have = " and ".join(f"{n} rubric{'s' if n > 1 else ''} of type {t}"
                                for t, n in self.others.items())
            fix = f'give them `"type": "{self.rubric_type}"` if they are for this metric, or'
        else:
            have, fix = "no rubrics", "add rubrics to the eval case, or"
        return (f"eval case `{visible(self.eval_id, keep='')}` has {have}, none of type "
                f"{self.rubric_type}, so metric `{self.metric}` has nothing to judge; {fix} "
                "give the metric's criterion rubrics in the eval config, or remove the metric")


def rubrics_wanted(config: LoadedEvalConfig) -> list[tuple[str, str]]:
    """``(metric, rubric type)`` of the eval config's rubric metrics whose criterion has no
    rubrics, so that each eval case must bring its own (google-adk 2.x; 1.x refuses such a
    metric outright: :data:`adk_eval_action.adk.compat.CASE_RUBRICS_ALONE`)."""
    if not CASE_RUBRICS_ALONE:
        return []
    criteria = config.eval_config.criteria
    return [(metric, rubric_type) for metric, rubric_type in config.rubric_types()
            if not criterion_rubrics(metric, criteria[metric])
            and not config.final_rubrics.get(metric)]


def unjudged_cases(loaded: LoadedEvalSet, config: LoadedEvalConfig) -> list[UnjudgedCase]:
    """The eval cases of ``loaded`` (prepared: untyped rubrics typed) that a rubric metric
    of ``config`` has nothing to judge on (:class:`UnjudgedCase`; ``file`` is the eval
    set's path as given)."""
    out = []
    for metric, rubric_type in rubrics_wanted(config):
        for case in loaded.eval_set.eval_cases:
            rubrics = [*(case.rubrics or []), *(
                r for turn in case.conversation or [] for r in turn.rubrics or [])]
            if any(r.type == rubric_type for r in rubrics):
                continue
            out.append(UnjudgedCase(
                file=str(loaded.path), eval_id=case.eval_id, metric=metric,
                rubric_type=rubric_type,
                others=dict(Counter(str(r.type or "untyped") for r in rubrics))))
    return out


def _left_out_unjudged(loaded: LoadedEvalSet, config: LoadedEvalConfig, suite: str,
                       shown: str) -> list[ErrorRecord]:
    """A ``config`` error per eval case a rubric metric has nothing to judge on
    (:func:`unjudged_cases`), naming the file, line and case; those cases are left out of
    ``loaded`` (in place), so none of them is run, and the others still are."""
    found = unjudged_cases(loaded, config)
    if not found:
        return []
    left_out = {u.eval_id for u in found}
    loaded.eval_set.eval_cases = [
        c for c in loaded.eval_set.eval_cases if c.eval_id not in left_out]
    return [
        ErrorRecord(
            kind="config", message=f"{shown}: {u.message}", suite=suite, file=shown,
            line=loaded.eval_id_lines.get(u.eval_id), eval_set_id=loaded.eval_set.eval_set_id,
            eval_id=u.eval_id, metric=u.metric,
            hint="fix the eval case's rubrics or the eval config; the other eval cases still ran",
        )
        for u in found
    ]
