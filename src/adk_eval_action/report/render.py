"""Rendering the PR comment and job summary with Jinja2.

The comment is a pure function of (:class:`CommentContext`, template): no I/O besides
reading the template. The packaged templates live in ``adk_eval_action/report/templates``; a user's
template (``--template``) is rendered in jinja2's ``SandboxedEnvironment`` with the same
context and filters. Any text that comes from an agent, a judge or a user file goes through
the ``md`` filter, which escapes HTML and table syntax so it cannot break the comment.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, Field

from adk_eval_action.analysis.compare import Comparison
from adk_eval_action.analysis.gate import GateResult
from adk_eval_action.report.agentchange_text import agent_changes_markdown, agent_changes_title
from adk_eval_action.report.cells import (
    any_interval,
    direction_mark,
    flaky_counts,
    metric_changes,
    metric_status,
    places,
    table_layout,
)
from adk_eval_action.report.diffblock import evidence_diff, evidence_summary
from adk_eval_action.report.evidence import CaseEvidence, collect_evidence
from adk_eval_action.report.format import (
    change_pct,
    code,
    decimals,
    delta,
    html_text,
    label,
    md,
    num,
    pct,
    score,
    signed,
    strip_markers,
    tokens,
    usd,
)
from adk_eval_action.report.gatechange_text import gate_changes_line
from adk_eval_action.report.headline import (
    drops_text,
    incomplete_headline,
    no_baseline_reason,
)
from adk_eval_action.report.judging import (
    case_flips_text,
    flips_by_case,
    judge_changes_line,
    judge_flips_line,
    judged_rubrics,
)
from adk_eval_action.report.regressions import collect_drop_evidence
from adk_eval_action.report.trend_text import FILTERS as HISTORY_FILTERS
from adk_eval_action.results.model import INCOMPLETE_ERROR_KINDS, ModelCallCounts, RunResults
from adk_eval_action.results.scoretable import ScoreTable
from adk_eval_action.text import fit

COMMENT_EVIDENCE = 10
"""Failing eval cases whose evidence the comment shows, and as many eval cases that got worse
than the baseline (fewer when it must fit the limit)."""
SUMMARY_EVIDENCE = 50
"""Failing eval cases whose evidence the job summary shows (and :func:`collect_evidence`
gathers), and as many eval cases that got worse than the baseline."""


class CommentContext(BaseModel):
    """Everything a comment or summary template sees (and ``incomplete``: the headline of
    an incomplete run, :func:`adk_eval_action.report.headline.incomplete_headline`; None
    for a complete one).

    Attributes:
        comparison: per-metric, per-rubric and per-case comparison (see compare.Comparison).
        gate: the decision and its reasons.
        run_url: link to the workflow run, when on GitHub.
        results_path: where the full results file was written.
        show_cases / show_rubrics: False when dropped to fit the size limit.
        show_agent_diffs: False when the instruction diffs of the agent changes
            (:mod:`adk_eval_action.report.agentchange_text`) are dropped to fit it.
        omitted: what was left out, for a note in the comment.
        chart: mermaid xychart source of baseline vs head per metric ("" when none).
        failed_on_scores: the gate failed on scores that were computed (analysis.gate), not
            only on case runs that errored or never ran.
        model_calls: the head run's model calls (retries, failures), when it made any.
        incomplete_kinds: the error kinds that make a run incomplete (results.model).
        evidence: why the gate's failing cases failed, worst first
            (:mod:`adk_eval_action.report.evidence`; at most ``SUMMARY_EVIDENCE``).
        evidence_shown: how many of ``evidence``, and of ``dropped_evidence``, the comment
            shows (the summary shows all).
        dropped_evidence: what got worse than the baseline in the eval cases that drove a
            drop and are not failing, largest drop first
            (:mod:`adk_eval_action.report.regressions`; at most ``SUMMARY_EVIDENCE``).
        dropped_total: how many such eval cases there are (the gate's ``dropped_cases``
            that are not failing), with evidence or not.
        summary_written: whether a job summary is written (the comment points at the chart
            there only then).
        html_report: the HTML report's file name when one is written (``--html-out``; the
            action's ``adk-eval-report.html``), which the comment and summary point at (in
            the run's artifacts, on GitHub).
        trend_chart: mermaid xychart sources of each gated metric over the default
            branch's recorded runs, then the head ("" without a history:
            :mod:`adk_eval_action.report.trend_text`).
    """

    comparison: Comparison
    gate: GateResult
    run_url: str | None = None
    results_path: str | None = None
    show_cases: bool = True
    show_rubrics: bool = True
    show_agent_diffs: bool = True
    omitted: list[str] = Field(default_factory=list)
    chart: str = ""
    failed_on_scores: bool = False
    model_calls: ModelCallCounts | None = None
    incomplete_kinds: list[str] = Field(default_factory=lambda: sorted(INCOMPLETE_ERROR_KINDS))
    evidence: list[CaseEvidence] = Field(default_factory=list)
    evidence_shown: int = COMMENT_EVIDENCE
    dropped_evidence: list[CaseEvidence] = Field(default_factory=list)
    dropped_total: int = 0
    summary_written: bool = True
    html_report: str | None = None
    trend_chart: str = ""


def with_evidence(
    context: CommentContext,
    head: RunResults | ScoreTable,
    baseline: RunResults | ScoreTable | None,
    limit: int = SUMMARY_EVIDENCE,
) -> CommentContext:
    """``context`` with the evidence of its gate's failing cases
    (:func:`adk_eval_action.report.evidence.collect_evidence`) and of the eval cases that
    got worse than the baseline and are not failing
    (:func:`adk_eval_action.report.regressions.collect_drop_evidence`), at most ``limit``
    of each, from the records of ``head`` and ``baseline``."""
    gate = context.gate
    failing = {c.key for c in gate.failing_cases}
    return context.model_copy(update={
        "evidence": collect_evidence(head, gate.failing_cases, limit),
        "dropped_evidence": collect_drop_evidence(head, baseline, gate.dropped_cases, failing,
                                                  limit),
        "dropped_total": sum(c.key not in failing for c, _ in gate.dropped_cases),
    })


@functools.cache
def template_environment() -> SandboxedEnvironment:
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
        html_text=html_text,
        score=score,
        num=num,
        signed=signed,
        decimals=decimals,
        delta=delta,
        pct=pct,
        tokens=tokens,
        usd=usd,
        change_pct=change_pct,
        code=code,
        label=label,
        flaky_counts=flaky_counts,
        metric_changes=metric_changes,
        metric_status=metric_status,
        table_layout=table_layout,
        any_interval=any_interval,
        places=places,
        direction_mark=direction_mark,
        evidence_summary=evidence_summary,
        evidence_diff=evidence_diff,
        drops_text=drops_text,
        gate_changes_line=gate_changes_line,
        no_baseline_reason=no_baseline_reason,
        agent_changes_title=agent_changes_title,
        agent_changes_markdown=agent_changes_markdown,
        judge_changes_line=judge_changes_line,
        judged_rubrics=judged_rubrics,
        judge_flips_line=judge_flips_line,
        flips_by_case=flips_by_case,
        case_flips_text=case_flips_text,
        **HISTORY_FILTERS,
    )
    return env


def render_template(context: CommentContext, template: Path | str) -> str:
    """Renders ``template`` (a packaged name such as ``comment.md.j2``, or a user's file).

    Raises:
        ConfigError: the user's template is unreadable, invalid, or does something the
            sandbox forbids (names the template file).
    """
    if not isinstance(template, Path):
        return tidy(
            template_environment().get_template(template).render(**_template_vars(context))
        )
    # A user's template is repository content: rendered in a child process bounded in
    # time, memory and output (report.sandbox); any failure of it is a usage error.
    from adk_eval_action.report.sandbox import render_user_template

    return render_user_template(template, _template_vars(context))


_FENCE = re.compile(r"^(`{3,})")


def tidy(markdown: str) -> str:
    """``markdown`` with each run of blank lines outside fenced code blocks as one blank
    line, and ending in exactly one newline: what the packaged templates' optional sections
    leave out shows as no gap in the file (GitHub renders the two the same; a file read in
    a terminal or a console that prints it next does not). A fenced block's lines (the
    evidence diff) are kept as they are."""
    out: list[str] = []
    fence = ""
    for line in markdown.strip("\n").split("\n"):
        opened = _FENCE.match(line)
        if fence:
            if opened and len(opened.group(1)) >= len(fence) and not line.strip("`").strip():
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif not line.strip() and out and not out[-1].strip():
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _template_vars(context: CommentContext) -> dict[str, Any]:
    variables = dict(context)
    variables["ctx"] = context
    variables["incomplete"] = incomplete_headline(context.comparison, context.gate)
    return variables


def _trims(context: CommentContext, where: str) -> list[CommentContext]:
    """Smaller and smaller versions of ``context``, least useful part first: evidence of
    fewer cases (halving), then no per-case details, no per-rubric rows, no evidence."""
    out, current = [], context
    most = max(len(context.evidence), len(context.dropped_evidence))
    shown = min(context.evidence_shown, most)
    while shown > 1:
        shown //= 2
        current = current.model_copy(update={"evidence_shown": shown})
        out.append(current)
    for update, what in (
        ({"show_cases": False}, "per-case details"),
        ({"show_rubrics": False}, "per-rubric rows"),
        ({"show_agent_diffs": False}, "the agent's instruction diffs"),
        ({"evidence_shown": 0}, "the evidence of eval cases"),
    ):
        if (what == "the evidence of eval cases" and not most) or (
                what == "the agent's instruction diffs"
                and not any(a.instructions for a in context.comparison.agent_changes)):
            continue
        current = current.model_copy(
            update={**update, "omitted": [*current.omitted, f"{what} (see {where})"]}
        )
        out.append(current)
    return out


def render_comment(
    context: CommentContext, template: Path | None = None, max_chars: int | None = None
) -> str:
    """Renders the PR comment within ``max_chars`` (None: no bound; the pipeline passes
    GitHub's limit, ``github.sticky.COMMENT_MAX_CHARS``, less what the action adds): shows
    the evidence of fewer failing cases first, then drops per-case details, per-rubric rows
    and the evidence, saying what was left out; cuts at a line as a last resort
    (``text.fit``). A user's template is rendered once (``report.sandbox``), then cut.
    Marker-like text is removed (:func:`strip_markers`, as from the body the action posts),
    so the comment file and ``--print-comment`` show what the pull request does."""
    return strip_markers(_render_comment(context, template, max_chars))


def _render_comment(context: CommentContext, template: Path | None, max_chars: int | None) -> str:
    source: Path | str = template or "comment.md.j2"
    body = render_template(context, source)
    if max_chars is None or len(body) <= max_chars:
        return body
    where = "the job summary and the results file"
    if context.results_path:
        where = f"the job summary and `{context.results_path}`"
    note = f"\n\n… comment cut to fit GitHub's limit; see {where}.\n"
    if template is not None:
        return fit(body, max_chars, note)
    for trimmed in _trims(context, where):
        body = render_template(trimmed, source)
        if len(body) <= max_chars:
            return body
    return fit(body, max_chars, note)


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
    return fit(body, max_bytes, "\n\n… summary cut to fit GitHub's 1 MiB limit.\n", unit="bytes")
