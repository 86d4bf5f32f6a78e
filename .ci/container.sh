#!/usr/bin/env bash
# Prepares this machine to build and run the action's image with podman, as
# tests/e2e/test_container.py does, where no Docker engine runs and no container registry is
# reachable (only the package registries):
#   1. installs podman, runc and debootstrap from Debian's packages (apt, as root);
#   2. writes a containers.conf that works in a sandboxed VM (no ulimit inheritance, cgroupfs,
#      runc, file events);
#   3. builds a Debian bookworm (minbase) root with debootstrap from Debian's mirror and
#      imports it as docker.io/library/debian:bookworm-slim, so the Dockerfile's
#      `FROM debian:bookworm-slim` resolves locally without a pull.
# Idempotent: a second run only checks (about 2 minutes the first time).
#
# Called from .ci/run before pytest. Never fails the CI run by itself: where podman cannot
# be prepared, it says why and the container test skips with that reason. Set
# ADK_EVAL_REQUIRE_CONTAINER=1 for pytest to make that skip a failure instead.
set -uo pipefail
BASE_TAG=docker.io/library/debian:bookworm-slim
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

prepare() {
  local need=() c root
  for c in podman runc debootstrap; do command -v "$c" >/dev/null || need+=("$c"); done
  if ((${#need[@]})); then
    apt-get update -qq || return 1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null || return 1
  fi
  mkdir -p /etc/containers || return 1
  cat > /etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  if ! podman image exists "$BASE_TAG"; then
    root=$(mktemp -d)
    debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >/dev/null || { rm -rf "$root"; return 1; }
    tar -C "$root" -c . | podman import - "$BASE_TAG" >/dev/null || { rm -rf "$root"; return 1; }
    rm -rf "$root"
  fi
  podman run --rm --network host "$BASE_TAG" true
}

started=$SECONDS
if prepare; then
  echo "container.sh: podman $(podman --version | awk '{print $3}') ready in $((SECONDS - started)) s; base image $BASE_TAG present"
else
  echo "container.sh: preparing podman failed (exit $?); tests/e2e/test_container.py will skip"
fi
exit 0
