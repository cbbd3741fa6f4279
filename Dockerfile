# syntax=docker/dockerfile:1
# gitmedic's service image: `gitmedic serve` (the webhook endpoint and the monitor).
#
#   docker build --build-arg GITMEDIC_VERSION=0.2.0 -t gitmedic:0.2.0 .
#   docker run --read-only --tmpfs /tmp -v gitmedic-state:/var/lib/gitmedic \
#     -e GITMEDIC_WEBHOOK_SECRET -e GITHUB_REPOSITORY -e GITHUB_TOKEN -p 8080:8080 gitmedic:0.2.0
#
# GITMEDIC_VERSION is the version the git tag gives (the context has no .git for
# setuptools-scm to read; tools/image/build.sh and the release workflow pass it).
#
# Two stages: the build stage makes the wheel and installs it with every extra
# into a venv; the final stage is the same slim Python plus git (gitmedic clones
# the manifest repository) and that venv, no compiler, no pip cache, no sources;
# the base's own pip (python:*-slim has one in /usr/local) is removed too.
# PYTHON_IMAGE lets a build use a mirror of the same Debian-based image. pip is
# upgraded before [all] is resolved: an old resolver (Debian 12's pip 23.0) backtracks
# through litellm's boto3 pins for more than 25 minutes (seen in a buildah build).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG GITMEDIC_VERSION=0.0.0
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 \
    SETUPTOOLS_SCM_PRETEND_VERSION=${GITMEDIC_VERSION}
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install build \
 && /opt/build/bin/python -m build --wheel --outdir /dist . \
 && python3 -m venv /opt/gitmedic \
 && /opt/gitmedic/bin/pip install --upgrade pip \
 && /opt/gitmedic/bin/pip install "$(ls /dist/gitmedic-*.whl)[all]" \
 && /opt/gitmedic/bin/pip uninstall --yes pip setuptools \
 && /opt/gitmedic/bin/python -m compileall -q /opt/gitmedic

FROM ${PYTHON_IMAGE}
ARG GITMEDIC_VERSION=0.0.0
ARG GITMEDIC_REVISION=unknown
LABEL org.opencontainers.image.title="gitmedic" \
      org.opencontainers.image.description="An SRE bot for GitOps-deployed Kubernetes apps; every mitigation is a pull request." \
      org.opencontainers.image.source="https://github.com/gitmedic/gitmedic" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${GITMEDIC_VERSION}" \
      org.opencontainers.image.revision="${GITMEDIC_REVISION}"
RUN apt-get update \
 && apt-get install --yes --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 gitmedic \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/gitmedic \
      --shell /usr/sbin/nologin gitmedic \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/gitmedic \
 && if python3 -m pip --version >/dev/null 2>&1; then \
      python3 -m pip uninstall --yes --quiet pip setuptools wheel; fi
COPY --from=build /opt/gitmedic /opt/gitmedic
# A read-only root filesystem works: bytecode is compiled at build time and never
# written, and everything written goes to the state volume or /tmp (HOME is the
# state directory, so git's files land there too).
ENV PATH=/opt/gitmedic/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/var/lib/gitmedic \
    GITMEDIC_STATE_DIR=/var/lib/gitmedic \
    GITMEDIC_HOST=0.0.0.0 \
    GITMEDIC_PORT=8080
VOLUME ["/var/lib/gitmedic"]
WORKDIR /var/lib/gitmedic
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["gitmedic", "serve"]
