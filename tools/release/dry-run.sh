#!/usr/bin/env bash
# Every release artefact, built locally into OUT (default dist/release) with checksums:
# what the release workflow (.github/workflows/release.yml) builds and publishes.
#
#   tools/release/dry-run.sh [OUT]        (make release-dry-run)
#
# - the wheel and sdist (python -m build), versioned by the git tag (setuptools-scm);
# - the Helm chart package, its version and appVersion that same version in SemVer
#   (0.2.1.dev3+g1a2b3c4 -> 0.2.1-dev.3+g1a2b3c4);
# - the image as OCI archives, when buildah is installed (tools/image/build.sh): the
#   default image and the -llm variant with the model client; otherwise (or with
#   GITMEDIC_RELEASE_IMAGE=0) the run says it skipped them, and the workflow (where
#   buildah is) builds them;
# - SHA256SUMS over all of them.
# Python comes from .venv (make's), helm from the pinned tools (.ci/tools.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/dist/release}" && cd "${1:-$ROOT/dist/release}" && pwd)
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
cd "$ROOT"

version=$("$PYTHON" -m setuptools_scm)
# PEP 440 to SemVer: X.Y.Z stays; X.Y.Z.devN(+local) -> X.Y.Z-dev.N(+local).
semver=$(printf '%s' "$version" | sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+)\.dev([0-9]+)/\1-dev.\2/')
echo "release-dry-run: version $version (chart $semver) into $OUT"

rm -rf "${OUT:?}"/*
"$PYTHON" -m build --outdir "$OUT" . >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
rm "$OUT/build.log"

helm_dir=$("$ROOT/.ci/tools.sh" helm)
"$helm_dir/helm" package charts/gitmedic --version "$semver" --app-version "$version" \
    --destination "$OUT" >/dev/null

if [ "${GITMEDIC_RELEASE_IMAGE:-1}" = 0 ]; then
    echo "release-dry-run: image SKIPPED: GITMEDIC_RELEASE_IMAGE=0"
elif command -v buildah >/dev/null; then
    for variant in "" -llm; do
        tag="localhost/gitmedic:${version//+/-}$variant"
        tools/image/build.sh ${variant:+--llm} "$tag"
        buildah push --quiet "$tag" "oci-archive:$OUT/gitmedic-image-$semver$variant.oci.tar"
    done
else
    echo "release-dry-run: image SKIPPED: buildah is not installed (the release workflow has it)"
fi

(cd "$OUT" && sha256sum -- * >SHA256SUMS)
echo "release-dry-run: done:"
sed 's/^/  /' "$OUT/SHA256SUMS"
