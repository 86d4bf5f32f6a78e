"""One eval case whose agent answers 10 MB beside five that answer a sentence, run as a user
runs them (``adk-eval-action run``, stand-in models, parallelism 4): before (google-adk's
ROUGE metric given the whole answer, on the event loop) and after
(:mod:`adk_eval_action.adk.evaluate.answer_bound`: an answer over 1 MiB characters is not
given to the metrics that read it; the ROUGE metric in a worker thread), beside the same
five cases alone. Measured: the run's wall seconds and the slowest short case's
``invocation_duration_v1`` (its own inference, seconds: how long the other cases were
held). Wall time on a shared machine includes the neighbours: compare the ratios.

    python benchmarks/bench_long_answer.py [MEGABYTES]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = '''
import os
from google.adk.agents import LlmAgent
from adk_eval_action.testing.standins import ScriptedLlm, ScriptRule, register_standins

register_standins()
SIZE = int(os.environ["LONG_ANSWER_BYTES"])
LONG = ("word " * (SIZE // 5 + 1))[:SIZE]
root_agent = LlmAgent(
    name="long_agent",
    model=ScriptedLlm(model="scripted-long", rules=[ScriptRule(pattern="LONG", reply=LONG)],
                      default_reply="Something polite."),
    instruction="Answer.",
)
'''

CHILD = '''
import sys
from adk_eval_action.adk.evaluate import answer_bound
from adk_eval_action.cli import main
if sys.argv[1] == "before":
    answer_bound.MAX_SCORED_ANSWER_CHARS = 10**12
    answer_bound.THREADED_METRICS = ()
main(["run", "long_agent", "--baseline", "none", "--results-out", sys.argv[2],
      "--parallelism", "4"], standalone_mode=False)
'''


def _project(root: Path, long_case: bool) -> None:
    agent = root / "long_agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "__init__.py").write_text("from . import agent  # noqa: F401\n")
    (agent / "agent.py").write_text(AGENT)
    asks = (["Say LONG"] if long_case else []) + [f"Say short {n}" for n in range(5)]
    cases = [{"eval_id": f"case{i}", "conversation": [{
        "invocation_id": f"i{i}", "user_content": {"role": "user", "parts": [{"text": q}]},
        "final_response": {"role": "model", "parts": [{"text": "Something polite."}]}}]}
        for i, q in enumerate(asks)]
    (agent / "eval" / "long.evalset.json").write_text(json.dumps(
        {"eval_set_id": "long", "eval_cases": cases}))
    (agent / "eval" / "test_config.json").write_text(json.dumps(
        {"criteria": {"response_match_score": 0.5}}))


def _run(mode: str, long_case: bool, size: int) -> tuple[float, float]:
    """(wall seconds, slowest short case's invocation_duration_v1) of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _project(root, long_case)
        results = root / "r.json"
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", CHILD, mode, str(results)], cwd=root,
                       env={**os.environ, "LONG_ANSWER_BYTES": str(size)},
                       check=False, capture_output=True)
        wall = time.monotonic() - start
        data = json.loads(results.read_text())
        durations = [m["score"] for s in data["suites"] for e in s["eval_sets"]
                     for c in e["eval_cases"] if c["eval_id"] != "case0" or not long_case
                     for r in c["runs"] for m in r["metrics"]
                     if m["metric_name"] == "invocation_duration_v1" and m["score"] is not None]
        return wall, max(durations)


def main() -> None:
    size = int(float(sys.argv[1]) * 2**20) if len(sys.argv) > 1 else 10 * 2**20
    alone = _run("after", False, size)
    before = _run("before", True, size)
    after = _run("after", True, size)
    print(f"one answer of {size:,} bytes beside 5 short cases (parallelism 4)")
    print(f"{'':32} {'wall s':>8} {'slowest short case s':>22}")
    for label, (wall, slowest) in [("5 short cases alone", alone), ("before (unbounded)", before),
                                   ("after (bounded)", after)]:
        print(f"{label:32} {wall:8.1f} {slowest:22.2f}")
    print(f"before / after: wall {before[0] / after[0]:.1f}x, slowest short case "
          f"{before[1] / max(after[1], 1e-9):.1f}x")


if __name__ == "__main__":
    main()
