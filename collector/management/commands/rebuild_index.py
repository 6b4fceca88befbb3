"""``manage.py rebuild_index --corpus NAME`` (or ``--all``): rebuild a corpus's search index
(every corpus's) from the database."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.management.arguments import corpus_named
from collector.management.progress import TerminalProgress
from collector.models import Corpus
from collector.search import IndexBusy
from collector.services import index_rebuild


class Command(BaseCommand):
    help = ("Rebuild the search index of a corpus (--all: of every corpus, as after a "
            "restore or a change of CROWDQA_SEARCH_BACKEND) from the database. Searches keep "
            "using the old index until the new one is complete.")

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--corpus", help="corpus name")
        which.add_argument("--all", action="store_true", help="every corpus, one after another")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:
            for corpus in Corpus.objects.order_by("name"):
                self._rebuild(corpus, options)
            return
        corpus = corpus_named(options["corpus"])
        self._rebuild(corpus, options)

    def _rebuild(self, corpus: Corpus, options: dict[str, Any]) -> None:
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
