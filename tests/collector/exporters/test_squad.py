"""SQuAD v1.1 / v2.0: true round trips of the real samples, offsets, scoring, contracts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collector.exporters import (
    InvalidRecordError,
    RecordOrderError,
    SquadAnswer,
    SquadArticle,
    SquadParagraph,
    SquadQuestion,
    SquadRow,
    squad_articles_from_rows,
    squad_id,
    verify_entry,
    write_squad_v1,
    write_squad_v2,
)
from tests.collector.exporters.samples import (
    REPO,
    SQUAD_V1,
    SQUAD_V2,
    load_json,
    squad_articles,
    squad_questions,
)


def _lazy(articles):
    """The same articles with every level a one-shot generator, as a DB stream gives."""
    for article in articles:
        yield SquadArticle(article.title, (
            SquadParagraph(p.context, (q for q in p.qas)) for p in article.paragraphs))


@pytest.mark.parametrize(("source", "writer"), [(SQUAD_V1, write_squad_v1),
                                                (SQUAD_V2, write_squad_v2)])
def test_round_trip_reproduces_the_official_file_byte_for_byte(tmp_path, source, writer):
    out = tmp_path / source.name
    entry = writer(out, _lazy(squad_articles(source)))
    assert out.read_bytes() == source.read_bytes()
    assert entry.records == sum(1 for _ in squad_questions(load_json(source)))
    assert entry.bytes == out.stat().st_size
    assert verify_entry(entry)


@pytest.mark.parametrize(("source", "writer", "version"), [
    (SQUAD_V1, write_squad_v1, "1.1"), (SQUAD_V2, write_squad_v2, "v2.0")])
def test_round_trip_field_by_field(tmp_path, source, writer, version):
    original = load_json(source)
    out = tmp_path / "out.json"
    writer(out, squad_articles(source))
    written = load_json(out)
    assert written["version"] == version
    assert len(written["data"]) == len(original["data"])
    for art_w, art_o in zip(written["data"], original["data"], strict=True):
        assert art_w["title"] == art_o["title"]
        for par_w, par_o in zip(art_w["paragraphs"], art_o["paragraphs"], strict=True):
            assert par_w["context"] == par_o["context"]
            for qa_w, qa_o in zip(par_w["qas"], par_o["qas"], strict=True):
                assert set(qa_w) == set(qa_o)
                for key in qa_o:
                    assert qa_w[key] == qa_o[key], (qa_o["id"], key)


@pytest.mark.parametrize(("source", "writer"), [(SQUAD_V1, write_squad_v1),
                                                (SQUAD_V2, write_squad_v2)])
def test_every_span_answer_matches_its_context(tmp_path, source, writer):
    out = tmp_path / "out.json"
    writer(out, squad_articles(source))
    checked = 0
    for context, qa in squad_questions(load_json(out)):
        for answer in qa["answers"] + qa.get("plausible_answers", []):
            start = answer["answer_start"]
            assert context[start:start + len(answer["text"])] == answer["text"], qa["id"]
            checked += 1
    assert checked > 200


def _score(command: str, data, tmp_path) -> dict:
    dataset = load_json(data)
    predictions = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "")
                   for _, qa in squad_questions(dataset)}
    pred = tmp_path / f"pred-{command}.json"
    pred.write_text(json.dumps(predictions), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "collector.metrics", command, str(data), str(pred)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_v1_export_scores_100_against_itself(tmp_path):
    out = tmp_path / "squad-v1.json"
    write_squad_v1(out, squad_articles(SQUAD_V1))
    scores = _score("squad-v1", out, tmp_path)
    assert scores["exact_match"] == 100.0
    assert scores["f1"] == 100.0


def test_v2_export_scores_100_against_itself(tmp_path):
    out = tmp_path / "squad-v2.json"
    write_squad_v2(out, squad_articles(SQUAD_V2))
    scores = _score("squad-v2", out, tmp_path)
    assert scores["exact"] == 100.0
    assert scores["f1"] == 100.0
    assert scores["HasAns_total"] == 58
    assert scores["NoAns_total"] == 58


def _one(question: SquadQuestion, context: str = "Paris is the capital of France."):
    return [SquadArticle("T", [SquadParagraph(context, [question])])]


def test_offset_mismatch_names_the_question_and_leaves_no_file(tmp_path):
    out = tmp_path / "bad.json"
    good = SquadQuestion("q-good", "What?", [SquadAnswer("Paris", 0)])
    bad = SquadQuestion("q-bad-0001", "Where?", [SquadAnswer("France", 3)])
    articles = [SquadArticle("T", [SquadParagraph("Paris is the capital of France.",
                                                  [good, bad])])]
    with pytest.raises(InvalidRecordError, match=r"q-bad-0001.*'France'.*answer_start=3"):
        write_squad_v2(out, articles)
    assert list(tmp_path.iterdir()) == []


def test_non_ascii_offsets_count_code_points(tmp_path):
    context = "Zürich – Kraków: 🙂 Warszawa"
    start = context.index("Warszawa")
    out = tmp_path / "u.json"
    write_squad_v1(out, _one(SquadQuestion("q1", "Which?", [SquadAnswer("Warszawa", start)]),
                             context))
    qa = load_json(out)["data"][0]["paragraphs"][0]["qas"][0]
    assert qa["answers"] == [{"answer_start": start, "text": "Warszawa"}]
    assert out.read_bytes().isascii()  # \\u escapes, as the official files


@pytest.mark.parametrize("question", [
    SquadQuestion("q1", "Why?", [SquadAnswer("Paris", 0)], is_impossible=True),
    SquadQuestion("q1", "Why?", []),
    SquadQuestion("q1", "Why?", [SquadAnswer("", 0)]),
    SquadQuestion("q1", "Why?", [SquadAnswer("Paris", -1)]),
    SquadQuestion("q1", "Why?", [], is_impossible=True,
                  plausible_answers=[SquadAnswer("Lyon", 0)]),
])
def test_v2_refuses_inconsistent_questions(tmp_path, question):
    with pytest.raises(InvalidRecordError, match="q1"):
        write_squad_v2(tmp_path / "x.json", _one(question))
    assert list(tmp_path.iterdir()) == []


def test_v1_refuses_or_skips_unanswerable(tmp_path):
    articles = [SquadArticle("T", [SquadParagraph("Paris is nice.", [
        SquadQuestion("a1", "What?", [SquadAnswer("Paris", 0)]),
        SquadQuestion("u1", "Who?", [], is_impossible=True)])])]
    with pytest.raises(InvalidRecordError, match="u1.*skip_unanswerable"):
        write_squad_v1(tmp_path / "x.json", articles)
    entry = write_squad_v1(tmp_path / "y.json", articles, skip_unanswerable=True)
    assert entry.records == 1
    qas = load_json(tmp_path / "y.json")["data"][0]["paragraphs"][0]["qas"]
    assert [qa["id"] for qa in qas] == ["a1"]


def test_empty_paragraphs_and_articles_are_not_written(tmp_path):
    articles = [SquadArticle("Empty", [SquadParagraph("Nothing asked.", [])]),
                SquadArticle("Full", [SquadParagraph("Nothing asked.", []),
                                      SquadParagraph("Paris is nice.", [
                                          SquadQuestion("a1", "What?",
                                                        [SquadAnswer("Paris", 0)])])])]
    write_squad_v2(tmp_path / "x.json", articles)
    data = load_json(tmp_path / "x.json")["data"]
    assert [a["title"] for a in data] == ["Full"]
    assert [p["context"] for p in data[0]["paragraphs"]] == ["Paris is nice."]
    write_squad_v1(tmp_path / "empty.json", [])
    assert load_json(tmp_path / "empty.json") == {"data": [], "version": "1.1"}


def _rows(articles):
    for a_index, article in enumerate(articles):
        for p_index, paragraph in enumerate(article.paragraphs):
            for q in paragraph.qas:
                yield SquadRow(article.title, paragraph.context, q, article_key=a_index,
                               paragraph_key=(a_index, p_index))


def test_flat_rows_grouped_on_the_fly_give_the_same_file(tmp_path):
    out = tmp_path / "rows.json"
    write_squad_v2(out, squad_articles_from_rows(_rows(squad_articles(SQUAD_V2))))
    assert out.read_bytes() == SQUAD_V2.read_bytes()


def test_flat_rows_default_keys_are_title_and_context(tmp_path):
    rows = (SquadRow(r.title, r.context, r.question) for r in _rows(squad_articles(SQUAD_V1)))
    out = tmp_path / "rows.json"
    write_squad_v1(out, squad_articles_from_rows(rows))
    assert out.read_bytes() == SQUAD_V1.read_bytes()


def test_rows_out_of_order_are_refused(tmp_path):
    q = SquadQuestion("q", "What?", [SquadAnswer("Paris", 0)])
    rows = [SquadRow("A", "Paris a", q), SquadRow("B", "Paris b", q),
            SquadRow("A", "Paris a", q)]
    with pytest.raises(RecordOrderError, match="'A'.*not contiguous"):
        write_squad_v2(tmp_path / "x.json", squad_articles_from_rows(rows))
    rows = [SquadRow("A", "Paris a", q), SquadRow("A", "Paris b", q),
            SquadRow("A", "Paris a", q)]
    with pytest.raises(RecordOrderError, match="paragraph"):
        write_squad_v2(tmp_path / "x.json", squad_articles_from_rows(rows))
    rows = [SquadRow("A", "Paris a", q, article_key=1),
            SquadRow("B", "Paris a", q, article_key=1)]
    with pytest.raises(InvalidRecordError, match="title 'B'"):
        write_squad_v2(tmp_path / "x.json", squad_articles_from_rows(rows))
    assert list(tmp_path.iterdir()) == []


def test_squad_id_is_stable_24_hex():
    first = squad_id("project-a", 17)
    assert first == squad_id("project-a", 17)
    assert len(first) == 24
    assert int(first, 16) >= 0
    assert first != squad_id("project-b", 17)
