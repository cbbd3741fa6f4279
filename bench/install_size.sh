#!/usr/bin/env bash
# Install size and package count of gitmedic's core, of [rules] and of [all], each in a fresh
# venv from the built wheel (make dist). Usage: bench/install_size.sh [DIST]
#
# size:     du of site-packages without pip and setuptools (the venv's own tools)
# packages: `pip list` without its two header lines, pip and setuptools
#           (gitmedic itself included)
set -euo pipefail
dist="${1:-dist}"
wheel="$(ls "$dist"/gitmedic-*.whl)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

measure() {  # label requirement
    local venv="$work/$1"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$2"
    local site
    site="$(echo "$venv"/lib/python3*/site-packages)"
    local size
    size="$(du -sm --exclude='pip' --exclude='pip-*' --exclude='setuptools' \
        --exclude='setuptools-*' --exclude='_distutils_hack' --exclude='distutils-precedence.pth' \
        "$site" | cut -f1)"
    local count
    count="$("$venv/bin/pip" list --disable-pip-version-check | tail -n +3 \
        | grep -vcE '^(pip|setuptools) ')"
    printf '%-6s %5s MB %4s packages\n' "$1" "$size" "$count"
}

measure core "$wheel"
measure rules "${wheel}[rules]"
measure all "${wheel}[all]"
