"""Fixtures for the corpus tests (none is autouse: other collector tests are unaffected)."""

from tests.collector.corpus_support import isolated_storage  # noqa: F401
