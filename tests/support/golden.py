"""Golden files: compare rendered text with ``tests/fixtures/golden/...``.

``GITMEDIC_UPDATE_GOLDEN=1 pytest ...`` rewrites the files instead of comparing;
review the diff with git before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent.parent / "fixtures" / "golden"


def assert_golden(relative: str, text: str) -> None:
    path = GOLDEN / relative
    if os.environ.get("GITMEDIC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing: run with GITMEDIC_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path} differs (GITMEDIC_UPDATE_GOLDEN=1 regenerates it)"
