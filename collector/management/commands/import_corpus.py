"""``manage.py import_corpus PATH --corpus NAME --language en|zh --format FORMAT [--map ...]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.importers import FORMATS, SOURCE_TYPES, ImportFailure
from collector.management.progress import TerminalProgress
from collector.models import Corpus, Language
from collector.search import IndexBusy
from collector.services import SplitOptions, corpus_import


class Command(BaseCommand):
    help = ("Import a corpus file (or a folder of .story files) into a corpus, creating the "
            "corpus if needed, then add its passages to the search index. All or nothing.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--corpus", required=True, help="corpus name")
        parser.add_argument("--language", required=True, choices=Language.values)
        parser.add_argument("--format", required=True, choices=list(FORMATS))
        parser.add_argument("--map", default="", metavar="FIELD=COLUMN,...",
                            help="jsonl/csv/tsv: where each field comes from "
                                 "(fields: id, body, title, url, source_type, highlights)")
        parser.add_argument("--split", choices=Corpus.SplitMode.values,
                            help="passage splitting of a new corpus (default: paragraph)")
        parser.add_argument("--window-tokens", type=int, help="window size for --split window")
        parser.add_argument("--overlap", type=int, help="window overlap in tokens")
        parser.add_argument("--source-type", default="", choices=["", *SOURCE_TYPES],
                            help="jsonl/csv/tsv: source type of documents that give none")
        parser.add_argument("--description", default="",
                            help="description of a new corpus (an existing one keeps its own)")
        parser.add_argument("--licence", default="",
                            help="licence text of a new corpus (an existing one keeps its own)")
        parser.add_argument("--no-index", action="store_true",
                            help="import only; index later with rebuild_index")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        _refuse_conflicting(options)
        progress = TerminalProgress(
            stream=sys.stderr,
            enabled=not options["no_progress"] and options["verbosity"] > 0,
        )
        try:
            report = corpus_import(
                path=options["path"], corpus=options["corpus"], language=options["language"],
                format=options["format"], mapping=options["map"] or None,
                source_name=str(options["path"]),
                split=SplitOptions(mode=options["split"],
                                   window_tokens=options["window_tokens"],
                                   window_overlap=options["overlap"]),
                description=options["description"], licence=options["licence"],
                source_type=options["source_type"], progress=progress,
                index=not options["no_index"],
            )
        except (ImportFailure, IndexBusy) as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        self.stdout.write(report.summary())


def _refuse_conflicting(options: dict[str, Any]) -> None:
    """Options the import would ignore are refused: a window for a corpus split by paragraph
    (stored, never used), a source type for a format that sets its own, and a description or
    licence for a corpus that has its own."""
    if options["source_type"] and not FORMATS[options["format"]].takes_mapping:
        raise CommandError(f"--source-type: format {options['format']!r} sets its documents' "
                           "source type itself (only jsonl, csv and tsv take --source-type)")
    given = [(option, options[key]) for option, key in (("--window-tokens", "window_tokens"),
                                                        ("--overlap", "overlap"))
             if options[key] is not None]
    # Read only when an option depends on it: otherwise the file is checked first.
    corpus = (Corpus.objects.filter(name=options["corpus"]).first()
              if options["description"] or options["licence"]
              or (given and options["split"] is None) else None)
    for option, key in (("--description", "description"), ("--licence", "licence")):
        if corpus is not None and options[key] and options[key] != getattr(corpus, key):
            raise CommandError(f"{option}: corpus {corpus.name!r} exists already and keeps "
                               f"its {key} (set for a new corpus only; change it on the "
                               "admin site)")
    if not given:
        return
    if options["split"] is not None:
        mode, whose = options["split"], f"--split {options['split']} given"
    else:
        mode = corpus.split_mode if corpus is not None else Corpus.SplitMode.PARAGRAPH
        whose = (f"corpus {corpus.name!r} splits by {mode}" if corpus is not None
                 else f"a new corpus splits by {mode} unless --split says otherwise")
    if mode != Corpus.SplitMode.WINDOW:
        option, value = given[0]
        raise CommandError(f"{option} {value}: only for --split window ({whose})")
