"""The one writer of a run's results file: :class:`ResultsWriter`.

No stage of a run holds its :class:`~adk_eval_action.results.model.RunResults` to fill: each
hands the writer what it produced, as it produces it. The run's metadata when evaluation
starts (:meth:`ResultsWriter.start`); each suite's record as the evaluation opens the suite,
each case run as it finishes and each suite's summary (the writer is the evaluation's
:class:`~adk_eval_action.results.stream.SuiteRecords`, so it always holds what completed:
what a stop flushes); the parts of a sharded run, case run by case run
(:meth:`ResultsWriter.take`); the run-wide errors and warnings, the shard, the model-call
counts, why a run was skipped.
:meth:`ResultsWriter.results` builds the run's results from them once the evaluation is
over (cleaned: :func:`~adk_eval_action.results.io.clean_results`); what is handed over
after that (an error of the baseline, adaptive repeats' runs) the writer adds to them.
:meth:`ResultsWriter.save` writes the file once, at the end of the run, and
:meth:`ResultsWriter.flush` writes what there is, with the error that stopped the run, when
a stop (an error, a signal) cuts it short.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from adk_eval_action.errors import OutputError
from adk_eval_action.redaction import Redactor
from adk_eval_action.results.io import clean_results, save_results
from adk_eval_action.results.model import (
    ErrorRecord,
    ModelCallCounts,
    RunMetadata,
    RunResults,
    ShardInfo,
    SuiteRecord,
)
from adk_eval_action.results.stream import SuiteRecords, hand_over
from adk_eval_action.results.usage import merge_usage

__all__ = ["ResultsWriter", "merge_runs"]


class ResultsWriter(SuiteRecords):
    """The results of one run, handed over by its stages, written to ``path`` (absolute;
    ``shown`` is how messages name it, the ``results_path`` setting). ``redact`` removes the
    run's known secret values from the results when they are built (:meth:`results`).
    The evaluation hands it the suites' records, case runs and summaries as they come
    (:class:`~adk_eval_action.results.stream.SuiteRecords`).
    """

    def __init__(self, path: Path, redact: Redactor | None = None,
                 shown: Path | None = None) -> None:
        super().__init__()
        self.path = path
        self.shown = shown or path
        self._redact = redact
        self.metadata: RunMetadata | None = None
        self._errors: list[ErrorRecord] = []
        self._warnings: list[str] = []
        self._shard: ShardInfo | None = None
        self._built: RunResults | None = None

    @property
    def started(self) -> bool:
        """Whether the run got as far as evaluating (or merging): before that, a stop
        records its error in an empty results file of its own."""
        return self.metadata is not None or self._built is not None

    def start(self, metadata: RunMetadata) -> None:
        """The run's versions, commit and start time: evaluation starts."""
        self.metadata = metadata

    def take(self, results: RunResults) -> None:
        """Results made whole elsewhere (the merged parts of a sharded run), handed over
        as an evaluation hands over its own: the metadata, each suite as opened, each of
        its case runs, its summary (errors, warnings, tokens), then the run-wide errors
        and warnings."""
        self.start(results.metadata)
        for suite in results.suites:
            hand_over(self, suite)
        for error in results.errors:
            self.add_error(error)
        self.add_warnings(results.warnings)
        self.set_shard(results.shard)

    def add_error(self, error: ErrorRecord) -> None:
        """A run-wide error (the preflight's, an internal error, the baseline's file)."""
        if self._built is not None:
            self._built.errors.append(error)
        else:
            self._errors.append(error)

    def add_warnings(self, warnings: Iterable[str]) -> None:
        """Run-wide warnings (the eval configs' lint; after evaluation, what adaptive
        repeats could not do), after those handed over before."""
        if self._built is not None:
            self._built.warnings.extend(self._redact(w) if self._redact else w
                                        for w in warnings)
        else:
            self._warnings.extend(warnings)

    def skip(self, reason: str) -> None:
        """The run evaluates nothing, on purpose (``RunMetadata.skipped``)."""
        self._metadata().skipped = reason

    @property
    def shard(self) -> ShardInfo | None:
        """Which shard of the plan the run evaluated (None: all of it)."""
        return self._built.shard if self._built is not None else self._shard

    def set_shard(self, shard: ShardInfo | None) -> None:
        """Which shard of the plan the run evaluated (None: all of it)."""
        self._shard = shard

    def set_model_calls(self, counts: ModelCallCounts) -> None:
        """The run's model calls so far (evaluation, then adaptive repeats)."""
        self._metadata().model_calls = counts

    def finished(self, finished_at: str, duration_seconds: float) -> None:
        """When the evaluation ended and how long it took (seconds)."""
        metadata = self._metadata()
        metadata.finished_at, metadata.duration_seconds = finished_at, duration_seconds

    def add_reused(self, reused: list[SuiteRecord], order: list[str]) -> None:
        """Records taken from the baseline for unchanged suites (run.changed), placed among
        the evaluated ones in the order of the suite names ``order``."""
        for record in reused:
            self.open_suite(record)
        self.reorder(order)

    def add_runs(self, extra: SuiteRecord) -> int:
        """More runs of evaluated eval cases (adaptive repeats), added to the built results
        (:func:`merge_runs`); the runs added."""
        return merge_runs(self.results(), extra)

    def errors(self) -> list[ErrorRecord]:
        """Every error handed over so far: run-wide, then each suite's."""
        if self._built is not None:
            return self._built.all_errors()
        return [*self._errors, *(e for s in self.suite_records() for e in s.errors)]

    def results(self) -> RunResults:
        """The run's results, built from what was handed over the first time it is asked
        for (the same object after that), with lone surrogates replaced and the known
        secret values redacted (results.io.clean_results)."""
        if self._built is None:
            built = RunResults(metadata=self._metadata(), suites=self.suite_records(),
                               errors=list(self._errors), warnings=list(self._warnings),
                               shard=self._shard)
            self._built = clean_results(built, self._redact)
        return self._built

    def save(self) -> RunResults:
        """Writes the results file (:meth:`results`) whole or not at all; returns them.

        Raises:
            OutputError: it cannot be written (names it, and a full disk as such).
        """
        results = self.results()
        try:
            save_results(results, self.path)
        except OSError as e:
            raise OutputError(self.shown, e, "the results file") from e
        return results

    def flush(self, stop: ErrorRecord) -> RunResults:
        """What there is, with ``stop`` (the error that cut the run short) as its last
        run-wide error, written (marked incomplete); returns the results.

        Raises:
            OutputError: the file cannot be written.
        """
        self.add_error(stop)
        return self.save()

    def _metadata(self) -> RunMetadata:
        if self._built is not None:
            return self._built.metadata
        if self.metadata is None:
            self.metadata = RunMetadata()
        return self.metadata


def merge_runs(results: RunResults, extra: SuiteRecord) -> int:
    """Appends ``extra``'s runs to the same cases of ``results`` (numbered after each
    case's last run) and its errors, warnings, agent details and usage to the suite;
    returns the runs added."""
    suite = next((s for s in results.suites if s.name == extra.name), None)
    if suite is None:
        return 0
    sets = {e.eval_set_id: e for e in suite.eval_sets}
    added = 0
    for extra_set in extra.eval_sets:
        target = sets.get(extra_set.eval_set_id)
        if target is None:
            continue
        cases = {c.eval_id: c for c in target.eval_cases}
        for extra_case in extra_set.eval_cases:
            case = cases.get(extra_case.eval_id)
            if case is None:
                continue
            for run in extra_case.runs:
                last = max((r.run for r in case.runs), default=0)
                case.runs.append(run.model_copy(update={"run": last + 1}))
                added += 1
    suite.errors.extend(extra.errors)
    suite.warnings.extend(w for w in extra.warnings if w not in suite.warnings)
    suite.agent_details.update(extra.agent_details)  # what the added runs refer to
    suite.usage = merge_usage(suite.usage or [], extra.usage or []) or None
    return added
