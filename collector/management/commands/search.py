"""``manage.py search --corpus NAME --k 10 --json "query text"``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from collector.management.arguments import corpus_named
from collector.search import search_backend
from collector.services import retrieve

K_MOST = 2**31 - 1


class Command(BaseCommand):
    help = ("Search a corpus's passages. With --json, print a JSON list of hits, best first: "
            '{"document": external id, "title", "passage": ordinal in the document, "start", '
            '"end": character offsets into the document body, "score": BM25F, "snippet"}.')

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", help="query text")
        parser.add_argument("--corpus", required=True, help="corpus name")
        parser.add_argument("--k", type=int, default=10, help="number of hits (default 10)")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus = corpus_named(options["corpus"])
        if options["k"] < 1:
            raise CommandError(f"--k: {options['k']} hits; give at least 1")
        if options["k"] > K_MOST:  # PostgreSQL's search overflowed its bigints (a traceback)
            raise CommandError(f"--k: {options['k']} is more than {K_MOST:,}")
        query = options["query"]
        backend = search_backend()
        hits = [
            {
                "document": passage.external_id,
                "title": passage.title,
                "passage": passage.ordinal,
                "start": passage.start,
                "end": passage.end,
                "score": round(passage.score, 4),
                "snippet": backend.fragments(language=corpus.language, text=passage.text,
                                             query=query, html=False, max_chars=200),
            }
            for passage in retrieve(corpus=corpus, text=query, k=options["k"])
        ]
        if options["json"]:
            self.stdout.write(json.dumps(hits, ensure_ascii=False, indent=2))
            return
        if not hits:
            self.stdout.write("no hits")
        for rank, hit in enumerate(hits, 1):
            self.stdout.write(f"{rank:>3}. {hit['score']:8.3f}  {hit['document']} "
                              f"[{hit['start']}:{hit['end']}]  {hit['snippet']}")
