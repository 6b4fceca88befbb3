"""Helpers for the corpus tests: the in-repo samples, row counts, index snapshots."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings

from collector.models import Corpus, Document, ImportRun, Passage, Query, SourceQuestion
from collector.search import search_backend

DATASETS = Path(__file__).resolve().parents[2] / "data" / "datasets"
SQUAD_V1 = DATASETS / "squad_v1.1_dev" / "dev-v1.1.sample.json"
SQUAD_V2 = DATASETS / "squad_v2.0_dev" / "dev-v2.0.sample.json"
NEWSQA_DIR = DATASETS / "newsqa" / "synthetic"
NEWSQA_JSON = NEWSQA_DIR / "combined-newsqa-data-v1.synthetic.json"
NEWSQA_CSV = NEWSQA_DIR / "combined-newsqa-data-v1.synthetic.csv"
STORY = NEWSQA_DIR / "000000000000000000000000000000000000a001.story"
MSMARCO_JSONL = DATASETS / "msmarco_qa_v2.1" / "synthetic" / "msmarco_v2.1.synthetic.jsonl"
MSMARCO_COLUMNAR = (DATASETS / "msmarco_qa_v2.1" / "synthetic"
                    / "msmarco_v2.1.synthetic.columnar.json")
DUREADER_DEV = DATASETS / "dureader" / "search.dev.sample.jsonl"
DUREADER_TRAIN = DATASETS / "dureader" / "search.train.sample.jsonl"
RECO = DATASETS / "reco" / "synthetic" / "ReCO.synthetic.json"
QUERIES_EN = DATASETS / "search_queries" / "queries.en.nq_open_dev.sample.jsonl"
QUERIES_ZH = DATASETS / "search_queries" / "queries.zh.dureader_demo.sample.jsonl"


def squad_contexts(path: Path = SQUAD_V1) -> list[tuple[str, str]]:
    """(title, context) of every paragraph of a SQuAD sample: real text for generic files."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(article["title"], paragraph["context"])
            for article in data["data"] for paragraph in article["paragraphs"]]


def row_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count()
            for model in (Corpus, ImportRun, Document, Passage, SourceQuestion, Query)}


def index_dirs() -> set[str]:
    root = Path(settings.SEARCH_INDEX_DIR)
    return {child.name for child in root.iterdir()} if root.is_dir() else set()


def indexed(corpus: Corpus) -> int:
    return search_backend().count(key=corpus.index_key.hex)


def assert_offsets_exact(corpus: Corpus) -> int:
    """Every passage is its document's body[start:end]; every span answer too."""
    checked = 0
    for document in Document.objects.filter(corpus=corpus).prefetch_related("passages",
                                                                            "questions"):
        for passage in document.passages.all():
            assert document.body[passage.start:passage.end] == passage.text
            assert passage.text.strip() == passage.text and passage.text
            checked += 1
        for question in document.questions.all():
            for answer in question.answers:
                for span in answer.get("spans", [answer]):
                    if "start" in span:
                        assert document.body[span["start"]:span["end"]] == span["text"]
                        checked += 1
    return checked
