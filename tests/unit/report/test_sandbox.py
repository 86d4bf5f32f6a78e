"""The user's template sandbox (report.sandbox): the render's wall-time limit starts when
the child has imported, so a slow start-up does not fail a template that renders at
once, while one that loops forever is still stopped with a clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adk_eval_action.errors import ConfigError
from adk_eval_action.report import sandbox
from adk_eval_action.report.render import template_environment
from adk_eval_action.report.sandbox import render_user_template, template_failure
from adk_eval_action.report.template_child import failure_report

#: Seconds the child's start-up is made to take (sitecustomize runs before its imports).
SLOW_START_S = 4


@pytest.fixture
def slow_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every new interpreter started by the test sleeps SLOW_START_S at start-up (Python
    imports the first ``sitecustomize`` on its path; PYTHONPATH comes first)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import time\ntime.sleep({SLOW_START_S})\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p))


def _template(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.md.j2"
    path.write_text(text)
    return path


@pytest.mark.slow  # waits out a 4 s start-up
def test_a_slow_start_up_is_not_the_templates_time(
    slow_start: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted from the child's start, the render's 3 s would have run out during the
    # 4 s start-up (this failed before READY); the template itself takes milliseconds.
    monkeypatch.setattr(sandbox, "TEMPLATE_TIMEOUT_S", SLOW_START_S - 1.0)
    template = _template(tmp_path, "{{ n * 2 }} {{ names | join(',') }}")
    assert render_user_template(template, {"n": 21, "names": ["a", "b"]}) == "42 a,b"


@pytest.mark.slow  # waits out the 1 s start-up limit
def test_a_start_up_past_its_own_limit_is_a_config_error(
    slow_start: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "TEMPLATE_STARTUP_TIMEOUT_S", 1.0)
    template = _template(tmp_path, "fine")
    with pytest.raises(ConfigError, match=r"mine\.md\.j2.*did not start within 1 s"):
        render_user_template(template, {})


def test_a_template_that_loops_forever_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "TEMPLATE_TIMEOUT_S", 0.2)
    template = _template(tmp_path, "{% for i in range(100000) %}{% for j in range(100000) %}"
                                   "{% endfor %}{% endfor %}")
    with pytest.raises(ConfigError, match=r"mine\.md\.j2: template error: rendering took "
                                          r"longer than 0\.2 s \(the limit\)"):
        render_user_template(template, {})


@pytest.mark.parametrize("text", [
    "{{ 'x' * 10**9 }}",  # a gigabyte string: past the memory or the output limit
    "{{ 10**(10**9) }}",  # a billion-digit integer: past the CPU or wall limit
    "{{ lipsum(n=10**6) }}",  # a million paragraphs: past the output limit
], ids=["huge-string", "huge-power", "lipsum"])
def test_unbounded_templates_are_config_errors(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The in-process twins of tests/e2e/hostile's k7-template-* rows (which run the action end
    # to end and are marked slow): each is stopped by a limit and named as the template's.
    monkeypatch.setattr(sandbox, "TEMPLATE_TIMEOUT_S", 0.2)
    with pytest.raises(ConfigError, match=r"mine\.md\.j2: template error: "):
        render_user_template(_template(tmp_path, text), {})


# Each template fails on the line marked "<-": counted by hand from the template's text.
FAILING_TEMPLATES = [
    ("syntax", "a\nb\n{{ x }\n", 3, "TemplateSyntaxError: unexpected '}'"),
    ("undefined", "a\n{% for i in items %}\n{{ i.nope.deeper }}\n{% endfor %}\n", 3,
     "UndefinedError: 'int object' has no attribute 'nope'"),
    ("in a macro", "{% macro m() %}\n{{ 1 // 0 }}\n{% endmacro %}\nx\n{{ m() }}", 2,
     "ZeroDivisionError: integer division or modulo by zero"),
    ("sandbox", "ok\n{{ ''.__class__ }}", 2, "SecurityError: access to attribute "
     "'__class__' of 'str' object is unsafe."),
]


@pytest.mark.parametrize(("source", "line", "says"), [t[1:] for t in FAILING_TEMPLATES],
                         ids=[t[0] for t in FAILING_TEMPLATES])
def test_a_template_error_names_the_templates_line(
    tmp_path: Path, source: str, line: int, says: str,
) -> None:
    """What the rendering child reports of a failing template (in process here: the same
    environment, the same report) becomes ``file:line: template error: ...``."""
    template = _template(tmp_path, source)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - any of the template's errors
        "".join(template_environment().from_string(source).generate(items=[1]))
    error = template_failure(template, failure_report(raised.value))
    assert (error.path, error.line) == (str(template), line)
    assert str(error) == f"{template}:{line}: template error: {says}"


@pytest.mark.parametrize("report", ["Fatal Python error: init", '"a string"', "[1]", "{}",
                                    '{"error": "E: x", "line": 0}'])
def test_a_report_that_is_not_the_childs_is_said_as_it_is(tmp_path: Path, report: str) -> None:
    """An interpreter that fails before the render writes its own stderr: that text is the
    reason, with no line (hostile rows: not JSON, JSON of other shapes, no line)."""
    error = template_failure(tmp_path / "t.j2", report)
    assert error.line is None
    reason = "E: x" if report.startswith('{"error"') else report
    assert str(error) == f"{tmp_path / 't.j2'}: template error: {reason}"
