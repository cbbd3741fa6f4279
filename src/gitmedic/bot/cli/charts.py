"""``gitmedic charts add --repository URL PACKAGE...``: chart packages into the chart cache.

For a machine without the network (an air-gapped CI runner): the packages a
person pulled elsewhere (``helm pull``) are added as charts of the repository the
manifests declare, so ``detect`` renders the HelmReleases and Applications that
take them from it (:mod:`gitmedic.reconciler.manifests.chart_seed`). All packages
are read before any is added: one that is not a chart adds none (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gitmedic.bot.common.exits import EXIT_OK, UsageError


def run_charts_add(args: argparse.Namespace) -> int:
    from gitmedic.reconciler.manifests.chart_pull import (
        ChartPullError,
        cache_dir,
        check_repository,
    )
    from gitmedic.reconciler.manifests.chart_seed import (
        add_package,
        chart_identity,
        read_package,
    )

    packages = [Path(p) for p in args.packages]
    try:
        check_repository(args.repository)
        for package in packages:  # every one is a chart before the cache changes
            chart_identity(read_package(package), str(package))
        added = [add_package(package, args.repository) for package in packages]
    except ChartPullError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # the cache's folder cannot be made or written
        where = exc.filename or cache_dir()
        raise UsageError(f"cannot write the chart cache ({where}): {exc.strerror or exc}") from None
    for a in added:
        print(f"added chart {a.chart} {a.version} from {a.repository} (sha256:{a.digest})")
    print(f"{len(added)} package{'s' * (len(added) != 1)} in {cache_dir()}")
    return EXIT_OK
