"""Texts kept in the database when something happens — a stage run's dropped reasons and
notes, why a worker is paused — and a task's stage name in the API are read in the reader's
language; English readers read what they read before, and rows kept in words only (before
stored texts, or an admin's own words) show as they are."""

from __future__ import annotations

import re
from html import unescape

from django.urls import reverse
from django.utils.translation import gettext_noop, override
from rest_framework.test import APIClient

from annotation import engine
from annotation.models import WorkerStage
from annotation.stages import run_result
from collector.models import Job
from collector.stored_text import StoredText
from tests.annotation.test_gold import build
from tests.annotation.test_quality import answer_claims, gold_item, weiss


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _in_chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


def test_a_stage_runs_dropped_reasons_and_notes_read_in_the_readers_language(
        news_corpus, admin_user, committed, settings, client_for):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="One article", recipe="newsqa", corpus=news_corpus,
                                    user=admin_user, params={1: {"max_articles": 1}})
    with committed():
        engine.project_start(project=project, actor=admin_user)
    run = Job.objects.get(kind="stage_run", params__stage_id=project.stages.get(order=1).pk)
    # Kept in English for programs, with what renders it later.
    assert run.result["dropped"] == {"beyond max_articles (1)": 1}
    # A later stage's run that left a note (as the consolidation stage does).
    consolidate = project.stages.get(kind="newsqa_consolidate")
    noted = Job.objects.create(
        kind="stage_run", params={"stage_id": consolidate.pk}, status=Job.Status.DONE,
        result=run_result(received=3, passed=3, notes=[StoredText(
            gettext_noop("%(agreed)s agreed: to consolidation; %(other)s without agreement: "
                         "to validation"), agreed=2, other=1)]))
    assert noted.result["notes"] == ["2 agreed: to consolidation; 1 without agreement: "
                                     "to validation"]
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])
    english = _text(client.get(url).content.decode())
    assert "dropped 1: beyond max_articles (1)" in english
    assert "2 agreed: to consolidation; 1 without agreement: to validation" in english

    _in_chinese(client)
    chinese = _text(client.get(url).content.decode())
    assert "超出 max_articles（1）" in chinese and "beyond max_articles" not in chinese
    assert "2 个一致：进入合并；1 个不一致：进入验证" in chinese
    assert "agreed: to consolidation" not in chinese
    # The run's own job page too.
    job_page = _text(client.get(reverse("collector:job_detail", args=[noted.pk])).content
                     .decode())
    assert "2 个一致：进入合并；1 个不一致：进入验证。" in job_page


def test_a_run_kept_in_words_only_shows_as_it_was(
        newsqa_project, client_for, admin_user):
    consolidate = newsqa_project.stages.get(kind="newsqa_consolidate")
    Job.objects.create(kind="stage_run", params={"stage_id": consolidate.pk},
                       status=Job.Status.DONE,
                       result={"received": 3, "passed": 3, "dropped": {"an old reason": 1},
                               "notes": ["2 agreed: to consolidation; 1 without agreement: "
                                         "to validation"]})
    client = client_for(admin_user)
    _in_chinese(client)
    page = _text(client.get(reverse("annotation:project_detail", args=[newsqa_project.pk]))
                 .content.decode())
    assert "an old reason" in page
    assert "2 agreed: to consolidation; 1 without agreement: to validation" in page


def test_a_paused_workers_reason_reads_in_the_readers_language(
        news_corpus, workers, admin_user, committed, settings, client_for):
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=0.0, gold_min_items=2, gold_min_accuracy=0.7)
    for n in range(2):
        gold_item(project, answer, f"g{n}", expected=weiss(project))
    worker = workers["ann3"]
    work = answer_claims(project, worker)
    engine.task_submit(assignment_id=work.pk, worker=worker, payload={"no_answer": True})
    answer.params["gold_rate"] = 1.0
    answer.save(update_fields=["params"])
    for _ in range(2):
        task = engine.task_claim(worker=worker, project=project)
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    english = "gold accuracy 0% below 70% after 2 checks"
    assert standing.status == "paused" and standing.status_reason == english
    chinese = "黄金题正确率 0%，低于 70%（共 2 次检查）"

    mine = client_for(worker)
    assert english in _text(mine.get(reverse("annotation:my_quality")).content.decode())
    _in_chinese(mine)
    page = _text(mine.get(reverse("annotation:my_quality")).content.decode())
    assert chinese in page and english not in page

    admin = client_for(admin_user)
    _in_chinese(admin)
    listing = _text(admin.get(reverse("annotation:project_workers", args=[project.pk]))
                    .content.decode())
    assert chinese in listing and english not in listing
    detail = _text(admin.get(reverse("annotation:project_worker", args=[project.pk, worker.pk]))
                   .content.decode())
    assert chinese in detail

    # An admin's decision names them; an admin's own words are kept as written.
    engine.standing_decide(standing=standing, action="resume", actor=admin_user)
    standing.refresh_from_db()
    assert standing.status_reason == f"resumed by {admin_user}"
    with override("zh-hans"):
        assert standing.status_reason_shown == f"已由 {admin_user} 恢复"
    engine.standing_decide(standing=standing, action="block", actor=admin_user,
                           reason="copied answers")
    standing.refresh_from_db()
    with override("zh-hans"):
        assert standing.status_reason_shown == "copied answers"


def test_a_reason_kept_in_words_only_shows_as_it_was(
        news_corpus, workers, admin_user, committed, settings, client_for):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    worker = workers["ann1"]
    member = project.members.get(user=worker)
    WorkerStage.objects.create(member=member, stage=answer, status="paused",
                               status_reason="gold accuracy 40% below 70% after 5 checks")
    mine = client_for(worker)
    _in_chinese(mine)
    page = _text(mine.get(reverse("annotation:my_quality")).content.decode())
    assert "gold accuracy 40% below 70% after 5 checks" in page


def test_the_task_api_names_the_stage_for_people_and_keeps_its_key(newsqa_project, workers,
                                                                   admin_user):
    api = APIClient(HTTP_ACCEPT_LANGUAGE="zh-hans")
    api.force_authenticate(workers["ann1"])
    data = api.post(reverse("api_task_next"), {"project": newsqa_project.pk},
                    format="json").json()
    stage = newsqa_project.stages.get(kind=data["kind"])
    assert data["stage"] == stage.name  # as stored, for programs
    with override("zh-hans"):
        label = stage.display_name
    assert data["stage_label"] == label != stage.name
    assert any("\u4e00" <= char <= "\u9fff" for char in label)
    english = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    english.force_authenticate(workers["ann1"])
    again = english.get(reverse("api_task_detail", args=[data["id"]])).json()
    assert again["stage"] == again["stage_label"] == stage.name
    # The project's stages, for an admin reading Chinese: the key and the name for people.
    admin = APIClient(HTTP_ACCEPT_LANGUAGE="zh-hans")
    admin.force_authenticate(admin_user)
    rows = admin.get(reverse("api_project_detail", args=[newsqa_project.pk])).json()["stages"]
    row = next(row for row in rows if row["kind"] == stage.kind)
    assert (row["name"], row["label"]) == (stage.name, label)
