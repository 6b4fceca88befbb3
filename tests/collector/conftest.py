"""Fixtures for the corpus tests (none is autouse: other collector tests are unaffected)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def isolated_storage(settings, tmp_path_factory):
    """Index and upload directories of the test session, never the demo's ``var/``.

    tests/conftest.py exports SEARCH_INDEX_DIR and MEDIA_ROOT for worker processes, but
    pytest-django has read the settings before that, so the settings are pointed at the
    same directories here (a worker process and the test then share them).
    """
    for name in ("SEARCH_INDEX_DIR", "MEDIA_ROOT"):
        path = os.environ.get(name) or str(tmp_path_factory.mktemp(name.lower()))
        Path(path).mkdir(parents=True, exist_ok=True)
        setattr(settings, name, path)
