"""``plan`` on an adk-eval.yaml of many suites of one agent (the example's travel agent and
its eval set, named N times): each agent folder imported once and each suite's files
loaded once per distinct (eval config, eval sets, overrides), the preflight's findings
once per (agent, eval config), beside the alternative it replaced, every suite on its own
(its files loaded, its agent imported in a scope of its own, its preflight run alone;
measured on a sample of the suites and scaled to N). Then the whole command as a user
starts it (``adk-eval-action plan``, google-adk's import included) on N suites and on one,
against issue 34's bound of 10 s for 5,000 suites. Times are CPU seconds (the process's
user + system time): on a shared machine the wall clock mostly measures the neighbours.

    python benchmarks/bench_plan_suites.py [SUITES]
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SAMPLE = 100
"""Suites the alternative is measured on (it is linear in the suites: scaled to N)."""


def _project(root: Path, suites: int) -> Path:
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("__pycache__", ".adk",
                                                                  "adk-eval-*"))
    (root / "adk-eval.yaml").write_text(yaml.safe_dump({"suites": [
        {"name": f"s{i}", "agent": "travel_agent",
         "eval_sets": ["travel_agent/eval/travel.evalset.json"]} for i in range(suites)]}))
    return root


def _shared(root: Path) -> float:
    """CPU seconds of ``run.evaluation.plan`` (what ``plan`` computes) on ``root``'s
    suites."""
    from adk_eval_action.run.evaluation import plan
    from adk_eval_action.settings import load_request

    request = load_request(root)
    start = time.process_time()
    asyncio.run(plan(request))
    return time.process_time() - start


def _each_alone(root: Path, count: int) -> float:
    """CPU seconds of the same work done suite by suite (the replaced path) for ``count``
    suites: files loaded without sharing, agent imported in a scope of its own, preflight
    of one suite at a time."""
    from adk_eval_action.adk.evaluate.harness import evaluation_scope
    from adk_eval_action.adk.evaluate.preflight import check_suites
    from adk_eval_action.adk.evaluate.scheduler import EngineHooks, open_suites
    from adk_eval_action.adk.runtime.agent import load_agent
    from adk_eval_action.adk.runtime.model_limits import agent_model_names
    from adk_eval_action.run.evaluation import engine_settings, find_suites
    from adk_eval_action.settings import load_request

    request = load_request(root)
    suites = find_suites(request)[:count]
    settings = engine_settings(request)

    async def alone() -> None:
        open_suites(suites, settings, EngineHooks(on_progress=None))
        for suite in suites:
            assert suite.agent_dir is not None
            with evaluation_scope([suite.agent_dir], root):
                agent = await load_agent(suite.agent_dir)
                agent_model_names(agent.root_agent)
                await agent.close()
            await check_suites([suite], root, os.environ)

    start = time.process_time()
    asyncio.run(alone())
    return time.process_time() - start


def _command(root: Path) -> tuple[float, float]:
    """CPU and wall seconds of ``adk-eval-action plan`` in ``root``, as a user starts
    it."""
    script = Path(sys.executable).with_name("adk-eval-action")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(script), "plan"], cwd=root, capture_output=True,
                          text=True, check=False,
                          env={**os.environ, "GOOGLE_API_KEY": "benchmark"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main(suites: int = 5_000) -> None:
    import logging

    logging.disable(logging.INFO)  # the suite lines, not measured here
    os.environ.setdefault("GOOGLE_API_KEY", "benchmark")
    with tempfile.TemporaryDirectory() as folder:
        root = _project(Path(folder) / "repo", suites)
        os.chdir(root)
        _shared(_project(Path(folder) / "warm", 2))  # google-adk imported, not measured
        shared = _shared(root)
        sample = min(SAMPLE, suites)
        alone = _each_alone(root, sample) * suites / sample
        command, wall = _command(root)
        one, one_wall = _command(_project(Path(folder) / "one", 1))
    print(f"plan of {suites:,} suites of one agent (the example's travel agent), CPU seconds")
    print(f"shared loads, each agent imported once: {shared:8.2f} s")
    print(f"each suite on its own (the old path):   {alone:8.2f} s "
          f"(scaled from {sample} suites)")
    print(f"ratio:                                  {alone / shared:8.1f}x")
    print(f"`adk-eval-action plan`, {suites:,} suites:   {command:8.2f} s "
          f"(wall {wall:.1f} s; bound: 10 s)")
    print(f"`adk-eval-action plan`, 1 suite:        {one:8.2f} s "
          f"(wall {one_wall:.1f} s: the start-up, google-adk's import)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5_000)
