"""Per-suite completeness (results/completeness.py): which suites of a results file are a
whole record of their commit, by the rule docs/baselines.md states, applied here by hand to
hand-built files."""

from __future__ import annotations

from adk_eval_action.results.completeness import (
    complete_suites,
    incomplete_suites,
    left_out_line,
    with_complete_suites,
)
from adk_eval_action.results.model import ErrorRecord, RunResults
from support.results_builder import metric, results


def _three() -> RunResults:
    """Suites alpha, beta, gamma, one eval case each, all passing."""
    merged = results({"a1": [[metric("response_match_score", 0.9)]]}, suite="alpha")
    for name in ("beta", "gamma"):
        merged.suites += results({f"{name[0]}1": [[metric("response_match_score", 0.8)]]},
                                 suite=name).suites
    return merged


def test_a_complete_run_has_every_suite_complete():
    run = _three()
    assert incomplete_suites(run) == {}
    assert complete_suites(run) == ["alpha", "beta", "gamma"]
    assert with_complete_suites(run) is run


def test_a_suite_error_makes_that_suite_alone_incomplete():
    run = _three()
    missing = ErrorRecord(kind="agent", message="No module named 'selenium'", suite="beta")
    run.suites[1].errors.append(missing)
    # A metric left NOT_EVALUATED is the gate's business, not completeness.
    run.suites[2].errors.append(ErrorRecord(kind="metric", message="no score", suite="gamma"))
    assert incomplete_suites(run) == {"beta": [missing]}
    assert complete_suites(run) == ["alpha", "gamma"]
    kept = with_complete_suites(run)
    assert [s.name for s in kept.suites] == ["alpha", "beta", "gamma"]
    assert kept.suites[1].eval_sets == [] and kept.suites[1].errors == [missing]
    assert kept.suites[0] == run.suites[0] and run.suites[1].eval_sets  # input unchanged
    dropped = with_complete_suites(run, keep_records=False)
    assert [s.name for s in dropped.suites] == ["alpha", "gamma"]


def test_a_run_wide_error_naming_a_suite_counts_against_that_suite_only():
    run = _three()
    install = ErrorRecord(kind="config", message="bad eval config", suite="gamma")
    run.errors.append(install)
    assert incomplete_suites(run) == {"gamma": [install]}


def test_a_run_wide_error_naming_no_suite_counts_against_every_suite():
    run = _three()
    stop = ErrorRecord(kind="interrupted", message="stopped by SIGTERM")
    run.errors.append(stop)
    run.errors.append(ErrorRecord(kind="baseline", message="no artifact"))  # not incomplete
    assert incomplete_suites(run) == {"alpha": [stop], "beta": [stop], "gamma": [stop]}
    assert complete_suites(run) == []


def test_a_file_marked_incomplete_without_errors_has_no_complete_suite():
    run = _three().model_copy(update={"complete": False})
    assert incomplete_suites(run) == {"alpha": [], "beta": [], "gamma": []}
    # Marked incomplete with an error of one suite: the error says which.
    run.suites[0].errors.append(ErrorRecord(kind="inference", message="boom", suite="alpha"))
    assert complete_suites(run) == ["beta", "gamma"]


def test_the_left_out_line_names_each_suite_with_its_first_error():
    errors = {f"s{i}": [ErrorRecord(kind="agent", message=f"no module\n m{i}")]
              for i in range(7)}
    errors["s0"] = []
    line = left_out_line(errors, limit=3)
    assert line == "s0 (marked incomplete), s1 (agent: no module m1), s2 (agent: no module m2)" \
        " and 4 more"


def test_what_decides_that_a_run_is_incomplete():
    from adk_eval_action.results.completeness import decides_incomplete

    run = _three()
    assert not decides_incomplete(run)
    broken = ErrorRecord(kind="agent", message="No module named 'selenium'", suite="beta")
    run.suites[1].errors.append(broken)
    assert decides_incomplete(run)
    # The base branch's own breakage (the same errors on the baseline) is excused...
    assert not decides_incomplete(run, {"beta"})
    # ...but not a run-wide error, nor another suite's.
    run.suites[2].errors.append(ErrorRecord(kind="inference", message="x", suite="gamma"))
    assert decides_incomplete(run, {"beta"})
    run.suites[2].errors.clear()
    run.errors.append(ErrorRecord(kind="internal", message="bug"))
    assert decides_incomplete(run, {"beta"})
    # A metric without a score is the gate's business; the recorded mark is not read.
    quiet = _three().model_copy(update={"complete": False})
    quiet.suites[0].errors.append(ErrorRecord(kind="metric", message="no score", suite="alpha"))
    assert not decides_incomplete(quiet)
