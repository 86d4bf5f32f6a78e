"""The process's end (run/ending.py, cli.entry): the command's exit code ends the process
whatever non-daemon threads the agent's code left, named once in a warning; threads that
end by themselves are waited for and named nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from adk_eval_action.run.ending import end_when_left, lingering_threads

REPO = Path(__file__).resolve().parents[3]


def _blocked(name: str) -> tuple[threading.Thread, threading.Event]:
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name=name)
    thread.start()
    return thread, release


def test_a_thread_still_running_after_the_grace_is_named_and_the_process_ended() -> None:
    thread, release = _blocked("db-keepalive")
    said: list[str] = []
    ended: list[int] = []
    try:
        assert thread in lingering_threads()
        assert end_when_left([thread], 1, said.append, grace_s=0.05,
                             exit_process=ended.append)
    finally:
        release.set()
        thread.join()
    assert ended == [1]
    (message,) = said
    assert "`db-keepalive`" in message and "exit code 1" in message
    assert "daemon=True" in message


def test_threads_that_end_within_the_grace_are_waited_for_and_named_nowhere() -> None:
    thread, release = _blocked("short-flush")
    said: list[str] = []
    ended: list[int] = []
    threading.Timer(0.05, release.set).start()
    assert not end_when_left([thread], 0, said.append, grace_s=5.0,
                             exit_process=ended.append)
    assert (said, ended) == ([], [])
    assert not thread.is_alive()


LINGERING = """
import sys, threading
import adk_eval_action.run.ending as ending
ending.LINGER_GRACE_S = 0.2
# What an agent's database driver leaves: a non-daemon thread nobody joins.
threading.Thread(target=threading.Event().wait, name=sys.argv[1]).start()
sys.argv = ["adk-eval-action", *sys.argv[2:]]
from adk_eval_action.cli import entry
entry()
"""

HOSTILE_NAME = "db-keepalive\n::error::forged\u202e"


def _entry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LINGERING, HOSTILE_NAME, *args],
                          capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, **(env or {})})


def test_the_console_script_ends_with_the_commands_code_and_names_the_thread_once() -> None:
    started = time.monotonic()
    done = _entry("schema", "config")
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("}")  # the command's output, whole
    (line,) = [x for x in done.stderr.splitlines() if "thread(s)" in x]
    # One line, the name's newline and bidi control as visible escapes.
    assert line.startswith("warning: 1 thread(s) the agent's code started were still running")
    assert "`db-keepalive\\x0a::error::forged\\u202e`" in line
    assert "exit code 0" in line


def test_the_actions_entry_point_keeps_its_code_and_warns_as_an_annotation(
    tmp_path: Path,
) -> None:
    """The action's container entry point (``adk-eval-action action``) with an input that
    stops the run: exit 2 as before, and the warning is one annotation whose message
    cannot forge a workflow command."""
    done = _entry("action", env={"INPUT_NUM_RUNS": "abc", "GITHUB_WORKSPACE": str(tmp_path),
                                 "INPUT_WORKING_DIRECTORY": str(tmp_path)})
    assert done.returncode == 2, done.stdout + done.stderr
    warnings = [x for x in done.stdout.splitlines() if "thread(s)" in x]
    assert len(warnings) == 1
    assert warnings[0].startswith("::warning title=adk-eval-action::1 thread(s)")
    assert "db-keepalive\\x0a::error::forged\\u202e" in warnings[0]
    assert not any(x.startswith("::error::forged") for x in done.stdout.splitlines())


def test_without_lingering_threads_the_exit_is_the_interpreters_own() -> None:
    script = ("import sys\nsys.argv = ['adk-eval-action', 'schema', 'nope']\n"
              "from adk_eval_action.cli import entry\nentry()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 2  # click's usage error, passed on
    assert "thread(s)" not in done.stdout + done.stderr
