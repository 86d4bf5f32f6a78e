"""A run that always ends: the console script evaluating an agent whose code leaves a
non-daemon thread running (a database driver's keep-alive, never joined) prints its
verdict, writes its results and comment, and ends with the gate's exit code, naming the
thread once, instead of waiting for the thread until the job's timeout (run/ending.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import copy_examples

KEEPALIVE = '''
import threading as _threading

# A database client's keep-alive: a non-daemon thread that nobody stops or joins.
_threading.Thread(target=_threading.Event().wait, name="db-pool-keepalive").start()
'''


@pytest.mark.slow  # another interpreter importing google-adk
@pytest.mark.timeout(240)
def test_a_run_whose_agent_leaves_a_thread_ends_with_the_gates_code(tmp_path: Path) -> None:
    root = copy_examples(tmp_path / "repo")
    agent = root / "travel_agent/agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + KEEPALIVE, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_action.cli", "run", "--results-out", "results.json",
         "--comment-out", "comment.md"],
        cwd=root, capture_output=True, text=True, timeout=200,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    assert "gate PASSED" in done.stderr
    said = [line for line in done.stderr.splitlines() if "`db-pool-keepalive`" in line]
    # One warning; the agent is imported twice (the preflight's and the run's), so is the
    # module-level code that started the thread.
    assert len(said) == 1, done.stderr[-3000:]
    assert said[0].startswith("warning: 2 thread(s)")
    assert "`db-pool-keepalive` (2x)" in said[0]
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in results["suites"]] == ["travel_agent"]
    assert (root / "comment.md").read_text(encoding="utf-8").strip()
    assert took < 180
