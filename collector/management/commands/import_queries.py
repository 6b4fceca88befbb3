"""``manage.py import_queries PATH --corpus NAME --language en|zh``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.importers import ImportFailure
from collector.management.progress import TerminalProgress
from collector.models import Language
from collector.services import queries_import


class Command(BaseCommand):
    help = ("Import a query list (one query a line, or JSON Lines with question/query/text "
            "and an optional id) into a corpus. All or nothing; known ids are skipped.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--corpus", required=True, help="corpus name")
        parser.add_argument("--language", required=True, choices=Language.values)
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        progress = TerminalProgress(
            stream=sys.stderr,
            enabled=not options["no_progress"] and options["verbosity"] > 0,
        )
        try:
            report = queries_import(path=options["path"], corpus=options["corpus"],
                                    language=options["language"],
                                    source_name=str(options["path"]), progress=progress)
        except ImportFailure as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        self.stdout.write(report.summary())
