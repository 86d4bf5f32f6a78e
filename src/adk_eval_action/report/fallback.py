"""The comment and summary of a run that could not be rendered normally: an internal error,
an unusable template, a signal, or an error (adk-eval.yaml, an input) that stopped the run
before evaluation started. Plain markdown without templates (the templates may be
what failed), every piece of data through the ``md`` filter."""

from __future__ import annotations

from adk_eval_action.report.format import md
from adk_eval_action.results.model import ErrorRecord, RunResults

__all__ = ["incomplete_markdown"]


def incomplete_markdown(results: RunResults, error: ErrorRecord, results_path: str) -> str:
    """A short report: the headline "incomplete", what stopped the run (and the error's
    hint), which suites and how many eval cases were evaluated (or that the run stopped
    before evaluation started: no suites), the other errors, and where the results file
    is."""
    cases = sum(len(e.eval_cases) for s in results.suites for e in s.eval_sets)
    title = ("stopped by a signal" if error.kind == "interrupted"
             else f"{error.kind.replace('_', ' ')} error")
    code = "130/143" if error.kind == "interrupted" else "2"
    done = (f"Evaluated before it stopped: {len(results.suites)} suite(s), {cases} eval "
            "case(s)." if results.suites else
            "Nothing was evaluated: the run stopped before evaluation started. Fix the "
            "error above and run again.")
    lines = [
        f"## ⚠️ ADK eval incomplete: {title}",
        "",
        f"{md(error.message, 600)}" + (f" ({md(error.hint, 300)})" if error.hint else ""),
        "",
        f"{done} The gate was not decided; the check fails as incomplete (exit {code}).",
    ]
    others = [e for e in results.all_errors() if e is not error][:20]
    if others:
        lines += ["", "Other errors:", ""]
        lines += [f"- {md(e.kind)}: {md(e.message, 300)}" for e in others]
    kept = "Everything that was computed is" if results.suites else "The error is recorded"
    lines += ["", f"{kept} in {md(results_path, 200)}."]
    return "\n".join(lines) + "\n"
