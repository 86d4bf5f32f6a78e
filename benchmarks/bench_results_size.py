"""Results file size with a long agent instruction: the help-desk fixture
(tests/fixtures/helpdesk: 2 eval cases x 6 invocations, three tools) with its instruction
repeated to at least ``--instruction-kb`` KB, evaluated once with the stand-in models.

Prints, side by side, the results file as written (each agent's details once per suite,
the invocations referring to them: results ``schema_version`` 2) and the same results with
the details inlined in every invocation, as ``schema_version`` 1 wrote them, and their
ratio. Run: ``python benchmarks/bench_results_size.py [--instruction-kb 10] [--num-runs 1]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "helpdesk"


def _long_instruction_copy(root: Path, kb: float) -> Path:
    """The fixture in ``root`` with the agent's instruction repeated to ``kb`` KB or more."""
    shutil.copytree(FIXTURE / "helpdesk", root / "helpdesk",
                    ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    agent = root / "helpdesk" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + (
        f"\nroot_agent.instruction = INSTRUCTION * (1 + int({kb * 1000}) // len(INSTRUCTION))\n"
    ), encoding="utf-8")
    return root


def _inlined(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with every invocation's agent details in place of its reference: the
    layout of results ``schema_version`` 1 (a file already in it is returned as is)."""
    for suite in results["suites"]:
        table = suite.pop("agent_details", {})
        for eval_set in suite["eval_sets"]:
            for case in eval_set["eval_cases"]:
                invocations = [*(case.get("expected_invocations") or [])]
                invocations += [i for r in case["runs"] for i in r.get("actual_invocations") or []]
                for invocation in invocations:
                    agents = (invocation.get("app_details") or {}).get("agent_details") or {}
                    for name, details in agents.items():
                        if isinstance(details, str):
                            agents[name] = table[details]
    return results


def _run(workdir: Path, num_runs: int) -> Path:
    from adk_eval_action.cli import main
    from adk_eval_action.testing.standins import register_standins

    register_standins()
    out = workdir / "results.json"
    here = Path.cwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
            main(["run", "helpdesk", "--results-out", str(out), "--num-runs", str(num_runs),
                  "--quiet"], standalone_mode=False)
    finally:
        os.chdir(here)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instruction-kb", type=float, default=10.0)
    parser.add_argument("--num-runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = _long_instruction_copy(Path(tmp), args.instruction_kb)
        written = _run(workdir, args.num_runs).read_bytes()
    results = json.loads(written)
    suite = results["suites"][0]
    invocations = [i for e in suite["eval_sets"] for c in e["eval_cases"] for r in c["runs"]
                   for i in r.get("actual_invocations") or []]
    details = [i["app_details"]["agent_details"]["helpdesk"] for i in invocations]
    instruction = next((d if isinstance(d, dict) else suite["agent_details"][d])
                       for d in details)["instructions"]
    inline = (json.dumps(_inlined(results), indent=2, ensure_ascii=False) + "\n").encode()
    print(f"instruction: {len(instruction):,} characters; {len(invocations)} invocations "
          f"(schema_version {results['schema_version']} written)")
    print(f"{'layout':<44} {'bytes':>10} {'per invocation':>15}")
    for name, size in (("as written", len(written)),
                       ("details in every invocation (schema 1)", len(inline))):
        print(f"{name:<44} {size:>10,} {size // max(1, len(invocations)):>15,}")
    print(f"ratio (schema 1 / as written): {len(inline) / len(written):.2f}x")


if __name__ == "__main__":
    sys.exit(main())
