"""A job's page speaks the reader's language: the kind's name, what it works on, what it did,
its runs, and the live progress message a worker wrote in another process (and language)."""

from __future__ import annotations

import re
from html import unescape

from django.urls import reverse
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, override

from collector.jobs import Progress, job_describe, job_progress
from collector.models import Job
from tests.collector.corpus_support import NEWSQA_CSV


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _in_chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


def test_a_finished_import_reads_in_chinese_and_in_english(
        django_capture_on_commit_callbacks, client_for, admin_user):
    client = client_for(admin_user)
    with NEWSQA_CSV.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collector:import"), {
            "file": upload, "corpus": "uploaded", "language": "en", "format": "newsqa-csv",
        })
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.DONE, job.error
    url = reverse("collector:job_detail", args=[job.pk])

    english = _text(client.get(url).content.decode())
    assert f"Corpus import #{job.pk}" in english
    assert "Corpus uploaded" in english and f"File {NEWSQA_CSV.name}" in english
    assert ("1 documents imported into uploaded (0 skipped: already present), "
            "4 passages, 4 questions (0 skipped).") in english
    assert "4 passages added to the search index." in english

    _in_chinese(client)
    chinese = _text(client.get(url).content.decode())
    assert f"语料导入 #{job.pk}" in chinese and "Corpus import" not in chinese
    assert "语料库 uploaded" in chinese and f"文件 {NEWSQA_CSV.name}" in chinese
    assert ("已向 uploaded 导入 1 篇文档（跳过 0 篇：已存在），4 个段落，4 个问题（跳过 0 个）。"
            in chinese)
    assert "已向搜索索引添加 4 个段落。" in chinese
    assert "documents imported" not in chinese
    # The job lists name the kind the same way.
    listing = _text(client.get(reverse("collector:job_list")).content.decode())
    assert f"语料导入 #{job.pk}" in listing and "corpus_import" not in listing


def test_the_live_progress_message_is_put_in_the_readers_language(client_for, admin_user):
    """A worker writes its message once, without a request or a language; the page shows it
    in whichever language its reader chose (it went through the cache as a lazy string)."""
    job = Job.objects.create(kind="index_rebuild", params={"corpus": "gone"},
                             status=Job.Status.RUNNING, created_by=admin_user)
    progress = Progress(job)
    with override("en"):  # what a worker's process has active, whatever the readers use
        progress.start(total=2000, message=format_lazy(
            gettext_lazy("indexing {count} passages"), count="2,000"))
    progress.set(500)
    progress.flush()
    client = client_for(admin_user)
    url = reverse("collector:job_detail", args=[job.pk])
    assert "— indexing 2,000 passages" in _text(client.get(url).content.decode())
    _in_chinese(client)
    page = _text(client.get(url, HTTP_HX_REQUEST="true").content.decode())
    assert "— 正在索引 2,000 个段落" in page and "indexing" not in page
    # What the API and the job list read is a plain string.
    assert type(job_progress(job)["message"]) is str


def test_runs_are_counted_in_the_readers_language(db):
    job = Job.objects.create(kind="corpus_import", attempts=2)
    with override("zh-hans"):
        assert job_describe(job)["runs"] == "第 2 次运行（最多 3 次）"
        assert job_describe(Job.objects.create(kind="selfcheck"))["runs"] == "尚未开始"
        assert job_describe(Job.objects.create(kind="no-longer-known",
                                               attempts=1))["title"].startswith("No longer known #")
    with override("en"):
        assert job_describe(job)["runs"] == "run 2 of at most 3"


def test_the_import_form_names_its_formats_in_the_readers_language(client_for, admin_user):
    client = client_for(admin_user)
    assert "NewsQA combined CSV" in client.get(reverse("collector:import")).content.decode()
    _in_chinese(client)
    page = client.get(reverse("collector:import")).content.decode()
    assert "NewsQA 合并 CSV" in page and "带表头的 CSV（需字段映射）" in page
    assert "NewsQA combined CSV" not in page


def _failed_import(client, tmp_path, django_capture_on_commit_callbacks) -> Job:
    bad = tmp_path / "books.jsonl"
    bad.write_text('{"id": "a", "body": "Some text."}\n{"id": "b", "body": 7}\n',
                   encoding="utf-8")
    with bad.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collector:import"), {
            "file": upload, "corpus": "books", "language": "en", "format": "jsonl",
        })
    return Job.objects.get(kind="corpus_import")


def test_a_failed_import_reads_in_the_readers_language(
        django_capture_on_commit_callbacks, client_for, admin_user, tmp_path):
    """The failure is kept once, by a worker, and read in each reader's language: the file
    name, the line number and the field exactly as given."""
    client = client_for(admin_user)
    job = _failed_import(client, tmp_path, django_capture_on_commit_callbacks)
    assert job.status == Job.Status.FAILED
    english = "books.jsonl: line 2: field 'body': should be text, found '7'"
    assert job.error == english  # the row keeps its English (logs, programs)
    url = reverse("collector:job_detail", args=[job.pk])
    assert english in _text(client.get(url).content.decode())

    _in_chinese(client)
    page = _text(client.get(url).content.decode())
    assert "books.jsonl：第 2 行：字段 'body'：应为文本，实际为 '7'" in page
    assert "should be text" not in page and "line 2" not in page


def test_a_failure_kept_in_words_only_shows_as_it_was(client_for, admin_user):
    """A job that failed before failures were kept as stored texts shows its English."""
    job = Job.objects.create(kind="corpus_import", status=Job.Status.FAILED,
                             error="old.jsonl: line 3: field 'body': is missing",
                             params={"corpus": "old"})
    client = client_for(admin_user)
    _in_chinese(client)
    page = _text(client.get(reverse("collector:job_detail", args=[job.pk])).content.decode())
    assert "old.jsonl: line 3: field 'body': is missing" in page


def test_the_import_page_names_a_bad_file_in_the_readers_language(
        client_for, admin_user, tmp_path):
    """The preview refuses a file in the request's language."""
    bad = tmp_path / "books.jsonl"
    bad.write_text('{"id": "a", "body": "Some text."}\n{"id": "b"\n', encoding="utf-8")
    client = client_for(admin_user)
    _in_chinese(client)
    with bad.open("rb") as upload:
        page = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "books", "language": "en", "format": "jsonl",
            "action": "preview"}).content.decode()
    refusal = _text(re.search(r'data-testid="error-format">(.*?)</p>', page, re.S).group(1))
    assert refusal.startswith("books.jsonl：第 2 行：无效的 JSON："), refusal
