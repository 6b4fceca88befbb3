"""Search: BM25F ranking, Chinese analysis, highlighting, the index lifecycle.

Every test that goes through ``search_backend()`` runs on both backends: Whoosh, and the
PostgreSQL backend when the test database is PostgreSQL (CI's PostgreSQL stage).
"""

from __future__ import annotations

import json
import random

import pytest
from django.db import connection

from collector.models import Corpus, Document, Passage
from collector.search import IndexEntry, search_backend
from collector.search.whoosh_backend import WhooshBackend
from collector.services import (
    corpus_import,
    index_rebuild,
    retrieve,
    search_page,
)
from tests.collector.corpus_support import (
    DUREADER_DEV,
    DUREADER_TRAIN,
    SQUAD_V1,
    SQUAD_V2,
    indexed,
    squad_contexts,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


@pytest.fixture(autouse=True, params=["whoosh", "postgres"])
def backend_name(request, settings):
    if request.param == "postgres" and connection.vendor != "postgresql":
        pytest.skip("the postgres search backend needs a PostgreSQL database")
    settings.CROWDQA_SEARCH_BACKEND = request.param
    return request.param


@pytest.fixture
def whoosh_only(backend_name):
    if backend_name != "whoosh":
        pytest.skip("a test of the Whoosh backend itself")


@pytest.fixture
def squad():
    corpus_import(path=SQUAD_V1, corpus="squad", language="en", format="squad")
    return Corpus.objects.get(name="squad")


@pytest.fixture
def dureader():
    corpus_import(path=DUREADER_DEV, corpus="dureader", language="zh", format="dureader")
    return Corpus.objects.get(name="dureader")


def test_the_passage_with_a_distinctive_phrase_ranks_first(squad):
    # Phrases that occur in exactly one passage of the sample.
    for phrase in ("Levi's Stadium in the San Francisco Bay Area",
                   "Maria Skłodowska-Curie", "Żelazowa Wola",
                   "chemical element with symbol O"):
        holders = Passage.objects.filter(document__corpus=squad, text__contains=phrase)
        assert holders.count() == 1, phrase
        top = retrieve(corpus=squad, text=phrase, k=5)
        assert top[0].passage_id == holders.get().pk, phrase
        assert len(top) == 1 or top[0].score > top[1].score


def test_stemming_matches_other_forms_of_a_word(squad):
    # "emperors" / "conquering" are not in the text as such; "emperor" and "conquered" are.
    hits = retrieve(corpus=squad, text="emperors conquering", k=3)
    assert hits and hits[0].external_id.startswith("Genghis_Khan")


def test_chinese_queries_find_chinese_passages(dureader):
    record = json.loads(DUREADER_DEV.read_text(encoding="utf-8").splitlines()[2])
    question = record["question"]  # 海信电视怎么样
    hits = retrieve(corpus=dureader, text=question, k=10)
    assert hits
    assert all(hit.external_id.startswith(f"{record['question_id']}-") for hit in hits[:5])
    assert "海信" in hits[0].text
    # A phrase from one paragraph brings that paragraph first.
    target = Passage.objects.filter(document__corpus=dureader, text__contains="建行").first()
    assert target is not None
    phrase = target.text[:30]
    assert retrieve(corpus=dureader, text=phrase, k=1)[0].passage_id == target.pk


def test_documents_are_ranked_by_their_best_passage(dureader):
    passages = retrieve(corpus=dureader, text="海信液晶电视质量", k=30)
    documents = retrieve(corpus=dureader, text="海信液晶电视质量", k=3, unit="document")
    assert len(documents) == 3
    seen = []
    for passage in passages:
        if passage.document_id not in seen:
            seen.append(passage.document_id)
    assert [d.document_id for d in documents] == seen[:3]
    assert documents[0].score == documents[0].passages[0].score
    assert all(p.document_id == documents[0].document_id for p in documents[0].passages)


def test_search_page_highlights_matches_and_pages(squad):
    first = search_page(corpus=squad, text="Warsaw city", page=1, per_page=2)
    assert first.total >= 4 and first.pages == -(-first.total // 2)
    assert len(first.results) == 2
    assert "<mark>Warsaw</mark>" in first.results[0].highlighted
    second = search_page(corpus=squad, text="Warsaw city", page=2, per_page=2)
    assert {r.passage.passage_id for r in first.results}.isdisjoint(
        {r.passage.passage_id for r in second.results})
    assert second.first_rank == 3
    # Past the last page (an old link, a hand-made one): the last page, with its results
    # (it said "page N of N" over an empty list), and a page no offset can hold.
    last = search_page(corpus=squad, text="Warsaw city", page=first.pages, per_page=2)
    for beyond in (first.pages + 1, 10**20):
        shown = search_page(corpus=squad, text="Warsaw city", page=beyond, per_page=2)
        assert shown.page == first.pages and shown.results
        assert [r.passage.passage_id for r in shown.results] == \
            [r.passage.passage_id for r in last.results]
    assert search_page(corpus=squad, text="zzzqqq", page=5).page == 1


def test_highlighting_escapes_html_and_marks_chinese():
    backend = search_backend()
    marked = backend.fragments(language="en", text="<b>Bold</b> claims about the <i>stadium</i>",
                               query="stadium", html=True)
    assert marked == ("&lt;b&gt;Bold&lt;/b&gt; claims about the "
                      "&lt;i&gt;<mark>stadium</mark>&lt;/i&gt;")
    zh = backend.fragments(language="zh", text="海信电视国产最好的，我家都用海信电视。",
                           query="海信电视怎么样", html=True)
    assert "<mark>海信</mark>" in zh and "<mark>电视</mark>" in zh
    plain = backend.fragments(language="en", text="Nothing to see here.", query="stadium",
                              html=False)
    assert plain == "Nothing to see here."


@pytest.mark.usefixtures("whoosh_only")
def test_array_scorer_gives_whooshs_own_bm25f_scores(tmp_path):
    """The numpy scorer must rank exactly as Whoosh's BM25F searcher does."""
    rng = random.Random(11)  # noqa: S311 - a fixed sample of queries
    fast = WhooshBackend(tmp_path, procs=1)
    reference = WhooshBackend(tmp_path, procs=1, scorer="whoosh")
    contexts = squad_contexts(SQUAD_V1) + squad_contexts(SQUAD_V2)
    entries = []
    for i, (title, context) in enumerate(contexts):
        for j, sentence in enumerate(context.split(". ")):
            entries.append(IndexEntry(passage_id=len(entries) + 1, document_id=i,
                                      external_id=f"d{i}", start=j, end=j + 1,
                                      title=title.replace("_", " "), text=sentence,
                                      run_id=i % 3))
    # Two commits make two segments; deleting a run leaves deleted documents behind.
    with fast.writer(key="k", language="en") as writer:
        for entry in entries[: len(entries) // 2]:
            writer.add(entry)
    with fast.writer(key="k", language="en") as writer:
        for entry in entries[len(entries) // 2:]:
            writer.add(entry)
    with fast.writer(key="k", language="en") as writer:
        writer.delete_run(2)
    alive = sum(1 for e in entries if e.run_id != 2)
    assert fast.count(key="k") == alive
    words = [w for e in entries for w in e.text.split() if w.isalpha()]
    compared = 0
    for _ in range(60):
        query = " ".join(rng.sample(words, rng.randint(1, 5)))
        got = fast.search(key="k", language="en", text=query, limit=1000)
        # Unlimited, Whoosh ranks every match (equal scores in index order); with a limit
        # its block skipping may keep any of the documents tied at the cut.
        want = reference.search(key="k", language="en", text=query, limit=1000)
        assert got.total == want.total == len(got.hits), query
        assert [h.passage_id for h in got.hits] == [h.passage_id for h in want.hits], query
        assert [h.score for h in got.hits] == pytest.approx([h.score for h in want.hits],
                                                            rel=1e-6), query
        top = fast.search(key="k", language="en", text=query, limit=10)
        assert top.hits == got.hits[:10]
        assert not any(entries[h.passage_id - 1].run_id == 2 for h in got.hits)
        compared += len(got.hits)
    assert compared > 300
    everything = fast.search(key="k", language="en", text="the city", limit=1000).hits
    page_two = fast.search(key="k", language="en", text="the city", limit=5, offset=5)
    assert page_two.hits == everything[5:10]


def test_rebuild_replaces_the_index_from_the_database(squad):
    assert indexed(squad) == 18
    # The database is the source of truth: drop a document, rebuild, and it is gone.
    gone = Document.objects.get(corpus=squad, external_id="Warsaw#0")
    phrase = "Maria Skłodowska-Curie"
    assert retrieve(corpus=squad, text=phrase, k=1)[0].document_id == gone.pk
    gone.delete()
    # A stale index hit whose passage is gone is dropped, not shown.
    assert all(hit.document_id != gone.pk for hit in retrieve(corpus=squad, text=phrase, k=5))
    assert index_rebuild(corpus=squad) == 17
    assert indexed(squad) == 17


def test_incremental_import_adds_to_the_index(squad):
    corpus_import(path=SQUAD_V2, corpus="squad", language="en", format="squad")
    assert indexed(squad) == Passage.objects.filter(document__corpus=squad).count() == 33
    assert retrieve(corpus=squad, text="Normans Normandy Rollo", k=1)[0].external_id.startswith(
        "Normans")


def test_search_in_an_unindexed_or_empty_query_returns_nothing(squad, dureader):
    assert retrieve(corpus=squad, text="   ", k=5) == []
    assert retrieve(corpus=squad, text="the of and", k=5) == []  # stop words only
    empty = Corpus.objects.create(name="empty", language="en")
    assert retrieve(corpus=empty, text="anything", k=5) == []
    assert search_page(corpus=empty, text="anything").total == 0


def test_chinese_window_corpus(tmp_path):
    from collector.services import SplitOptions

    corpus_import(path=DUREADER_TRAIN, corpus="zhw", language="zh", format="dureader",
                  split=SplitOptions(mode="window", window_tokens=60, window_overlap=15))
    corpus = Corpus.objects.get(name="zhw")
    passage = Passage.objects.filter(document__corpus=corpus).order_by("id")[3]
    han = sum(1 for ch in passage.text if "\u4e00" <= ch <= "\u9fff")
    assert 0 < han <= 60
    hits = retrieve(corpus=corpus, text=passage.text[5:25], k=3)
    assert passage.pk in [hit.passage_id for hit in hits]


def test_full_width_letters_and_digits_find_their_ascii_forms(tmp_path):
    """Chinese input methods type ＰＰＳＵ and ２０１８: a query in full-width finds the
    passage written in ASCII, and the other way round; the match is marked in the text as
    it is written."""
    rows = [{"id": "a", "body": "PPSU奶瓶耐高温，2018年的新款。"},
            {"id": "b", "body": "玻璃奶瓶最安全，ＩＳＯ认证，适合新生儿。"},
            {"id": "c", "body": "塑料奶瓶轻便，但不耐高温。"}]
    path = tmp_path / "zh.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    corpus_import(path=path, corpus="zhwidth", language="zh", format="jsonl")
    corpus = Corpus.objects.get(name="zhwidth")
    for query, holder in (("ＰＰＳＵ奶瓶", "a"), ("２０１８年", "a"), ("ISO认证", "b"),
                          ("ｉｓｏ", "b")):
        hits = retrieve(corpus=corpus, text=query, k=1)
        assert hits and hits[0].external_id.startswith(holder), query
    marked = search_backend().fragments(language="zh", text=rows[1]["body"], query="iso",
                                        html=True)
    assert "<mark>ＩＳＯ</mark>认证" in marked


def test_an_import_whose_indexing_was_cut_short_is_indexed_by_the_next(squad, tmp_path):
    from collector.models import ImportRun

    corpus_import(path=SQUAD_V2, corpus="squad", language="en", format="squad", index=False)
    assert indexed(squad) == 18  # committed, not indexed (as after a crash)
    assert ImportRun.objects.filter(corpus=squad, indexed_at__isnull=True).count() == 1
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "x", "body": "A zebra crossing in Warsaw."}) + "\n",
                     encoding="utf-8")
    report = corpus_import(path=extra, corpus="squad", language="en", format="jsonl")
    assert report.indexed == 15 + 1
    assert indexed(squad) == Passage.objects.filter(document__corpus=squad).count() == 34
    assert not ImportRun.objects.filter(corpus=squad, indexed_at__isnull=True).exists()


def test_deleting_a_corpus_drops_its_index(squad, django_capture_on_commit_callbacks):
    from collector.services import corpus_delete

    key = squad.index_key.hex
    assert search_backend().exists(key=key)
    with django_capture_on_commit_callbacks(execute=True):
        corpus_delete(corpus=squad)
    assert not search_backend().exists(key=key)
    assert not Passage.objects.exists()


def test_parallel_writer_and_replacing_rebuild(tmp_path, backend_name):
    """The multi-process writer (used for large batches) and a rebuild that replaces."""
    if backend_name == "whoosh":
        backend = WhooshBackend(tmp_path, procs=2, parallel_from=1)
    else:
        from collector.search.postgres_backend import PostgresBackend

        backend = PostgresBackend(procs=2, parallel_from=1)
    contexts = squad_contexts(SQUAD_V1)

    def entries(offset):
        return [IndexEntry(passage_id=offset + i, document_id=i, external_id=f"d{i}", start=0,
                           end=len(text), title=title, text=text, run_id=1)
                for i, (title, text) in enumerate(contexts)]

    with backend.writer(key="p", language="en", expected=len(contexts)) as writer:
        for entry in entries(1000):
            writer.add(entry)
    assert backend.count(key="p") == 16
    with backend.writer(key="p", language="en", expected=8, replace=True) as writer:
        for entry in entries(2000)[:8]:
            writer.add(entry)
    assert backend.count(key="p") == 8
    hits = backend.search(key="p", language="en", text="Super Bowl Broncos", limit=20).hits
    assert hits and all(2000 <= hit.passage_id < 2008 for hit in hits)
