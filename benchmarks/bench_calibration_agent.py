"""Real-agent check of the calls' calibration (a script, not a test): one noisy stand-in
agent (:class:`adk_eval_action.testing.noisy.NoisyLlm`) evaluated again and again by the
package's whole pipeline (google-adk's LocalEvalService, ``response_match_score``) and
compared with itself, as an unchanged agent's PR would be; with ``--drop`` the head's pass
probability is lower, as a degraded agent's would be.

Per-case pass probabilities cycle through 1.0 / 0.9 / 0.7 / 0.5 (issue 16's mix). Each
comparison uses a fresh baseline run and a fresh head run (different seeds). Prints how
many comparisons called the metric 🔴 regressed, with the Monte-Carlo 95% margin.

Usage: ``.venv/bin/python benchmarks/bench_calibration_agent.py [--prs 20] [--cases 20]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from adk_eval_action.analysis.compare import compare
from adk_eval_action.results.io import load_results
from adk_eval_action.run.pipeline import run_pipeline, score_tables
from adk_eval_action.settings import load_request
from adk_eval_action.testing.noisy import DROP_VARIABLE, SEED_VARIABLE

MIX = (1.0, 0.9, 0.7, 0.5)
AGENT = '''"""A noisy stand-in agent for benchmarks/bench_calibration_agent.py."""
from google.adk.agents import LlmAgent

from adk_eval_action.testing.noisy import NoisyLlm

root_agent = LlmAgent(name="noisy_agent", model=NoisyLlm(model="noisy-1"), instruction="Answer.")
'''


def make_project(root: Path, n_cases: int) -> None:
    """An agent folder with one eval set of ``n_cases`` yes/no questions."""
    agent = root / "noisy_agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (agent / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = []
    for i in range(n_cases):
        question = f"Question {i} (p={MIX[i % len(MIX)]})?"
        cases.append(
            {
                "eval_id": f"q{i:03d}",
                "conversation": [
                    {
                        "invocation_id": f"q{i:03d}-1",
                        "user_content": {"parts": [{"text": question}], "role": "user"},
                        "final_response": {"parts": [{"text": "yes"}], "role": "model"},
                    }
                ],
                "session_input": {"app_name": "noisy_agent", "user_id": "u", "state": {}},
            }
        )
    eval_set = {"eval_set_id": "noisy", "eval_cases": cases}
    (agent / "eval" / "noisy.evalset.json").write_text(json.dumps(eval_set), encoding="utf-8")
    config = {"criteria": {"response_match_score": 0.8}}
    (agent / "eval" / "test_config.json").write_text(json.dumps(config), encoding="utf-8")


def evaluate(root: Path, seed: int, drop: float, runs: int, out: Path) -> None:
    """One evaluation of the project by the package's pipeline, under ``seed``."""
    os.environ[SEED_VARIABLE] = str(seed)
    os.environ[DROP_VARIABLE] = str(drop)
    flags = {"paths": [root], "baseline": "none", "num_runs": runs, "results_path": out}
    options = load_request(root, flags=flags)
    run_pipeline(options)


def main(argv: Sequence[str] | None = None) -> None:
    """Parses arguments, runs the comparisons and prints the rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=20)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--drop", type=float, default=0.0, help="head's pass-probability drop")
    args = parser.parse_args(argv)
    print(
        f"python {sys.version.split()[0]}; {args.prs} comparisons of {args.cases} cases x "
        f"{args.runs} runs, head drop {args.drop}"
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_project(root, args.cases)
        cwd = Path.cwd()
        os.chdir(root)
        regressed = 0
        start = time.perf_counter()
        try:
            for k in range(args.prs):
                evaluate(root, 2 * k, 0.0, args.runs, root / "base.json")
                evaluate(root, 2 * k + 1, args.drop, args.runs, root / "head.json")
                comparison = compare(*score_tables(
                    load_results(root / "head.json"), load_results(root / "base.json")), "b")
                (row,) = [m for m in comparison.metrics if m.metric_name == "response_match_score"]
                regressed += row.classification == "regressed"
                print(f"  {k + 1:>3}: delta {row.delta:+.4f} -> {row.classification}", flush=True)
        finally:
            os.chdir(cwd)
    rate = regressed / args.prs
    margin = 1.96 * math.sqrt(max(rate * (1 - rate), 1 / args.prs) / args.prs)
    label = "false 🔴 (unchanged agent)" if not args.drop else "called 🔴 (power)"
    print(
        f"{label}: {regressed}/{args.prs} = {100 * rate:.0f}% ±{100 * margin:.0f}; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
