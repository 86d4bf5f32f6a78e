#!/usr/bin/env bash
# Regenerates requirements.lock: every package the image installs, pinned with the sha256 of
# each of its files on PyPI, for the image's Python (Debian bookworm's 3.11) on every platform
# (--universal: the release builds linux/amd64 and linux/arm64 from the same lock).
#
# Run after changing pyproject.toml's dependencies or requirements-image.in; pass
# `--upgrade` to move every pin to the newest version the ranges allow (then run
# scripts/compat.sh before committing). tests/repo/test_packaging.py checks that every pin
# satisfies pyproject.toml's ranges.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
uv=(uv)
if ! command -v uv >/dev/null || [[ $(uv --version | awk '{print $2}') != "$UV_VERSION" ]]; then
  tools=${TMPDIR:-/tmp}/adk-eval-action-lock-tools
  [[ -x $tools/bin/uv ]] || { python3 -m venv "$tools" && "$tools/bin/pip" install -q "uv==$UV_VERSION"; }
  uv=("$tools/bin/uv")
fi
# The header line names this script, not uv's own command line, as the way to redo it.
UV_CUSTOM_COMPILE_COMMAND="scripts/lock.sh" "${uv[@]}" pip compile \
  pyproject.toml requirements-image.in \
  --universal --python-version 3.11 --generate-hashes --no-strip-extras \
  --index-url https://pypi.org/simple --quiet "$@" -o requirements.lock
echo "requirements.lock: $(grep -c '^[a-z0-9].*==' requirements.lock) pinned packages"
