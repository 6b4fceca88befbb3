"""Chainable read-only filters for collector models."""

from __future__ import annotations

from django.db import models

# What list pages and APIs need of a document: everything but the text.
DOCUMENT_LISTING_FIELDS = ("id", "corpus_id", "external_id", "title", "url", "source_type")


class DocumentQuerySet(models.QuerySet):
    def listing(self) -> DocumentQuerySet:
        """Documents without their bodies (and metadata): for lists, never for reading."""
        return self.only(*DOCUMENT_LISTING_FIELDS)

    def of_corpus(self, corpus_id: int) -> DocumentQuerySet:
        return self.filter(corpus_id=corpus_id)
