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
# Three stages: the tools stage fetches a Go toolchain from the Go module proxy
# (checked against the Go checksum database's hash, tools/image/go_toolchain.py) and
# builds helm and kustomize with it, the versions .ci/tools.txt pins, every module
# checked by Go's checksum database and the tool's go.sum; the build stage makes the
# wheel and installs it with the extras GITMEDIC_EXTRAS names into a venv, then trims
# what no code of gitmedic's reaches (tools/image/trim.py); the final stage is the same
# slim Python plus git (gitmedic clones the manifest repository), helm, kustomize and
# that venv, no compiler, no Go, no pip cache, no sources; the base's own pip
# (python:*-slim has one in /usr/local) is removed too. kustomize is the standalone
# binary (20 MB), not the [kustomize] extra's kubectl (60 MB): gitmedic runs either
# (reconciler/manifests/kustomize.py).
#
# Variants: the default image has every extra but [kustomize] (kubectl; the kustomize
# binary does its work) and [llm] (litellm and its closure, about 300 MB); the -llm
# variant (tools/image/build.sh --llm) adds the model client for the LLM responder
# strategy.
#
# PYTHON_IMAGE is pinned by digest (a multi-arch index of python:3.11-slim-bookworm).
# The digest was read from public code, not from the registry (this project's build
# machine cannot reach Docker Hub): it is the one at least ten independent public
# Dockerfiles in the search index pin for that tag in 2026, one noting the registry's
# manifest was rechecked. Renovate's "docker digest" updates keep such pins current;
# check it with `docker buildx imagetools inspect` before a release. PYTHON_IMAGE lets a
# build use a mirror of the same image, or (tools/image/build.sh) a bookworm base made
# by debootstrap, pinned by its package list (tools/image/base-packages.txt).
# pip is upgraded before the extras are resolved: an old resolver (Debian 12's pip
# 23.0) backtracks through litellm's boto3 pins for more than 25 minutes.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:2e32f7d302adc1c37428355c1e646897c0c53f4fd60b6a551245fb90ee129f91

FROM ${PYTHON_IMAGE} AS tools
ARG GO_VERSION=1.26.8
# sum.golang.org's hash of golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64
ARG GO_TOOLCHAIN_SUM=h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=
ARG HELM_VERSION=v3.22.0
# sum.golang.org's hash of helm.sh/helm/v3@v3.22.0, checked again after go's own check
ARG HELM_MODULE_SUM=h1:n1if5iQgHYsujPAcO5oonH/KiSNUmqmUF0iGVjSF3AU=
ARG KUSTOMIZE_VERSION=v5.8.1
# sum.golang.org's hash of sigs.k8s.io/kustomize/kustomize/v5@v5.8.1 (kubectl 1.37's)
ARG KUSTOMIZE_MODULE_SUM=h1:Pgsg5psubpVEy7Nf6S89PARg5VmmWUC1l9dC6Dl4PG0=
# Build-time only (a mounted CA for a TLS-intercepting proxy); never in the final stage.
ARG BUILD_CA=
ENV GOTOOLCHAIN=local GOSUMDB=sum.golang.org GONOSUMDB= GONOSUMCHECK= GOFLAGS=-trimpath \
    CGO_ENABLED=0 GOPATH=/tmp/gopath GOCACHE=/tmp/gocache
COPY tools/image/go_toolchain.py /tmp/go_toolchain.py
RUN if [ -n "$BUILD_CA" ]; then export SSL_CERT_FILE="$BUILD_CA"; fi \
 && python3 /tmp/go_toolchain.py "$GO_VERSION" "$GO_TOOLCHAIN_SUM" /opt/go \
 && sum=$(/opt/go/bin/go mod download -json "helm.sh/helm/v3@$HELM_VERSION" \
          | sed -n 's/^\t"Sum": "\(.*\)",$/\1/p') \
 && if [ "$sum" != "$HELM_MODULE_SUM" ]; then \
      echo "helm.sh/helm/v3@$HELM_VERSION has $sum, expected $HELM_MODULE_SUM" >&2; exit 1; fi \
 && GOBIN=/opt/tools nice -n 19 /opt/go/bin/go install \
      -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
      "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
 && rm -rf /tmp/gopath /tmp/gocache /opt/go \
 && /opt/tools/helm version --short
# kustomize in a step of its own (helm's layer stays cached when only it changes), with
# the same checked toolchain; its version is the module's, which `kustomize version`
# prints from the build information.
RUN if [ -n "$BUILD_CA" ]; then export SSL_CERT_FILE="$BUILD_CA"; fi \
 && python3 /tmp/go_toolchain.py "$GO_VERSION" "$GO_TOOLCHAIN_SUM" /opt/go \
 && module=sigs.k8s.io/kustomize/kustomize/v5 \
 && sum=$(/opt/go/bin/go mod download -json "$module@$KUSTOMIZE_VERSION" \
          | sed -n 's/^\t"Sum": "\(.*\)",$/\1/p') \
 && if [ "$sum" != "$KUSTOMIZE_MODULE_SUM" ]; then \
      echo "$module@$KUSTOMIZE_VERSION has $sum, expected $KUSTOMIZE_MODULE_SUM" >&2; exit 1; fi \
 && GOBIN=/opt/tools nice -n 19 /opt/go/bin/go install -ldflags "-s -w" \
      "$module@$KUSTOMIZE_VERSION" \
 && rm -rf /tmp/gopath /tmp/gocache /opt/go \
 && /opt/tools/kustomize version

FROM ${PYTHON_IMAGE} AS build
ARG GITMEDIC_EXTRAS=rules,kube,github,serve,completion,postgres
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# The extras' dependencies first, read from pyproject.toml alone: this layer is reused
# until pyproject.toml (or the extras) change, not redone for each commit's version.
COPY pyproject.toml ./
COPY tools/image/extras_requirements.py /tmp/
RUN python3 /tmp/extras_requirements.py pyproject.toml "$GITMEDIC_EXTRAS" >/tmp/requirements.txt \
 && python3 -m venv /opt/build \
 && /opt/build/bin/pip install build \
 && python3 -m venv /opt/gitmedic \
 && /opt/gitmedic/bin/pip install --upgrade pip \
 && /opt/gitmedic/bin/pip install -r /tmp/requirements.txt
ARG GITMEDIC_VERSION=0.0.0
COPY README.md LICENSE ./
COPY src ./src
RUN SETUPTOOLS_SCM_PRETEND_VERSION="$GITMEDIC_VERSION" \
      /opt/build/bin/python -m build --wheel --outdir /dist . \
 && /opt/gitmedic/bin/pip install --no-deps "$(ls /dist/gitmedic-*.whl)" \
 && /opt/gitmedic/bin/pip check \
 && /opt/gitmedic/bin/pip uninstall --yes pip setuptools
# What no code of gitmedic's reaches, removed for size (tools/image/trim.py says what
# and why; tests/packaging/test_image.py runs the live-cluster imports, CEL and the
# strict schema validation in the built image), and the symbol tables of native
# extensions shipped unstripped (cel-expr-python's 42 MB of them lose 13 MB). binutils
# is for this stage only.
COPY tools/image/trim.py /tmp/
RUN apt-get update \
 && apt-get install --yes --no-install-recommends binutils \
 && find /opt/gitmedic -name '*.so' -type f -exec strip --strip-unneeded {} + \
 && site=$(/opt/gitmedic/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && python3 /tmp/trim.py "$site" \
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
# git without perl (48 MB): Debian's git depends on perl for a few scripted commands
# (send-email, svn, cvs*, archimport, instaweb) that gitmedic never runs; every
# command it runs is built into git or a shell script (tests/packaging/test_image.py
# runs them in the built image). perl is removed in the step that installs it, so no
# layer carries it, with --force-depends (perl-base, which is essential, stays); apt
# is never run in the image afterwards. dpkg leaves out git's server-side programs
# (daemon, shell, http-backend, http-push, imap-send, scalar, gitweb, 17 MB), which a
# client never runs. apt's lists, its package caches (/var/cache/apt/*.bin, 80 MB) and
# the packages it downloaded (/var/cache/apt/archives, 18 MB: the debootstrap base has
# no docker-clean hook deleting them) are not shipped.
RUN printf 'path-exclude %s\n' /usr/lib/git-core/git-daemon /usr/lib/git-core/git-shell \
      /usr/bin/git-shell /usr/lib/git-core/git-http-backend /usr/lib/git-core/git-http-push \
      /usr/lib/git-core/git-imap-send /usr/lib/git-core/scalar /usr/bin/scalar \
      '/usr/share/gitweb/*' '/usr/share/perl5/Git*' >/etc/dpkg/dpkg.cfg.d/gitmedic-git \
 && apt-get update \
 && apt-get install --yes --no-install-recommends git ca-certificates \
 && dpkg --purge --force-depends $(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' \
      | awk '$1 == "ii" && $2 ~ /^(perl|perl-modules-.*|libperl5.*|liberror-perl)$/ {print $2}') \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb \
 && groupadd --gid 10001 gitmedic \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/gitmedic \
      --shell /usr/sbin/nologin gitmedic \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/gitmedic \
 && if python3 -m pip --version >/dev/null 2>&1; then \
      python3 -m pip uninstall --yes --quiet pip setuptools wheel; fi
COPY --from=tools /opt/tools/helm /opt/tools/kustomize /usr/local/bin/
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
