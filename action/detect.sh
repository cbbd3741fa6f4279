#!/usr/bin/env bash
# The gitmedic action's step (action.yml runs it; tests run it the same way):
# install gitmedic in a venv, run the detectors once, and from that one run print
# findings as workflow annotations, write the SARIF log and the job summary, and
# report the outputs (exit code, counts by severity, SARIF path) in $GITHUB_OUTPUT.
#
# Inputs arrive as INPUT_* variables (see action.yml); GITHUB_ACTION_PATH is the
# action's checkout, RUNNER_TEMP a scratch folder, GITHUB_OUTPUT the outputs file,
# GITHUB_STEP_SUMMARY the job summary (optional).
set -euo pipefail

fail() { echo "::error title=gitmedic::$1"; exit 2; }

venv="${RUNNER_TEMP:?}/gitmedic-venv"
if [ -n "${INPUT_WHEEL:-}" ]; then
    package="$INPUT_WHEEL"
elif [ -n "${INPUT_VERSION:-}" ]; then
    package="gitmedic==$INPUT_VERSION"
else
    package="${GITHUB_ACTION_PATH:?}"
fi
# Extras: the Kubernetes schemas for strict validation (unless turned off), and the
# CEL engine only for a repository with learned rules (.gitmedic/rules: 52 MB the
# other repositories never pull).
extras=()
case "${INPUT_SCHEMA_VALIDATION:-true}" in
    true) extras+=(schemas) ;;
    false) ;;
    *) fail "schema-validation must be true or false" ;;
esac
if compgen -G ".gitmedic/rules/*.y*ml" >/dev/null; then
    extras+=(rules)
fi
if [ ${#extras[@]} -gt 0 ]; then
    joined=$(IFS=,; echo "${extras[*]}")
    case "$package" in
        gitmedic==*) package="gitmedic[${joined}]==${package#gitmedic==}" ;;
        *) package="${package}[${joined}]" ;;
    esac
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$package"

args=("${INPUT_PATH:-.}" --fail-on "${INPUT_FAIL_ON:-warning}")
[ -z "${INPUT_NAMESPACE:-}" ] || args+=(--namespace "$INPUT_NAMESPACE")
[ -z "${INPUT_BASELINE:-}" ] || args+=(--baseline "$INPUT_BASELINE")
[ -z "${INPUT_KUBERNETES_VERSION:-}" ] || args+=(--kubernetes-version "$INPUT_KUBERNETES_VERSION")
# exclude: detector ids, separated by commas, spaces or new lines.
IFS=$', \t\n' read -r -d '' -a excluded <<<"${INPUT_EXCLUDE:-}" || true
for id in "${excluded[@]}"; do
    args+=(--exclude "$id")
done

sarif="${INPUT_SARIF_FILE:-gitmedic.sarif}"
summary="$RUNNER_TEMP/gitmedic-summary.md"
annotations="$RUNNER_TEMP/gitmedic-annotations.txt"
: >"$summary"
set +e
"$venv/bin/gitmedic" detect "${args[@]}" --format github --sarif "$sarif" --summary "$summary" \
    >"$annotations"
code=$?
set -e
cat "$annotations"
{
    echo "exit-code=$code"
    echo "annotations=$(grep -c '^::' "$annotations" || true)"
    # The summary's first line: <!-- gitmedic critical=N warning=N info=N errors=N -->
    for key in critical warning info errors; do
        echo "$key=$(sed -n "1s/.* $key=\([0-9]*\).*/\1/p" "$summary")"
    done
    [ -s "$sarif" ] && echo "sarif-file=$sarif"
} >>"${GITHUB_OUTPUT:?}"
if [ "${INPUT_SUMMARY:-true}" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$summary" >>"$GITHUB_STEP_SUMMARY"
fi

case "${INPUT_UPLOAD_SARIF:-auto}" in
    true) upload=true ;;
    false) upload=false ;;
    auto) [ "${REPOSITORY_VISIBILITY:-}" = public ] && upload=true || upload=false ;;
    *) fail "upload-sarif must be auto, true or false" ;;
esac
# Only an error (exit 2) that wrote no log leaves nothing to upload.
[ -s "$sarif" ] || upload=false
echo "upload=$upload" >>"$GITHUB_OUTPUT"
