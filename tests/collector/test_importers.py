"""Every format imports its in-repo sample; offsets round-trip; re-imports are idempotent."""

from __future__ import annotations

import csv
import json
import re

import pytest

from collector.models import Corpus, Document, ImportRun, Passage, Query, SourceQuestion
from collector.services import SplitOptions, corpus_import, queries_import
from tests.collector.corpus_support import (
    DUREADER_DEV,
    DUREADER_TRAIN,
    MSMARCO_COLUMNAR,
    MSMARCO_JSONL,
    NEWSQA_CSV,
    NEWSQA_DIR,
    NEWSQA_JSON,
    QUERIES_EN,
    QUERIES_ZH,
    RECO,
    SQUAD_V1,
    SQUAD_V2,
    STORY,
    assert_offsets_exact,
    indexed,
    row_counts,
    squad_contexts,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


def _import(path, *, corpus="c", language="en", format, **kwargs):
    return corpus_import(path=path, corpus=corpus, language=language, format=format, **kwargs)


def test_squad_v1_paragraphs_become_documents_with_their_questions():
    raw = json.loads(SQUAD_V1.read_text(encoding="utf-8"))
    paragraphs = [(a["title"], p) for a in raw["data"] for p in a["paragraphs"]]
    report = _import(SQUAD_V1, format="squad")
    corpus = Corpus.objects.get(name="c")
    assert report.counts.documents_created == len(paragraphs) == 16
    assert report.counts.questions_created == sum(len(p["qas"]) for _, p in paragraphs) == 186
    first_title, first = paragraphs[0]
    document = Document.objects.get(corpus=corpus, external_id=f"{first_title}#0")
    assert document.body == first["context"]
    assert document.title == first_title.replace("_", " ")
    assert document.source_type == "encyclopedia"
    qa = first["qas"][0]
    question = SourceQuestion.objects.get(corpus=corpus, external_id=qa["id"])
    assert question.document_id == document.pk
    assert question.text == qa["question"]
    assert [(a["text"], a["start"]) for a in question.answers] == [
        (a["text"], a["answer_start"]) for a in qa["answers"]
    ]
    # Non-ASCII contexts (Polish names in "Warsaw") keep exact character offsets.
    assert assert_offsets_exact(corpus) > 186 * 3
    assert indexed(corpus) == Passage.objects.filter(document__corpus=corpus).count()
    assert ImportRun.objects.get(pk=report.run_id).indexed_at is not None


def test_squad_v2_keeps_impossible_questions_and_plausible_answers():
    _import(SQUAD_V2, format="squad")
    questions = SourceQuestion.objects.filter(corpus__name="c")
    assert questions.count() == 116
    impossible = questions.filter(is_impossible=True)
    assert impossible.count() == 58
    sample = impossible.get(external_id="5ad39d53604f3c001a3fe8d1")
    assert sample.answers == []
    assert sample.metadata["plausible_answers"] == [{"text": "Normans", "start": 4, "end": 11}]
    assert sample.document.body[4:11] == "Normans"


def test_story_keeps_highlights_apart_and_matches_newsqa_text():
    report = _import(STORY, format="story")
    assert report.counts.documents_created == 1
    document = Document.objects.get(corpus__name="c")
    assert document.external_id == "000000000000000000000000000000000000a001"
    assert document.highlights == [
        "Portvale council votes 7-2 to build a library on the old harbor site",
        "Construction is expected to start in March and cost about $4 million",
        "Critics wanted the money spent on roads",
    ]
    assert "@highlight" not in document.body
    assert document.title == ""
    newsqa = json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))
    assert document.body == newsqa["data"][0]["text"]
    assert Passage.objects.filter(document=document).count() == 4


def test_story_folder_then_newsqa_json_add_questions_to_the_same_story():
    _import(NEWSQA_DIR, format="story")
    report = _import(NEWSQA_JSON, format="newsqa-json")
    assert (report.counts.documents_created, report.counts.documents_skipped) == (0, 1)
    assert report.counts.questions_created == 4
    document = Document.objects.get(corpus__name="c")
    assert document.highlights  # from the story file
    assert document.questions.count() == 4
    assert_offsets_exact(document.corpus)


def test_newsqa_json_answers_spans_validations_and_consensus():
    _import(NEWSQA_JSON, format="newsqa-json")
    document = Document.objects.get(corpus__name="c")
    assert document.metadata == {
        "story_id": "./cnn/stories/000000000000000000000000000000000000a001.story",
        "split": "dev",
    }
    questions = list(document.questions.order_by("external_id"))
    assert [q.text for q in questions] == ["How did the council vote?",
                                           "When will construction begin?",
                                           "Who opposed the plan?",
                                           "What color will the library be?"]
    vote, when, who, color = questions
    assert vote.answers[0] == {"text": "7-2", "start": 66, "end": 69}
    assert when.answers[2] == {"no_answer": True}
    assert when.metadata["validatedAnswers"][0] == {"count": 2, "s": 178, "e": 186,
                                                    "text": "in March"}
    assert who.answers[1]["spans"] == [
        {"text": document.body[218:233], "start": 218, "end": 233},
        {"text": document.body[269:281], "start": 269, "end": 281},
    ]
    assert "isQuestionBad" not in who.metadata
    assert color.is_impossible and color.metadata["consensus"] == {"noAnswer": True}
    assert_offsets_exact(document.corpus)


def test_newsqa_csv_gives_the_same_questions_as_the_json():
    _import(NEWSQA_JSON, corpus="from-json", format="newsqa-json")
    _import(NEWSQA_CSV, corpus="from-csv", format="newsqa-csv")
    by_json = {q.external_id: q for q in SourceQuestion.objects.filter(corpus__name="from-json")}
    by_csv = {q.external_id: q for q in SourceQuestion.objects.filter(corpus__name="from-csv")}
    assert by_json.keys() == by_csv.keys()
    for key, question in by_json.items():
        assert by_csv[key].text == question.text
        assert by_csv[key].answers == question.answers
        assert (by_csv[key].metadata.get("validatedAnswers")
                == question.metadata.get("validatedAnswers"))
    assert (Document.objects.get(corpus__name="from-csv").body
            == Document.objects.get(corpus__name="from-json").body)


def test_msmarco_rows_and_columnar_files_import_the_same_records():
    _import(MSMARCO_JSONL, corpus="rows", format="msmarco")
    _import(MSMARCO_COLUMNAR, corpus="columns", format="msmarco")

    def snapshot(name):
        documents = {d.external_id: (d.body, d.url, d.metadata)
                     for d in Document.objects.filter(corpus__name=name)}
        questions = {q.external_id: (q.text, q.answers, q.is_impossible, q.metadata)
                     for q in SourceQuestion.objects.filter(corpus__name=name)}
        return documents, questions

    rows = snapshot("rows")
    assert rows == snapshot("columns")
    documents, questions = rows
    assert len(documents) == 8 and len(questions) == 3
    assert documents["900001-1"][1] == "http://example.com/how-long-to-boil-eggs"
    text, answers, impossible, metadata = questions["900002"]
    assert (answers, impossible) == ([], True)  # "No Answer Present."
    assert metadata["well_formed_answers"] == []  # the string "[]" in the file
    assert questions["900001"][3]["selected"] == ["900001-1"]
    assert questions["900001"][3]["well_formed_answers"] == [
        "It takes about 12 minutes to hard boil an egg."]


def test_dureader_documents_follow_their_paragraphs():
    records = [json.loads(line) for line in DUREADER_DEV.read_text(encoding="utf-8").splitlines()]
    report = _import(DUREADER_DEV, language="zh", format="dureader")
    assert report.counts.documents_created == sum(len(r["documents"]) for r in records)
    assert report.counts.questions_created == len(records) == 16
    record = records[0]
    for i, raw in enumerate(record["documents"]):
        document = Document.objects.get(corpus__name="c",
                                        external_id=f"{record['question_id']}-{i}")
        assert document.title == raw["title"]
        expected = [p.strip() for p in raw["paragraphs"] if p.strip()]
        assert [p.text for p in document.passages.order_by("ordinal")] == expected
    question = SourceQuestion.objects.get(external_id=str(record["question_id"]))
    assert question.text == record["question"]
    assert [a["text"] for a in question.answers] == record["answers"]
    assert question.metadata["question_type"] == record["question_type"]
    assert question.document.external_id == f"{record['question_id']}-{record['answer_docs'][0]}"
    assert "segmented_question" not in question.metadata
    assert_offsets_exact(Corpus.objects.get(name="c"))


def test_reco_locates_the_evidence_in_the_document():
    _import(RECO, language="zh", format="reco")
    question = SourceQuestion.objects.get(external_id="900002")
    evidence = question.metadata["evidence"]
    assert question.document.body[evidence["start"]:evidence["end"]] == evidence["text"]
    assert question.metadata["alternatives"] == ["不能", "能", "无法确定"]
    assert question.answers == [{"text": "不能"}]


def test_generic_jsonl_csv_and_tsv_with_a_mapping(tmp_path):
    paragraphs = squad_contexts()[:6]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(
        json.dumps({"doc": {"key": f"p{i}"}, "text": context, "name": title, "lang": "en"}) + "\n"
        for i, (title, context) in enumerate(paragraphs)), encoding="utf-8")
    with (tmp_path / "docs.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "headline", "text", "kind"])
        for i, (title, context) in enumerate(paragraphs):
            writer.writerow([f"p{i}", title, context + "\nSecond line.", "encyclopedia"])
    (tmp_path / "docs.tsv").write_text("".join(
        f"p{i}\t{context}\n" for i, (_, context) in enumerate(paragraphs)), encoding="utf-8")

    _import(jsonl, corpus="j", format="jsonl", mapping="id=doc.key,body=text,title=name")
    _import(tmp_path / "docs.csv", corpus="c", format="csv",
            mapping="id=key,body=text,title=headline,source_type=kind")
    _import(tmp_path / "docs.tsv", corpus="t", format="tsv", mapping="id=0,body=1")
    for name in ("j", "c", "t"):
        assert Document.objects.filter(corpus__name=name).count() == 6
    j = Document.objects.get(corpus__name="j", external_id="p0")
    assert (j.title, j.body, j.metadata) == (paragraphs[0][0], paragraphs[0][1], {"lang": "en"})
    c = Document.objects.get(corpus__name="c", external_id="p1")
    assert c.source_type == "encyclopedia" and c.title == paragraphs[1][0]
    # CSV bodies span two lines, so two paragraph passages each.
    assert [p.text for p in c.passages.order_by("ordinal")] == [paragraphs[1][1], "Second line."]
    assert Document.objects.get(corpus__name="t", external_id="p5").body == paragraphs[5][1]
    for name in ("j", "c", "t"):
        assert_offsets_exact(Corpus.objects.get(name=name))


def test_window_splitting_is_set_per_corpus(tmp_path):
    _import(SQUAD_V1, corpus="windows", format="squad",
            split=SplitOptions(mode="window", window_tokens=40, window_overlap=10))
    corpus = Corpus.objects.get(name="windows")
    assert (corpus.split_mode, corpus.window_tokens, corpus.window_overlap) == ("window", 40, 10)
    for document in Document.objects.filter(corpus=corpus):
        passages = list(document.passages.order_by("ordinal"))
        tokens = document.body.split()
        assert len(passages) == max(1, -(-(len(tokens) - 10) // 30))
        assert all(len(p.text.split()) <= 40 for p in passages)
        assert passages[0].start == 0 and passages[-1].end == len(document.body.rstrip())
    assert_offsets_exact(corpus)


@pytest.mark.parametrize(("split", "says"), [
    (SplitOptions(mode="window", window_tokens=0), "window_tokens: a window of 0 tokens"),
    (SplitOptions(mode="window", window_tokens=10, window_overlap=10),
     "window overlap (10) must be smaller than the window (10 tokens)"),
])
def test_a_window_that_cannot_cut_names_the_option(split, says):
    """Not the database constraint's name ("collector_corpus_window_valid")."""
    from collector.importers.errors import ImportFailure

    with pytest.raises(ImportFailure, match=re.escape(says)):
        _import(SQUAD_V1, corpus="windows", format="squad", split=split)
    assert not Corpus.objects.filter(name="windows").exists()


@pytest.mark.parametrize(("path", "fmt", "language"), [
    (SQUAD_V1, "squad", "en"), (SQUAD_V2, "squad", "en"), (NEWSQA_JSON, "newsqa-json", "en"),
    (NEWSQA_CSV, "newsqa-csv", "en"), (NEWSQA_DIR, "story", "en"),
    (MSMARCO_JSONL, "msmarco", "en"), (MSMARCO_COLUMNAR, "msmarco", "en"),
    (DUREADER_TRAIN, "dureader", "zh"), (RECO, "reco", "zh"),
])
def test_reimporting_the_same_file_is_idempotent(path, fmt, language):
    first = _import(path, language=language, format=fmt)
    counts = row_counts()
    corpus = Corpus.objects.get(name="c")
    entries = indexed(corpus)
    second = _import(path, language=language, format=fmt)
    assert row_counts() == counts
    assert indexed(corpus) == entries
    assert second.counts.documents_created == second.counts.questions_created == 0
    assert second.counts.documents_skipped == first.counts.documents_created > 0
    assert second.counts.questions_skipped == first.counts.questions_created
    assert second.run_id is None


def test_a_new_file_adds_only_new_documents(tmp_path):
    paragraphs = squad_contexts()
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps({"id": f"p{i}", "body": c}) + "\n"
                             for i, (_, c) in enumerate(paragraphs[:10])), encoding="utf-8")
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps({"id": f"p{i}", "body": c}) + "\n"
                            for i, (_, c) in enumerate(paragraphs[5:], start=5)),
                    encoding="utf-8")
    _import(first, format="jsonl")
    report = _import(more, format="jsonl", batch_size=3)
    assert (report.counts.documents_created, report.counts.documents_skipped) == (6, 5)
    assert Document.objects.filter(corpus__name="c").count() == 16
    assert indexed(Corpus.objects.get(name="c")) == Passage.objects.count()


def test_queries_plain_and_jsonl(tmp_path):
    report = queries_import(path=QUERIES_EN, corpus="q", language="en")
    assert report.created == 200
    query = Query.objects.get(text="when was the last time anyone was on the moon")
    assert query.metadata == {"answer": ["14 December 1972 UTC", "December 1972"]}
    assert query.external_id.startswith("sha1:") and query.language == "en"
    zh = queries_import(path=QUERIES_ZH, corpus="zh", language="zh")
    assert zh.created == 201
    assert Query.objects.get(corpus__name="zh", external_id="186572").text == "2017有什么好看的小说"
    plain = tmp_path / "plain.txt"
    plain.write_text("how tall is the eiffel tower\n\n  who wrote hamlet  \n", encoding="utf-8")
    queries_import(path=plain, corpus="q", language="en")
    assert Query.objects.filter(corpus__name="q").count() == 202
    assert Query.objects.filter(text="who wrote hamlet").exists()
    again = queries_import(path=QUERIES_EN, corpus="q", language="en")
    assert (again.created, again.skipped, again.run_id) == (0, 200, None)


def test_debug_mode_does_not_keep_the_sql_of_every_batch(tmp_path, settings):
    from django.db import connection

    settings.DEBUG = True
    records = [{"id": f"p{i}", "body": context} for i, (_, context) in enumerate(squad_contexts())]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    connection.queries_log.clear()
    _import(path, format="jsonl", batch_size=4, index=False)
    logged = " ".join(query["sql"] for query in connection.queries_log)
    # The log is emptied after each batch: no bodies pile up in memory.
    assert records[0]["body"][:60] not in logged
    assert len(connection.queries_log) < 10
