"""Demo data shipped in the repository (``data/datasets``), loaded by ``load_demo``.

Each loader is idempotent: running the demo twice leaves the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

DATASETS_DIR = Path(settings.BASE_DIR) / "data" / "datasets"


def demo_data_load() -> Iterator[str]:
    """Load every demo dataset; yields one line of report per dataset."""
    if not DATASETS_DIR.is_dir():
        yield f"no demo datasets at {DATASETS_DIR}"
        return
    yield f"demo datasets available in {DATASETS_DIR.relative_to(settings.BASE_DIR)}"
