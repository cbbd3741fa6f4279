"""Trim the image's venv of what no code of gitmedic's reaches (the build stage runs it;
tests/packaging/test_image.py runs gitmedic's imports, CEL and the strict schema
validation in the built image, so a cut that removes something used fails there).

    python3 trim.py SITE_PACKAGES

- the kubernetes client's asyncio twin ``kubernetes/aio`` (67 MB): gitmedic and the sync
  client never import it;
- cel-expr-python's extension libraries ``cel_expr_python/ext`` (27 MB): each is a
  separate native module that only ``cel.NewEnv(extensions=...)`` loads, and gitmedic's
  environments have the standard functions only (bot/memory/cel.py, cel_worker.py);
- kubernetes-validate's non-strict schema folders ``v*-local`` (about 50 MB): gitmedic
  reads only the ``*-local-strict`` ones (reconciler/manifests/schema_files.py);
- the ``tests`` folders that packages ship inside themselves (jsonschema's, ...), which
  nothing imports at run time;
- then identical schema files of different Kubernetes versions become hard links of
  one file (12 MB: most kinds do not change between two versions), which every reader
  sees as the same bytes and an image layer stores once;
- and each package's RECORD loses the lines of the files removed, so it lists what is
  installed (kubernetes-validate's listed every schema of both kinds: 2.5 MB).

Standard library only: it runs on the bare base. It prints what it saved.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import shutil
import sys
from pathlib import Path

REMOVED = ("kubernetes/aio", "cel_expr_python/ext")
SCHEMAS = "kubernetes_validate/kubernetes-json-schema"


def remove_unused(site: Path) -> list[Path]:
    """The folders removed: REMOVED, the non-strict schema sets, packages' tests."""
    gone = [site / rel for rel in REMOVED if (site / rel).is_dir()]
    schemas = site / SCHEMAS
    if schemas.is_dir():
        gone += sorted(p for p in schemas.glob("v*-local") if p.is_dir())
    for package in sorted(site.iterdir()):
        if package.is_dir() and not package.name.endswith((".dist-info", ".libs")):
            gone += [package / t for t in ("tests", "test") if (package / t).is_dir()]
    for folder in gone:
        shutil.rmtree(folder)
    return gone


def link_identical(root: Path) -> int:
    """Hard-link every file under ``root`` to the first one (in path order) with the same
    bytes; the bytes saved."""
    first: dict[tuple[int, str], Path] = {}
    saved = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        key = (len(data), hashlib.sha256(data).hexdigest())
        kept = first.setdefault(key, path)
        if kept != path and not path.samefile(kept):
            tmp = path.with_name(path.name + ".link")
            os.link(kept, tmp)
            tmp.replace(path)
            saved += len(data)
    return saved


def prune_records(site: Path) -> int:
    """Drop RECORD lines naming files that are no longer there; the lines dropped."""
    dropped = 0
    for record in sorted(site.glob("*.dist-info/RECORD")):
        rows = list(csv.reader(io.StringIO(record.read_text(encoding="utf-8"))))
        kept = [r for r in rows if r and (site / r[0]).exists()]
        if len(kept) != len(rows):
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows(kept)
            record.write_text(out.getvalue(), encoding="utf-8")
            dropped += len(rows) - len(kept)
    return dropped


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python3 trim.py SITE_PACKAGES (a folder)", file=sys.stderr)
        return 2
    site = Path(argv[0])
    gone = remove_unused(site)
    saved = link_identical(site / SCHEMAS) if (site / SCHEMAS).is_dir() else 0
    dropped = prune_records(site)
    for folder in gone:
        print(f"trim: removed {folder.relative_to(site)}")
    print(f"trim: {saved / 1e6:.1f} MB of identical schema files linked, {dropped} RECORD lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
