"""Bad input: a one-line error naming file, place and field; nothing left in DB or index."""

from __future__ import annotations

import json

import pytest

from collector.importers import ImportFailure
from collector.models import Corpus
from collector.services import corpus_import, queries_import
from tests.collector.corpus_support import (
    NEWSQA_CSV,
    NEWSQA_JSON,
    SQUAD_V1,
    index_dirs,
    indexed,
    row_counts,
    squad_contexts,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


def _lines(records) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _good_records(n: int = 12) -> list[dict]:
    return [{"id": f"p{i}", "body": context}
            for i, (_, context) in enumerate(squad_contexts()[:n])]


def _squad_with(mutate) -> str:
    data = json.loads(SQUAD_V1.read_text(encoding="utf-8"))
    mutate(data)
    return json.dumps(data)


def _bad_inputs(tmp_path):
    """(file name, content bytes, format, expected error fragments)."""
    good = _good_records()
    late_dup = [*good, {"id": "p3", "body": "A second document claiming the id p3."}]
    missing_body = [*good[:7], {"id": "p99", "text": "body under the wrong name"}, *good[7:]]
    offsets = _squad_with(lambda d: d["data"][1]["paragraphs"][2]["qas"][0]["answers"][0]
                          .__setitem__("answer_start", 100_000))
    mismatch = _squad_with(lambda d: d["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]
                           .__setitem__("text", "Carolina Panthers!"))
    newsqa = json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))
    newsqa["data"][0]["questions"][2]["answers"][1]["sourcerAnswers"][1]["e"] = 10_000
    latin1 = _lines(good[:3]).encode() + "café au lait\n".encode("latin-1")
    return [
        ("latin1.jsonl", latin1, "jsonl",
         ["latin1.jsonl: line 4:", "not valid UTF-8"]),
        ("utf16.jsonl", _lines(good[:2]).encode("utf-16"), "jsonl",
         ["utf16.jsonl: line 1:", "not valid UTF-8"]),
        ("empty.jsonl", b"", "jsonl", ["empty.jsonl: is empty"]),
        ("blank.jsonl", b"\n  \n\n", "jsonl", ["blank.jsonl: contains no records"]),
        ("missing.jsonl", _lines(missing_body).encode(), "jsonl",
         ["missing.jsonl: line 8: field 'body': is missing"]),
        ("dup.jsonl", _lines(late_dup).encode(), "jsonl",
         ["dup.jsonl: line 13: field 'id': duplicate document id 'p3' (first used at line 4)"]),
        ("broken.jsonl", (_lines(good[:5]) + '{"id": "x", "body": \n').encode(), "jsonl",
         ["broken.jsonl: line 6: invalid JSON"]),
        ("offsets.json", offsets.encode(), "squad",
         ["offsets.json: data[1].paragraphs[2].qas[0]",
          "field 'answers[0].answer_start': offsets 100000..", "outside the text"]),
        ("mismatch.json", mismatch.encode(), "squad",
         ["mismatch.json: data[0].paragraphs[0].qas[1]", "does not match the text at offset"]),
        ("newsqa.json", json.dumps(newsqa).encode(), "newsqa-json",
         ["newsqa.json: data[0].questions[2]", "field 'answers[1].sourcerAnswers[1]'",
          "outside the text"]),
        ("newsqa.csv", NEWSQA_CSV.read_bytes().replace(b"214:233|", b"214:9999|"), "newsqa-csv",
         ["newsqa.csv: line 10: field 'answer_char_ranges': offsets 214..9999"]),
        ("nul.jsonl", _lines([*good[:2], {"id": "n", "body": "nul \x00 byte"}]).encode(),
         "jsonl", ["nul.jsonl: line 3: field 'body': contains a NUL character"]),
        ("truncated.json", SQUAD_V1.read_bytes()[:30_000], "squad",
         ["truncated.json: line", "invalid JSON"]),
    ]


def _fail(path, *, corpus="bad", format, language="en", batch_size=3, **kwargs) -> str:
    with pytest.raises(ImportFailure) as caught:
        corpus_import(path=path, corpus=corpus, language=language, format=format,
                      batch_size=batch_size, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_each_bad_input_names_its_problem_and_leaves_nothing(tmp_path):
    for name, content, fmt, expected in _bad_inputs(tmp_path):
        path = tmp_path / name
        path.write_bytes(content)
        rows, dirs = row_counts(), index_dirs()
        message = _fail(path, format=fmt)
        for fragment in expected:
            assert fragment in message, (name, message)
        # Nothing of the import remains: no rows (not even the corpus it created)...
        assert row_counts() == rows, name
        assert not Corpus.objects.filter(name="bad").exists()
        # ...and no index was created for it.
        assert index_dirs() == dirs, name


def test_a_failed_import_into_an_existing_corpus_keeps_what_was_there(tmp_path):
    corpus_import(path=SQUAD_V1, corpus="kept", language="en", format="squad")
    corpus = Corpus.objects.get(name="kept")
    rows, entries = row_counts(), indexed(corpus)
    assert entries == 18
    for name, content, fmt, expected in _bad_inputs(tmp_path):
        path = tmp_path / name
        path.write_bytes(content)
        message = _fail(path, corpus="kept", format=fmt)
        assert expected[0] in message
        assert row_counts() == rows, name
        assert indexed(corpus) == entries, name


def test_files_over_the_size_limit_are_refused_before_reading(tmp_path, settings):
    path = tmp_path / "big.jsonl"
    path.write_text(_lines(_good_records()), encoding="utf-8")
    settings.CROWDQA_IMPORT_MAX_BYTES = path.stat().st_size - 1
    rows = row_counts()
    message = _fail(path, format="jsonl")
    assert message.startswith(f"big.jsonl: is {path.stat().st_size:,} bytes, over the import "
                              f"limit of {path.stat().st_size - 1:,} bytes")
    assert row_counts() == rows


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"format": "xml"}, "unknown format 'xml'"),
    ({"format": "jsonl", "mapping": "id=key,bdy=text"}, "unknown field 'bdy'"),
    ({"format": "jsonl", "mapping": "id"}, "'id' is not field=column"),
    ({"format": "squad", "mapping": "id=key"}, "format 'squad' takes no --map"),
    ({"format": "jsonl", "mapping": "id=key,body=text"},
     "docs.jsonl: line 1: field 'id': is missing (column 'key')"),
    ({"format": "csv"}, "docs.jsonl: line 1: field 'id': maps to column 'id', which the header "
                        "does not have"),
    ({"format": "jsonl", "language": "fr"}, "unknown language 'fr'"),
])
def test_bad_options_are_refused(tmp_path, kwargs, expected):
    path = tmp_path / "docs.jsonl"
    path.write_text(_lines([{"doc_id": "a", "body": "Some text."}]), encoding="utf-8")
    rows = row_counts()
    language = kwargs.pop("language", "en")
    assert expected in _fail(path, language=language, **kwargs)
    assert row_counts() == rows


def test_corpus_language_and_splitting_are_fixed(tmp_path):
    corpus_import(path=SQUAD_V1, corpus="en-corpus", language="en", format="squad")
    rows = row_counts()
    assert "corpus 'en-corpus' is in English (en), not zh" in _fail(
        SQUAD_V1, corpus="en-corpus", language="zh", format="squad")
    from collector.services import SplitOptions

    assert "already has split mode 'paragraph'" in _fail(
        SQUAD_V1, corpus="en-corpus", format="squad", split=SplitOptions(mode="window"))
    assert row_counts() == rows


def test_question_on_an_existing_document_with_other_text_is_refused(tmp_path):
    data = json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))
    corpus_import(path=NEWSQA_JSON, corpus="news", language="en", format="newsqa-json")
    data["data"][0]["text"] = data["data"][0]["text"].replace("Portvale", "Port Vale")
    for question in data["data"][0]["questions"]:
        question["q"] += " (revised)"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    rows = row_counts()
    # New question ids? NewsQA ids follow the story: these are the same ids, so skipped.
    corpus_import(path=changed, corpus="news", language="en", format="newsqa-json")
    assert row_counts() == rows
    # Questions under new ids on the changed text would not fit the stored text.
    data["data"][0]["questions"] = data["data"][0]["questions"] * 2
    changed.write_text(json.dumps(data), encoding="utf-8")
    message = _fail(changed, corpus="news", format="newsqa-json")
    assert "field 'document': document '000000000000000000000000000000000000a001' is " \
           "already in corpus 'news' with a different text" in message
    assert row_counts() == rows


def test_bad_query_lists(tmp_path):
    rows = row_counts()
    cases = [
        ("dup.txt", "who wrote hamlet\nhow far is the moon\nwho wrote  hamlet\n",
         "dup.txt: line 3: field 'id': duplicate query 'sha1:"),
        ("noid.jsonl", '{"question": "a"}\n{"answer": ["x"]}\n',
         "noid.jsonl: line 2: field 'question': is missing"),
        ("empty.txt", "", "empty.txt: is empty"),
        ("blank.txt", "\n\n", "blank.txt: contains no queries"),
    ]
    for name, content, expected in cases:
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        with pytest.raises(ImportFailure) as caught:
            queries_import(path=path, corpus="q", language="en")
        assert expected in str(caught.value)
        assert row_counts() == rows
    latin = tmp_path / "latin.txt"
    latin.write_bytes("naïve query\n".encode("latin-1"))
    with pytest.raises(ImportFailure, match=r"latin.txt: line 1: is not valid UTF-8"):
        queries_import(path=latin, corpus="q", language="en")
    assert row_counts() == rows
