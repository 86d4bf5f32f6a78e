"""Control and bidi characters from data are shown as escapes, never obeyed
(``text.visible``): in the console, the runner's log and annotations (``github.logs``) and
every escape of the comment (``report.format``); and code spans of messages stay code
spans in the comment while hostile text in backticks stays inert."""

from __future__ import annotations

import io
import json
import logging
import unicodedata
from pathlib import Path

import pytest

from adk_eval_action.adk.files.evalsets import load_eval_set
from adk_eval_action.github.logs import GitHubFormatter, PlainFormatter, annotation, log_to
from adk_eval_action.report.format import code, fence, html_text, md
from adk_eval_action.text import has_invisible, visible

log = logging.getLogger("adk_eval_action.tests")

#: Unicode's explicit bidi formatting characters (UAX #9, table 4) and marks.
EXPLICIT_BIDI = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
BIDI_MARKS = {"\u200e", "\u200f", "\u061c"}  # LRM, RLM, ALM
HOSTILE = "cur\u202eRTL\u2066iso\x00nul\x1b[31mred\x07bell\x85c1\u2028ls\x7fdel"


def _acts(char: str) -> bool:
    """Whether a reader or terminal would not see ``char`` as itself, by Unicode's data."""
    return (unicodedata.category(char) in ("Cc", "Zl", "Zp")
            or unicodedata.bidirectional(char) in EXPLICIT_BIDI or char in BIDI_MARKS)


def test_visible_escapes_exactly_the_characters_unicode_calls_controls_or_bidi() -> None:
    for point in range(0x3000):
        char = chr(point)
        if char == "\\":
            continue
        shown = visible(char, keep="")
        assert (shown != char) is _acts(char), hex(point)
        if shown != char:  # the escape is Python's, and reads back as the character
            assert shown.encode("ascii").decode("unicode_escape") == char
            assert not any(_acts(c) for c in shown)
    assert visible("a\n\tb") == "a\n\tb" and visible("a\n", keep="") == "a\\x0a"
    assert visible("emoji 👨\u200d👩 and \u200b") == "emoji 👨\u200d👩 and \u200b"
    assert has_invisible("x\ny") and has_invisible("\u202e") and not has_invisible("ok é")


@pytest.mark.parametrize("escape", [md, code, html_text, lambda t: fence([t])])
def test_every_comment_escape_shows_controls(escape) -> None:
    out = escape(HOSTILE)
    assert not any(_acts(c) for c in out.replace("\n", ""))
    for shown in ("\\u202e", "\\u2066", "\\x00", "\\x1b", "\\x07", "\\x85", "\\u2028",
                  "\\x7f"):
        assert shown in out.replace("\\\\", "\\"), (shown, out)


def _logged(formatter: PlainFormatter, emit) -> str:
    stream = io.StringIO()
    with log_to(stream, formatter):
        emit()
    return stream.getvalue()


@pytest.mark.parametrize("formatter", [PlainFormatter, GitHubFormatter])
def test_the_log_and_annotations_show_controls(formatter) -> None:
    def emit() -> None:
        log.info("case %s\r\nnext", HOSTILE)
        log.error("failed: %s", HOSTILE, extra=annotation(title=f"case {HOSTILE}",
                                                          file="a\x1b.json", line=3))

    out = _logged(formatter(), emit)
    assert not any(_acts(c) for c in out.replace("\n", ""))
    assert out.count("cur\\u202eRTL\\u2066iso\\x00nul\\x1b[31mred\\x07bell") == (
        2 if formatter is PlainFormatter else 3)  # the annotation's title holds it too
    assert "\\x0d" not in out, "a CRLF line end is a line end, not a control shown"
    if formatter is GitHubFormatter:
        assert "file=a\\x1b.json" in out


def test_secret_is_redacted_before_controls_are_escaped() -> None:
    """The secret is matched in the text as logged, then the rest is escaped."""
    secret = "pa\x1bss-word-long"
    redact = lambda text: text.replace(secret, "***")  # noqa: E731
    out = _logged(PlainFormatter(redact), lambda: log.info("key=%s and \x1b", secret))
    assert out == "key=*** and \\x1b\n"


def test_code_spans_of_messages_stay_code_spans() -> None:
    said = md("unknown metric `tool_trajectory_avg_scor`; suite `travel_agent` has no "
              "baseline; see a_b")
    assert said == ("unknown metric `tool_trajectory_avg_scor`; suite `travel_agent` has no "
                    "baseline; see a\\_b")


@pytest.mark.parametrize("text, expected", [
    # A span that could act outside a code span is escaped as text.
    ("`a|b`", "\\`a\\|b\\`"),
    ("`<img src=x>`", "\\`&lt;img src=x&gt;\\`"),
    ("`<!-- adk-eval-action -->`", "\\`&lt;\\!-- adk-eval-action --&gt;\\`"),
    ("` `", "\\` \\`"),
    # Mentions and references in a kept span get a zero-width space (shown the same).
    ("`@octocat #9`", "`@\u200boctocat #\u200b9`"),
    # An odd backtick out: the pairs stay as CommonMark pairs them.
    ("`x` and ` y", "`x` and \\` y"),
])
def test_hostile_text_in_backticks_stays_inert(text: str, expected: str) -> None:
    assert md(text) == expected


def test_an_eval_id_with_controls_is_linted(tmp_path: Path) -> None:
    path = tmp_path / "x.evalset.json"
    turn = {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
    ids = ["ok", "two\nlines", "rtl\u202eid"]
    path.write_text(json.dumps({"eval_set_id": "x", "eval_cases": [
        {"eval_id": i, "conversation": [turn]} for i in ids]}))
    warnings = [w for w in load_eval_set(path).warnings if "holds a line break" in w]
    assert [w.split("`")[1] for w in warnings] == ["two\\x0alines", "rtl\\u202eid"]
    assert all(w.startswith(f"{path}: eval case id ") for w in warnings)
