"""Input Python or the database cannot take, for every reader: deep nesting, NUL characters,
lone surrogates, records over the size limit, non-http(s) document URLs. Each is a one-line
error naming file, place and field, and leaves nothing behind (on PostgreSQL through the
COPY path too)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from collector.importers import ImportFailure
from collector.importers.jsonvalues import MAX_DEPTH
from collector.models import Corpus, Document
from collector.services import corpus_import, queries_import
from tests.collector.corpus_support import row_counts

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]

BODY = "The library opened in 1901 and holds forty thousand books."
# Placeholders in the templates below: each is replaced by raw JSON (or CSV) text.
ID, TEXT, URL = "@@ID@@", "@@TEXT@@", "@@URL@@"


def _j(value) -> str:
    return json.dumps(value)


def _line(record) -> str:
    return _j(record) + "\n"


GOOD_LINE = _line({"id": "d0", "body": BODY})

# format -> (file name, template, field of ID, field of TEXT, field of URL or None)
TEMPLATES = {
    "jsonl": ("docs.jsonl", GOOD_LINE + _line({"id": ID, "body": TEXT, "url": URL}),
              "id", "body", "url"),
    "squad": ("squad.json", _j({"version": "v2.0", "data": [{"title": "Library", "paragraphs": [
        {"context": BODY, "qas": [{"id": "q0", "question": "When?", "is_impossible": True,
                                   "answers": []}]},
        {"context": TEXT, "qas": [{"id": ID, "question": "When?", "is_impossible": True,
                                   "answers": []}]}]}]}),
              "data[0].paragraphs[1].qas[0].id", "data[0].paragraphs[1].context", None),
    "newsqa-json": ("newsqa.json", _j({"data": [
        {"storyId": "./cnn/stories/a.story", "text": BODY, "questions": []},
        {"storyId": ID, "text": TEXT, "questions": []}]}),
              "data[1].storyId", "data[1].text", None),
    "msmarco": ("marco.jsonl", _line({"query_id": 1, "query": "when", "answers": ["1901"],
                                      "passages": [{"passage_text": BODY, "is_selected": 1}]})
                + _line({"query_id": ID, "query": "when", "answers": ["1901"], "passages": [
                    {"passage_text": BODY, "is_selected": 0, "url": "https://example.org/"},
                    {"passage_text": TEXT, "is_selected": 1, "url": URL}]}),
                "query_id", "passages[1].passage_text", "passages[1].url"),
    "msmarco-columnar": ("marco.json", _j({
        "query_id": {"0": 1, "1": ID}, "query": {"0": "when", "1": "when"},
        "passages": {"0": [{"passage_text": BODY, "is_selected": 1}],
                     "1": [{"passage_text": TEXT, "is_selected": 1, "url": URL}]},
        "answers": {"0": ["1901"], "1": ["1901"]}}),
        "query_id.1", "passages.1[0].passage_text", "passages[0].url"),
    "dureader": ("search.dev.json", _line({"question_id": 1, "question": "何时", "documents": [
        {"title": "t", "paragraphs": [BODY]}]})
                 + _line({"question_id": ID, "question": "何时", "documents": [
                     {"title": "t", "paragraphs": [BODY, TEXT]}]}),
                 "question_id", "documents[0].paragraphs[1]", None),
    "reco": ("reco.json", _j([
        {"query_id": 1, "query": "q", "doc": BODY, "alternatives": "a|b|c", "answer": "a"},
        {"query_id": ID, "query": "q", "doc": TEXT, "url": URL, "alternatives": "a|b|c",
         "answer": "a"}]), "[1].query_id", "[1].doc", "url"),
    "reco-lines": ("reco.jsonl", _line(
        {"query_id": 1, "query": "q", "doc": BODY, "alternatives": "a|b|c", "answer": "a"})
        + _line({"query_id": ID, "query": "q", "doc": TEXT, "url": URL,
                 "alternatives": "a|b|c", "answer": "a"}), "query_id", "doc", "url"),
    "queries": ("queries.jsonl", _line({"question": "who built it", "id": "q0"})
                + _line({"question": TEXT, "id": ID}), "id", "question", None),
}


def _fill(template: str, *, ident='"d1"', text=None, url='"https://example.org/x"') -> str:
    return (template.replace(_j(ID), ident).replace(_j(TEXT), text or _j(BODY))
            .replace(_j(URL), url))


def _format(name: str) -> str:
    return {"msmarco-columnar": "msmarco", "reco-lines": "reco"}.get(name, name)


def _import(path, fmt: str, **kwargs) -> None:
    if fmt == "queries":
        queries_import(path=path, corpus="bad", language="en", batch_size=1, **kwargs)
    else:
        corpus_import(path=path, corpus="bad", language="en", format=_format(fmt),
                      batch_size=1, **kwargs)


def _refused(path, fmt: str) -> str:
    rows = row_counts()
    with pytest.raises(ImportFailure) as caught:
        _import(path, fmt)
    message = str(caught.value)
    assert "\n" not in message
    assert row_counts() == rows
    assert not Corpus.objects.filter(name="bad").exists()
    return message


@pytest.mark.parametrize("fmt", list(TEMPLATES))
def test_the_templates_import_when_filled_with_good_values(tmp_path, fmt):
    name, template, *_ = TEMPLATES[fmt]
    path = tmp_path / name
    path.write_text(_fill(template), encoding="utf-8")
    _import(path, fmt)
    assert Corpus.objects.filter(name="bad").exists()


DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize("fmt", list(TEMPLATES))
@pytest.mark.parametrize("depth", [50_000, MAX_DEPTH + 1])
def test_json_nested_too_deep_is_named(tmp_path, fmt, depth):
    name, template, _, text_field, _ = TEMPLATES[fmt]
    path = tmp_path / name
    path.write_text(_fill(template, text="[" * depth + "]" * depth), encoding="utf-8")
    message = _refused(path, fmt)
    assert message.startswith(f"{name}: line ")
    assert f"field '{text_field}[0][0]" in message
    assert message.endswith(f"is nested more than {MAX_DEPTH} levels deep (lists and objects "
                            "inside each other)")


@pytest.mark.parametrize("depth", [50_000, MAX_DEPTH + 1])
def test_json_inside_csv_nested_too_deep_is_named(tmp_path, depth):
    deep = "[" * depth + "]" * depth
    docs = tmp_path / "docs.csv"
    docs.write_text(f'id,body,highlights\nd0,{BODY},\nd1,{BODY},"{deep}"\n', encoding="utf-8")
    assert _refused(docs, "csv").startswith(
        "docs.csv: line 3: field 'highlights[0][0]")
    newsqa = tmp_path / "newsqa.csv"
    newsqa.write_text("story_id,question,answer_char_ranges,validated_answers,story_text\n"
                      f'a.story,When?,4:11,"{deep}",{BODY}\n', encoding="utf-8")
    assert _refused(newsqa, "newsqa-csv").startswith(
        "newsqa.csv: line 2: field 'validated_answers[0][0]")


def test_nesting_within_the_limit_imports(tmp_path):
    nested = "[" * (MAX_DEPTH - 1) + '"x"' + "]" * (MAX_DEPTH - 1)
    path = tmp_path / "docs.jsonl"
    path.write_text(_line({"id": "d0", "body": BODY})[:-2] + f', "extra": {nested}}}\n',
                    encoding="utf-8")
    corpus_import(path=path, corpus="ok", language="en", format="jsonl")
    assert Document.objects.get(corpus__name="ok").metadata["extra"][0][0][0]


@pytest.mark.parametrize("fmt", list(TEMPLATES))
def test_a_nul_in_an_id_is_named(tmp_path, fmt):
    name, template, id_field, _, _ = TEMPLATES[fmt]
    path = tmp_path / name
    path.write_text(_fill(template, ident=_j("d\x001")), encoding="utf-8")
    message = _refused(path, fmt)
    assert message.startswith(f"{name}: line ")
    assert message.endswith(f": field '{id_field}': contains a NUL character (\\u0000), "
                            "which cannot be stored")


@pytest.mark.parametrize(("fmt", "content"), [
    ("csv", f"id,body\nd0,{BODY}\nd\x001,{BODY}\n"),
    ("tsv", f"id\tbody\nd0\t{BODY}\nd\x001\t{BODY}\n"),
    ("newsqa-csv", f"story_id,question,answer_char_ranges,story_text\na\x00.story,When?,,{BODY}\n"),
])
def test_a_nul_in_a_delimited_id_is_named(tmp_path, fmt, content):
    path = tmp_path / f"docs.{fmt}"
    path.write_text(content, encoding="utf-8")
    line = 2 if fmt == "newsqa-csv" else 3
    assert _refused(path, fmt) == (f"docs.{fmt}: line {line}: field 'id': contains a NUL "
                                   "character (\\u0000), which cannot be stored")


def test_a_nul_in_a_story_file_or_a_plain_query_list_is_named(tmp_path):
    folder = tmp_path / "stories"
    folder.mkdir()
    (folder / "a.story").write_text(f"{BODY}\n\n@highlight\n\nA library\n", encoding="utf-8")
    (folder / "b.story").write_text(f"{BODY}\nA second\x00 line\n", encoding="utf-8")
    assert _refused(folder, "story") == ("stories/b.story: line 2: contains a NUL character "
                                         "(at column 9), which cannot be stored")
    queries = tmp_path / "queries.txt"
    queries.write_text("who built it\nwhen\x00 was it built\n", encoding="utf-8")
    assert _refused(queries, "queries") == ("queries.txt: line 2: field 'text': contains a NUL "
                                            "character (\\u0000), which cannot be stored")


@pytest.mark.parametrize("fmt", list(TEMPLATES))
def test_a_lone_surrogate_in_a_body_is_named(tmp_path, fmt):
    name, template, _, text_field, _ = TEMPLATES[fmt]
    path = tmp_path / name
    # json.dumps escapes the surrogate: the file is plain ASCII with "\ud800" in it.
    path.write_text(_fill(template, text=_j("Opened in 1901 \ud800 with books.")),
                    encoding="utf-8")
    assert "\\ud800" in path.read_text(encoding="utf-8")
    message = _refused(path, fmt)
    assert message.startswith(f"{name}: line ")
    assert message.endswith(f": field '{text_field}': contains a lone surrogate (\\ud800 at "
                            "character 16), which is not valid Unicode: fix the text or its "
                            "\\u escapes")


def test_a_lone_surrogate_in_metadata_or_a_key_is_named(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(GOOD_LINE + '{"id": "d1", "body": "x", "notes": {"tags": ["ok", "\\udfff"]}}\n'
                    + '{"id": "d2", "body": "x", "\\ud83d": 1}\n', encoding="utf-8")
    assert "line 2: field 'notes.tags[1]': contains a lone surrogate" in _refused(path, "jsonl")
    path.write_text(GOOD_LINE + '{"id": "d2", "body": "x", "\\ud83d": 1}\n', encoding="utf-8")
    assert _refused(path, "jsonl").startswith("docs.jsonl: line 2: has a key that contains a "
                                              "lone surrogate")
    # A proper surrogate pair is one character (an emoji) and imports.
    path.write_text(GOOD_LINE + '{"id": "d1", "body": "Books \\ud83d\\udcda"}\n',
                    encoding="utf-8")
    corpus_import(path=path, corpus="ok", language="en", format="jsonl")
    assert Document.objects.get(external_id="d1").body == "Books 📚"


# -- per-record size limit ------------------------------------------------------------------
LIMIT = 4000
BIG = "word " * 1000  # 5,000 bytes


@pytest.mark.parametrize("fmt", list(TEMPLATES))
def test_a_record_over_the_size_limit_is_named(tmp_path, settings, fmt):
    settings.CROWDQA_IMPORT_MAX_RECORD_BYTES = LIMIT
    name, template, *_ = TEMPLATES[fmt]
    path = tmp_path / name
    path.write_text(_fill(template), encoding="utf-8")
    _import(path, fmt)  # the small file fits
    Corpus.objects.filter(name="bad").delete()
    path.write_text(_fill(template, text=_j(BIG)), encoding="utf-8")
    message = _refused(path, fmt)
    assert message.startswith(f"{name}: line ")
    assert message.endswith(": this record is over 4,000 bytes, the limit for one record "
                            "(setting CROWDQA_IMPORT_MAX_RECORD_BYTES)")


def test_record_limit_on_csv_records_story_files_and_multibyte_text(tmp_path, settings):
    settings.CROWDQA_IMPORT_MAX_RECORD_BYTES = LIMIT
    tail = "(setting CROWDQA_IMPORT_MAX_RECORD_BYTES)"
    # A quoted CSV field spanning many short lines is one record.
    spread = "\n".join(["short line"] * 500)
    docs = tmp_path / "docs.csv"
    docs.write_text(f'id,body\nd0,{BODY}\nd1,"{spread}"\n', encoding="utf-8")
    message = _refused(docs, "csv")
    assert message.startswith("docs.csv: line 3: this record is over 4,000 bytes")
    assert message.endswith(tail)
    folder = tmp_path / "stories"
    folder.mkdir()
    (folder / "a.story").write_text(f"{BIG}\n\n@highlight\n\nbig\n", encoding="utf-8")
    assert _refused(folder, "story").startswith(
        "stories/a.story: whole file: this record is over 4,000 bytes")
    # The limit is in bytes: 1,500 Chinese characters are 4,500 bytes of UTF-8.
    chinese = tmp_path / "reco.json"
    chinese.write_text(_fill(TEMPLATES["reco"][1], text=_j("公" * 1500)), encoding="utf-8")
    assert _refused(chinese, "reco").startswith("reco.json: line 1: this record is over")


# -- document URLs -------------------------------------------------------------------------
BAD_URLS = [
    ("javascript:alert(4)", "'javascript:alert(4)' is not an http(s) URL (scheme "
                            "'javascript'); only http:// and https:// links are accepted"),
    ("JavaScript:alert(4)", "is not an http(s) URL (scheme 'javascript')"),
    ("  javascript:alert(4)", "is not an http(s) URL (scheme 'javascript')"),
    ("java\tscript:alert(4)", "contains a control character"),
    ("data:text/html,<script>alert(4)</script>", "is not an http(s) URL (scheme 'data')"),
    ("//example.org/page", "is not an http(s) URL (it has no scheme such as https://)"),
    ("example.org/page", "is not an http(s) URL (it has no scheme such as https://)"),
    ("http:///page", "has no host name"),
    ("ftp://example.org/file", "(scheme 'ftp')"),
]


@pytest.mark.parametrize("fmt", [fmt for fmt, t in TEMPLATES.items() if t[4]])
@pytest.mark.parametrize(("url", "expected"), BAD_URLS)
def test_a_document_url_that_is_not_http_is_refused(tmp_path, fmt, url, expected):
    name, template, _, _, url_field = TEMPLATES[fmt]
    path = tmp_path / name
    path.write_text(_fill(template, url=_j(url)), encoding="utf-8")
    message = _refused(path, fmt)
    # The column-oriented MS MARCO file has no line per record: the place is its row key.
    place = "row '1'" if fmt == "msmarco-columnar" else "line "
    assert message.startswith(f"{name}: ") and place in message
    assert f": field '{url_field}': " in message
    assert expected in message


def test_csv_urls_are_checked_and_http_urls_kept(tmp_path):
    docs = tmp_path / "docs.csv"
    docs.write_text(f"id,body,url\nd0,{BODY},https://example.org/a?b=c\n"
                    f"d1,{BODY}, HTTP://EXAMPLE.ORG/B \nd2,{BODY},\n", encoding="utf-8")
    corpus_import(path=docs, corpus="ok", language="en", format="csv")
    assert dict(Document.objects.values_list("external_id", "url")) == {
        "d0": "https://example.org/a?b=c", "d1": "HTTP://EXAMPLE.ORG/B", "d2": ""}
    docs.write_text(f"id,body,url\nd0,{BODY},https://example.org/\nd1,{BODY},vbscript:x\n",
                    encoding="utf-8")
    assert _refused(docs, "csv").startswith("docs.csv: line 3: field 'url': 'vbscript:x' is "
                                            "not an http(s) URL (scheme 'vbscript')")


def test_import_corpus_refuses_a_javascript_url_naming_line_and_field(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(GOOD_LINE + _line({"id": "d1", "body": BODY, "url": "javascript:alert(4)"}),
                    encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_corpus", str(path), "--corpus", "c", "--language", "en",
                     "--format", "jsonl", stdout=StringIO(), stderr=StringIO())
    assert str(caught.value) == (
        f"{path}: line 2: field 'url': 'javascript:alert(4)' is not an http(s) URL (scheme "
        "'javascript'); only http:// and https:// links are accepted")
    assert not Corpus.objects.filter(name="c").exists()
