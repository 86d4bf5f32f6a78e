"""docs/testing.md's "Testing your agent offline" snippet, run exactly as printed: an ADK agent on
``gemini-2.5-flash`` answered by the fake Gemini API, the same agent on a stand-in model,
and the stand-in judge registered (the snippet asserts each reply; this test also checks
that the first part really went over HTTP to the fake)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
HEADING = "## Testing your agent offline"


def offline_snippet() -> tuple[int, str]:
    """The first ```python block of the section: (its first line's number, its code)."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.index(HEADING)
    block = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL).search(text, section)
    assert block is not None, f"no python block under {HEADING!r} in docs/testing.md"
    return text.count("\n", 0, block.start(1)) + 1, block[1]


def test_the_offline_snippet_runs_as_printed() -> None:
    line, code = offline_snippet()
    namespace: dict[str, object] = {"__name__": "readme_offline"}
    exec(compile("\n" * (line - 1) + code, str(PAGE), "exec"), namespace)  # noqa: S102
    calls = namespace["fake"].calls  # type: ignore[attr-defined]
    assert [(c.model, c.role, c.api_key) for c in calls] == [
        ("gemini-2.5-flash", "agent", True)] * 2
    assert "What is the weather in Paris?" in str(calls[0].request["contents"])
    # The second call carries the tool's answer (ADK ran get_weather with the city).
    assert "functionResponse" in str(calls[1].request["contents"])
    assert "'city': 'Paris'" in str(calls[1].request["contents"])
