"""The comment and summary of a run that could not be rendered normally: an internal error,
an unusable template, a signal, or an error (adk-eval.yaml, an input, the preflight) that
stopped the run before evaluation started; and of a run that evaluated nothing on purpose
(``on_missing_credentials: skip``). Plain markdown without templates (the templates may be
what failed, and there is no comparison to render), every piece of data through the ``md``
filter."""

from __future__ import annotations

from adk_eval_action.report.format import md, strip_markers
from adk_eval_action.report.headline import stopped_headline
from adk_eval_action.results.model import ErrorRecord, RunResults

__all__ = ["incomplete_markdown", "short_markdown", "skipped_markdown"]


def incomplete_markdown(
    results: RunResults, error: ErrorRecord, results_path: str | None, heading: str = "###",
) -> str:
    """A short report under the packaged templates' heading (``###`` in the comment, ``##``
    in the job summary): the incomplete headline with its cause
    (:func:`adk_eval_action.report.headline.stopped_headline`, the form of every
    incomplete run), what stopped the run (and the error's hint), the other errors, and
    where the results file is (None: none was written). The marker-like text of data is removed
    (:func:`adk_eval_action.report.format.strip_markers`), as from every comment."""
    headline = stopped_headline(results, error)
    code = "130/143" if error.kind == "interrupted" else "2"
    fix = "" if results.suites else "Fix the error above and run again. "
    lines = [
        f"{heading} ADK evaluation",
        "",
        f"⚠️ **ADK eval incomplete** ({md(headline.cause)}): {md(headline.details, 300)}.",
        "",
        f"{_where(error)}{md(error.message, 600)}"
        + (f" ({md(error.hint, 300)})" if error.hint else ""),
        "",
        f"{fix}The gate was not decided; the check fails as incomplete (exit {code}).",
    ]
    others = [e for e in results.all_errors() if e is not error][:20]
    if others:
        lines += ["", "Other errors:", ""]
        lines += [f"- {md(e.kind)}: {_where(e)}{md(e.message, 300)}" for e in others]
    kept = "Everything that was computed is" if results.suites else "The error is recorded"
    if results_path is not None:
        lines += ["", f"{kept} in {md(results_path, 200)}."]
    return strip_markers("\n".join(lines) + "\n")


def _where(error: ErrorRecord) -> str:
    """``suite NAME, FILE: `` for an error of one suite or file (a monorepo's reader must
    know whose it is), the file left out when the message names it already; else ''."""
    file = error.file if error.file and error.file not in error.message else None
    parts = [f"suite {md(error.suite, 80)}" if error.suite else "",
             (md(f"`{file}`", 200) if "`" not in file else md(file, 200)) if file else ""]
    shown = ", ".join(p for p in parts if p)
    return f"{shown}: " if shown else ""


def skipped_markdown(reason: str, results_path: str, heading: str = "###") -> str:
    """The report of a run that evaluated nothing on purpose (``reason``: why, e.g. the
    models' missing credentials with ``on_missing_credentials: skip``), under the packaged
    templates' heading: the skipped headline, and no verdict, table or eval case (none was
    evaluated)."""
    lines = [
        f"{heading} ADK evaluation",
        "",
        f"⏭️ **ADK eval skipped**: {md(reason, 900)}.",
        "",
        "Nothing was evaluated, so there is no verdict; the check does not fail "
        f"(`on_missing_credentials: skip`). The run is recorded in {md(results_path, 200)}.",
    ]
    return strip_markers("\n".join(lines) + "\n")


def short_markdown(results: RunResults, results_path: str, heading: str = "###") -> str | None:
    """The report of results of a run that evaluated nothing: stopped before evaluation
    started (:meth:`RunResults.stopped_by`: :func:`incomplete_markdown`) or skipped on
    purpose (:meth:`RunResults.skipped_reason`: :func:`skipped_markdown`); None for
    results that have something to compare."""
    stopped = results.stopped_by()
    if stopped is not None:
        return incomplete_markdown(results, stopped, results_path, heading)
    reason = results.skipped_reason()
    return None if reason is None else skipped_markdown(reason, results_path, heading)
