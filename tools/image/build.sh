#!/usr/bin/env bash
# Builds gitmedic's container image with buildah, with no registry: the base is a
# Debian bookworm root filesystem made by debootstrap from Debian's packages
# (bookworm's python3 is 3.11, the version python:3.11-slim-bookworm carries).
#
#   tools/image/build.sh [--llm] [TAG]  (default TAG: localhost/gitmedic:<version>[-llm])
#   tools/image/build.sh --print-base   (the cached base's name; exit 1 when absent)
#   tools/image/build.sh --print-version (the version the image's gitmedic reports)
#   tools/image/build.sh --record-base  (rewrite base-packages.txt from a fresh base)
#
# The default image has every extra but [llm] and [kustomize] (whose kubectl, 60 MB,
# the standalone kustomize replaces); --llm builds the variant with the model client
# too (tagged -llm). helm and kustomize are built inside the build from the Go module
# proxy at the versions .ci/tools.txt pins (see the Dockerfile).
#
# The debootstrap base is pinned by what can be checked: debootstrap verifies the
# suite's signed InRelease with Debian's archive keyring (given explicitly, so an
# unsigned or wrongly signed mirror fails), and the base's packages, name=version,
# must equal tools/image/base-packages.txt (bookworm's main suite no longer moves
# since it went to LTS; a change fails the build with the difference, and
# --record-base records the new list for review). The built base's image ID is
# printed, and kept in its name's key with that list.
#
# The base is cached, keyed by everything that goes into it (suite, mirror,
# package list, this script's base recipe), as the local image
# localhost/gitmedic-base:<key>, so a second run only rebuilds gitmedic's stages.
# GITMEDIC_IMAGE_BASE names another local base instead (python:3.11-slim-bookworm
# from a mirror, say): then debootstrap is not needed.
#
# The host's CA bundle reaches pip only while the build stage runs (a read-only
# bind mount with a pip.conf naming it); nothing of it is committed to any layer.
# The final stage does not need it: it talks to the forge with the image's own
# ca-certificates, which is Debian's public bundle.
# pip resolves [all] against tools/image/constraints.txt (versions known to
# install together), mounted the same way, so the resolver does not backtrack.
set -euo pipefail

# All in functions: bash has read the whole file before it runs main, so an edit
# during a long build does not change what the running build executes.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${GITMEDIC_IMAGE_CACHE:-$HOME/.cache/gitmedic-image}
SUITE=bookworm
MIRROR=${GITMEDIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=python3,python3-venv,ca-certificates
KEYRING=${GITMEDIC_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
RECORDED=$ROOT/tools/image/base-packages.txt
# helm's and kustomize's versions in the image are the ones the tests run (.ci/tools.txt)
HELM_VERSION=$(awk '$1 == "helm" {print $2}' "$ROOT/.ci/tools.txt")
KUSTOMIZE_VERSION=$(awk '$1 == "kustomize" {print $2}' "$ROOT/.ci/tools.txt")
EXTRAS=rules,kube,github,serve,completion,postgres
SUFFIX=
if [ "${1:-}" = --llm ]; then
  EXTRAS=$EXTRAS,llm SUFFIX=-llm
  shift
fi
HOST_CA=${GITMEDIC_BUILD_CA:-/etc/ssl/certs/ca-certificates.crt}
# The version the repository's git tags give (setuptools-scm, as the wheel would have it),
# passed into the build as SETUPTOOLS_SCM_PRETEND_VERSION: the build context has no .git.
VERSION=$(cd "$ROOT" && { "${PYTHON:-$ROOT/.venv/bin/python}" -m setuptools_scm 2>/dev/null ||
  python3 -m setuptools_scm 2>/dev/null ||
  git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' || echo 0.0.0; })
REVISION=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
# An image tag has no '+': a local version's 0.2.1.dev3+g1a2b3c4 is tagged 0.2.1.dev3-g1a2b3c4.
TAG=${1:-localhost/gitmedic:${VERSION//+/-}$SUFFIX}
if [ "${1:-}" = --print-version ]; then
  echo "$VERSION"
  exit 0
fi

TOOLS=(buildah)
[ -n "${GITMEDIC_IMAGE_BASE:-}" ] || TOOLS+=(debootstrap)
for tool in "${TOOLS[@]}"; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool is not installed" >&2; exit 2; }
done

base_key() {
  printf '%s\n' "$SUITE" "$MIRROR" "$PACKAGES" "$(sed -n '/^make_base()/,/^}/p' "$0")" \
    "$(cat "$RECORDED" 2>/dev/null)" \
    | sha256sum | cut -c1-16
}

make_base() {
  local rootfs=$1 image=$2 record=${3:-}
  rm -rf "$rootfs"
  [ -r "$KEYRING" ] || { echo "build.sh: no Debian archive keyring at $KEYRING" >&2; exit 2; }
  debootstrap --keyring="$KEYRING" --variant=minbase --include="$PACKAGES" \
    "$SUITE" "$rootfs" "$MIRROR"
  local got
  got=$(chroot "$rootfs" dpkg-query -W -f '${Package}=${Version}\n' | LC_ALL=C sort)
  if [ -n "$record" ]; then
    { echo "# The Debian packages of tools/image/build.sh's base (build.sh --record-base)."
      echo "$got"; } >"$RECORDED"
    echo "build.sh: recorded $(echo "$got" | wc -l) packages in $RECORDED"
  elif ! diff <(grep -v '^#' "$RECORDED") <(echo "$got") >&2; then
    echo "build.sh: the base's packages differ from $RECORDED (above);" \
      "review and run build.sh --record-base" >&2
    rm -rf "$rootfs"
    exit 1
  fi
  # The image's apt talks to the same mirror; apt caches and lists are not shipped.
  echo "deb $MIRROR $SUITE main" >"$rootfs/etc/apt/sources.list"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # No manuals, info pages, translations or documentation but the copyright files
  # (about 65 MB), now and for what a later stage installs: what Debian's own slim
  # images leave out, the same dpkg path-exclude rules.
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/groff/*' \
    'path-exclude /usr/share/lintian/*' >"$rootfs/etc/dpkg/dpkg.cfg.d/gitmedic-slim"
  find "$rootfs/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/lintian/*
  # cp -a into the mounted container keeps owners, groups and set-id bits
  # (buildah copy would make every file root's).
  local ctr mnt
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  cp -a "$rootfs/." "$mnt/"
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --cmd python3 "$ctr"
  buildah commit --quiet --rm "$ctr" "$image" >/dev/null
  echo "build.sh: base $image is image $(buildah inspect --type image --format '{{.FromImageID}}' "$image")"
  rm -rf "$rootfs"
}

main() {
  KEY=$(base_key)
  BASE=${GITMEDIC_IMAGE_BASE:-localhost/gitmedic-base:$KEY}
  if [ "${1:-}" = --record-base ]; then
    mkdir -p "$CACHE"
    make_base "$CACHE/rootfs-record" "localhost/gitmedic-base:record" record
    # the recorded list is part of the key: the base just made is the one it names
    buildah tag localhost/gitmedic-base:record "localhost/gitmedic-base:$(base_key)"
    buildah rmi localhost/gitmedic-base:record >/dev/null
    exit
  fi
  if [ "${1:-}" = --print-base ]; then
    echo "$BASE"
    buildah inspect --type image "$BASE" >/dev/null 2>&1
    exit
  fi
  if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
    echo "build.sh: reusing base $BASE"
  elif [ -n "${GITMEDIC_IMAGE_BASE:-}" ]; then
    echo "build.sh: no local image $BASE (GITMEDIC_IMAGE_BASE)" >&2
    exit 2
  else
    echo "build.sh: making base $BASE with debootstrap ($SUITE, $PACKAGES)"
    mkdir -p "$CACHE"
    make_base "$CACHE/rootfs-$KEY" "$BASE"
  fi

  BUILD_CONF=$(mktemp -d)
  trap 'rm -rf "$BUILD_CONF"' EXIT
  printf '%s\n' "[global]" "cert = /run/gitmedic-build/ca.crt" \
    "constraint = /run/gitmedic-build/constraints.txt" >"$BUILD_CONF/pip.conf"
  cp "$HOST_CA" "$BUILD_CONF/ca.crt"
  cp "$ROOT/tools/image/constraints.txt" "$BUILD_CONF/constraints.txt"

  # chroot isolation: this machine's crun refuses OCI containers ("cgroups in hybrid
  # mode not supported"), and a build step needs no more than a chroot here.
  # --layers: an unchanged context reuses every step, so a second build is quick.
  buildah bud --pull=never --isolation chroot --network host --layers \
    --volume "$BUILD_CONF:/run/gitmedic-build:ro" \
    --volume "$BUILD_CONF/pip.conf:/etc/pip.conf:ro" \
    --build-arg "PYTHON_IMAGE=$BASE" --build-arg "BUILD_CA=/run/gitmedic-build/ca.crt" \
    --build-arg "HELM_VERSION=$HELM_VERSION" --build-arg "KUSTOMIZE_VERSION=$KUSTOMIZE_VERSION" \
    --build-arg "GITMEDIC_EXTRAS=$EXTRAS" \
    --build-arg "GITMEDIC_VERSION=$VERSION" --build-arg "GITMEDIC_REVISION=$REVISION" \
    --tag "$TAG" --file "$ROOT/Dockerfile" "$ROOT"
  echo "build.sh: built $TAG on $BASE"
}

main "$@"
exit
