"""Formatting filters of the comment and summary templates: escaping and numbers.

Every string from data (agent text, eval ids, rubric texts, judge rationales, reasons, user
files) reaches the markdown through one of three escapes, chosen by where it lands:

* :func:`md` for markdown text (table cells, list items): HTML entities, markdown
  punctuation and table pipes escaped, newlines as spaces, ``@`` mentions and issue
  references (``#9``, ``GH-9``) broken. A code span of the text (a name in backticks, as this
  tool's messages quote metric names, files and fields) stays a code span when nothing in
  it could act outside one (:data:`_CODE_SPAN`).
* :func:`code` for an inline code span in a table cell.
* :func:`html_text` inside raw HTML (a ``<summary>``), where markdown is not processed:
  HTML entities only, newlines as spaces, mentions broken.

Fenced blocks (the evidence diff) are made by :func:`fence`, whose fence is longer than any
run of backticks in its lines.

All four write control and bidi characters (NUL, ESC, U+202E...) as visible escapes
(:func:`adk_eval_action.text.visible`, the one such escape of the comment and the log).

Numbers: :func:`score` (up to 3 decimals, trailing zeros dropped), :func:`num` (a fixed
number of decimals for the metric's value range, so a row's numbers align), :func:`delta`
(signed, with 🟢/🔴 only beside a regressed/improved call, else a neutral
(worse)/(better): :func:`direction`).
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

from adk_eval_action.text import shorten, visible

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")
# Backtick pairs, matched left to right as CommonMark pairs single backticks. md() keeps
# one as a code span (inside which CommonMark processes no emphasis, link, HTML or
# backslash escape) unless it holds what must be escaped as text (_NOT_IN_SPAN): a pipe (a
# table cell would need "\|", which a list item shows), "<" or "&" (an HTML block around
# the text would read them as HTML), or nothing but blanks.
_CODE_SPAN = re.compile(r"`([^`]*)`")
_NOT_IN_SPAN = re.compile(r"[|<&]|^\s*$")
# What GitHub links in a comment's text after rendering (so a backslash escape does not
# stop it): @user and @org/team mentions (which notify), #9, owner/repo#9 and GH-9.
_MENTION = re.compile(r"(@|#|\bGH-)(?=[A-Za-z0-9])", re.IGNORECASE)
# Our sticky comment's key markers and head markers (github.sticky, github.freshness), and
# near misses of them (spacing, case): all removed from a comment's markdown.
_MARKER_RE = re.compile(r"<!--\s*adk-eval-action.*?-->", re.IGNORECASE | re.DOTALL)
ZERO_WIDTH_SPACE = "\u200b"
"""Put after an ``@``, ``#`` or ``GH-`` so ``@user`` / ``@org/team`` in data notifies
nobody and ``#9`` / ``owner/repo#9`` / ``GH-9`` links no issue (GitHub links them only when
the name or number follows directly)."""


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one ``…`` when anything was cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def one_line(value: Any) -> str:
    """``value`` as text with every run of whitespace (newlines too) as one space, and
    other control and bidi characters written as visible escapes (``\\x00``, ``\\u202e``)."""
    return " ".join(visible(str(value if value is not None else ""), keep="\t\n\r").split())


def _no_mentions(text: str) -> str:
    return _MENTION.sub(lambda m: m.group(1) + ZERO_WIDTH_SPACE, text)


def strip_markers(body: str) -> str:
    """``body`` without our comment markers or marker-like text (``<!-- adk-eval-action:KEY
    -->``, in any spacing or case, wherever it is: a code span too), so data can neither
    claim another key's sticky comment nor record a head it was not written for. The one
    neutralisation of the rendered comment (``report.render.render_comment``, the fallback)
    and of the body posted (``github.sticky.compose_comment_body``). Removed until none is
    left: taking one out may join the text around it into another
    (``<!-- adk-eval-<!-- adk-eval-action -->action:x -->``)."""
    while True:
        stripped = _MARKER_RE.sub("", body)
        if stripped == body:
            return body
        body = stripped


def md(value: Any, limit: int = 300) -> str:
    """Escapes text for markdown (a table cell, a list item): HTML entities, markdown
    punctuation and table pipes; newlines become spaces; ``@`` mentions are broken; cut to
    ``limit`` characters before escaping (``…``). Its code spans stay code spans (module
    docstring), so a metric name in backticks shows as code, not as backticks."""
    text = cut(one_line(value), limit)
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        kept = not _NOT_IN_SPAN.search(span.group(1))
        parts.append(_md_plain(text[position:span.start()]))
        parts.append(span.group() if kept else _md_plain(span.group()))
        position = span.end()
    parts.append(_md_plain(text[position:]))
    return _no_mentions("".join(parts))


def _md_plain(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def label(value: Any, limit: int = 40) -> str:
    """A name in a table cell (a suite, an eval set id): :func:`md`, cut to ``limit``
    characters where it says least (:func:`adk_eval_action.text.shorten`: a suite's agent
    and the end of its eval set folder stay, ``home_automation_agent:…/memorizing``)."""
    return md(shorten(one_line(value), limit), limit)


def html_text(value: Any, limit: int = 200) -> str:
    """Escapes text for raw HTML such as a ``<summary>`` (where GitHub does not process
    markdown, so backslash escapes would show): HTML entities, newlines as spaces (a blank
    line would end the HTML block), mentions broken; cut to ``limit`` characters."""
    return _no_mentions(html.escape(cut(one_line(value), limit), quote=True))


def code(value: Any, limit: int = 80) -> str:
    """Text as an inline code span in a table cell, cut to ``limit`` characters where it
    says least (:func:`adk_eval_action.text.shorten`: an eval id that is a path keeps its
    file name, a metric name its start and version).

    Backslash escapes are not processed in a code span, so only what would end the span (a
    backtick, shown as ``'``) or the table cell (a pipe, which GFM lets a backslash escape
    even inside a span) is changed; newlines become spaces. Mentions are not linked in a
    code span."""
    text = visible(str(value), keep="\t\n\r").replace("`", "'")
    text = shorten(text.replace("\n", " ").replace("\r", " "), limit)
    escaped = text.replace("|", "\\|").replace("<!--", "<!-" + ZERO_WIDTH_SPACE + "-")
    return f"`{escaped}`"


def fence(lines: list[str], info: str = "") -> str:
    """A fenced code block of ``lines`` (each already one line), fenced with more backticks
    than the longest run of backticks in them, so no line can close it early
    (CommonMark 0.31, "Fenced code blocks"). An HTML comment opener in a line gets a
    zero-width space (``<!-\u200b-``): shown the same, but never a sticky-comment marker in
    the comment's source, which is matched as text."""
    lines = [visible(line).replace("<!--", "<!-" + ZERO_WIDTH_SPACE + "-") for line in lines]
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    marks = "`" * max(3, longest + 1)
    return "\n".join([marks + info, *lines, marks])


def score(value: float | None, digits: int = 3) -> str:
    """A score with up to ``digits`` decimals, or an em dash for None."""
    if value is None:
        return "—"
    if not math.isfinite(value) or abs(value) >= 1e12:
        return f"{value:.4g}"  # not hundreds of digits of a huge score
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def decimals(min_value: float | None, max_value: float | None, *values: float | None) -> int:
    """Decimals that show a thousandth of the metric's value range (0 to 3): 3 for a score
    in [0, 1] or [-1, 1], 0 for [0, 1000]. Without a known range (token counts, seconds), a
    hundredth of the largest magnitude of ``values``: 0 for 111 tokens, 3 for 0.46 s."""
    if min_value is not None and max_value is not None and max_value > min_value:
        span = max_value - min_value
        if math.isfinite(span):
            return int(min(3, max(0, math.ceil(3 - math.log10(span)))))
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    magnitude = max(finite, default=1.0) or 1.0
    return int(min(3, max(0, math.ceil(2 - math.log10(magnitude)))))


def num(value: float | None, places: int = 3) -> str:
    """``value`` with exactly ``places`` decimals (so a column of one metric aligns), ``-``
    for negatives, an em dash for None; huge or non-finite values short."""
    if value is None:
        return "—"
    if not math.isfinite(value) or abs(value) >= 1e12:
        return f"{value:.4g}"
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def signed(value: float | None, places: int = 3) -> str:
    """``value`` with a sign (``+``, ``−``) and ``places`` decimals; ``±0`` when it rounds
    to zero; an em dash for None."""
    if value is None:
        return "—"
    magnitude = num(abs(value), places)
    if not math.isfinite(value) or abs(value) >= 1e12:
        return f"{'+' if value > 0 else '−'}{magnitude}"
    if float(magnitude) == 0:
        return "±0"
    return f"{'+' if value > 0 else '−'}{magnitude}"


CALL_MARKS = {"regressed": "🔴", "improved": "🟢"}
"""The only colours a delta gets: those of a regressed or improved call (the corrected
interval lies wholly beyond ±min_effect, :mod:`adk_eval_action.analysis.noise`), so red always
means the agent got worse, never a move within noise."""


def direction(
    value: float | None, higher_is_better: bool = True, digits: int = 3, call: str | None = None
) -> str:
    """How a delta reads: 🔴/🟢 when its call is regressed/improved (:data:`CALL_MARKS`),
    else a neutral ``(worse)``/``(better)`` in the metric's direction (an inconclusive call,
    or none); "" when the call is unchanged (the interval lies within ±min_effect: a word
    of direction beside "⚪ unchanged" reads as a contradiction; the sign still shows it),
    when there is no delta, or when it rounds to 0 at ``digits``."""
    if value is None or round(abs(value), digits) == 0 or call == "unchanged":
        return ""
    if call in CALL_MARKS:
        return CALL_MARKS[call]
    return "(better)" if (value > 0) == higher_is_better else "(worse)"


def delta(
    value: float | None, higher_is_better: bool = True, digits: int = 3, call: str | None = None
) -> str:
    """A signed delta and its :func:`direction` (``−0.207 🔴`` when called regressed,
    ``−0.267 (worse)`` when not); ``call`` is the row's classification."""
    if value is None:
        return "—"
    if round(abs(value), digits) == 0:  # would print as +0 / −0
        return "±0"
    sign = "+" if value > 0 else "−"
    mark = direction(value, higher_is_better, digits, call)
    return f"{sign}{score(abs(value), digits)} {mark}".rstrip()


def pct(value: float | None) -> str:
    """A fraction as a whole percentage, or an em dash."""
    return "—" if value is None else f"{value:.0%}"


def tokens(value: float | None) -> str:
    """A token count with thousands separators, rounded to a whole token (``12,920``), or
    an em dash."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{round(value):,}"


def usd(value: float | None) -> str:
    """Dollars: four decimals below $1 (``$0.0041``; runs cost cents), else two
    (``$12.34``); an em dash for None."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def change_pct(value: float | None, call: str | None = None) -> str:
    """A relative change of a cost (lower is better) as a signed whole percentage and its
    :func:`direction` (``+23% (worse)``, ``+41% 🔴`` when called regressed); an em dash for
    None."""
    if value is None or not math.isfinite(value):
        return "—"
    if round(abs(value), 2) == 0:
        return "±0%"
    sign = "+" if value > 0 else "−"
    return f"{sign}{abs(value):.0%} {direction(value, False, 2, call)}".rstrip()
