"""The release build's one pass over a NewsQA project's rows (datasheet figures, SQuAD and
NewsQA JSON from one read) gives what the separate computations give, on records made
from the repository's real samples: the SQuAD dev samples' questions (several crowd
answers each, often different spans) and the synthetic NewsQA story (validated answers,
no-answer and multi-span answers)."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from annotation import engine, release_records, releases
from annotation.models import Item, Release
from collector.exporters import write_newsqa_json, write_squad_v1, write_squad_v2
from collector.metrics.squad import exact_match, f1_v1
from collector.models import Corpus, Document
from tests.collector.exporters.samples import NEWSQA_JSON, SQUAD_V1, SQUAD_V2


def _squad_records(path, split_of):
    """(document fields, [(record, split)]) per paragraph of a SQuAD sample: each crowd
    answer a sourcer answer, the first the consensus; every fifth question not agreed,
    every seventh with validated answers."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    n = 0
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article["paragraphs"]):
            records = []
            for qa in paragraph["qas"]:
                answers = qa["answers"] or qa.get("plausible_answers") or []
                spans = [{"s": x["answer_start"], "e": x["answer_start"] + len(x["text"])}
                         for x in answers]
                record = {"q": qa["question"],
                          "answers": [{"sourcerAnswers": [span]} for span in spans]
                          or [{"sourcerAnswers": [{"noAnswer": True}]}],
                          "isAnswerAbsent": 0.0 if spans else 1.0, "isQuestionBad": 0.0,
                          "consensus": spans[0] if spans else {"noAnswer": True},
                          "agreed": n % 5 != 0, "validated": n % 7 == 0}
                if n % 7 == 0 and spans:
                    record["validatedAnswers"] = [{"count": 1, **spans[-1]},
                                                  {"count": 1, "noAnswer": True}]
                records.append((record, split_of(n)))
                n += 1
            yield ({"external_id": f"{path.stem}#{a}.{p}", "title": article["title"],
                    "body": paragraph["context"]}, records)


def _newsqa_records():
    for story in json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))["data"]:
        yield ({"external_id": story["storyId"].rsplit("/", 1)[-1], "title": "",
                "body": story["text"],
                "metadata": {"story_file": story["storyId"].rsplit("/", 1)[-1]}},
               [({**q, "agreed": True}, story["type"]) for q in story["questions"]])


@pytest.fixture
def sample_project(db, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = Corpus.objects.create(name="one-pass samples", language="en")
    project = engine.project_create(name="one pass", recipe="newsqa", corpus=corpus)
    stage = project.stages.get(kind="newsqa_consolidate")
    splits = ("train", "dev", "test")
    sources = [*_squad_records(SQUAD_V1, lambda n: splits[n % 3]),
               *_squad_records(SQUAD_V2, lambda n: ""), *_newsqa_records()]
    for d, (fields, records) in enumerate(sources):
        doc = Document.objects.create(corpus=corpus, source_type="news", **fields)
        Item.objects.bulk_create([
            Item(project=project, stage=stage, status=Item.Status.DONE, document=doc,
                 key=f"{d}/{q}", data={}, result=record, split=split)
            for q, (record, split) in enumerate(records)])
    return project


def _old_row_statistics(project):
    """The datasheet figures as computed before the one pass: every text normalised by
    exact_match / f1_v1, the official question rebuilt per row."""
    per_split = defaultdict(list)
    performance_rows = []
    stats = {"consensus_differs": 0, "consensus_differs_span": 0,
             "consensus_differs_answerable": 0}
    ids = {"newsqa": 0, "cnn": 0, "source": 0}
    seen = set()
    for row, doc in release_records._rows_with_documents(project):
        answers = [a["sourcerAnswers"] for a in row["result"]["answers"]]
        texts = [doc.body[a[0]["s"]:a[-1]["e"]] for a in answers if "s" in a[0]]
        if len(texts) >= 2:
            held_out, others = texts[0], texts[1:]
            per_split[row["split"] or "train"].append((
                max(exact_match(held_out, g) for g in others),
                max(f1_v1(held_out, g) for g in others)))
            performance_rows.append(texts)
        if doc.pk not in seen:
            seen.add(doc.pk)
            ids[release_records.story_id_kind(doc)] += 1
        official = release_records.newsqa_question(row["result"]).consensus
        platform = release_records._choice(row["result"].get("consensus")) or official
        if releases._choice_label(platform) != releases._choice_label(official):
            stats["consensus_differs"] += 1
            if isinstance(platform, releases.CharSpan) and isinstance(official,
                                                                      releases.CharSpan):
                stats["consensus_differs_span"] += 1
            elif isinstance(platform, releases.CharSpan) or isinstance(official,
                                                                       releases.CharSpan):
                stats["consensus_differs_answerable"] += 1
    return _old_human_performance_result(per_split), stats, ids, performance_rows


def _old_human_performance_result(per_split):
    """The figures as computed before the one pass, from every question's (EM, F1)."""
    scores = [s for v in per_split.values() for s in v]
    return {
        "exact_match": round(100 * sum(e for e, _ in scores) / len(scores), 2),
        "f1": round(100 * sum(f for _, f in scores) / len(scores), 2),
        "questions": len(scores),
        "method": "first answerer's answer scored against the other answerers' (SQuAD v1.1 "
                  "EM/F1), as in NewsQA section 6.1",
        "by_split": {split: {"exact_match": round(100 * sum(e for e, _ in v) / len(v), 2),
                             "f1": round(100 * sum(f for _, f in v) / len(v), 2),
                             "questions": len(v)} for split, v in per_split.items()},
    }


@pytest.mark.parametrize("unagreed", ["unanswerable", "omit", "consensus"])
def test_one_pass_release_equals_the_separate_passes(sample_project, tmp_path, unagreed):
    project = sample_project
    human, consensus, ids, scored = _old_row_statistics(project)
    # The samples exercise what the fast paths skip: unequal answers, repeated texts.
    assert len(scored) > 100
    assert any(len(set(texts)) > 1 for texts in scored)
    assert any(len(set(texts)) < len(texts) for texts in scored)
    assert 0 < human["exact_match"] < 100 and 0 < human["f1"] < 100
    assert consensus["consensus_differs"] > 0 and ids["cnn"] == 1

    assert releases.newsqa_row_statistics(project) == (human, consensus, ids)
    release = releases.release_create(
        project=project, version="1.0.0", build=False, unagreed_questions=unagreed,
        formats=["newsqa-json", "squad-v2", "squad-v1", "newsqa-csv"])
    result = releases.release_build(release=release)
    release.refresh_from_db()
    assert release.status == Release.Status.READY
    assert release.datasheet["human_performance"] == human
    assert {k: release.datasheet["agreement"][k] for k in consensus} == consensus
    for key in ("read_s", "datasheet_s", "squad-v2_s", "squad-v1_s", "newsqa-json_s",
                "newsqa-csv_s"):
        assert result["timings"][key] >= 0
    # Each file byte for byte what its writer makes from its own read of the rows: SQuAD
    # one file per split from that split's rows (the one pass parts each document's rows
    # by split), the NewsQA JSON one file of every split.
    namespace = f"{project.pk}:{project.name}"
    expected = {
        "combined-newsqa-data-v1.json": lambda path: write_newsqa_json(
            path, release_records.newsqa_stories(project)),
    }
    for split in ("train", "dev", "test"):
        expected[f"{split}-v2.0.json"] = lambda path, split=split: write_squad_v2(
            path, release_records.squad_articles(project, split=split, namespace=namespace,
                                                 unagreed=unagreed))
        expected[f"{split}-v1.1.json"] = lambda path, split=split: write_squad_v1(
            path, release_records.squad_articles(project, split=split, namespace=namespace,
                                                 unagreed=unagreed), skip_unanswerable=True)
    recorded = {f.path: f for f in release.files.order_by("id")}
    assert [(f.path, f.format, f.split) for f in recorded.values()] == [
        ("combined-newsqa-data-v1.json", "newsqa-json", ""),
        ("train-v2.0.json", "squad-v2", "train"), ("dev-v2.0.json", "squad-v2", "dev"),
        ("test-v2.0.json", "squad-v2", "test"),
        ("train-v1.1.json", "squad-v1", "train"), ("dev-v1.1.json", "squad-v1", "dev"),
        ("test-v1.1.json", "squad-v1", "test"),
        ("combined-newsqa-data-v1.csv", "newsqa-csv", ""),
        ("train_story_ids.csv", "newsqa-csv", "train"),
        ("dev_story_ids.csv", "newsqa-csv", "dev"), ("test_story_ids.csv", "newsqa-csv", "test"),
        ("DATASHEET.md", "datasheet", ""),
    ]
    for name, write in expected.items():
        entry = write(tmp_path / name)
        assert (entry.sha256, entry.bytes, entry.records) == (
            recorded[name].sha256, recorded[name].bytes, recorded[name].records), name
    with releases.release_open(release, "SHA256SUMS") as sums:
        listed = [line.split("  ")[1] for line in sums.read().decode().splitlines()]
    assert listed == list(recorded)


def test_forked_call_returns_the_value_or_the_childs_error():
    from collector.jobs import JobError

    assert releases._ForkedCall(lambda: {"built": [1, 2]}).result() == {"built": [1, 2]}

    def fail():
        raise ValueError("no story text")

    with pytest.raises(JobError, match="ValueError: no story text"):
        releases._ForkedCall(fail).result()


def test_forked_call_stop_ends_a_child_still_running():
    import os

    read, write = os.pipe()
    try:
        call = releases._ForkedCall(lambda: os.read(read, 1))  # blocks: nothing is written
        call.stop()
        with pytest.raises(ChildProcessError):
            os.waitpid(call.pid, os.WNOHANG)  # reaped
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.django_db(transaction=True)
def test_the_forked_newsqa_writer_writes_what_one_process_writes(sample_project, settings):
    """On PostgreSQL the NewsQA JSON comes from a forked process with its own read of the
    rows: the same bytes, records and datasheet as a build in one process."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("forks only on PostgreSQL (DATABASE_URL=postgres://...)")
    built = {}
    for processes, version in ((2, "1.0.0"), (1, "1.0.1")):
        settings.CROWDQA_RELEASE_PROCESSES = processes
        release = releases.release_create(project=sample_project, version=version,
                                          formats=["squad-v2", "newsqa-json"], build=False)
        timings = releases.release_build(release=release)["timings"]
        assert ("child_s" in timings) == (processes == 2), timings
        release.refresh_from_db()
        sheet = {k: v for k, v in release.datasheet.items() if k not in ("created", "version")}
        built[processes] = ({f.path: (f.sha256, f.bytes, f.records)
                             for f in release.files.exclude(format="datasheet")}, sheet)
    assert built[2] == built[1]


@pytest.mark.django_db(transaction=True)
def test_only_the_main_thread_forks(settings):
    """A build on PostgreSQL outside a transaction forks from the main thread (a Celery
    worker's task), never from another thread (the embedded job runner beside a web
    server's threads), nor inside a transaction, nor with one process configured."""
    import threading

    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("forks only on PostgreSQL (DATABASE_URL=postgres://...)")
    settings.CROWDQA_RELEASE_PROCESSES = 2
    assert releases._can_fork()
    in_thread = []
    thread = threading.Thread(target=lambda: in_thread.append(releases._can_fork()))
    thread.start()
    thread.join()
    assert in_thread == [False]
    with transaction.atomic():
        assert not releases._can_fork()
    settings.CROWDQA_RELEASE_PROCESSES = 1
    assert not releases._can_fork()


class _Progress:
    """What release_build reports to its job."""

    def __init__(self):
        self.total, self.done = None, []

    def start(self, *, total, message=""):
        self.total = total

    def set(self, done, *, total=None, message=None):
        self.done.append(done)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("unagreed", ["unanswerable", "omit"])
def test_two_processes_write_what_one_process_writes(sample_project, monkeypatch, unagreed):
    """The rows split at the median document, a forked child writing the second half of
    every file as a fragment: the joined files and the merged figures equal one
    process's. (Forced here on SQLite: the child reads its copy of the in-memory test
    database, or opens the file of a run with browser tests; outside a transaction, as a
    build that forks is, so that closing the connections before the fork closes them.
    PostgreSQL's run is the test above.)"""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the child reads its copy of SQLite's in-memory test database")
    built = {}
    for forked, version in ((True, "2.0.0"), (False, "2.0.1")):
        monkeypatch.setattr(releases, "_can_fork", lambda forked=forked: forked)
        release = releases.release_create(
            project=sample_project, version=version, unagreed_questions=unagreed,
            formats=["squad-v2", "newsqa-json", "squad-v1"], build=False)
        progress = _Progress()
        timings = releases.release_build(release=release, progress=progress)["timings"]
        assert ("child_s" in timings) == forked, timings
        # The pass's progress (the parent's half doubled when forked) stays within the
        # total and ends at it.
        assert progress.done[-1] == progress.total
        assert max(progress.done) == progress.total and progress.done == sorted(progress.done)
        release.refresh_from_db()
        sheet = {k: v for k, v in release.datasheet.items() if k not in ("created", "version")}
        built[forked] = ({f.path: (f.sha256, f.bytes, f.records)
                          for f in release.files.exclude(format="datasheet")}, sheet)
    assert built[True] == built[False]
    assert built[True][1]["human_performance"]["questions"] > 100


def test_the_pivot_halves_the_rows(sample_project):
    from django.db.models import Count

    pivot = release_records.document_pivot(sample_project)
    rows = release_records.final_items(sample_project)
    below = rows.filter(document_id__lt=pivot).count()
    assert 0 < below <= rows.count() / 2 <= rows.filter(document_id__lte=pivot).count()
    parts = [[row["id"] for row, _ in release_records._rows_with_documents(
        sample_project, documents=documents)] for documents in ((None, pivot), (pivot, None))]
    assert parts[0] + parts[1] == [row["id"] for row, _ in
                                   release_records._rows_with_documents(sample_project)]
    assert rows.values("document_id").annotate(n=Count("id")).count() > 2


def test_newsqa_records_parse_as_the_standard_parser_parses_them():
    """NewsQA records are parsed by orjson when installed: the same values as json.loads
    for the samples' records (floats, unicode, nesting); what orjson refuses (a lone
    surrogate escape, a bare infinity) still parses as json.loads does."""
    texts = [json.dumps(q, ensure_ascii=ensure_ascii) for ensure_ascii in (True, False)
             for story in json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))["data"]
             for q in story["questions"]]
    texts += [json.dumps(record) for _, records in _squad_records(SQUAD_V2, lambda n: "")
              for record, _ in records]
    texts += ['{"q": "\\ud800 alone"}', '{"x": 1e400, "y": -0.0, "z": 0.1}',
              '{"q": "caf\\u00e9 \\ud83d\\ude00", "n": 9223372036854775807}']
    for text in texts:
        assert release_records._newsqa_loads(text) == json.loads(text), text
        assert release_records._newsqa_loads(text.encode()) == json.loads(text), text


def test_the_build_progress_is_said_in_the_readers_language(sample_project):
    """The job page showed "writing squad-v2" in English on Chinese pages: the messages a
    build reports are lazy translations, put in the reader's language when read."""
    from django.utils.functional import Promise

    messages = []

    class Said(_Progress):
        def start(self, *, total, message=""):
            super().start(total=total, message=message)
            messages.append(message)

        def set(self, done, *, total=None, message=None):
            super().set(done, total=total, message=message)
            if message is not None:
                messages.append(message)

    release = releases.release_create(project=sample_project, version="3.0.0", build=False,
                                      formats=["newsqa-json", "squad-v2", "hf"])
    releases.release_build(release=release, progress=Said())
    said = {str(m) for m in messages}
    assert {"writing the release", "writing newsqa-json, squad-v2", "writing hf",
            "done"} <= said, said
    assert all(isinstance(m, Promise) for m in messages), [
        m for m in messages if not isinstance(m, Promise)]
