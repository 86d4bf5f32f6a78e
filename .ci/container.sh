#!/usr/bin/env bash
# Prepares this machine to build and run the action's image with podman, as
# tests/e2e/test_container.py does (no Docker engine here; see ../shared/tools/container-setup.sh:
# podman + runc + a locally made debian:bookworm-slim base image).
#
# Called from .ci/run before pytest. Never fails the CI run by itself: where podman cannot
# be prepared, it says why and the container test skips with that reason. Set
# ADK_EVAL_REQUIRE_CONTAINER=1 for pytest to make that skip a failure instead.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
setup="$here/../shared/tools/container-setup.sh"

if [[ ! -f "$setup" ]]; then
  echo "container.sh: $setup not found; tests/e2e/test_container.py will skip"
  exit 0
fi
started=$SECONDS
if bash "$setup"; then
  echo "container.sh: podman ready in $((SECONDS - started)) s"
else
  echo "container.sh: container-setup.sh failed (exit $?); tests/e2e/test_container.py will skip"
fi
exit 0
