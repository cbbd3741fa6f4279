#!/usr/bin/env bash
# A cold .ci/run, timed end to end (bench/RESULTS.md): a fresh clone of main run with
# every cache empty, and the load average sampled each minute alongside.
# Usage: bench/cold_ci.sh [--machine-caches] [WORKDIR]   (default /tmp/cold; ~8 GB free)
#   --machine-caches  on a machine that is new (nothing built or installed yet), use
#                     its own caches, as CI does: the run is as cold and leaves the
#                     machine warm for the next (by default the caches are scratch
#                     directories under WORKDIR, so a warm machine can be measured cold)
set -euo pipefail
machine_caches=""
if [[ ${1:-} == --machine-caches ]]; then machine_caches=1; shift; fi
work=${1:-/tmp/cold}
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/gm"
if [[ -z $machine_caches ]]; then
    export GITMEDIC_TOOLS=$work/tools GOPATH=$work/go GOCACHE=$work/gocache \
        XDG_CACHE_HOME=$work/xdg GITMEDIC_IMAGE_CACHE=$work/image
    # Go tools installed for this user would make the run warm
    PATH=$(echo "$PATH" | tr ':' '\n' | grep -v "^$HOME/go/bin$" | paste -sd:)
    export PATH
fi
export CI=true  # as CI runs it
(while sleep 60; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done) >"$work/load.log" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT
start=$(date +%s)
status=0
(cd "$work/gm" && bash .ci/run </dev/null) >"$work/ci.log" 2>&1 || status=$?
echo "exit $status after $(($(date +%s) - start)) s (log: $work/ci.log, load: $work/load.log)"
exit "$status"
