#!/usr/bin/env bash
# Install the pinned Go tools of .ci/tools.txt (all, or those named) and print the
# PATH entries to use, colon-separated, on stdout; progress goes to stderr.
#
#   export PATH="$(.ci/tools.sh):$PATH"        # every tool
#   .ci/tools.sh helm                          # one tool
#
# Each tool lives in ${GITMEDIC_TOOLS:-$HOME/.cache/gitmedic-tools}/NAME-VERSION/,
# so a machine builds a version once and every worktree and CI run reuses it. A
# build goes to a temporary folder first and is moved into place when complete,
# and a lock per tool keeps two concurrent runs from building the same one.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
manifest="$here/tools.txt"
tools_dir="${GITMEDIC_TOOLS:-$HOME/.cache/gitmedic-tools}"

find_go() {
    if command -v go >/dev/null; then command -v go
    elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
    else echo "tools.sh: no Go toolchain (need go >= 1.24 on PATH)" >&2; return 1
    fi
}

install_tool() {  # name version package -> prints the folder holding the binary
    local name="$1" version="$2" package="$3"
    local dest="$tools_dir/$name-$version"
    if [ ! -x "$dest/$name" ]; then
        mkdir -p "$tools_dir"
        exec {lock}>"$tools_dir/.$name-$version.lock"
        flock "$lock"
        if [ ! -x "$dest/$name" ]; then
            local go tmp
            go="$(find_go)"
            tmp="$(mktemp -d "$tools_dir/.$name-$version.XXXXXX")"
            echo "tools.sh: building $name $version (go install $package@$version)" >&2
            if ! GOBIN="$tmp" GOFLAGS="${GOFLAGS:--buildvcs=false}" \
                nice -n 19 "$go" install "$package@$version" >&2; then
                rm -rf "$tmp"
                echo "tools.sh: building $name $version failed" >&2
                return 1
            fi
            mkdir -p "$dest"
            mv "$tmp/$name" "$dest/$name"
            rm -rf "$tmp"
        fi
        exec {lock}>&-
    fi
    echo "$dest"
}

main() {
    local wanted=" $* " found=() name version package
    while read -r name version package; do
        case "$name" in ''|'#'*) continue ;; esac
        if [ $# -eq 0 ] || [[ "$wanted" == *" $name "* ]]; then
            found+=("$(install_tool "$name" "$version" "$package")")
            wanted="${wanted/ $name / }"
        fi
    done <"$manifest"
    if [ -n "${wanted// /}" ]; then
        echo "tools.sh: not in $manifest:$wanted" >&2
        return 2
    fi
    local IFS=:
    echo "${found[*]}"
}

main "$@"
