"""Text that must fit a limit or survive being written: one truncation rule for every size
limit (the PR comment, the job summary, the rendered comment), one for names and labels
(:func:`shorten`), lone surrogates made writable, and invisible control characters made
visible.

Limits are GitHub's: 65,536 characters for a comment body (REST answers 422 "Body is too
long (maximum is 65536 characters)", https://docs.github.com/en/rest/issues/comments) and 1 MiB for
a step summary (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands,
"Step isolation and limits"; the runner's ``CreateStepSummaryCommand.AttachmentSizeLimit``,
https://github.com/actions/runner/blob/main/src/Runner.Worker/FileCommandManager.cs).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["INVISIBLE", "fit", "has_invisible", "shorten", "visible", "without_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")

INVISIBLE = (
    "\x00-\x1f\x7f-\x9f"  # C0 (ESC, NUL, CR...), DEL and C1 controls (Unicode category Cc)
    "\u061c\u200e\u200f"  # the Arabic letter mark, LRM, RLM
    "\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides and isolates
    "\u2028\u2029"  # the line and paragraph separators
)
"""A regex character class body of the characters :func:`visible` escapes: controls a
terminal obeys (ESC starts an ANSI sequence, CR overwrites a line), that a JSON API body or
a log cannot hold (NUL), or that reorder what a reader sees (the bidi controls of Unicode
TR #9, "Trojan Source", CVE-2021-42574). Not the zero-width space, joiner or non-joiner:
they change no order, emoji sequences need the joiner, and this tool inserts the space
itself to break mentions and workflow commands."""
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep: str = "\n\t") -> str:
    """``text`` with each :data:`INVISIBLE` character but those in ``keep`` written as its
    Python escape (``\\x00``, ``\\x1b``, ``\\u202e``), so a reader sees it and it does
    nothing: the one escape of control and bidi characters of every line printed to the
    console or the runner's log (``github.logs``) and of every string in the comment
    (``report.format``). Printable text, tabs and newlines (by default) are unchanged."""
    return _INVISIBLE.sub(
        lambda m: m.group() if m.group() in keep else _escape(m.group()), text
    )


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds any :data:`INVISIBLE` character (a newline or a tab too)."""
    return _INVISIBLE.search(text) is not None


def _size(text: str, unit: Literal["chars", "bytes"]) -> int:
    return len(text) if unit == "chars" else len(text.encode("utf-8", "replace"))


def fit(text: str, limit: int, note: str = "", unit: Literal["chars", "bytes"] = "chars") -> str:
    """``text`` if it fits ``limit`` (characters, or UTF-8 bytes with ``unit="bytes"``);
    else its longest prefix that ends at a line boundary and leaves room for ``note``,
    followed by ``note``. The result never exceeds ``limit`` (an empty string when even
    ``note`` does not fit); a text without a newline in the kept part is cut mid-line.

    The one truncation rule of the comment (``github.sticky``), the job summary
    (``github.runner_files``) and the rendered comment (``report.render``).
    """
    if _size(text, unit) <= limit:
        return text
    room = limit - _size(note, unit)
    if room < 0:
        return ""
    if unit == "chars":
        cut = text[:room]
    else:
        cut = text.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rfind("\n") + 1]
    return cut + note


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (``"\\ud800"``, or bytes decoded with
    ``surrogateescape``) replaced by U+FFFD: valid in JSON strings and Python, but not
    encodable as UTF-8, so a file holding one could not be written."""
    return _SURROGATE.sub("\ufffd", text)


_SEGMENT = re.compile(r"[^/:\\]*[/:\\]|[^/:\\]+$")


def _middle(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters: two thirds start, one third end."""
    if limit < 2:
        return text[:limit]
    tail = limit // 3
    return text[: limit - tail - 1] + "…" + (text[-tail:] if tail else "")


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut where it says least: a name or path
    made of segments (split after ``/``, ``:`` or ``\\``) keeps its last segment whole
    (a file name, the deepest folder), its first segment when it fits (an agent's name),
    then as many whole segments as fit, from the end first; the dropped ones become ``…``
    and their last separator (``tests/…/test_files/simple.test.json``), after as much of
    the first of them as still fits. A text of one
    segment, or whose last segment alone does not fit, keeps its start and its end
    (``rubric_based_fin…quality_v1``). Labels and names use this, never a cut from the
    right that drops the part that tells two apart."""
    if len(text) <= limit:
        return text
    segments: list[str] = _SEGMENT.findall(text)
    last, body = segments[-1], segments[:-1]
    room = limit - len(last) - 2  # "…" and the separator shown after it
    if not body or room < 0:
        return _middle(text, limit)
    start, end = 0, len(body)
    if len(body[0]) <= room:
        room, start = room - len(body[0]), 1
    while end > start and len(body[end - 1]) <= room:
        room, end = room - len(body[end - 1]), end - 1
    while start < end and len(body[start]) <= room:
        room, start = room - len(body[start]), start + 1
    # What room is left keeps the start of the first segment dropped.
    kept = "".join(body[:start]) + body[start][: min(room, len(body[start]) - 1)]
    return kept + "…" + body[end - 1][-1] + "".join(body[end:]) + last
