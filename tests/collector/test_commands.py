"""The command-line contract: import_corpus, import_queries, rebuild_index, search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from collector.models import Corpus, Document, ImportRun, Query
from collector.services import corpus_ensure
from tests.collector.corpus_support import (
    DUREADER_DEV,
    NEWSQA_DIR,
    QUERIES_EN,
    SQUAD_V1,
    indexed,
)

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_import_corpus_then_search_json():
    out = run("import_corpus", str(SQUAD_V1), "--corpus", "squad", "--language", "en",
              "--format", "squad")
    assert "16 documents imported (0 skipped" in out and "18 passages indexed" in out
    again = run("import_corpus", str(SQUAD_V1), "--corpus", "squad", "--language", "en",
                "--format", "squad")
    assert "0 documents imported (16 skipped, already present)" in again
    hits = json.loads(run("search", "--corpus", "squad", "--k", "10", "--json",
                          "Which NFL team represented the AFC at Super Bowl 50?"))
    assert 1 <= len(hits) <= 10
    assert set(hits[0]) >= {"document", "start", "end", "score", "snippet"}
    assert hits[0]["document"] == "Super_Bowl_50#0"
    document = Document.objects.get(external_id="Super_Bowl_50#0")
    assert document.body[hits[0]["start"]:hits[0]["end"]]  # offsets into the body
    passage = document.body[hits[0]["start"]:hits[0]["end"]]
    assert all(part in passage for part in hits[0]["snippet"].split(" … "))
    assert "Super Bowl" in hits[0]["snippet"]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    text = run("search", "--corpus", "squad", "--k", "2", "Denver Broncos")
    assert text.splitlines()[0].startswith("  1.")


def test_import_with_map_split_and_story_folder(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_text("key\ttext\na\tThe first document.\nb\tThe second one is longer.\n",
                    encoding="utf-8")
    run("import_corpus", str(docs), "--corpus", "tsv", "--language", "en", "--format", "tsv",
        "--map", "id=key,body=text", "--split", "window", "--window-tokens", "3",
        "--overlap", "1")
    corpus = Corpus.objects.get(name="tsv")
    assert corpus.split_mode == "window"
    assert [p.text for p in Document.objects.get(corpus=corpus, external_id="b")
            .passages.order_by("ordinal")] == ["The second one", "one is longer."]
    run("import_corpus", str(NEWSQA_DIR), "--corpus", "stories", "--language", "en",
        "--format", "story")
    assert Document.objects.get(corpus__name="stories").highlights


def test_import_queries_and_rebuild_index():
    with transaction.atomic():
        corpus_ensure(name="nq", language="en")
    out = run("import_queries", str(QUERIES_EN), "--corpus", "nq", "--language", "en")
    assert "200 queries imported" in out
    assert Query.objects.filter(corpus__name="nq").count() == 200
    run("import_corpus", str(DUREADER_DEV), "--corpus", "zh", "--language", "zh",
        "--format", "dureader", "--no-index")
    corpus = Corpus.objects.get(name="zh")
    assert indexed(corpus) == 0
    assert run("rebuild_index", "--corpus", "zh").strip() == "corpus 'zh': 657 passages indexed"
    assert indexed(corpus) == 657
    hits = json.loads(run("search", "--corpus", "zh", "--json", "海信电视怎么样"))
    assert len(hits) == 10 and "海信" in hits[0]["snippet"]


def test_import_queries_refuses_a_corpus_that_is_not_there(tmp_path, manage_py):
    """A misspelt --corpus made a new corpus holding only the queries: it is refused,
    naming the closest corpus, and nothing is written."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "body": "Some text."}\n', encoding="utf-8")
    for name in ("wiki-en-dev", "news"):
        run("import_corpus", str(docs), "--corpus", name, "--language", "en",
            "--format", "jsonl", "--no-index", "--no-progress")
    runs = ImportRun.objects.count()
    said = ("--corpus: no corpus named 'wiki-en-dv'; did you mean 'wiki-en-dev'? "
            "(corpora: news, wiki-en-dev)")
    with pytest.raises(CommandError) as caught:
        run("import_queries", str(QUERIES_EN), "--corpus", "wiki-en-dv", "--language", "en")
    assert str(caught.value) == said
    assert sorted(Corpus.objects.values_list("name", flat=True)) == ["news", "wiki-en-dev"]
    assert not Query.objects.exists() and ImportRun.objects.count() == runs
    with pytest.raises(CommandError, match=r"^--corpus: no corpus named 'zzz' \(corpora: "):
        run("import_queries", str(QUERIES_EN), "--corpus", "zzz", "--language", "en")
    shell = manage_py("import_queries", str(QUERIES_EN), "--corpus", "wiki-en-dv",
                      "--language", "en", "--no-progress")
    assert (shell.returncode, shell.stderr.strip(), shell.stdout) == (1, f"CommandError: {said}",
                                                                      "")
    assert not Query.objects.exists() and not Corpus.objects.filter(name="wiki-en-dv").exists()
    out = run("import_queries", str(QUERIES_EN), "--corpus", "wiki-en-dev", "--language", "en")
    assert "200 queries imported" in out


def test_rebuild_index_all_rebuilds_every_corpus_as_a_restore_needs():
    """A restore (or a switch of CROWDQA_SEARCH_BACKEND) needs every corpus indexed again:
    one command, not one per corpus name."""
    for path, name, language, fmt in ((SQUAD_V1, "squad", "en", "squad"),
                                      (DUREADER_DEV, "zh", "zh", "dureader")):
        run("import_corpus", str(path), "--corpus", name, "--language", language,
            "--format", fmt, "--no-index")
    assert [indexed(c) for c in Corpus.objects.order_by("name")] == [0, 0]
    out = run("rebuild_index", "--all", "--no-progress")
    assert out.splitlines() == ["corpus 'squad': 18 passages indexed",
                                "corpus 'zh': 657 passages indexed"]
    assert [indexed(c) for c in Corpus.objects.order_by("name")] == [18, 657]
    with pytest.raises(CommandError, match="one of the arguments --corpus --all is required"):
        run("rebuild_index")


def test_import_corpus_refuses_options_it_would_ignore(tmp_path):
    """A window for a corpus split by paragraph was stored and never used; a source type
    for a format that sets its own was dropped. Both are refused before anything is read."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "body": "Some text here."}\n', encoding="utf-8")

    def refusal(*args: str) -> str:
        with pytest.raises(CommandError) as caught:
            run("import_corpus", *args, "--language", "en", "--no-progress")
        return str(caught.value)

    assert refusal(str(docs), "--corpus", "new", "--format", "jsonl",
                   "--window-tokens", "50") == (
        "--window-tokens 50: only for --split window (a new corpus splits by paragraph "
        "unless --split says otherwise)")
    assert refusal(str(docs), "--corpus", "new", "--format", "jsonl", "--split", "paragraph",
                   "--overlap", "5") == (
        "--overlap 5: only for --split window (--split paragraph given)")
    assert refusal(str(SQUAD_V1), "--corpus", "new", "--format", "squad",
                   "--source-type", "news") == (
        "--source-type: format 'squad' sets its documents' source type itself (only jsonl, "
        "csv and tsv take --source-type)")
    assert not Corpus.objects.exists()
    run("import_corpus", str(docs), "--corpus", "paras", "--language", "en", "--format",
        "jsonl", "--no-index")
    assert refusal(str(docs), "--corpus", "paras", "--format", "jsonl",
                   "--window-tokens", "100") == (
        "--window-tokens 100: only for --split window (corpus 'paras' splits by paragraph)")
    run("import_corpus", str(docs), "--corpus", "windows", "--language", "en", "--format",
        "jsonl", "--split", "window", "--window-tokens", "3", "--overlap", "1", "--no-index")
    again = run("import_corpus", str(docs), "--corpus", "windows", "--language", "en",
                "--format", "jsonl", "--window-tokens", "3", "--no-index")
    assert "0 documents imported (1 skipped" in again
    assert Corpus.objects.get(name="paras").split_mode == "paragraph"
    run("import_corpus", str(docs), "--corpus", "described", "--language", "en", "--format",
        "jsonl", "--description", "Old news.", "--licence", "CC BY 4.0", "--no-index")
    assert refusal(str(docs), "--corpus", "described", "--format", "jsonl",
                   "--description", "New news.") == (
        "--description: corpus 'described' exists already and keeps its description (set "
        "for a new corpus only; change it on the admin site)")
    assert refusal(str(docs), "--corpus", "described", "--format", "jsonl",
                   "--licence", "MIT") == (
        "--licence: corpus 'described' exists already and keeps its licence (set for a new "
        "corpus only; change it on the admin site)")
    same = run("import_corpus", str(docs), "--corpus", "described", "--language", "en",
               "--format", "jsonl", "--description", "Old news.", "--licence", "CC BY 4.0",
               "--no-index")  # the same command again: nothing is ignored
    assert "0 documents imported (1 skipped" in same
    assert (Corpus.objects.filter(name="described").values_list("description", "licence")
            .get()) == ("Old news.", "CC BY 4.0")


def test_bad_input_raises_a_one_line_command_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "body": "x"}\n{"id": "a", "body": "y"}\n', encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        run("import_corpus", str(bad), "--corpus", "c", "--language", "en", "--format", "jsonl")
    assert str(caught.value) == (f"{bad}: line 2: field 'id': duplicate document id 'a' "
                                 "(first used at line 1)")
    assert not Corpus.objects.filter(name="c").exists()
    with pytest.raises(CommandError, match="no corpus named 'nope'"):
        run("rebuild_index", "--corpus", "nope")
    with pytest.raises(CommandError, match="no corpus named 'nope'"):
        run("search", "--corpus", "nope", "--json", "x")
    run("import_corpus", str(SQUAD_V1), "--corpus", "squad", "--language", "en",
        "--format", "squad", "--no-progress")
    with pytest.raises(CommandError, match=r"^--k: 0 hits; give at least 1$"):
        run("search", "--corpus", "squad", "--k", "0", "Super Bowl")
    # Beyond it PostgreSQL's search overflowed a bigint: a traceback.
    with pytest.raises(CommandError, match=r"^--k: 4611686018427387904 is more than "
                                           r"2,147,483,647$"):
        run("search", "--corpus", "squad", "--k", str(2**62), "Super Bowl")
    every = run("search", "--corpus", "squad", "--k", "18", "--json", "Super Bowl")  # 18 passages
    assert run("search", "--corpus", "squad", "--k", str(2**31 - 1), "--json",
               "Super Bowl") == every


def test_exit_status_and_message_from_the_shell(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}"}
    env.pop("CROWDQA_SEARCH_BACKEND", None)  # CI's PostgreSQL stage sets it; this is SQLite
    result = subprocess.run(
        [sys.executable, "manage.py", "import_corpus", str(empty), "--corpus", "c",
         "--language", "en", "--format", "jsonl"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == f"CommandError: {empty}: is empty (0 bytes)"
    assert result.stdout == ""
