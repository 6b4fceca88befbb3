"""Demo data shipped in the repository (``data/datasets``), loaded by ``load_demo``.

Each loader is idempotent: running the demo twice leaves the same rows (documents,
questions and queries are known by their external ids, and an import that finds
everything present keeps no trace). Search indexes are built as the corpora are
imported, and rebuilt if they do not hold every passage (say, after ``var/index`` was
removed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from collector.models import Corpus, Passage

DATASETS_DIR = Path(settings.BASE_DIR) / "data" / "datasets"

SQUAD_LICENCE = ("CC BY-SA 4.0 (SQuAD, Rajpurkar et al.); contexts are English Wikipedia "
                 "text (CC BY-SA). Keep this attribution and licence with any copy.")
DUREADER_LICENCE = ("Apache License 2.0 (DuReader 2.0 demo data, baidu/DuReader); documents "
                    "are excerpts of web pages returned by Baidu Search.")
SYNTHETIC = "Synthetic records written for CrowdQA (fictional); free to use."


@dataclass(frozen=True)
class DemoImport:
    corpus: str
    language: str
    format: str
    path: str  # relative to data/datasets
    description: str = ""
    licence: str = ""


DEMO_CORPORA = (
    DemoImport("squad-v1.1-dev", "en", "squad", "squad_v1.1_dev/dev-v1.1.sample.json",
               "SQuAD v1.1 dev sample: 16 Wikipedia paragraphs with 186 questions.",
               SQUAD_LICENCE),
    DemoImport("squad-v2.0-dev", "en", "squad", "squad_v2.0_dev/dev-v2.0.sample.json",
               "SQuAD v2.0 dev sample: 15 paragraphs, 116 questions (half unanswerable).",
               SQUAD_LICENCE),
    # The story file brings the highlights; NewsQA JSON adds the questions to the same
    # story (same id, same text).
    DemoImport("newsqa-synthetic", "en", "story", "newsqa/synthetic",
               "A synthetic CNN-style story with its highlights and NewsQA questions.",
               SYNTHETIC),
    DemoImport("newsqa-synthetic", "en", "newsqa-json",
               "newsqa/synthetic/combined-newsqa-data-v1.synthetic.json"),
    DemoImport("msmarco-synthetic", "en", "msmarco",
               "msmarco_qa_v2.1/synthetic/msmarco_v2.1.synthetic.jsonl",
               "Synthetic MS MARCO v2.1 records: web passages per query.", SYNTHETIC),
    DemoImport("dureader-demo", "zh", "dureader", "dureader/search.dev.sample.jsonl",
               "DuReader 2.0 search demo sample: Baidu search questions with their "
               "retrieved web documents.", DUREADER_LICENCE),
    DemoImport("dureader-demo", "zh", "dureader", "dureader/search.train.sample.jsonl"),
    DemoImport("dureader-demo", "zh", "dureader", "dureader/search.test.sample.jsonl"),
    DemoImport("reco-synthetic", "zh", "reco", "reco/synthetic/ReCO.synthetic.json",
               "Synthetic ReCO records: opinion questions with documents and evidence.",
               SYNTHETIC),
)

DEMO_QUERIES = (
    # Natural Questions are asked of Wikipedia, like SQuAD's paragraphs.
    ("squad-v1.1-dev", "en", "search_queries/queries.en.nq_open_dev.sample.jsonl"),
    ("dureader-demo", "zh", "search_queries/queries.zh.dureader_demo.sample.jsonl"),
)


def demo_data_load() -> Iterator[str]:
    """Load every demo dataset; yields one line of report per dataset."""
    from collector.services import (
        corpus_import,
        index_count,
        index_rebuild,
        queries_import,
    )

    if not DATASETS_DIR.is_dir():
        yield f"no demo datasets at {DATASETS_DIR}"
        return
    for item in DEMO_CORPORA:
        report = corpus_import(
            path=DATASETS_DIR / item.path, corpus=item.corpus, language=item.language,
            format=item.format, source_name=item.path, description=item.description,
            licence=item.licence,
        )
        yield report.summary()
    for corpus_name, language, path in DEMO_QUERIES:
        report = queries_import(path=DATASETS_DIR / path, corpus=corpus_name,
                                language=language, source_name=path)
        yield report.summary()
    for corpus in Corpus.objects.filter(name__in={item.corpus for item in DEMO_CORPORA}):
        passages = Passage.objects.filter(document__corpus=corpus).count()
        if index_count(corpus=corpus) != passages:
            yield f"corpus {corpus.name!r}: index rebuilt, {index_rebuild(corpus=corpus)} passages"
