"""Loading a 10,000-case eval set: the eval-id line lookup as one linear scan
(``project.eval_ids.eval_id_lines``) beside the pattern-per-eval-id search it replaced,
and the whole ``adk.files.evalsets.load_eval_set`` (most of which is ADK's own ``EvalSet``
validation).

    python benchmarks/bench_evalset_load.py [CASES]
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _measure import timed

from adk_eval_action.adk.files.evalsets import load_eval_set
from adk_eval_action.project.eval_ids import eval_id_lines


def _old_lines(text: str, eval_ids: list[str]) -> dict[str, int]:
    """The replaced lookup: a pattern per eval id over the whole text, plus ids.count."""
    sorted({i for i in eval_ids if eval_ids.count(i) > 1})
    lines = {}
    for eval_id in eval_ids:
        pattern = re.compile(r'"(?:eval_id|evalId|name)"\s*:\s*' + re.escape(json.dumps(eval_id)))
        match = pattern.search(text)
        lines[eval_id] = text.count("\n", 0, match.start()) + 1 if match else 1
    return lines


def _eval_set(cases: int) -> str:
    turn = {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]},
            "final_response": {"role": "model", "parts": [{"text": "hello"}]}}
    return json.dumps({"eval_set_id": "big", "eval_cases": [
        {"eval_id": f"case_{i}", "conversation": [turn]} for i in range(cases)]}, indent=2)


def main(cases: int = 10_000) -> None:
    text = _eval_set(cases)
    ids = [f"case_{i}" for i in range(cases)]
    new = min(timed(lambda: (eval_id_lines(text), Counter(ids)), 3))
    small = max(1, cases // 10)  # the old lookup is quadratic: measured on a tenth
    old_small = min(timed(lambda: _old_lines(text, ids[:small]), 1))
    old = old_small * cases / small
    assert eval_id_lines(text) == _old_lines(text, ids[:small]) | eval_id_lines(text)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.evalset.json"
        path.write_text(text)
        whole = min(timed(lambda: load_eval_set(path), 2))
    print(f"{cases:,} eval cases, {len(text) / 1e6:.1f} MB")
    print(f"eval-id lines, one scan:          {new:8.3f} s")
    print(f"eval-id lines, pattern per id:    {old:8.3f} s (extrapolated from {small:,} ids)")
    print(f"ratio:                            {old / new:8.0f}x")
    print(f"load_eval_set (ADK validation):   {whole:8.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
