"""``manage.py rebuild_index --corpus NAME``: rebuild a corpus's search index from the DB."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.management.progress import TerminalProgress
from collector.models import Corpus
from collector.search import IndexBusy
from collector.services import index_rebuild


class Command(BaseCommand):
    help = ("Rebuild the search index of a corpus from the database. Searches keep using "
            "the old index until the new one is complete.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", required=True, help="corpus name")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus = Corpus.objects.filter(name=options["corpus"]).first()
        if corpus is None:
            known = ", ".join(Corpus.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no corpus named {options['corpus']!r} (corpora: {known})")
        progress = TerminalProgress(
            stream=sys.stderr, byte_phase=False,
            enabled=not options["no_progress"] and options["verbosity"] > 0,
        )
        try:
            indexed = index_rebuild(corpus=corpus, progress=progress)
        except IndexBusy as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        self.stdout.write(f"corpus {corpus.name!r}: {indexed} passages indexed")
