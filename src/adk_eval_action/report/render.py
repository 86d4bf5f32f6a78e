"""Rendering the PR comment and job summary with Jinja2.

The comment is a pure function of (:class:`CommentContext`, template): no I/O besides
reading the template. The packaged templates live in ``adk_eval_action/report/templates``; a user's
template (``--template``) is rendered in jinja2's ``SandboxedEnvironment`` with the same
context and filters. Any text that comes from an agent, a judge or a user file goes through
the ``md`` filter, which escapes HTML and table syntax so it cannot break the comment.
"""

from __future__ import annotations

import functools
import html
import math
import re
from pathlib import Path
from typing import Any

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import CaseComparison, Comparison, MetricSide
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.errors import ConfigError
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, MetricStatus, ModelCallCounts


class CommentContext(BaseModel):
    """Everything a comment or summary template sees.

    Attributes:
        comparison: per-metric, per-rubric and per-case comparison (see compare.Comparison).
        gate: the decision and its reasons.
        run_url: link to the workflow run, when on GitHub.
        results_path: where the full results file was written.
        show_cases / show_rubrics: False when dropped to fit the size limit.
        omitted: what was left out, for a note in the comment.
        chart: mermaid xychart source of baseline vs head per metric ("" when none).
        failed_on_scores: the gate failed on scores that were computed (analysis.gate), not
            only on case runs that errored or never ran.
        model_calls: the head run's model calls (retries, failures), when it made any.
        incomplete_kinds: the error kinds that make a run incomplete (results.model).
    """

    comparison: Comparison
    gate: GateResult
    run_url: str | None = None
    results_path: str | None = None
    show_cases: bool = True
    show_rubrics: bool = True
    omitted: list[str] = Field(default_factory=list)
    chart: str = ""
    failed_on_scores: bool = False
    model_calls: ModelCallCounts | None = None
    incomplete_kinds: list[str] = Field(default_factory=lambda: sorted(INCOMPLETE_ERROR_KINDS))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")


def md(value: Any, limit: int = 300) -> str:
    """Escapes text for a Markdown table cell: HTML entities, table pipes, Markdown
    punctuation; newlines become spaces; cut to ``limit`` characters."""
    text = " ".join(str(value if value is not None else "").split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def score(value: float | None, digits: int = 3) -> str:
    """A score with up to ``digits`` decimals, or an em dash for None."""
    if value is None:
        return "—"
    if not math.isfinite(value) or abs(value) >= 1e12:
        return f"{value:.4g}"  # not hundreds of digits of a huge score
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def delta(value: float | None, higher_is_better: bool = True, digits: int = 3) -> str:
    """A signed delta with an arrow that says whether it is better (🟢) or worse (🔴)."""
    if value is None:
        return "—"
    if round(abs(value), digits) == 0:  # would print as +0 / −0
        return "±0"
    better = (value > 0) == higher_is_better
    return f"{'+' if value > 0 else '−'}{score(abs(value), digits)} {'🟢' if better else '🔴'}"


def pct(value: float | None) -> str:
    """A fraction as a whole percentage, or an em dash."""
    return "—" if value is None else f"{value:.0%}"


def code(value: Any, limit: int = 80) -> str:
    """Text as an inline code span in a table cell, cut to ``limit`` characters (``…``).

    Backslash escapes are not processed in a code span, so only what would end the span (a
    backtick, shown as ``'``) or the table cell (a pipe, which GFM lets a backslash escape
    even inside a span) is changed; newlines become spaces."""
    text = str(value).replace("`", "'").replace("\n", " ").replace("|", "\\|")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`"


def flaky_counts(flaky: dict[str, tuple[int, int]]) -> str:
    """``overall 2/3, `metric` 1/3`` (passing runs/runs per disagreeing status), or ``—``."""
    parts = [
        f"{name if name == 'overall' else code(name)} {passes}/{runs}"
        for name, (passes, runs) in flaky.items()
    ]
    return ", ".join(parts) or "—"


def metric_status(side: MetricSide, num_runs: int = 1) -> str:
    """A metric's status cell: ``✅``, or every kind of trouble with its count, e.g.
    ``❌ 2 failed runs, ⚠️ 1 errored run`` (``runs`` when cases have repeats)."""
    unit = (lambda n: f" {'run' if n == 1 else 'runs'}") if num_runs > 1 else (lambda n: "")
    parts = [
        f"{mark} {count} {what}{unit(count)}"
        for mark, count, what in (
            ("❌", side.failed, "failed"),
            ("⚠️", side.errors, "errored"),
            ("⚠️", side.not_evaluated, "not evaluated"),
        )
        if count
    ]
    return ", ".join(parts) or "✅"


def metric_changes(case: CaseComparison) -> str:
    """A case's metrics worth a look (not passed, or passed with a changed score; never
    informational) as ``name baseline → head (reason)``, joined by ``<br>``."""
    shown = []
    for d in case.metrics:
        status = d.head_status
        if status is None or status == MetricStatus.INFORMATIONAL:
            continue
        if status == MetricStatus.PASSED and (d.delta is None or d.delta == 0):
            continue
        reason = f" ({md(d.reason, 120)})" if d.reason else ""
        shown.append(f"{code(d.metric_name)} {score(d.baseline)} → {score(d.head)}{reason}")
    return "<br>".join(shown)


@functools.cache
def _environment() -> SandboxedEnvironment:
    """The one sandboxed environment (packaged templates importable from a user's), made
    once per process so its template cache keeps compiled templates: compiling the
    packaged ones took longer than rendering them."""
    env = SandboxedEnvironment(
        loader=PackageLoader("adk_eval_action.report", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(
        md=md,
        score=score,
        delta=delta,
        pct=pct,
        code=code,
        flaky_counts=flaky_counts,
        metric_changes=metric_changes,
        metric_status=metric_status,
    )
    return env


def render_template(context: CommentContext, template: Path | str) -> str:
    """Renders ``template`` (a packaged name such as ``comment.md.j2``, or a user's file).

    Raises:
        ConfigError: the user's template is unreadable, invalid, or does something the
            sandbox forbids (names the template file).
    """
    if not isinstance(template, Path):
        return _environment().get_template(template).render(**_template_vars(context))
    try:
        compiled = _environment().from_string(template.read_text(encoding="utf-8"))
        return compiled.render(**_template_vars(context))
    except Exception as e:  # noqa: BLE001 - any failure of a user's template is theirs to fix
        # A user's template can fail in any way its expressions can (1 / 0, a filter given
        # the wrong type, a file that is not UTF-8): all of them are usage errors.
        raise ConfigError(template, f"template error: {type(e).__name__}: {e}") from e


def _template_vars(context: CommentContext) -> dict[str, Any]:
    variables = dict(context)
    variables["ctx"] = context
    return variables


def render_comment(
    context: CommentContext, template: Path | None = None, max_chars: int | None = None
) -> str:
    """Renders the PR comment within ``max_chars`` (None: no bound; the pipeline passes
    GitHub's limit, ``github.client.COMMENT_MAX_CHARS``, less what the action adds): drops
    per-case details first, then per-rubric rows, saying what was left out; cuts hard as
    a last resort."""
    source: Path | str = template or "comment.md.j2"
    body = render_template(context, source)
    if max_chars is None or len(body) <= max_chars:
        return body
    where = "the job summary and the results file"
    if context.results_path:
        where = f"the job summary and `{context.results_path}`"
    # Least useful first: per-case details, then per-rubric rows.
    trimmed = context
    for flag, what in (("show_cases", "per-case details"), ("show_rubrics", "per-rubric rows")):
        trimmed = trimmed.model_copy(
            update={flag: False, "omitted": [*trimmed.omitted, f"{what} (see {where})"]}
        )
        body = render_template(trimmed, source)
        if len(body) <= max_chars:
            return body
    note = f"\n\n… comment cut to fit GitHub's limit; see {where}.\n"
    return body[: max_chars - len(note)] + note


def render_summary(context: CommentContext, max_bytes: int = 1024 * 1024 - 1024) -> str:
    """Renders the job summary (all details, the chart) within GitHub's 1 MiB step limit."""
    body = render_template(context, "summary.md.j2")
    if len(body.encode("utf-8")) <= max_bytes:
        return body
    trimmed = context.model_copy(
        update={
            "show_cases": False,
            "omitted": [*context.omitted, "per-case details (results file)"],
        }
    )
    body = render_template(trimmed, "summary.md.j2")
    return body.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")
