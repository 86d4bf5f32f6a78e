"""results.stream: what an evaluation hands over, case run by case run, makes the same
records whatever order the runs arrive in; the merge of a sharded run goes through the
writer the same way (results.writer.ResultsWriter.take)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from adk_eval_action.redaction import Redactor
from adk_eval_action.results.model import (
    CaseStatus,
    ErrorRecord,
    EvalCaseRecord,
    EvalSetRecord,
    RunRecord,
    SuiteRecord,
)
from adk_eval_action.results.stream import CaseRunDone, SuiteClosed, SuiteRecords
from adk_eval_action.results.writer import ResultsWriter
from support.results_builder import metric, results


def _opened() -> SuiteRecord:
    cases = [EvalCaseRecord(eval_id=f"c{i}") for i in range(3)]
    return SuiteRecord(name="travel", eval_sets=[EvalSetRecord(eval_set_id="s", eval_cases=cases)])


def _done(eval_id: str, run: int) -> CaseRunDone:
    position = (run - 1) * 3 + int(eval_id[1])  # runs outermost, as the scheduler numbers them
    failed = eval_id == "c1"
    error = ErrorRecord(kind="inference", message=f"{eval_id} run {run}", suite="travel",
                        eval_id=eval_id) if failed else None
    return CaseRunDone(suite="travel", eval_set_id="s", eval_id=eval_id, position=position,
                       run=RunRecord(run=run, status=CaseStatus.ERROR if failed
                                     else CaseStatus.PASSED),
                       error=error)


def _records(order: list[CaseRunDone]) -> str:
    sink = SuiteRecords()
    sink.open_suite(_opened())
    for done in order:
        sink.add_case_run(done)
    summary = ErrorRecord(kind="model", message="summed up", suite="travel")
    sink.close_suite(SuiteClosed(suite="travel", errors=(summary,), warnings=("w",)))
    (suite,) = sink.suite_records()
    return suite.model_dump_json()


def test_the_records_do_not_depend_on_the_order_case_runs_finish_in() -> None:
    work = [_done(f"c{i}", run) for run in (1, 2) for i in range(3)]
    made = {_records(list(order)) for order in itertools.islice(
        itertools.permutations(work), 0, None, 37)}
    assert len(made) == 1
    suite = SuiteRecord.model_validate_json(made.pop())
    assert [[r.run for r in c.runs] for c in suite.eval_sets[0].eval_cases] == [[1, 2]] * 3
    # The case runs' errors in the order of work, then the suite's summary.
    assert [e.message for e in suite.errors] == ["c1 run 1", "c1 run 2", "summed up"]
    assert suite.warnings == ["w"]


def test_a_stopped_run_keeps_the_errors_of_the_case_runs_that_finished() -> None:
    sink = SuiteRecords()
    sink.open_suite(_opened())
    sink.add_case_run(_done("c1", 2))
    sink.add_case_run(_done("c0", 1))
    (suite,) = sink.suite_records()  # never closed: a signal cut the run short
    assert [e.message for e in suite.errors] == ["c1 run 2"]


def test_merged_results_go_through_the_writer_redacted(tmp_path: Path) -> None:
    merged = results({"c0": [[metric("m", 1.0)]], "c1": [[metric("m", 0.0)], [metric("m", 1.0)]]})
    merged.suites[0].errors.append(ErrorRecord(kind="metric", message="key sk-live-123 leaked",
                                               suite=merged.suites[0].name))
    writer = ResultsWriter(tmp_path / "merged.json", Redactor(["sk-live-123"]))
    writer.take(merged)
    written = writer.save()
    text = (tmp_path / "merged.json").read_text()
    assert "sk-live-123" not in text and "***" in text
    cases = written.suites[0].eval_sets[0].eval_cases
    assert [len(c.runs) for c in cases] == [1, 2]
    assert json.loads(text)["suites"][0]["errors"][0]["kind"] == "metric"
