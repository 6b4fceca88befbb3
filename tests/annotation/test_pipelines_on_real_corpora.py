"""The MS MARCO and ReCO pipelines on real imported corpora and the real Whoosh index:
queries from the corpus, retrieval from its index, verdicts written to the queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation import engine
from annotation.models import Item
from annotation.roles import Role
from collector.models import Document, Query
from collector.services.corpora import corpus_import, queries_import
from tests.factories import user_with_roles

DATA = Path(__file__).resolve().parents[2] / "data" / "datasets"


@pytest.fixture
def squad_corpus(db, tmp_path):
    """The SQuAD v1.1 sample as an English corpus, and some of its questions as queries."""
    corpus_import(path=DATA / "squad_v1.1_dev" / "dev-v1.1.sample.json", corpus="squad-en",
                  language="en", format="squad")
    data = json.loads((DATA / "squad_v1.1_dev" / "dev-v1.1.sample.json").read_text())
    questions = [qa["question"] for a in data["data"] for p in a["paragraphs"]
                 for qa in p["qas"]][:6]
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(questions) + "\n", encoding="utf-8")
    report = queries_import(path=path, corpus="squad-en", language="en")
    assert report.run_id
    return questions


def test_marco_takes_corpus_queries_and_retrieves_ranked_passages(squad_corpus, settings,
                                                                  committed, admin_user):
    from collector.models import Corpus

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.get(name="squad-en")
    project = engine.project_create(name="marco real", recipe="marco", corpus=corpus)
    judge = user_with_roles("judge", Role.ANNOTATOR)
    engine.project_member_add(project=project, user=judge, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    judged = Item.objects.filter(stage__kind="marco_judge").order_by("id")
    assert [i.data["query"] for i in judged] == squad_corpus
    task = engine.task_claim(worker=judge, project=project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=judge, payload={
            "intent": "informational", "decision": "keep", "exclusions": [],
            "query_type": "DESCRIPTION", "question_type": "DESCRIPTION"})
    curate = Item.objects.get(stage__kind="marco_curate")
    passages = curate.data["passages"]
    assert [p["rank"] for p in passages] == list(range(1, len(passages) + 1))
    assert 1 <= len(passages) <= 10
    texts = set(Document.objects.filter(corpus=corpus).values_list("body", flat=True))
    assert all(any(p["text"] in body for body in texts) for p in passages)


def test_reco_filters_corpus_queries_and_retrieves_chinese_documents(db, tmp_path, settings,
                                                                    committed, admin_user):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus_import(path=DATA / "dureader" / "search.dev.sample.jsonl", corpus="dureader-zh",
                  language="zh", format="dureader")
    queries = [json.loads(line)["question"] for line in
               (DATA / "dureader" / "search.dev.sample.jsonl").read_text().splitlines()][:8]
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(queries) + "\n", encoding="utf-8")
    queries_import(path=path, corpus="dureader-zh", language="zh")
    from collector.models import Corpus

    corpus = Corpus.objects.get(name="dureader-zh")
    project = engine.project_create(name="reco real", recipe="reco", corpus=corpus,
                                    language="zh", params={6: {"batch_size": 2}})
    with committed():
        engine.project_start(project=project, actor=admin_user)
    filtered = Item.objects.filter(stage__kind="reco_query_filter", status="done")
    assert filtered.count() == len(queries)
    # Verdicts reach the stored queries.
    stored = Query.objects.filter(corpus=corpus)
    assert all("reco_query_filter" in q.verdicts for q in stored)
    retrieved = Item.objects.filter(stage__kind="reco_doc_filter")
    assert retrieved.exists()
    for item in retrieved:
        docs = item.data["documents"]
        assert 1 <= len(docs) <= 10
        assert all(Document.objects.filter(pk=d["document_id"], corpus=corpus).exists()
                   for d in docs)
