"""Throughput of an evaluation against its limit, side by side with ``adk eval`` (a script,
not a test).

The input (issue 13): one latency-injected stand-in agent with 20 eval sets x 10 eval
cases; each case is one turn that calls a tool (2 agent model calls) and is judged by
``final_response_match_v2`` with one sample (1 judge call); every model call sleeps the
latency first. The agent's module registers its models with ADK's LLMRegistry, so ADK's own
CLI runs the same input.

For each latency and ``num_runs`` it runs, ``--repeat`` times each (median):

* ``adk-eval-action run --parallelism 16`` on the input;
* ``adk eval AGENT EVAL_SETS... --config_file_path ...`` (``num_runs`` 1 only: it has no
  repeats);
* and, right before each of our runs, google-adk's import alone and our run at latency 0
  (its wall time less the import is the CPU work), so that the three share the machine's
  load (2 cores shared with other jobs vary by the minute).

and prints the limit ``import + max(CPU work, model calls x latency / parallelism)``, each
wall time, our ratio to the limit (the median of each measurement's own ratio) and our
speed-up over ``adk eval``. Targets (issue 13):
ratio <= 1.10 at 1.0 s and <= 1.25 at 0.2 s (num_runs 1 and 3), >= 3.5x ``adk eval`` at
1.0 s.

Usage: ``.venv/bin/python benchmarks/bench_throughput.py [--latency 0.2 1.0] [--runs 1 3]
[--repeat 3] [--no-adk]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

EVAL_SETS, CASES, PARALLELISM = 20, 10, 16
AGENT_CALLS, JUDGE_CALLS = 2, 1
CITIES = ["Paris", "London", "Tokyo", "Rome", "Oslo", "Lima", "Cairo", "Quito", "Seoul", "Perth"]

AGENT_PY = '''\
"""A stand-in agent whose every model call waits BENCH_LATENCY_S seconds first."""

import asyncio
import os

from google.adk.agents import LlmAgent
from google.adk.models import LLMRegistry

from adk_eval_action.testing.judge import StandInJudge
from adk_eval_action.testing.scripted import ScriptedLlm, ScriptedToolCall, ScriptRule


def _latency() -> float:
    return float(os.environ.get("BENCH_LATENCY_S", "0"))


class SlowAgentModel(ScriptedLlm):
    @classmethod
    def supported_models(cls):
        return [r"bench-agent.*"]

    async def generate_content_async(self, llm_request, stream=False):
        await asyncio.sleep(_latency())
        async for response in super().generate_content_async(llm_request, stream):
            yield response


class SlowJudge(StandInJudge):
    @classmethod
    def supported_models(cls):
        return [r"bench-judge.*"]

    async def generate_content_async(self, llm_request, stream=False):
        await asyncio.sleep(_latency())
        async for response in super().generate_content_async(llm_request, stream):
            yield response


for _cls in (SlowAgentModel, SlowJudge):
    LLMRegistry.register(_cls)


def get_weather(city: str) -> dict:
    """The weather of a city."""
    return {"status": "success", "city": city, "condition": "sunny", "temperature_c": 20}


root_agent = LlmAgent(
    name="bench_agent",
    model=SlowAgentModel(model="bench-agent", rules=[ScriptRule(
        pattern=r"weather in (?P<city>[a-z]+)",
        tool_calls=[ScriptedToolCall(name="get_weather", args={"city": "{city}"})],
        reply="It is {result[condition]} in {result[city]}.",
    )]),
    instruction="Answer weather questions with get_weather.",
    tools=[get_weather],
)
'''


def build(root: Path) -> tuple[Path, list[Path], Path]:
    """The input under ``root``: (agent folder, eval set files, eval config)."""
    agent = root / "bench_agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n")
    (agent / "agent.py").write_text(AGENT_PY)
    files = []
    for index in range(EVAL_SETS):
        cases = []
        for case in range(CASES):
            city = CITIES[case]
            cases.append({
                "eval_id": f"s{index:02d}_c{case}",
                "conversation": [{
                    "user_content": {"role": "user",
                                     "parts": [{"text": f"What's the weather in {city}?"}]},
                    "final_response": {"role": "model",
                                       "parts": [{"text": f"It is sunny in {city}."}]},
                    "intermediate_data": {"tool_uses": [{"name": "get_weather",
                                                         "args": {"city": city}}],
                                          "tool_responses": [], "intermediate_responses": []},
                }],
                "session_input": {"app_name": "bench_agent", "user_id": "bench"},
            })
        path = agent / "eval" / f"set_{index:02d}.evalset.json"
        path.write_text(json.dumps({"eval_set_id": f"set_{index:02d}", "eval_cases": cases}))
        files.append(path)
    config = agent / "eval" / "test_config.json"
    config.write_text(json.dumps({"criteria": {
        "tool_trajectory_avg_score": 1.0,
        "final_response_match_v2": {
            "threshold": 0.5,
            "judge_model_options": {"judge_model": "bench-judge", "num_samples": 1},
        },
    }}))
    return agent, files, config


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def wall(command: list[str], cwd: Path, latency: float) -> float:
    """Seconds ``command`` took; raises when it failed."""
    env = {**os.environ, "BENCH_LATENCY_S": str(latency), "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command[0]} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return seconds


def ours(root: Path, latency: float, runs: int) -> float:
    return wall([_bin("adk-eval-action"), "run", "bench_agent", "--parallelism",
                 str(PARALLELISM), "--num-runs", str(runs), "--baseline", "none", "--quiet",
                 "--results-out", str(root / "out.json")], root, latency)


def adk_eval(root: Path, files: list[Path], config: Path, latency: float) -> float:
    return wall([_bin("adk"), "eval", "bench_agent", *map(str, files),
                 "--config_file_path", str(config)], root, latency)


def import_seconds(root: Path) -> float:
    """google-adk's import as any evaluation pays it: the evaluation service, the runner
    that runs agents (and our CLI and scheduler)."""
    code = ("import google.adk.evaluation.local_eval_service, google.adk.runners, "
            "adk_eval_action.cli, adk_eval_action.adk.evaluate.scheduler, "
            "adk_eval_action.adk.evaluate.preflight")
    return wall([sys.executable, "-c", code], root, 0.0)


def median(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def _one(root: Path, latency: float, runs: int) -> tuple[float, float, float, float]:
    """One measurement of a row, its parts one right after another so that they share the
    machine's load: (import, CPU work, our wall time, our ratio to the limit)."""
    calls = EVAL_SETS * CASES * runs * (AGENT_CALLS + JUDGE_CALLS)
    started = import_seconds(root)
    cpu = max(0.0, ours(root, 0.0, runs) - started)
    mine = ours(root, latency, runs)
    return started, cpu, mine, mine / (started + max(cpu, calls * latency / PARALLELISM))


def row(root: Path, files: list[Path], config: Path, latency: float, runs: int,
        args: argparse.Namespace) -> str:
    """One table row (module docstring): medians over ``--repeat`` measurements, the ratio
    the median of each measurement's own ratio."""
    calls = EVAL_SETS * CASES * runs * (AGENT_CALLS + JUDGE_CALLS)
    measured = [_one(root, latency, runs) for _ in range(args.repeat)]
    started, cpu, mine, ratio = (statistics.median(m[i] for m in measured) for i in range(4))
    limit = started + max(cpu, calls * latency / PARALLELISM)
    theirs = (median(lambda: adk_eval(root, files, config, latency), args.repeat)
              if runs == 1 and not args.no_adk else None)
    shown = f"{theirs:.1f} s" if theirs else "-"
    speedup = f"{theirs / mine:.2f}x" if theirs else "-"
    return (f"| {latency:g} s | {runs} | {calls} | {started:.1f} s | {cpu:.1f} s "
            f"| {limit:.1f} s | {mine:.1f} s | {ratio:.2f} | {shown} | {speedup} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.2, 1.0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-adk", action="store_true", help="skip adk eval")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _, files, config = build(root)
        import_seconds(root)  # warm the file cache once
        print(f"cores: {os.cpu_count()}; load average at the start: "
              f"{os.getloadavg()[0]:.1f}; median of {args.repeat}")
        print("| latency | num_runs | model calls | import | CPU work | limit | adk-eval-action "
              "| ratio to limit | adk eval | speed-up |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for latency in args.latency:
            for runs in args.runs:
                print(row(root, files, config, latency, runs, args), flush=True)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
