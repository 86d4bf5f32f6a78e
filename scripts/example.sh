#!/usr/bin/env bash
# Runs the main job end to end on the bundled example, offline and with no keys:
#   1. the good travel_agent is evaluated and recorded as the baseline (exit 0),
#   2. the regressed variant is evaluated, compared with that baseline, the PR comment
#      printed, and the gate fails (exit 1).
# Set-up included: a virtualenv in .venv with this package installed (first run only).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/adk-eval-action ]; then
  "$PYTHON" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e .
fi
OUT=$(pwd)/out
mkdir -p "$OUT"
cd examples

echo "== 1/2 baseline: the good agent (expect exit 0)"
../.venv/bin/adk-eval-action run travel_agent --results-out "$OUT/baseline.json"

echo
echo "== 2/2 head: the regressed agent, compared with the baseline (expect exit 1)"
set +e
../.venv/bin/adk-eval-action run --config regressed.adk-eval.yaml \
  --baseline "$OUT/baseline.json" --results-out "$OUT/head.json" \
  --comment-out "$OUT/comment.md" --summary-out "$OUT/summary.md"
code=$?
set -e
echo
echo "== the PR comment ($OUT/comment.md)"
cat "$OUT/comment.md"
echo
echo "== exit code $code"
if [ "$code" -eq 1 ]; then
  echo "Exit 1 is the expected result: the regressed agent calls get_weather with a wrong"
  echo "argument (tool_trajectory_avg_score 0.0 on weather_paris), drops 'Celsius' that an"
  echo "untyped case rubric asks for (rubric 1 -> 0), and answers rudely and at length"
  echo "(politeness, brevity), so eval cases that passed on the baseline now fail the gate."
  exit 0
fi
echo "Unexpected exit code $code (0 = gate passed, 2 = usage/config error)." >&2
exit 1
