"""``manage.py import_queries PATH --corpus NAME --language en|zh``: into an existing corpus
(``import_corpus`` or the import page creates corpora)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.importers import ImportFailure
from collector.management.arguments import corpus_named
from collector.management.progress import TerminalProgress
from collector.models import Language
from collector.services import queries_import


class Command(BaseCommand):
    help = ("Import a query list (one query a line, or JSON Lines with question/query/text "
            "and an optional id) into an existing corpus. All or nothing; known ids are "
            "skipped.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--corpus", required=True,
                            help="name of an existing corpus (made by import_corpus or the "
                                 "import page)")
        parser.add_argument("--language", required=True, choices=Language.values)
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        # A misspelt name would otherwise make a new, empty corpus holding only these
        # queries: the corpus must be there already.
        corpus = corpus_named(options["corpus"])
        progress = TerminalProgress(
            stream=sys.stderr,
            enabled=not options["no_progress"] and options["verbosity"] > 0,
        )
        try:
            report = queries_import(path=options["path"], corpus=corpus.name,
                                    language=options["language"],
                                    source_name=str(options["path"]), progress=progress)
        except ImportFailure as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        self.stdout.write(report.summary())
