#!/usr/bin/env bash
# Builds the real-cluster test tier's binaries from the Go module proxy, once per
# machine, into a cache directory keyed by the wrapper modules' contents:
#
#   $GITMEDIC_TOOLS/kube-k8s-<key>/   kube-apiserver, kube-controller-manager,
#                                     kube-scheduler, kwok; kwok's stage files
#   $GITMEDIC_TOOLS/kube-flux-<key>/  source-controller, kustomize-controller,
#                                     gitserver; Flux's CRDs
#   $GITMEDIC_TOOLS/kube-argocd-<key>/ argocd (one multi-call binary: repo-server,
#                                     application-controller, API server),
#                                     git-verify-wrapper.sh; Argo CD's CRDs
#   $GITMEDIC_TOOLS/kube-debian-<key>/ bin/etcd, bin/redis-server and lib/ (the
#                                     libraries redis needs: LD_LIBRARY_PATH)
#   $GITMEDIC_TOOLS/kube-postgres-<key>/ Debian's PostgreSQL server: usr/lib/postgresql/
#                                     and usr/share/postgresql/ as unpacked (the
#                                     binaries find their share/ from where they are),
#                                     lib/ (LD_LIBRARY_PATH); the journal's PostgreSQL
#                                     tests need it (tests/support/postgres.py)
#
# Kubernetes, kwok and Flux come from one wrapper module (tier/): the packages they
# share are one version and compiled once, so Flux, built after Kubernetes, finds
# them in the build cache. Argo CD has its own (argocd/): it needs Go 1.27, whose
# compiler shares nothing with 1.26's cache; its go.mod names the toolchain, which
# the Go module proxy serves (GOTOOLCHAIN is set to it for that group only).
#
# <key> is the first 12 hex digits of the sha256 of the wrapper's go.mod, go.sum
# (and the gitserver's source for Flux; of debian.txt for Debian's, of postgres.txt
# for PostgreSQL):
# tests/realkube/tools.py computes the same key to find them. A directory is complete once it holds `.complete`; a
# complete one is skipped, so a warm machine pays nothing. The groups build one
# after the other, niced, each with its own log (build.log in its directory) and
# what is left of the budget, in the order the tier needs them: Kubernetes (every
# test), Flux (the Flux loop), Argo CD (the Argo loop). Built side by side they
# compiled the shared packages twice, and on a cold .ci/run Argo CD took a core
# from Kubernetes and neither finished (bench/RESULTS.md).
#
# etcd and Argo CD's redis are not built: they are Debian's (debian.txt), fetched
# with `apt-get download` and unpacked with `dpkg -x` into the cache, never
# installed on the system. The system's PATH is thus the same before and after a
# build: CI's `make test`, which runs beside it, sees what a fresh machine has (an
# install into /usr/bin once hid a test that failed without etcd). Skipped when
# both are on PATH already (tests/realkube/tools.py looks in the cache first, then
# on PATH), or, saying so, without apt-get (the tier then skips, naming etcd).
#
# Usage: tools/kube/build.sh [--print-dirs | [--budget SECONDS] GROUP...]
#   GROUP         k8s, flux and/or argocd (default: all three)
#   --print-dirs  print the five directories and exit (no build)
#   --budget S    S seconds of wall time for the whole build (CI's cap on a cold
#                 machine): the group still building then is stopped and those
#                 after it are not started; what it finished is kept for the next
#                 run, the reason is printed, and the exit status is 0, since the
#                 realkube tier then skips what is missing and says why. A build
#                 that fails (rather than runs out of time) exits 1.
# Env:   GITMEDIC_TOOLS (default ~/.cache/gitmedic-tools), GOFLAGS as usual.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tools=${GITMEDIC_TOOLS:-$HOME/.cache/gitmedic-tools}
k8s_version=v1.37.2
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=37"
    k8s_ldflags+=" -X $pkg.gitTreeState=clean"
done

key() {  # sha256 of the files, in this order, concatenated (as tools.py does)
    cat "$@" | sha256sum | cut -c1-12
}
k8s_dir="$tools/kube-k8s-$(key "$here/tier/go.mod" "$here/tier/go.sum")"
flux_dir="$tools/kube-flux-$(key "$here/tier/go.mod" "$here/tier/go.sum" \
    "$here/tier/gitserver/main.go")"
argocd_dir="$tools/kube-argocd-$(key "$here/argocd/go.mod" "$here/argocd/go.sum")"
debian_dir="$tools/kube-debian-$(key "$here/debian.txt")"
postgres_dir="$tools/kube-postgres-$(key "$here/postgres.txt")"

if [[ ${1:-} == --print-dirs ]]; then
    echo "$k8s_dir"
    echo "$flux_dir"
    echo "$argocd_dir"
    echo "$debian_dir"
    echo "$postgres_dir"
    exit 0
fi

module_dir() {  # where the module cache holds a dependency of the wrapper in $PWD
    go list -m -f '{{.Dir}}' "$1"
}

build_k8s() {
    cd "$here/tier"
    # One binary at a time, the API server first: an interrupted build has left
    # whole binaries behind, and the shared packages are compiled once (build cache).
    local cmd
    for cmd in kube-apiserver kwok kube-scheduler kube-controller-manager; do
        [[ -x $1/bin/$cmd ]] && continue
        if [[ $cmd == kwok ]]; then
            go build -trimpath -ldflags "-s -w" -o "$1/bin/$cmd.tmp" sigs.k8s.io/kwok/cmd/kwok
        else
            go build -trimpath -ldflags "$k8s_ldflags" -o "$1/bin/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
        fi
        mv "$1/bin/$cmd.tmp" "$1/bin/$cmd"
    done
    mkdir -p "$1/stage"
    cp -r "$(module_dir sigs.k8s.io/kwok)/kustomize/stage/." "$1/stage/"
    chmod -R u+w "$1/stage"
}

build_flux() {
    cd "$here/tier"
    go build -trimpath -ldflags "-s -w" -o "$1/bin/" \
        github.com/fluxcd/source-controller \
        github.com/fluxcd/kustomize-controller \
        ./gitserver
    mkdir -p "$1/crds"
    cp "$(module_dir github.com/fluxcd/source-controller)"/config/crd/bases/*.yaml "$1/crds/"
    cp "$(module_dir github.com/fluxcd/kustomize-controller)"/config/crd/bases/*.yaml "$1/crds/"
    chmod -R u+w "$1/crds"
}

build_argocd() {
    cd "$here/argocd"
    local toolchain
    toolchain=$(awk '$1 == "toolchain" {print $2}' go.mod)
    export GOTOOLCHAIN=$toolchain
    local common=github.com/argoproj/argo-cd/v3/common
    local version
    version=$(go list -m -f '{{.Version}}' github.com/argoproj/argo-cd/v3)
    if [[ ! -x $1/bin/argocd ]]; then  # kept by an interrupted run: it is whole (renamed)
        go build -trimpath \
            -ldflags "-s -w -X $common.version=${version#v} -X $common.gitTag=$version -X $common.gitTreeState=clean" \
            -o "$1/bin/argocd.tmp" github.com/argoproj/argo-cd/v3/cmd
        mv "$1/bin/argocd.tmp" "$1/bin/argocd"
    fi
    local src
    src=$(module_dir github.com/argoproj/argo-cd/v3)
    # the repo-server runs it to verify commit signatures, found on PATH
    install -m 0755 "$src/hack/git-verify-wrapper.sh" "$1/bin/git-verify-wrapper.sh"
    mkdir -p "$1/crds"
    cp "$src"/manifests/crds/*-crd.yaml "$1/crds/"
    chmod -R u+w "$1/crds"
}

if [[ ${1:-} == --group ]]; then  # one group, into a directory: build_once's child
    "build_$2" "$3"
    exit 0
fi

# Builds group $1 into directory $2 unless it is complete, stopping it after
# $timeout_s seconds (none when empty); the log and the time (CPU and wall, from
# /usr/bin/time -v when present) go to $2/build.log.
build_once() {
    local name=$1 dir=$2
    if [[ -f $dir/.complete ]]; then
        echo "kube tools: $name present in $dir"
        return 0
    fi
    mkdir -p "$dir.partial"  # what an interrupted build finished is kept
    echo "kube tools: building $name into $dir (log: $dir.partial/build.log)"
    local timer=()
    [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -v)
    echo "=== $(date -u +%FT%TZ) build.sh $name${budget:+ (budget $budget s, $timeout_s s left)}" >>"$dir.partial/build.log"
    # timeout (0: none) leads its own process group and, at the budget or on TERM,
    # signals all of it: the go build and its compilers too
    CGO_ENABLED=0 timeout --kill-after=20 "${timeout_s:-0}" "${timer[@]}" nice -n 19 \
        "$here/build.sh" --group "$name" "$dir.partial" >>"$dir.partial/build.log" 2>&1 &
    local child=$! status=0
    trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 143' TERM
    wait "$child" || status=$?
    trap - TERM
    if [[ -n $budget && ($status -eq 124 || $status -eq 137) ]]; then
        echo "kube tools: $name not built within the budget of $budget s (what it finished" \
            "is kept in $dir.partial; the next run resumes it): the realkube tier skips" \
            "what needs it" >&2
        return 0
    elif [[ $status -ne 0 ]]; then
        echo "kube tools: building $name FAILED; the end of $dir.partial/build.log:" >&2
        tail -n 30 "$dir.partial/build.log" >&2
        return 1
    fi
    touch "$dir.partial/.complete"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
    # this run's times (the log keeps every attempt's)
    sed -n '/^=== /h; /^=== /!H; ${x;p}' "$dir/build.log" |
        grep -E 'User time|System time|Elapsed' | sed "s/^\s*/kube tools: $name: /" || true
}

# Debian's etcd and redis-server, unpacked into $debian_dir (see the top).
fetch_debian() {
    [[ -f $debian_dir/.complete ]] && { echo "kube tools: debian present in $debian_dir"; return 0; }
    if command -v etcd >/dev/null && command -v redis-server >/dev/null; then
        echo "kube tools: etcd and redis-server on PATH"
        return 0
    fi
    if ! command -v apt-get >/dev/null; then
        echo "kube tools: no etcd or redis-server on PATH and no apt-get: the realkube" \
            "tier skips what needs them" >&2
        return 0
    fi
    echo "kube tools: fetching Debian's etcd and redis-server into $debian_dir"
    local packages work
    mapfile -t packages < <(grep -v '^#' "$here/debian.txt" | grep .)
    work=$(mktemp -d)
    # a fresh machine has no package lists yet: fetched once, then retried
    if ! (cd "$work" && apt-get download -qq "${packages[@]}" 2>/dev/null); then
        apt-get update -qq
        (cd "$work" && apt-get download -qq "${packages[@]}")
    fi
    local deb
    for deb in "$work"/*.deb; do
        dpkg -x "$deb" "$work/root"
    done
    rm -rf "$debian_dir.partial" && mkdir -p "$debian_dir.partial/bin" "$debian_dir.partial/lib"
    # redis-server is a link to redis-check-rdb, which serves when named redis-server
    cp -L "$work/root/usr/bin/etcd" "$work/root/usr/bin/redis-server" "$debian_dir.partial/bin/"
    find "$work/root/usr/lib" -name '*.so*' -exec cp -L {} "$debian_dir.partial/lib/" \;
    rm -rf "$work"
    # they run here, with the libraries unpacked beside them (a missing one fails now)
    local bin
    for bin in etcd redis-server; do
        LD_LIBRARY_PATH="$debian_dir.partial/lib" "$debian_dir.partial/bin/$bin" --version >/dev/null || {
            echo "kube tools: Debian's $bin does not run from $debian_dir.partial" >&2
            return 1
        }
    done
    touch "$debian_dir.partial/.complete"
    rm -rf "$debian_dir"
    mv "$debian_dir.partial" "$debian_dir"
}

# Debian's PostgreSQL server, unpacked into $postgres_dir as fetch_debian does; without
# apt-get the journal's PostgreSQL tests skip (or use one on PATH), saying so.
fetch_postgres() {
    [[ -f $postgres_dir/.complete ]] && { echo "kube tools: postgres present in $postgres_dir"; return 0; }
    if ! command -v apt-get >/dev/null; then
        echo "kube tools: no apt-get: the journal's PostgreSQL tests use a postgres on" \
            "PATH or skip" >&2
        return 0
    fi
    echo "kube tools: fetching Debian's PostgreSQL server into $postgres_dir"
    local packages work deb
    mapfile -t packages < <(grep -v '^#' "$here/postgres.txt" | grep .)
    work=$(mktemp -d)
    if ! (cd "$work" && apt-get download -qq "${packages[@]}" 2>/dev/null); then
        apt-get update -qq
        (cd "$work" && apt-get download -qq "${packages[@]}")
    fi
    for deb in "$work"/*.deb; do
        dpkg -x "$deb" "$work/root"
    done
    rm -rf "$postgres_dir.partial" && mkdir -p "$postgres_dir.partial/usr/lib" \
        "$postgres_dir.partial/usr/share" "$postgres_dir.partial/lib"
    cp -a "$work/root/usr/lib/postgresql" "$postgres_dir.partial/usr/lib/"
    cp -a "$work/root/usr/share/postgresql" "$postgres_dir.partial/usr/share/"
    find "$work"/root/usr/lib/*-linux-gnu -maxdepth 1 -name '*.so*' \
        -exec cp -L {} "$postgres_dir.partial/lib/" \;
    rm -rf "$work"
    local bin bins
    bins=("$postgres_dir.partial"/usr/lib/postgresql/*/bin)  # one major version: postgres.txt
    for bin in postgres initdb pg_ctl; do
        LD_LIBRARY_PATH="$postgres_dir.partial/lib" "${bins[0]}/$bin" --version >/dev/null || {
            echo "kube tools: Debian's $bin does not run from $postgres_dir.partial" >&2
            return 1
        }
    done
    touch "$postgres_dir.partial/.complete"
    rm -rf "$postgres_dir"
    mv "$postgres_dir.partial" "$postgres_dir"
}

began=$SECONDS
budget=""
if [[ ${1:-} == --budget ]]; then
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "kube tools: --budget needs a whole number of seconds" >&2; exit 2; }
    budget=$2
    shift 2
fi
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(k8s flux argocd)
for group in "${groups[@]}"; do
    [[ $group =~ ^(k8s|flux|argocd)$ ]] || { echo "kube tools: unknown group $group (k8s, flux, argocd)" >&2; exit 2; }
done
[[ -x /usr/local/go/bin/go ]] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "kube tools: go is not on PATH" >&2; exit 1; }
fetch_debian
fetch_postgres || echo "kube tools: PostgreSQL not fetched: its tests skip, saying why" >&2
# stopped (CI's run ended early): build_once stops its group's build and all of it
status=0
for group in k8s flux argocd; do  # the tier's order, whatever the command line's
    [[ " ${groups[*]} " == *" $group "* ]] || continue
    dir_var=${group}_dir
    timeout_s=""
    if [[ -n $budget && ! -f ${!dir_var}/.complete ]]; then
        timeout_s=$(( budget - (SECONDS - began) ))  # what the groups before it left
        if [[ $timeout_s -le 0 ]]; then
            echo "kube tools: $group not built within the budget of $budget s (not started):" \
                "the realkube tier skips what needs it" >&2
            continue
        fi
    fi
    build_once "$group" "${!dir_var}" || status=1
done
exit "$status"
