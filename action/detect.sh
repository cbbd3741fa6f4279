#!/usr/bin/env bash
# The gitmedic action's step (action.yml runs it; tests run it the same way):
# install gitmedic's core in a venv, print findings as workflow annotations, write
# SARIF when it will be uploaded, and report the outputs in $GITHUB_OUTPUT.
#
# Inputs arrive as INPUT_* variables (see action.yml); GITHUB_ACTION_PATH is the
# action's checkout, RUNNER_TEMP a scratch folder, GITHUB_OUTPUT the outputs file.
set -euo pipefail

venv="${RUNNER_TEMP:?}/gitmedic-venv"
if [ -n "${INPUT_WHEEL:-}" ]; then
    package="$INPUT_WHEEL"
elif [ -n "${INPUT_VERSION:-}" ]; then
    package="gitmedic==$INPUT_VERSION"
else
    package="${GITHUB_ACTION_PATH:?}"
fi
# A repository with learned rules (.gitmedic/rules) needs the CEL engine to run them:
# the [rules] extra, installed only then (52 MB the other repositories never pull).
if compgen -G ".gitmedic/rules/*.y*ml" >/dev/null; then
    case "$package" in
        gitmedic==*) package="gitmedic[rules]==${package#gitmedic==}" ;;
        *) package="$package[rules]" ;;
    esac
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$package"

args=("${INPUT_PATH:-.}" --fail-on "${INPUT_FAIL_ON:-warning}")
if [ -n "${INPUT_NAMESPACE:-}" ]; then
    args+=(--namespace "$INPUT_NAMESPACE")
fi

annotations="$RUNNER_TEMP/gitmedic-annotations.txt"
set +e
"$venv/bin/gitmedic" detect "${args[@]}" --format github >"$annotations"
code=$?
set -e
cat "$annotations"
echo "exit-code=$code" >>"${GITHUB_OUTPUT:?}"
echo "annotations=$(grep -c '^::' "$annotations" || true)" >>"$GITHUB_OUTPUT"

case "${INPUT_UPLOAD_SARIF:-auto}" in
    true) upload=true ;;
    false) upload=false ;;
    auto) [ "${REPOSITORY_VISIBILITY:-}" = public ] && upload=true || upload=false ;;
    *) echo "::error title=gitmedic::upload-sarif must be auto, true or false" && exit 2 ;;
esac
if [ "$upload" = true ]; then
    sarif="${INPUT_SARIF_FILE:-gitmedic.sarif}"
    # Findings exit 1 here too; only an error (2) without a log is a failure.
    "$venv/bin/gitmedic" detect "${args[@]}" --format sarif >"$sarif" || [ -s "$sarif" ]
    echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"
fi
echo "upload=$upload" >>"$GITHUB_OUTPUT"
