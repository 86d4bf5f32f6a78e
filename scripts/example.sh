#!/usr/bin/env bash
# Runs the main job end to end on the bundled examples, offline and with no keys:
#   1. the good travel_agent is evaluated and recorded as the baseline (exit 0),
#   2. the regressed variant is evaluated, compared with that baseline, the PR comment
#      printed, and the gate fails (exit 1);
#   3. examples/monorepo (three agents, the order desk with a dependency of its own), in a
#      git repository of its own under out/: `init` writes adk-eval.yaml and the workflow,
#      and a push to main records the results (exit 0),
#   4. a pull request makes the forecast agent guess: compared with main's results, its
#      regression fails the gate (exit 1); the other two agents are unchanged.
# Both agents run on gemini-2.5-flash through ADK's Gemini class and google-genai, against a
# local fake of the Gemini API (adk_eval_action.testing.gemini_fake, answering from
# examples/gemini_fake.yaml) started here on 127.0.0.1 with a dummy key.
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

# The fake Gemini API, stopped (by its process id) when this script ends.
rm -f "$OUT/gemini-fake.port"
.venv/bin/python -m adk_eval_action.testing.gemini_fake --script examples/gemini_fake.yaml \
  --port-file "$OUT/gemini-fake.port" 2>"$OUT/gemini-fake.log" &
FAKE_PID=$!
trap 'kill "$FAKE_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 3000); do  # up to 5 min: it imports google-adk, slow on a loaded machine
  [ -s "$OUT/gemini-fake.port" ] && break
  kill -0 "$FAKE_PID" 2>/dev/null || { cat "$OUT/gemini-fake.log" >&2; exit 1; }
  sleep 0.1
done
export GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$(cat "$OUT/gemini-fake.port")"
export GOOGLE_API_KEY=fake-gemini-key GOOGLE_GENAI_USE_VERTEXAI=false
unset GEMINI_API_KEY
echo "fake Gemini API: $GOOGLE_GEMINI_BASE_URL"
ADK_EVAL="$(pwd)/.venv/bin/adk-eval-action"
cd examples

echo "== 1/4 baseline: the good agent (expect exit 0)"
../.venv/bin/adk-eval-action run travel_agent --results-out "$OUT/baseline.json"

echo
echo "== 2/4 head: the regressed agent, compared with the baseline (expect exit 1)"
set +e
../.venv/bin/adk-eval-action run --config regressed.adk-eval.yaml \
  --baseline "$OUT/baseline.json" --results-out "$OUT/head.json" \
  --comment-out "$OUT/comment.md" --summary-out "$OUT/summary.md" --html-out "$OUT/report.html"
code=$?
set -e
echo
echo "== the PR comment ($OUT/comment.md)"
cat "$OUT/comment.md"
echo
echo "== the HTML report: $OUT/report.html (open it in a browser)"
echo "== exit code $code"
if [ "$code" -ne 1 ]; then
  echo "Unexpected exit code $code (0 = gate passed, 2 = incomplete: config, credentials or model errors)." >&2
  exit 1
fi
echo "Exit 1 is the expected result: the regressed agent calls get_weather with a wrong"
echo "argument (tool_trajectory_avg_score 0.0 on weather_paris), drops 'Celsius' that an"
echo "untyped case rubric asks for (rubric 1 -> 0), and answers rudely and at length"
echo "(politeness, brevity), so eval cases that passed on the baseline now fail the gate."

echo
echo "== 3/4 the monorepo: init, then a push to main that records its results (expect exit 0)"
MONO="$OUT/monorepo"
rm -rf "$MONO"
cp -R monorepo "$MONO"
cd "$MONO"
git init -q -b main
"$ADK_EVAL" init --num-runs 3
git add -A
git -c user.name=example -c user.email=example@example.com commit -qm "three agents"
"$ADK_EVAL" run --record --results-out "$OUT/monorepo-main.json" \
  --history-out "$OUT/monorepo-history.json"

echo
echo "== 4/4 a pull request: the forecast agent guesses instead of looking up (expect exit 1)"
"$(dirname "$ADK_EVAL")/python" - <<'PATCH'
from pathlib import Path
agent = Path("agents/weather/weather_agent/agent.py")
agent.write_text(agent.read_text().replace(
    "Look the forecast up with get_forecast and", "Guess the forecast, never look it up;"))
PATCH
set +e
"$ADK_EVAL" run --baseline "$OUT/monorepo-main.json" --results-out "$OUT/monorepo-pr.json" \
  --comment-out "$OUT/monorepo-comment.md"
code=$?
set -e
echo
echo "== the monorepo PR comment ($OUT/monorepo-comment.md)"
cat "$OUT/monorepo-comment.md"
echo "== exit code $code"
if [ "$code" -eq 1 ]; then
  echo "Exit 1 is the expected result: weather_agent no longer calls get_forecast"
  echo "(tool_trajectory_avg_score 1.0 -> 0.0) and its answers miss the expected ones;"
  echo "faq_agent and orders_agent score as on main."
  exit 0
fi
echo "Unexpected exit code $code (0 = gate passed, 2 = incomplete)." >&2
exit 1
