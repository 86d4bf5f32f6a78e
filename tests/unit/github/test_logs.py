"""The console through ``logging``: the runner's format (workflow commands escaped as the
runner's ActionCommand.cs unescapes them, other lines inert), the terminal's format, whole
records under concurrency, and ``log_to`` leaving the process as it found it."""

from __future__ import annotations

import io
import logging
import threading
import warnings

from adk_eval_action.github.logs import (
    GitHubFormatter,
    PlainFormatter,
    annotation,
    command,
    group,
    inert,
    log_to,
    mask,
)

log = logging.getLogger("adk_eval_action.tests")


def _unescape_data(text: str) -> str:
    """The runner's unescaping of a command's message (ActionCommand.cs), by hand."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _logged(formatter: PlainFormatter, emit) -> list[str]:
    stream = io.StringIO()
    with log_to(stream, formatter):
        emit()
    return stream.getvalue().splitlines()


def test_the_runner_format() -> None:
    def emit() -> None:
        mask(log, "s3cr3t\nline2")
        with group(log, "Suite a: b"):
            log.info("plain %s", "text")
            log.warning("careful")
            log.error("50% worse\nsee log", extra=annotation(
                file="evals/a,b:c.json", line=12, title="case: x"))
            log.info("moved on", extra=annotation("notice"))
        command(log, "stop-commands", "tok")
        command(log, "tok")

    lines = _logged(GitHubFormatter(), emit)
    assert lines == [
        "::add-mask::s3cr3t", "::add-mask::line2",
        "::group::Suite a: b",
        "plain text",
        "warning: careful",
        "::error file=evals/a%2Cb%3Ac.json,line=12,title=case%3A x::50%25 worse%0Asee log",
        "::notice::moved on",
        "::endgroup::",
        "::stop-commands::tok",
        "::tok::",
    ]
    message = lines[5].split("::", 2)[2]
    assert _unescape_data(message) == "50% worse\nsee log"


def test_the_terminal_format_has_no_workflow_commands() -> None:
    def emit() -> None:
        mask(log, "s3cr3t")
        with group(log, "Suite a"):
            log.info("plain")
            log.warning("careful")
            log.error("failed", extra=annotation(title="t", file="f", line=1))
        command(log, "stop-commands", "tok")

    assert _logged(PlainFormatter(), emit) == [
        "Suite a", "plain", "warning: careful", "error: failed",
    ]


def test_lines_from_data_are_inert_for_the_runner() -> None:
    hostile = "case\n::warning::fake\n  ::add-mask::x\nok ##[error]legacy"

    lines = _logged(GitHubFormatter(), lambda: log.info("%s", hostile))
    assert len(lines) == 4
    # The runner parses a line as a command when it starts with "::" after blanks
    # (ActionCommand.TryParseV2) or holds "##[" (TryParse); none of these does.
    assert not any(x.lstrip().startswith("::") or "##[" in x for x in lines)
    assert [x.replace("\u200b", "") for x in lines] == hostile.splitlines()
    assert inert("a :: b") == "a :: b"


def test_concurrent_records_are_never_interleaved() -> None:
    def worker(n: int) -> None:
        for i in range(50):
            log.info("\n".join(f"{n}-{i}-{k}" for k in range(5)))

    def emit() -> None:
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    lines = _logged(GitHubFormatter(), emit)
    assert len(lines) == 8 * 50 * 5
    for start in range(0, len(lines), 5):
        record = lines[start:start + 5]
        prefix = record[0].rsplit("-", 1)[0]
        assert record == [f"{prefix}-{k}" for k in range(5)]


def test_log_to_restores_what_it_changed() -> None:
    ours, adk, root = (logging.getLogger(n) for n in ("adk_eval_action", "google_adk", ""))
    before = (ours.level, ours.propagate, list(ours.handlers), adk.level,
              list(root.handlers), list(warnings.filters))
    with log_to(io.StringIO(), PlainFormatter()):
        assert ours.propagate is False and adk.level == logging.CRITICAL
        assert any(f[0] == "ignore" and f[1] is not None and "EXPERIMENTAL" in f[1].pattern
                   for f in warnings.filters)
    after = (ours.level, ours.propagate, list(ours.handlers), adk.level,
             list(root.handlers), list(warnings.filters))
    assert after == before
