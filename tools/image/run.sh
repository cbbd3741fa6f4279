#!/usr/bin/env bash
# Runs a command of a locally built image the way a hardened runtime does
# (docker run --read-only --tmpfs /tmp -v STATE:/var/lib/gitmedic), with no
# daemon: the image's filesystem (`buildah mount`) is bind-mounted read-only in a
# private mount namespace, the state directory and a fresh tmpfs /tmp are the only
# writable places, and the image's entrypoint runs under chroot as the image's
# user with exactly the image's environment. The network is the host's, so a
# port the command binds is reachable on 127.0.0.1. Needs root (or
# CAP_SYS_ADMIN + CAP_SYS_CHROOT); the image's user must own STATE.
#
#   tools/image/run.sh IMAGE STATE_DIR [-e NAME=VALUE]... [--exec] ARG...
#
# -e adds to the image's environment; ARGs go after the entrypoint; with --exec
# the first ARG replaces it.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: run.sh IMAGE STATE_DIR [-e NAME=VALUE]... [--exec] ARG..." >&2; exit 2; }
IMAGE=$1 STATE=$(realpath "$2")
shift 2
field() { buildah inspect --type image --format "{{$1}}" "$IMAGE"; }
mapfile -t ENV < <(field 'range .OCIv1.Config.Env}}{{println .}}{{end')
mapfile -t ENTRYPOINT < <(field 'range .OCIv1.Config.Entrypoint}}{{println .}}{{end')
USER_SPEC=$(field .OCIv1.Config.User)
WORKDIR=$(field .OCIv1.Config.WorkingDir)
VOLUME=$(field 'range $k, $v := .OCIv1.Config.Volumes}}{{$k}}{{end')
[ -n "$VOLUME" ] || { echo "run.sh: $IMAGE declares no VOLUME to mount $STATE on" >&2; exit 2; }
while [ "${1:-}" = -e ]; do
  ENV+=("$2")
  shift 2
done
if [ "${1:-}" = --exec ]; then
  shift
  ENTRYPOINT=()
fi

CTR=$(buildah from --pull=never --quiet "$IMAGE")
cleanup() { buildah rm "$CTR" >/dev/null; }
trap cleanup EXIT
ROOTFS=$(buildah mount "$CTR")

# The inner script: everything it mounts (the read-only view over the container's
# own mount point included) exists only in its namespace and vanishes with it.
# shellcheck disable=SC2016
unshare --mount --propagation private --fork --kill-child -- bash -euc '
  view=$1 state=$2 volume=$3 user=$4 workdir=$5
  shift 5
  mount --bind "$view" "$view"
  mount -o remount,bind,ro "$view"
  mount --bind "$state" "$view$volume"
  mount -t tmpfs -o mode=1777,size=256m tmpfs "$view/tmp"
  mount --rbind /dev "$view/dev"
  mount --rbind /proc "$view/proc"
  exec chroot --userspec="$user" "$view" /usr/bin/env -i -C "$workdir" "$@"
' run "$ROOTFS" "$STATE" "$VOLUME" "${USER_SPEC:-0:0}" "${WORKDIR:-/}" "${ENV[@]}" \
  "${ENTRYPOINT[@]}" "$@"
