"""Shared fixtures for the filter tests (pure Python: no database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collector.filters import QueryFilter

QUERIES_DIR = Path(__file__).resolve().parents[3] / "data" / "datasets" / "search_queries"
EN_FILE = QUERIES_DIR / "queries.en.nq_open_dev.sample.jsonl"
ZH_FILE = QUERIES_DIR / "queries.zh.dureader_demo.sample.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def en_records() -> list[dict]:
    """The 200 real NQ-open queries of the repository sample."""
    return read_jsonl(EN_FILE)


@pytest.fixture(scope="session")
def zh_records() -> list[dict]:
    """The 201 real DuReader demo queries of the repository sample."""
    return read_jsonl(ZH_FILE)


@pytest.fixture(scope="session")
def query_filter() -> QueryFilter:
    """The default filter (both languages, shipped blocklists, default features)."""
    return QueryFilter()
