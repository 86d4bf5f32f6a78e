"""`init` and `plan` on a repository of many agents (google/adk-samples' layout,
tests/support/layouts.agent_monorepo: one agent package, one eval set of 3 eval cases and
an eval config per agent, a quarter of them with a dependency file of their own, two with
conflicting pins), as a user runs them: the console script in a fresh process, in the
repository. Beside each, the floor every command pays (the same process importing the
package and printing `--help`) and the ratio to the 10 s target; and side by side, each
command as it ran before ROUGE and the Vertex AI SDK were deferred
(:mod:`adk_eval_action.adk.deferred`): the same process importing google-adk's metric
registry eagerly first.

    python benchmarks/bench_monorepo.py [AGENTS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The layout is the tests' own (tests/support), as bench_image.py uses its runner.
sys.path.insert(0, str(ROOT / "tests"))
from support.layouts import agent_monorepo  # noqa: E402

TARGET_S = 10.0
CLI = [sys.executable, "-c", "from adk_eval_action.cli import entry; entry()"]
EAGER = [sys.executable, "-W", "ignore", "-c",
         "import google.adk.evaluation.metric_evaluator_registry; "
         "from adk_eval_action.cli import entry; entry()"]


def _dependencies(agents: int) -> dict[int, str]:
    deps = {i: f"requests>=2.{i % 30}\n" for i in range(0, agents, 4)}
    deps[1], deps[2] = "pydantic==2.9.0\n", "pydantic==2.10.0\n"  # a conflict to name
    return deps


def _timed(args: list[str], cwd: Path, cli: list[str] = CLI
           ) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run([*cli, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "GOOGLE_API_KEY": "bench"}, check=False)
    return time.perf_counter() - start, done


def main(agents: int = 50) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = agent_monorepo(Path(folder) / "repo", agents, _dependencies(agents), cases=3)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        floor, _ = _timed(["--help"], repo)
        init_s, init = _timed(["init"], repo)
        assert init.returncode == 0, init.stderr
        groups = next((line for line in init.stderr.splitlines() if "agent groups" in line),
                      "one job")
        plan_s, planned = _timed(["plan"], repo)
        assert planned.returncode == 0, planned.stderr
        eager_plan_s, eager = _timed(["plan"], repo, EAGER)
        assert eager.stdout == planned.stdout, "deferring imports changed the plan"
        for written in (repo / "adk-eval.yaml", repo / ".github/workflows/adk-eval.yml"):
            written.unlink()
        eager_init_s, _ = _timed(["init"], repo, EAGER)
    print(f"{agents} agents, {agents * 3} eval cases, {len(_dependencies(agents))} with own "
          "dependencies")
    print(f"process floor (--help):   {floor:6.2f} s")
    for name, seconds, eager_s in (("init", init_s, eager_init_s),
                                   ("plan", plan_s, eager_plan_s)):
        print(f"{name}:                     {seconds:6.2f} s  ({seconds / TARGET_S:.2f} of the "
              f"{TARGET_S:.0f} s target; {seconds - floor:.2f} s past the floor; "
              f"eager imports {eager_s:.2f} s, ratio {seconds / eager_s:.2f})")
    print(f"groups: {groups}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
