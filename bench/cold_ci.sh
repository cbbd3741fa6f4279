#!/usr/bin/env bash
# A cold .ci/run, timed end to end (bench/RESULTS.md): a fresh clone of main run with
# every cache empty, and the load average sampled each minute alongside.
# Usage: bench/cold_ci.sh [WORKDIR]   (default /tmp/cold; needs ~8 GB free)
set -euo pipefail
work=${1:-/tmp/cold}
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/gm"
export GITMEDIC_TOOLS=$work/tools GOPATH=$work/go GOCACHE=$work/gocache \
    XDG_CACHE_HOME=$work/xdg GITMEDIC_IMAGE_CACHE=$work/image
# Go tools installed for this user would make the run warm
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v "^$HOME/go/bin$" | paste -sd:)
export PATH
(while sleep 60; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$work/load.log" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT
start=$(date +%s)
status=0
(cd "$work/gm" && bash .ci/run) >"$work/ci.log" 2>&1 || status=$?
echo "exit $status after $(($(date +%s) - start)) s (log: $work/ci.log, load: $work/load.log)"
exit "$status"
