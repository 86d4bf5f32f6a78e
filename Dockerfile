# syntax=docker/dockerfile:1
# The adk-eval-action image. The release workflow builds it for linux/amd64 and linux/arm64
# and pushes it to GHCR; action.yml runs that published image, so a workflow run pulls it
# instead of building it. Build it yourself for local runs or a derived image (docs/action.md).
#
# Three stages, two of them thrown away:
#   os     Debian + python3 + git + ca-certificates, without docs, man pages, locales and
#          apt's lists and caches;
#   build  a virtualenv made from requirements.lock (every version pinned, every file
#          checked against its sha256) plus this package, then pip, setuptools and the
#          packages' own tests removed and all bytecode compiled;
#   final  `os` and the virtualenv copied onto an empty image, so nothing that a stage
#          deleted still weighs in a lower layer (no pip, no compilers, no caches).
#
# The runner starts it as root with the checkout mounted at /github/workspace, HOME at
# /github/home and the workspace as working directory; it overrides WORKDIR and ignores
# USER (docs: actions/reference/workflows-and-actions/dockerfile-support).
#
# Building behind a TLS-intercepting proxy: mount the host CA bundle for the build only and
# name it in PIP_CERT; it is never copied into an image layer:
#   podman build --network host -v "$SSL_CERT_FILE:/etc/ssl/host-ca.crt:ro" \
#     --build-arg PIP_CERT=/etc/ssl/host-ca.crt -t adk-eval-action .
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS os
# The same path filters as Docker's official debian:*-slim images, so that nothing installed
# below brings its docs, man pages or translations (copyright notices are kept).
RUN printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
      'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' \
      'path-exclude /usr/share/info/*' 'path-exclude /usr/share/lintian/*' \
      'path-exclude /usr/share/locale/*' > /etc/dpkg/dpkg.cfg.d/adk-eval-action-slim \
 && apt-get update \
 # git: baselines are evaluated on a worktree of the base ref. ca-certificates: HTTPS to
 # the model APIs and to PyPI for the `requirements` input.
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 git ca-certificates \
 # The runner mounts a checkout created by another user; without this git refuses it with
 # "detected dubious ownership". System scope because HOME is /github/home at run time.
 && git config --system --add safe.directory /github/workspace \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/log/* \
      /usr/share/man/* /usr/share/info/* /usr/share/locale/* \
 && find /usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete

FROM os AS build
# Unset on GitHub's runners; see the header for builds behind a proxy. An ARG is in the
# environment of every RUN below, where pip reads it.
ARG PIP_CERT
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3-venv binutils \
 && python3 -m venv /opt/venv

# The lock alone first: this layer (minutes) is rebuilt only when a pinned version changes.
COPY requirements.lock /tmp/requirements.lock
RUN /opt/venv/bin/pip install --require-hashes --no-deps -r /tmp/requirements.lock

COPY pyproject.toml README.md LICENSE /src/
COPY src /src/src
# Our package without dependencies (the lock has them all), then what the final image does
# not need:
#  - pip and setuptools: the `requirements` input is installed with uv (from the lock);
#  - the tests and type stubs that packages ship, and the LiteLLM proxy server's web
#    dashboard (24 MB of JavaScript; LiteLlm agents use litellm's client, not its proxy);
#  - symbol tables of extension modules (30 MB). Only modules without an RPATH/RUNPATH:
#    auditwheel's patchelf edits those and the bundled *.libs, and strip breaks such files
#    ("ELF load command address/offset not page-aligned"); each stripped file is loaded
#    once below, so a bad strip fails the build, not a run;
# then bytecode for everything. unchecked-hash .pyc files are used as they are, never
# compared with the sources: nothing in the image edits them, and a copy between stages may
# change the timestamps that default .pyc files are checked against.
RUN /opt/venv/bin/pip install --no-deps /src \
 && /opt/venv/bin/python -m pip uninstall -y -q pip setuptools \
 && find /opt/venv -depth -type d \( -name tests -o -name __pycache__ \) -exec rm -rf {} + \
 && find /opt/venv -name '*.pyi' -delete \
 && rm -rf /opt/venv/lib/python3.11/site-packages/litellm/proxy/_experimental/out \
 && find /opt/venv/lib -name '*.so' -type f ! -path '*.libs/*' > /tmp/extensions \
 && while read -r so; do \
      readelf -d "$so" | grep -qE 'RPATH|RUNPATH' || { strip --strip-unneeded "$so" && echo "$so"; }; \
    done < /tmp/extensions > /tmp/stripped \
 && /opt/venv/bin/python -c "import ctypes, sys; [ctypes.CDLL(p.strip()) for p in open('/tmp/stripped')]" \
 && /opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv \
 && /opt/venv/bin/python -c "import adk_eval_action.cli, google.adk.evaluation.local_eval_service" \
 && rm -rf /src /tmp/extensions /tmp/stripped

FROM scratch
COPY --from=os / /
COPY --from=build /opt/venv /opt/venv
# uv (the `requirements` input's installer) copies from its cache, which lies on another
# file system (/github/home), and never downloads a Python of its own.
ENV PYTHONUNBUFFERED=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8
LABEL org.opencontainers.image.description="Runs Google ADK agent evaluations on pull requests, compares with the baseline, comments and gates." \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /github/workspace
ENTRYPOINT ["/opt/venv/bin/adk-eval-action", "action"]
