# The adk-eval-action container, as GitHub's runner builds it for `runs.image: Dockerfile`.
#
# The runner starts it as root with the checkout mounted at /github/workspace, HOME at
# /github/home and the workspace as working directory; it overrides WORKDIR and ignores
# USER (docs: actions/reference/workflows-and-actions/dockerfile-support).
#
# Building behind a TLS-intercepting proxy: mount the host CA bundle for the build only and
# name it in PIP_CERT; it is never copied into an image layer:
#   podman build --network host -v "$SSL_CERT_FILE:/etc/ssl/host-ca.crt:ro" \
#     --build-arg PIP_CERT=/etc/ssl/host-ca.crt -t adk-eval-action .
FROM debian:bookworm-slim AS base

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# git: baselines are evaluated on a worktree of the base ref. ca-certificates: HTTPS to the
# model APIs and to PyPI when the user's requirements are installed at start.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv \
 # The runner mounts a checkout created by another user; without this git refuses it with
 # "detected dubious ownership". System scope because HOME is /github/home at run time.
 && git config --system --add safe.directory /github/workspace

# Only the dependency list of pyproject.toml, so that the next stage's slow install
# (google-adk[eval], minutes) is redone only when the dependencies change.
FROM base AS dependencies
COPY pyproject.toml /tmp/pyproject.toml
RUN python3 -c "import tomllib; deps = tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']['dependencies']; print('\n'.join(deps))" > /tmp/requirements.txt

FROM base
# Unset on GitHub's runners; see the header for builds behind a proxy. An ARG is in the
# environment of every RUN below, where pip reads it.
ARG PIP_CERT

COPY --from=dependencies /tmp/requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt

COPY . /src
# pyproject.toml names README.md as the long description; a build context without it
# (a trimmed checkout) must still build. Bytecode is compiled now, not on every start.
RUN cd /src \
 && { test -f README.md || : > README.md; } \
 && pip install --no-deps . \
 && python -m compileall -q /opt/venv/lib \
 && rm -rf /src

WORKDIR /github/workspace
ENTRYPOINT ["/opt/venv/bin/adk-eval-action", "action"]
