"""The HTML report: one self-contained page per run, a pure function of what the comment
renders from (:class:`~adk_eval_action.report.render.CommentContext`) and each side's eval
case records (:func:`adk_eval_action.report.html_view.side_cases`).

The page holds its data, style sheet and script inline and fetches nothing (no network,
CDN or font): it opens from ``file://`` and as a downloaded artifact. Its
Content-Security-Policy (a ``<meta>`` tag) allows no source but the page's own style sheet
and scripts, by their SHA-256 hashes (CSP Level 3, "hash-source"), and ``data:`` images:
no other script, style, frame, form or connection. Every text from data (agent output,
eval ids, reasons, rationales) reaches the page through Jinja2's autoescape, or through
the script's ``textContent``; nothing is parsed as HTML from data.

**Secrets.** Known secret values are replaced in the data, never in the page's own code:
every value a ``{{ }}`` of the templates writes is redacted before it is escaped (the
environment's ``finalize``; items joined by ``join`` each), and so is the packed evidence
before it is compressed, while the style sheet, the scripts, the Content-Security-Policy
and the packed blocks reach the page as they are (:class:`Ours`). A secret that is also a
word of the script (``document``) therefore leaves the script, and so its CSP hash, whole.

With JavaScript off the page reads whole: the headline, the metric, rubric and chart
tables, a row for every eval case, and the evidence of the first :data:`HtmlLimits.static_cases`
cases in the report's order (failing ones first: :mod:`.html_cases`). The script only adds
filters, search by eval id, paging, deep links, and the evidence of the other cases, which
it unpacks from gzip-compressed JSON blocks (:data:`HtmlLimits.chunk_cases` cases each;
the browser's ``DecompressionStream``) when a case is opened.

**Size bound.** Rows cost a few hundred bytes per eval case; evidence stops at
``static_bytes`` of HTML evidence (measured as its JSON) and once ``packed_bytes`` of
packed evidence are used (one block more at most); cases past them keep their row, with
a note that their evidence is in the results file. With the defaults a report is at most
~0.6 KB per eval case (its row) + ~16 MB of HTML evidence + 32 MB of packed evidence (and
one block more): 10,000 cases x 3 runs of ``benchmarks/bench_html_report.py`` make ~45 MB.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import gzip
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, pass_eval_context, select_autoescape
from jinja2.filters import do_join
from jinja2.nodes import EvalContext
from markupsafe import Markup
from pydantic import BaseModel, Field, TypeAdapter

from adk_eval_action.analysis.compare import Comparison, MetricComparison
from adk_eval_action.analysis.trend_models import MetricTrend, TrendPoint
from adk_eval_action.report.agentchange_text import instruction_counts
from adk_eval_action.report.format import score
from adk_eval_action.report.gatechange_text import gate_changes_line
from adk_eval_action.report.headline import no_baseline_reason
from adk_eval_action.report.headline_text import verdict
from adk_eval_action.report.html_cases import (
    CHANGE_LABELS,
    FILTERS,
    CaseBody,
    CaseRow,
    case_body,
    case_errors,
    case_flags,
    case_slugs,
    delta_rows,
    error_view,
    ordered_cases,
    row_changes,
)
from adk_eval_action.report.html_chart import Svg, delta_axis, delta_svg, means_svg, trend_svg
from adk_eval_action.report.html_view import SideCase, ident, side_case
from adk_eval_action.report.judging import (
    flips_by_case,
    judge_changes_line,
    judge_flips_line,
    judged_rubrics,
)
from adk_eval_action.report.render import CommentContext
from adk_eval_action.results.model import EvalCaseRecord
from adk_eval_action.results.scoretable import CaseKey

__all__ = ["HtmlLimits", "MetricTrend", "TrendPoint", "render_html"]


class HtmlLimits(BaseModel):
    """What bounds the report (module docstring): ``static_cases`` cases with evidence in
    the HTML, within ``static_bytes``; the others' evidence packed ``chunk_cases`` to a
    block, within ``packed_bytes`` (base64 of gzip); ``page_size`` rows per page."""

    static_cases: int = Field(default=200, ge=0)
    static_bytes: int = Field(default=8_000_000, ge=0)
    packed_bytes: int = Field(default=32_000_000, ge=0)
    chunk_cases: int = Field(default=64, ge=1)
    page_size: int = Field(default=100, ge=1)


@dataclass(slots=True)
class MetricLine:
    """A metric or rubric row with its drawings."""

    row: Any
    means: Svg | None
    delta: Svg | None


@dataclass(slots=True)
class TrendLine:
    """A metric's trend row: the drawing and the first and last values."""

    trend: MetricTrend
    svg: Svg | None
    first: str
    last: str


def _metric_lines(rows: list[MetricComparison]) -> tuple[list[MetricLine], float]:
    axis = delta_axis(rows)
    return [MetricLine(r, means_svg(r), delta_svg(r, axis)) for r in rows], axis


def _trend_lines(trend: list[MetricTrend] | None) -> list[TrendLine] | None:
    if trend is None:
        return None
    lines = []
    for t in trend:
        values = [p.value for p in t.points]
        known = [v for v in values if v is not None]
        lines.append(TrendLine(t, trend_svg(values), score(known[0] if known else None),
                               score(known[-1] if known else None)))
    return lines


@functools.cache
def _body_json() -> TypeAdapter[CaseBody]:
    return TypeAdapter(CaseBody)


def body_json(body: CaseBody) -> bytes:
    """``body`` as compact UTF-8 JSON without its None fields (what the script reads);
    pydantic's serializer writes the dataclasses ~4 times as fast as ``json``."""
    return _body_json().dump_json(body, exclude_none=True)


Redact = Callable[[str], str]
"""Known secret values replaced in a text (:class:`adk_eval_action.redaction.Redactor`)."""


def _pack(bodies: dict[int, bytes], redact: Redact | None) -> str:
    """``{index: body JSON}`` as base64 of gzip of one JSON object, its values
    :func:`redacted_json` first (a secret packed would be out of any later redaction's
    sight)."""
    text = b"{" + b",".join(b'"%d":%s' % (i, b) for i, b in bodies.items()) + b"}"
    if redact is not None:
        text = redacted_json(text, redact)
    return base64.b64encode(gzip.compress(text, 6, mtime=0)).decode("ascii")


def redacted_json(text: bytes, redact: Redact) -> bytes:
    """The JSON ``text`` with ``redact`` applied to its string values, never to its keys
    (the names the page's script reads); as it is when no secret occurs in it at all."""
    decoded = text.decode("utf-8")
    if redact(decoded) == decoded:
        return text

    def values(node: Any) -> Any:
        if isinstance(node, str):
            return redact(node)
        if isinstance(node, list):
            return [values(v) for v in node]
        if isinstance(node, dict):
            return {k: values(v) for k, v in node.items()}
        return node

    return json.dumps(values(json.loads(decoded)), ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


Records = Mapping[CaseKey, EvalCaseRecord]
"""One side's eval case records by key (:func:`~.html_view.case_records`)."""


def _views(key: CaseKey, head: Records, baseline: Records
           ) -> tuple[SideCase | None, SideCase | None]:
    head_case, base_case = (side_case(side[key]) if key in side else None
                            for side in (head, baseline))
    return head_case, base_case


def case_rows(context: CommentContext, head: Records, baseline: Records, limits: HtmlLimits,
              redact: Redact | None = None) -> tuple[list[CaseRow], list[str], int]:
    """Every case's row in the report's order, with its evidence placed (module
    docstring): ``(rows, packed blocks, cases whose evidence was left out)``."""
    comparison, gate = context.comparison, context.gate
    cases = ordered_cases(comparison, gate)
    slugs = case_slugs([c.key for c in cases])
    failing = {c.key for c in gate.failing_cases}
    rules = {(m.suite, m.metric_name): m for m in comparison.metrics}
    errors = case_errors(comparison.errors)
    rows: list[CaseRow] = []
    blocks: list[str] = []
    pending: dict[int, bytes] = {}
    static_left, packed_used, left_out = limits.static_bytes, 0, 0
    for index, (case, slug) in enumerate(zip(cases, slugs, strict=True)):
        deltas = delta_rows(case, rules)
        row = CaseRow(
            index=index, key=case.key, slug=slug, suite=ident(case.suite),
            eval_set_id=ident(case.eval_set_id), eval_id=ident(case.eval_id, 300),
            change=case.change, change_label=CHANGE_LABELS.get(case.change, case.change),
            head_status=_status(case.head_status), base_status=_status(case.baseline_status),
            runs_text=f"{case.head_passes}/{case.head_runs} runs passed"
            if case.head_runs > 1 else None,
            flags=case_flags(case, failing, rules), changes=row_changes(deltas))
        rows.append(row)
        if index >= limits.static_cases and packed_used >= limits.packed_bytes:
            left_out += 1
            continue
        body = case_body(case, *_views(case.key, head, baseline), deltas,
                         errors.get(case.key, []))
        text = body_json(body)
        if index < limits.static_cases and len(text) <= static_left:
            row.body, static_left = body, static_left - len(text)
        elif packed_used < limits.packed_bytes:
            pending[index] = text
            row.chunk = len(blocks)
            if len(pending) >= limits.chunk_cases:
                blocks.append(_pack(pending, redact))
                packed_used += len(blocks[-1])
                pending = {}
        else:
            left_out += 1
    if pending:
        blocks.append(_pack(pending, redact))
    return rows, blocks, left_out


def _status(value: object | None) -> str | None:
    return None if value is None else str(value)


def csp_hash(source: str) -> str:
    """The CSP hash-source of an inline ``<script>`` or ``<style>`` whose text is ``source``
    (SHA-256 of its UTF-8 bytes, base64)."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@functools.cache
def _asset(name: str) -> str:
    return (resources.files("adk_eval_action.report") / "templates" / name).read_text("utf-8")


class Ours(str):
    """Text of the page's own (its style sheet, scripts, Content-Security-Policy, the
    packed evidence already redacted): written as it is, never redacted."""

    __slots__ = ()


#: The redaction of the page being rendered (:func:`render_html`), for ``finalize``.
_REDACT: contextvars.ContextVar[Redact | None] = contextvars.ContextVar(
    "adk_eval_html_redact", default=None)


def _redacted(value: Any) -> Any:
    """``value`` as a ``{{ }}`` writes it, with the page's known secret values replaced
    when it is text from data (a ``str`` that is not :class:`Ours`; a macro's output,
    ``Markup``, was redacted value by value inside it)."""
    redact = _REDACT.get()
    if redact is None or isinstance(value, (Ours, Markup)) or not isinstance(value, str):
        return value
    return redact(value)


@pass_eval_context
def _join(eval_ctx: EvalContext, value: Any, d: str = "", attribute: Any = None) -> str:
    """Jinja2's ``join`` with each item redacted first (its ``Markup`` result is not
    redacted again by ``finalize``)."""
    items = [_redacted(v) for v in value] if attribute is None else value
    joined: str = do_join(eval_ctx, items, d, attribute)  # Markup when autoescaping
    return joined


@functools.cache
def html_environment() -> Environment:
    """The report's environment: packaged templates, autoescape on (every ``{{ }}`` of
    text is HTML-escaped, after its secrets are redacted: module docstring), undefined
    names an error; made once per process."""
    env = Environment(
        loader=PackageLoader("adk_eval_action.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_redacted,
    )
    env.filters.update(score=score, no_baseline_reason=no_baseline_reason,
                       instruction_counts=instruction_counts, join=_join)
    return env


HEAD_SCRIPT = "document.documentElement.classList.add('js');"
"""Runs before the body is parsed, so the style sheet pages the case list from the start
(rows past the first page stay hidden until the script takes over)."""


def render_html(
    context: CommentContext,
    head: Records,
    baseline: Records | None = None,
    trend: list[MetricTrend] | None = None,
    limits: HtmlLimits | None = None,
    redact: Redact | None = None,
) -> str:
    """The report of ``context`` as one HTML document (module docstring). ``head`` and
    ``baseline`` are each side's case records (:func:`~.html_view.case_records`); ``trend``
    the metrics' history (its section is left out when None); ``redact`` replaces known
    secret values in the data written into the page and in the packed evidence, never in
    the page's own code (module docstring). Pure: no I/O but reading the packaged
    template, style sheet and script."""
    limits = limits or HtmlLimits()
    comparison: Comparison = context.comparison
    rows, blocks, left_out = case_rows(context, head, baseline or {}, limits, redact)
    gated = [m for m in comparison.metrics if not m.informational]
    informational = [m for m in comparison.metrics if m.informational]
    metric_lines, metric_axis = _metric_lines(gated)
    info_lines, info_axis = _metric_lines(informational)
    rubric_axis = delta_axis(comparison.rubrics)
    rubric_lines = [MetricLine(r, None, delta_svg(r, rubric_axis)) for r in comparison.rubrics]
    style, script = _asset("report.css"), _asset("report.js")
    config = json.dumps({"pageSize": limits.page_size, "filters": list(FILTERS)})
    csp = (f"default-src 'none'; script-src {csp_hash(HEAD_SCRIPT)} {csp_hash(script)}; "
           f"style-src {csp_hash(style)}; img-src data:; base-uri 'none'; form-action 'none'")
    counts = {name: sum(1 for r in rows if name in r.flags) for name in FILTERS}
    token = _REDACT.set(redact)
    try:
        return html_environment().get_template("report.html.j2").render(
            ctx=context, comparison=comparison, gate=context.gate, verdict=verdict(context),
            metric_lines=metric_lines, metric_axis=metric_axis, info_lines=info_lines,
            info_axis=info_axis, rubric_lines=rubric_lines, rubric_axis=rubric_axis,
            trend_lines=_trend_lines(trend), rows=rows, blocks=[Ours(b) for b in blocks],
            left_out=left_out, counts=counts, filters=FILTERS,
            static_cases=sum(1 for r in rows if r.body),
            errors=[error_view(e) for e in comparison.errors], csp=Ours(csp), style=Ours(style),
            script=Ours(script), head_script=Ours(HEAD_SCRIPT), config=Ours(config),
            limits=limits,
            run_url=_safe_url(context.run_url),
            loosened=gate_changes_line(comparison, loosened=True, markdown=False),
            tightened=gate_changes_line(comparison, loosened=False, markdown=False),
            judging=judge_changes_line(comparison, markdown=False),
            judged_rubrics=judged_rubrics(comparison),
            flips_line=judge_flips_line(comparison, markdown=False, always=True),
            flipped=flips_by_case(comparison),
        )
    finally:
        _REDACT.reset(token)


def _safe_url(url: str | None) -> str | None:
    """The run's link when it is an https (or http) URL, else None: a ``javascript:`` or
    other scheme never becomes a link."""
    if url and url.lower().startswith(("https://", "http://")):
        return url
    return None
