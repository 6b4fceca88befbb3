"""The workers table of a project: per-worker figures from real submissions (tasks, time,
gold, competence, agreement, batch rejections), sorting and filtering, pausing and
resuming a worker's standing, who may see what, the drill-down, and query counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import batches, engine, studies, worker_stats
from annotation.eligibility import GOLD_PRIORITY
from annotation.models import Batch, Inspection, Item, ProjectMember, Submission, WorkerStage
from annotation.roles import Role
from annotation.stages import Emit, reco
from annotation.studies import Arrival
from collector.metrics.competence import labels_competence
from tests.factories import held_since, user_with_roles
from tests.reads import reads

PROLIFIC_ID = "5f3a9c0d1e2b4a00aa112233"
QUESTIONS = ["Who opposed the plan?", "Who leads the city?", "Who spoke about the start date?"]


# Building the project through the engine ----------------------------------------------------

def phrase(item: Item, text: str) -> dict:
    start = item.document.body.index(text)
    return {"spans": [[start, start + len(text)]]}


def claim_item(worker, project, item):
    """Claim until ``item`` comes up, releasing other tasks on the way."""
    task = engine.task_claim(worker=worker, project=project)
    while task is not None and task.item_id != item.pk:
        engine.task_release(assignment_id=task.pk, worker=worker)
        task = engine.task_claim(worker=worker, project=project)
    assert task is not None, f"{worker} never got item {item.pk}"
    return task


def work(project, worker, item, payload, committed, *, active_s=None):
    """Claim ``item`` and submit ``payload``; the page measured ``active_s`` active seconds,
    so the worker held the task that long (the claim is moved back by it)."""
    task = claim_item(worker, project, item)
    if active_s:
        held_since(task, seconds=active_s)
    with committed():
        return engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload,
                                  active_time_s=active_s)


@pytest.fixture
def people(workers, db):
    return {**workers, "chk": user_with_roles("chk", Role.CHECKER),
            "outsider": user_with_roles("outsider", Role.CHECKER)}


@pytest.fixture
def crowd(news_corpus, people, admin_user, settings, committed):
    """A NewsQA project worked for real. The questioner asks three questions on the
    Portvale article. Q1: ann1 and ann2 both answer "Dario Weiss" (agreed). Q2: ann1
    "Lena Ortiz", ann2 no answer. Q3: ann1 "Lena Ortiz", ann3 "Mayor Lena Ortiz". Q2 and Q3
    go to validation: val1 picks the first answer twice, val2 the first then the second, so
    Q2's consensus is "Lena Ortiz" (agreed) and Q3's "Lena Ortiz" (the earliest of a tie).
    A Prolific worker and a checker are members too; the answer stage mixes in gold checks
    (none exist yet) and pauses below 70% after two."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Workers NewsQA", recipe="newsqa", corpus=news_corpus,
                                    user=admin_user)
    stages = {s.kind: s for s in project.stages.all()}
    engine.stage_params_update(stage=stages["newsqa_answer"], params={
        "max_extra_answers": 0, "gold_rate": 1.0, "gold_min_items": 2,
        "gold_min_accuracy": 0.7})
    engine.stage_params_update(stage=stages["newsqa_validate"],
                               params={"validators_per_question": 2})
    for name in ("questioner", "ann1", "ann2", "ann3", "val1", "val2"):
        engine.project_member_add(project=project, user=people[name], role=Role.ANNOTATOR)
    engine.project_member_add(project=project, user=people["chk"], role=Role.CHECKER)
    study = studies.study_create(project=project, platform="prolific", completion_code="C0DE42")
    prolific, _, _ = studies.study_arrive(study=study, arrival=Arrival(
        platform="prolific", external_id=PROLIFIC_ID, session_key="SESSION1"))
    with committed():
        engine.project_start(project=project, actor=admin_user)
    project.refresh_from_db()

    article = Item.objects.get(project=project, stage__kind="newsqa_question",
                               document__external_id="portvale-library")
    work(project, people["questioner"], article, {"questions": QUESTIONS}, committed,
         active_s=90)
    q1, q2, q3 = (Item.objects.get(project=project, stage__kind="newsqa_answer",
                                   data__question=q) for q in QUESTIONS)
    work(project, people["ann1"], q1, phrase(q1, "Dario Weiss"), committed, active_s=20)
    work(project, people["ann2"], q1, phrase(q1, "Dario Weiss"), committed, active_s=40)
    work(project, people["ann1"], q2, phrase(q2, "Lena Ortiz"), committed, active_s=40)
    work(project, people["ann2"], q2, {"no_answer": True}, committed)  # nothing measured
    work(project, people["ann1"], q3, phrase(q3, "Lena Ortiz"), committed, active_s=60)
    work(project, people["ann3"], q3, phrase(q3, "Mayor Lena Ortiz"), committed, active_s=30)
    v2, v3 = (Item.objects.get(project=project, stage__kind="newsqa_validate", key=q.key)
              for q in (q2, q3))
    work(project, people["val1"], v2, {"choice": 0}, committed, active_s=10)
    work(project, people["val1"], v3, {"choice": 0}, committed, active_s=12)
    work(project, people["val2"], v2, {"choice": 0}, committed, active_s=8)
    work(project, people["val2"], v3, {"choice": 1}, committed, active_s=9)
    assert Item.objects.filter(project=project, stage__kind="newsqa_consolidate",
                               status="done").count() == 3
    cache.clear()
    return {"project": project, "stages": stages, "prolific": prolific,
            "q": (q1, q2, q3), "v": (v2, v3), **people}


def gold_check(project, answer_stage, key: str) -> Item:
    """A gold check of the answer stage whose expected answer is "Dario Weiss"."""
    doc = Item.objects.get(project=project, stage__kind="newsqa_question",
                           document__external_id="portvale-library").document
    start = doc.body.index("Dario Weiss")
    item = Item.objects.create(
        project=project, stage=answer_stage, key=f"gold:{key}", document=doc, gold="check",
        data={"question": "Who opposed the plan?"}, status=Item.Status.OPEN,
        priority=GOLD_PRIORITY, overlap=3,
        result={"expected": {"spans": [[start, start + 11]]}, "reason": "Weiss voted no."})
    engine.slots_add(item=item, n=3)
    return item


def more_work(crowd) -> None:
    """A fourth question waiting for answers: gold checks are mixed into work, and the
    crowd's project has none left."""
    engine.items_emit(source_stage=crowd["stages"]["newsqa_question"], emits=[Emit(
        kind="newsqa_answer", key="more-work", data={"question": "Where is Portvale?"},
        document_id=crowd["q"][0].document_id)])


def fail_gold(crowd, committed) -> WorkerStage:
    """Two gold checks: ann2 answers both wrongly (paused), ann1 one rightly."""
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    more_work(crowd)
    golds = [gold_check(project, answer, f"g{n}") for n in range(2)]
    for _ in golds:
        task = engine.task_claim(worker=crowd["ann2"], project=project)
        assert task.item.gold == "check"
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=crowd["ann2"],
                               payload={"no_answer": True}, active_time_s=5)
    task = engine.task_claim(worker=crowd["ann1"], project=project)
    assert task.item.gold == "check"
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=crowd["ann1"],
                           payload=phrase(task.item, "Dario Weiss"), active_time_s=7)
    standing = WorkerStage.objects.get(member__user=crowd["ann2"], stage=answer)
    assert standing.status == "paused"
    cache.clear()
    return standing


def by_name(rows) -> dict:
    return {r["username"]: r for r in rows}


def page(client, crowd, **params):
    url = reverse("annotation:project_workers", args=[crowd["project"].pk])
    return client.get(url, params)


def order_of(html: str, names) -> list[str]:
    """``names`` in the order their rows appear in the table."""
    found = {name: html.index(f'data-testid="worker-{name}"') for name in names}
    return sorted(found, key=found.get)


# Figures ---------------------------------------------------------------------------------------

def test_rows_hold_tasks_time_competence_and_agreement_of_real_work(crowd):
    project = crowd["project"]
    rows = by_name(worker_stats.project_workers(project=project))
    prolific = crowd["prolific"].username
    assert set(rows) == {"questioner", "ann1", "ann2", "ann3", "val1", "val2", "chk", prolific}
    assert (rows["chk"]["role"], rows[prolific]["source"]) == ("checker", "Prolific")
    assert rows[prolific]["external_id"] == ""  # only with external_ids=True

    ann1, ann2, ann3 = rows["ann1"], rows["ann2"], rows["ann3"]
    assert (ann1["tasks"], ann1["active_time_s"], ann1["median_time_s"]) == (3, 120.0, 40.0)
    assert ann1["active_time"] == "2 min 0 s"
    # ann2's no-answer was measured by nothing: its claim-to-submit time counts instead.
    on_task = Submission.objects.get(worker=crowd["ann2"], item=crowd["q"][1]).time_on_task_s
    assert ann2["tasks"] == 2 and ann2["active_time_s"] == round(40 + on_task, 1)
    assert rows["questioner"]["tasks"] == 1 and rows["chk"]["tasks"] == 0

    # Span competence: leave-one-out F1 against the others' consensus. ann1 scores 1.0 (Q1),
    # 0.0 (Q2, against no answer) and 0.8 (Q3: "Lena Ortiz" in "Mayor Lena Ortiz").
    (c1,), (c2,), (c3,) = ann1["competence"], ann2["competence"], ann3["competence"]
    assert c1["stage"].kind == "newsqa_answer" and c1["method"] == "spans"
    assert (round(c1["value"], 6), c1["items"]) == (0.6, 3)
    assert c1["low"] <= 0.6 <= c1["high"] and (c1["low"], c1["high"]) != (0.6, 0.6)
    assert round(c2["value"], 6) == 0.5 and c2["low"] == 0.0 and c2["high"] == 1.0
    assert round(c3["value"], 6) == 0.8 == round(c3["low"], 6) == round(c3["high"], 6)
    # Agreement with the consolidated consensus: Q1 Dario Weiss, Q2 and Q3 Lena Ortiz.
    assert (ann1["agreement"], ann1["agreement_matched"], ann1["agreement_items"]) \
        == (1.0, 3, 3)
    assert (ann2["agreement"], ann3["agreement"]) == (0.5, 0.0)

    # Validators: Dawid-Skene over exactly their two validation items.
    v2, v3 = crowd["v"]
    val1, val2 = crowd["val1"], crowd["val2"]
    expected = labels_competence([
        {"item": str(v2.pk), "worker": str(val1.pk), "label": "answer 0"},
        {"item": str(v2.pk), "worker": str(val2.pk), "label": "answer 0"},
        {"item": str(v3.pk), "worker": str(val1.pk), "label": "answer 0"},
        {"item": str(v3.pk), "worker": str(val2.pk), "label": "answer 1"},
    ])
    for user in (val1, val2):
        (entry,) = rows[user.username]["competence"]
        assert entry["method"] == "labels" and entry["stage"].kind == "newsqa_validate"
        assert entry["value"] == pytest.approx(expected["workers"][str(user.pk)]["accuracy"])
    matches = {user.username: sum(
        expected["items"][item] == label for item, worker, label in [
            (str(v2.pk), str(val1.pk), "answer 0"), (str(v3.pk), str(val1.pk), "answer 0"),
            (str(v2.pk), str(val2.pk), "answer 0"), (str(v3.pk), str(val2.pk), "answer 1"),
        ] if worker == str(user.pk)) for user in (val1, val2)}
    assert rows["val1"]["agreement"] == matches["val1"] / 2
    assert rows["val2"]["agreement"] == matches["val2"] / 2
    # Nothing to estimate from single-answer stages; no batches here.
    assert rows["questioner"]["competence"] == [] and rows["questioner"]["agreement"] is None
    assert all(r["rejections"] == 0 and r["inspections"] == 0 for r in rows.values())
    assert all(r["status"] == "active" for r in rows.values())


def test_a_question_whose_answers_were_all_rejected_counts_for_no_ones_agreement(
    crowd, committed
):
    """Both validators find all answers bad: the question has no agreed answer (its record
    reads noAnswer, as NewsQA's files mark it), so ann2, who said "no answer", did not
    agree with anything, and ann1's answer was not judged against a consensus either."""
    project, people = crowd["project"], crowd
    article = Item.objects.get(project=project, stage__kind="newsqa_question",
                               document__external_id="riverton-bridge")
    work(project, people["questioner"], article,
         {"questions": ["Who paid for the repairs?"]}, committed, active_s=30)
    question = Item.objects.get(project=project, stage__kind="newsqa_answer",
                                data__question="Who paid for the repairs?")
    work(project, people["ann1"], question, phrase(question, "Priya Nand"), committed,
         active_s=10)
    work(project, people["ann2"], question, {"no_answer": True}, committed, active_s=10)
    validation = Item.objects.get(project=project, stage__kind="newsqa_validate",
                                  key=question.key)
    for validator in ("val1", "val2"):
        work(project, people[validator], validation, {"all_bad": True}, committed,
             active_s=5)
    record = Item.objects.get(project=project, stage__kind="newsqa_consolidate",
                              key=question.key).result
    assert (record["consensus"], record["agreed"]) == ({"noAnswer": True}, False)
    cache.clear()
    rows = by_name(worker_stats.project_workers(project=project))
    # As before this question: ann1 3 of 3, ann2 1 of 2.
    assert (rows["ann1"]["agreement_matched"], rows["ann1"]["agreement_items"]) == (3, 3)
    assert (rows["ann2"]["agreement_matched"], rows["ann2"]["agreement_items"]) == (1, 2)


def test_a_consolidation_that_finishes_after_the_last_submission_is_seen_at_once(crowd):
    """With a broker, consolidation runs after the validation's commit: the figures cached
    in between must not stay until they expire."""
    project = crowd["project"]
    q3 = Item.objects.get(project=project, stage__kind="newsqa_consolidate",
                          key=crowd["q"][2].key)
    finished_at = q3.finished_at
    Item.objects.filter(pk=q3.pk).update(status=Item.Status.PENDING, finished_at=None)
    rows = by_name(worker_stats.project_workers(project=project))  # cached from here
    assert rows["ann1"]["agreement_items"] == 2
    Item.objects.filter(pk=q3.pk).update(status=Item.Status.DONE, finished_at=finished_at)
    rows = by_name(worker_stats.project_workers(project=project))
    assert rows["ann1"]["agreement_items"] == 3


def test_a_stage_filter_keeps_that_stages_figures(crowd):
    answer = crowd["stages"]["newsqa_answer"]
    rows = by_name(worker_stats.project_workers(project=crowd["project"], stage=answer))
    assert rows["val1"]["tasks"] == 0 and rows["val1"]["competence"] == []
    assert rows["ann1"]["tasks"] == 3 and len(rows["ann1"]["competence"]) == 1
    assert rows["questioner"]["tasks"] == 0


def test_gold_checks_and_a_pause_show_on_the_rows(crowd, committed):
    fail_gold(crowd, committed)
    rows = by_name(worker_stats.project_workers(project=crowd["project"]))
    ann1, ann2 = rows["ann1"], rows["ann2"]
    assert (ann2["gold_accuracy"], ann2["gold_seen"]) == (0.0, 2)
    assert (ann1["gold_accuracy"], ann1["gold_seen"]) == (1.0, 1)
    assert ann1["tasks"] == 4  # the gold check is a task too
    assert ann2["status"] == "paused" and "below 70%" in ann2["status_reason"]
    assert ann2["status_where"] == "Answer sourcing"
    (standing,) = ann2["standings"]
    assert (standing["stage"].kind, standing["status"]) == ("newsqa_answer", "paused")
    # Competence and agreement still count only non-gold items.
    assert ann1["competence"][0]["items"] == 3 and ann1["agreement_items"] == 3


def test_set_aside_answers_are_counted_apart(crowd, committed):
    project = crowd["project"]
    q4 = engine.items_emit(source_stage=crowd["stages"]["newsqa_question"], emits=[
        Emit(kind="newsqa_answer", key="extra", data={"question": "Who voted?"},
             document_id=crowd["q"][0].document_id)])
    assert q4 == 1
    item = Item.objects.get(project=project, key="extra")
    submission = work(project, crowd["ann3"], item, {"no_answer": True}, committed)
    Submission.objects.filter(pk=submission.pk).update(set_aside=True)
    rows = by_name(worker_stats.project_workers(project=project))
    assert (rows["ann3"]["tasks"], rows["ann3"]["set_aside"]) == (1, 1)


def test_a_corrected_answer_is_one_task_with_the_time_of_both(crowd, committed):
    """ann3 answers a fourth question in 30 s of active time, then corrects the answer in
    6 s: one task (the correction counts, the answer it replaced does not, as pay counts
    them) of 36 s, beside their 30 s answer to Q3."""
    project = crowd["project"]
    more_work(crowd)
    item = Item.objects.get(project=project, key="more-work")
    first = work(project, crowd["ann3"], item, {"no_answer": True}, committed, active_s=30)
    # The correction comes 10 s later (its measure is held to the time since the answer).
    Submission.objects.filter(pk=first.pk).update(
        created_at=first.created_at - timedelta(seconds=10))
    engine.submission_correct(submission_id=first.pk, worker=crowd["ann3"],
                              payload=phrase(item, "Dario Weiss"), active_time_s=6)
    row = by_name(worker_stats.project_workers(project=project))["ann3"]
    assert (row["tasks"], row["set_aside"]) == (2, 0)
    assert (row["active_time_s"], row["median_time_s"]) == (66.0, 33.0)


def test_workers_over_time_counts_submissions_of_the_top_workers(crowd, committed):
    fail_gold(crowd, committed)
    over = worker_stats.workers_over_time(project=crowd["project"], top=3)
    assert over["unit"] == "hour" and len(over["labels"]) >= 1
    assert over["workers"] == ["ann1", "ann2", "val1"]  # 4, 4, 2 (val2 2 too: by name)
    assert [sum(over["series"][n]) for n in over["workers"]] == [4, 4, 2]
    assert over["gold"] == {"ann2": [0.0, 0.0], "ann1": [1.0]}
    assert set(over["plots"]) == {"submissions", "gold"}


# The page ------------------------------------------------------------------------------------

def test_the_page_shows_rows_figures_and_plots(crowd, client_for, admin_user):
    html = page(client_for(admin_user), crowd).content.decode()
    assert 'data-testid="workers"' in html
    for name in ("ann1", "ann2", "ann3", "val1", "chk", crowd["prolific"].username):
        assert f'data-testid="worker-{name}"' in html
    row = re.search(r'data-testid="worker-ann1">(.*?)</tr>', html, re.S).group(1)
    assert 'data-testid="tasks-ann1">3' in row and "2 min 0 s" in row and "40 s" in row
    assert "0.60" in row and "1.00 <span" in row  # competence and agreement
    assert reverse("annotation:project_worker", args=[crowd["project"].pk,
                                                      crowd["ann1"].pk]) in row
    assert 'data-testid="plot-worker-submissions"' in html
    assert 'data-testid="sort-competence"' in html and 'hx-get="?sort=' in html


def test_sorting_by_a_column_in_both_orders(crowd, client_for, admin_user):
    client = client_for(admin_user)
    answer = crowd["stages"]["newsqa_answer"].pk
    names = ["ann1", "ann2", "ann3", "val1", "questioner"]
    html = page(client, crowd, sort="competence", order="desc", stage=answer).content.decode()
    assert order_of(html, names)[:3] == ["ann3", "ann1", "ann2"]
    html = page(client, crowd, sort="competence", order="asc", stage=answer).content.decode()
    # Workers without a value stay last in either order.
    assert order_of(html, names)[:3] == ["ann2", "ann1", "ann3"]
    html = page(client, crowd, sort="tasks", order="desc").content.decode()
    assert order_of(html, ["ann1", "ann2", "ann3", "chk"]) == ["ann1", "ann2", "ann3", "chk"]
    # The active header links to the other order; an unknown column falls back to tasks.
    assert 'href="?sort=tasks&amp;order=asc' in html
    assert 'href="?sort=username&amp;order=asc' in html  # names first A to Z
    assert page(client, crowd, sort="password").status_code == 200


def test_filters_by_status_role_stage_and_username(crowd, client_for, admin_user, committed):
    fail_gold(crowd, committed)
    client = client_for(admin_user)
    html = page(client, crowd, status="paused").content.decode()
    assert 'data-testid="worker-ann2"' in html and 'data-testid="worker-ann1"' not in html
    html = page(client, crowd, role="checker").content.decode()
    assert 'data-testid="worker-chk"' in html and 'data-testid="worker-ann1"' not in html
    html = page(client, crowd, q="AnN").content.decode()
    assert all(f'data-testid="worker-{n}"' in html for n in ("ann1", "ann2", "ann3"))
    assert 'data-testid="worker-val1"' not in html
    assert "3 of 8 workers" in html
    # htmx asks for the table alone; the links keep the filter.
    fragment = client.get(reverse("annotation:project_workers", args=[crowd["project"].pk]),
                          {"q": "ann"}, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="workers-table">')
    assert "<html" not in fragment and "Over time" not in fragment
    assert "q=ann" in fragment
    # The filter form outside the fragment learns the sort order out of band.
    assert 'id="workers-sort-state" hx-swap-oob="true"' in fragment
    assert "hx-swap-oob" not in html


def test_a_paused_worker_shows_the_reason_and_resume_restores_the_stage(
        crowd, client_for, admin_user, committed):
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    fail_gold(crowd, committed)
    ann2 = crowd["ann2"]
    engine.items_emit(source_stage=crowd["stages"]["newsqa_question"], emits=[
        Emit(kind="newsqa_answer", key="after", data={"question": "Who is the mayor?"},
             document_id=crowd["q"][0].document_id)])
    offered = engine.task_claim(worker=ann2, project=project)
    assert offered is None or offered.stage.kind != "newsqa_answer"
    if offered is not None:
        engine.task_release(assignment_id=offered.pk, worker=ann2)

    client = client_for(admin_user)
    html = page(client, crowd).content.decode()
    assert re.search(r'data-testid="status-ann2">paused<', html)
    assert re.search(r'data-testid="reason-ann2">Answer sourcing: gold accuracy 0% below 70%',
                     html)
    assert 'data-testid="resume-ann2"' in html and 'data-testid="resume-ann1"' not in html
    back = reverse("annotation:project_workers", args=[project.pk]) + "?status=paused"
    response = client.post(
        reverse("annotation:project_worker_standing", args=[project.pk, ann2.pk]),
        {"stage": answer.pk, "action": "resume", "next": back}, follow=True)
    assert response.redirect_chain[-1][0] == back
    html = response.content.decode()
    assert "ann2 resumed on Answer sourcing (now active)." in html
    assert "No worker matches." in html  # nobody is paused any more
    assert WorkerStage.objects.get(member__user=ann2, stage=answer).status == "active"
    html = page(client, crowd).content.decode()
    assert re.search(r'data-testid="status-ann2">active<', html)
    task = engine.task_claim(worker=ann2, project=project)
    assert task is not None and task.stage.kind == "newsqa_answer" and not task.item.gold


def test_admins_block_and_retrain_a_worker_on_a_stage(crowd, client_for, admin_user):
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    client = client_for(admin_user)
    url = reverse("annotation:project_worker_standing", args=[project.pk, crowd["ann3"].pk])
    response = client.post(url, {"stage": answer.pk, "action": "block",
                                 "next": "https://evil.example/"})
    assert response["Location"] == reverse("annotation:project_workers", args=[project.pk])
    rows = by_name(worker_stats.project_workers(project=project))
    assert rows["ann3"]["status"] == "blocked" and "blocked by adm" in rows["ann3"][
        "status_reason"]
    client.post(url, {"stage": answer.pk, "action": "retrain"})
    standing = WorkerStage.objects.get(member__user=crowd["ann3"], stage=answer)
    assert (standing.status, standing.qualified) == ("active", False)
    # Refusals: an unknown action, a stage of another role, an automatic stage.
    response = client.post(url, {"stage": answer.pk, "action": "promote"}, follow=True)
    assert "Unknown action" in response.content.decode()
    automatic = crowd["stages"]["newsqa_agreement"]
    response = client.post(url, {"stage": automatic.pk, "action": "block"}, follow=True)
    assert "does not work Agreement" in response.content.decode()
    assert client.post(url, {"stage": 0, "action": "block"}).status_code == 404


# Who may see what ----------------------------------------------------------------------------

def test_annotators_and_checkers_of_other_projects_get_403(crowd, client, client_for):
    url = reverse("annotation:project_workers", args=[crowd["project"].pk])
    assert client.get(url).status_code == 302  # to the login page
    assert client_for(crowd["ann1"]).get(url).status_code == 403
    assert client_for(crowd["outsider"]).get(url).status_code == 403
    worker_url = reverse("annotation:project_worker",
                         args=[crowd["project"].pk, crowd["ann1"].pk])
    assert client_for(crowd["outsider"]).get(worker_url).status_code == 403
    assert client_for(crowd["chk"]).get(url).status_code == 200
    assert client_for(crowd["chk"]).get(worker_url).status_code == 200
    # Standing decisions are the admins'.
    decide = reverse("annotation:project_worker_standing",
                     args=[crowd["project"].pk, crowd["ann1"].pk])
    answer = crowd["stages"]["newsqa_answer"].pk
    assert client_for(crowd["chk"]).post(decide, {"stage": answer, "action": "block"}) \
        .status_code == 403
    # A paused checker membership no longer opens the page.
    ProjectMember.objects.filter(user=crowd["chk"]).update(status="paused")
    assert client_for(crowd["chk"]).get(url).status_code == 403


def test_admins_see_external_ids_and_checkers_do_not(crowd, client_for, admin_user):
    prolific = crowd["prolific"]
    html = page(client_for(admin_user), crowd).content.decode()
    assert PROLIFIC_ID in html and f'data-testid="account-{prolific.username}">Prolific' in html
    assert 'data-testid="block-ann1"' in html
    checker_html = page(client_for(crowd["chk"]), crowd).content.decode()
    assert PROLIFIC_ID not in checker_html and f'data-testid="worker-{prolific.username}"' \
        in checker_html
    assert 'data-testid="block-ann1"' not in checker_html and "csrfmiddlewaretoken" not in \
        checker_html.split('data-testid="workers"')[1]
    worker_url = reverse("annotation:project_worker", args=[crowd["project"].pk, prolific.pk])
    assert PROLIFIC_ID in client_for(admin_user).get(worker_url).content.decode()
    assert PROLIFIC_ID not in client_for(crowd["chk"]).get(worker_url).content.decode()


def test_standing_decisions_need_the_csrf_token(crowd, admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    url = reverse("annotation:project_worker_standing",
                  args=[crowd["project"].pk, crowd["ann1"].pk])
    answer = crowd["stages"]["newsqa_answer"].pk
    assert client.post(url, {"stage": answer, "action": "block"}).status_code == 403
    page(client, crowd)
    token = client.cookies["csrftoken"].value
    response = client.post(url, {"stage": answer, "action": "block",
                                 "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert WorkerStage.objects.get(member__user=crowd["ann1"]).status == "blocked"


# The drill-down ------------------------------------------------------------------------------

def test_the_drill_down_lists_the_workers_submissions_only(crowd, client_for, admin_user,
                                                         committed):
    fail_gold(crowd, committed)
    project, ann1 = crowd["project"], crowd["ann1"]
    url = reverse("annotation:project_worker", args=[project.pk, ann1.pk])
    html = client_for(admin_user).get(url).content.decode()
    mine = list(Submission.objects.filter(worker=ann1).values_list("pk", flat=True))
    others = Submission.objects.exclude(worker=ann1).values_list("pk", flat=True)
    assert len(mine) == 4
    assert all(f'data-testid="submission-{pk}"' in html for pk in mine)
    assert not any(f'data-testid="submission-{pk}"' in html for pk in others)
    assert "“Dario Weiss”" in html and "“Lena Ortiz”" in html
    gold = Submission.objects.get(worker=ann1, item__gold="check")
    assert f'data-testid="gold-score-{gold.pk}">1.00<' in html
    assert reverse("annotation:item_detail", args=[gold.item_id]) in html
    checker_html = client_for(crowd["chk"]).get(url).content.decode()
    assert f'data-testid="submission-{gold.pk}"' in checker_html
    assert reverse("annotation:item_detail", args=[gold.item_id]) not in checker_html
    # A worker of another project, or a stranger, is not shown.
    stranger = reverse("annotation:project_worker", args=[project.pk, crowd["outsider"].pk])
    assert client_for(admin_user).get(stranger).status_code == 403


def test_submissions_are_paginated_latest_first(crowd):
    first = worker_stats.worker_submissions(project=crowd["project"], worker=crowd["ann1"],
                                            per_page=2)
    second = worker_stats.worker_submissions(project=crowd["project"], worker=crowd["ann1"],
                                             page=2, per_page=2)
    assert first["page"].paginator.num_pages == 2
    ids = [r["submission"].pk for r in first["rows"] + second["rows"]]
    assert ids == sorted(ids, reverse=True) and len(ids) == 3
    assert [r["summary"] for r in second["rows"]] == ["“Dario Weiss”"]
    assert second["rows"][0]["time"] == "20 s" and second["rows"][0]["measured"]


# Queries -------------------------------------------------------------------------------------

def _queries(client, crowd) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert page(client, crowd).status_code == 200
    return len(captured)


def test_the_page_runs_a_bounded_number_of_queries(crowd, client_for, admin_user, committed,
                                                   django_assert_max_num_queries):
    client = client_for(admin_user)
    cache.clear()
    with django_assert_max_num_queries(20):
        page(client, crowd)
    before = _queries(client, crowd)
    # More workers with more work: the same number of queries.
    project = crowd["project"]
    fail_gold(crowd, committed)
    for n in range(4):
        extra = user_with_roles(f"late{n}", Role.ANNOTATOR)
        engine.project_member_add(project=project, user=extra, role=Role.ANNOTATOR)
        item = Item.objects.get(project=project, key="gold:g0")
        task = claim_item(extra, project, item)
        engine.task_submit(assignment_id=task.pk, worker=extra, payload={"no_answer": True})
    assert _queries(client, crowd) == before
    # The competence estimate is cached: a second request skips its queries.
    with CaptureQueriesContext(connection) as captured:
        page(client, crowd)
    assert len(captured) < before
    # The drill-down: one page of submissions in a fixed number of queries too.
    url = reverse("annotation:project_worker", args=[project.pk, crowd["ann1"].pk])
    with django_assert_max_num_queries(12):
        assert client.get(url).status_code == 200


def test_new_work_recomputes_only_the_competence_it_changes(crowd, committed, monkeypatch):
    """While a crowd works every view sees new submissions: the estimate after new work
    starts from what the last one computed per item and per worker, with the same
    figures as an estimate made from scratch."""
    from collector.metrics import competence

    project = crowd["project"]
    cache.clear()
    more_work(crowd)
    before = by_name(worker_stats.project_workers(project=project))
    calls = {"loo": 0}
    loo = competence.leave_one_out_f1

    def counted(*args, **kwargs):
        calls["loo"] += 1
        return loo(*args, **kwargs)

    monkeypatch.setattr(competence, "leave_one_out_f1", counted)
    # New work (a gold check: counted in the fingerprint, not in the estimate).
    item = gold_check(project, crowd["stages"]["newsqa_answer"], "late")
    late = user_with_roles("late", Role.ANNOTATOR)
    engine.project_member_add(project=project, user=late, role=Role.ANNOTATOR)
    task = claim_item(late, project, item)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=late, payload={"no_answer": True})
    after = by_name(worker_stats.project_workers(project=project))
    assert calls["loo"] == 0
    for name in ("ann1", "ann2", "ann3", "val1", "val2"):
        assert after[name]["competence"] == before[name]["competence"]
        assert after[name]["agreement"] == before[name]["agreement"]
    cache.clear()
    fresh = by_name(worker_stats.project_workers(project=project))
    assert calls["loo"] == 3  # the three questions, from scratch
    assert [fresh[n]["competence"] for n in ("ann1", "ann2", "ann3")] == \
        [after[n]["competence"] for n in ("ann1", "ann2", "ann3")]


def test_the_project_page_plots_the_busiest_workers_and_counts_in_the_database(
        crowd, client_for, admin_user, monkeypatch, django_assert_max_num_queries):
    """A crowd of hundreds: the project page's submissions-per-worker plot shows the
    busiest workers and one bar for the rest; its figures come from the database's counts
    (no row per submission), in the same queries whatever the crowd."""
    from annotation import selectors

    monkeypatch.setattr(selectors, "WORKERS_PLOTTED", 3)
    project = crowd["project"]
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])
    more_work(crowd)
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    item = gold_check(project, crowd["stages"]["newsqa_answer"], "crowd")
    engine.slots_add(item=item, n=5)
    for n in range(6):
        late = user_with_roles(f"late{n}", Role.ANNOTATOR)
        engine.project_member_add(project=project, user=late, role=Role.ANNOTATOR)
        task = claim_item(late, project, item)
        engine.task_submit(assignment_id=task.pk, worker=late, payload={"no_answer": True})
    with django_assert_max_num_queries(len(few)):
        page = client.get(url)
    board = page.context
    assert board["workers"][:3] == [("ann1", 3), ("ann2", 2), ("val1", 2)]
    plot = page.content.decode()
    plot = plot[plot.index('data-testid="plot-workers"'):]
    plot = plot[:plot.index("</svg>")]
    assert ">ann1<" in plot and ">val2<" not in plot and ">late0<" not in plot
    # the other 9 workers (questioner, ann3, val2, six late ones): 1 + 1 + 2 + 6
    assert ">9 more workers<" in plot and "<title>10 submissions</title>" in plot
    times = sorted(Submission.objects.filter(stage=crowd["stages"]["newsqa_answer"])
                   .values_list("time_on_task_s", flat=True))
    (answer,) = [r for r in board["stage_rows"] if r["stage"].kind == "newsqa_answer"]
    assert answer["submissions"] == len(times) == 12
    assert answer["median_time_s"] == round((times[5] + times[6]) / 2, 1)


# ReCO: batch inspections -----------------------------------------------------------------------

RECO_DOCS = {
    "is sussex in england": [{"document_id": None, "external_id": "sussex", "title": "Sussex",
                              "url": "http://example.org/sussex", "source_type": "web",
                              "text": "Sussex is a historic county in the south east of "
                                      "England, bordered by Kent, Surrey and Hampshire."}],
    "can pregnant women eat celery": [{
        "document_id": None, "external_id": "diet", "title": "Diet in pregnancy",
        "url": "http://example.org/diet", "source_type": "web",
        "text": "Expectant mothers may safely include celery stalks in their diet: the "
                "vegetable is rich in folate and fibre."}],
}


def test_batch_inspection_rejections_per_annotator(db, settings, committed, monkeypatch,
                                                   admin_user, client_for):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    queries = list(RECO_DOCS)
    monkeypatch.setattr(reco.QueriesKind, "queries", lambda self, project: [
        (n, f"ext-{n}", text, "en") for n, text in enumerate(queries, 1)])
    monkeypatch.setattr(reco, "_retrieve_documents",
                        lambda project, text, k, max_chars=0: RECO_DOCS.get(text, [])[:k])
    project = engine.project_create(
        name="Workers ReCO", recipe="reco", user=admin_user,
        params={5: {"train": 1.0, "dev": 0.0, "test": 0.0},
                6: {"batch_size": 2, "inspect_fraction": 1.0}})
    with committed():
        engine.project_start(project=project, actor=admin_user)
    alice = user_with_roles("alice", Role.ANNOTATOR)
    carol = user_with_roles("carol", Role.CHECKER)
    engine.project_member_add(project=project, user=alice, role=Role.ANNOTATOR)
    engine.project_member_add(project=project, user=carol, role=Role.CHECKER)
    alternatives = {"positive": "yes", "negative": "no", "uncertain": "can't tell"}

    def label_batch():
        while (task := engine.task_claim(worker=alice, project=project)) is not None:
            with committed():
                engine.task_submit(assignment_id=task.pk, worker=alice, payload={
                    "doc": 0, "evidence": [0, 12], "alternatives": alternatives,
                    "answer": "positive"})

    label_batch()
    batch = Batch.objects.get(project=project)
    assert batch.status == "inspection"
    first = batches.inspection_claim(
        inspection_id=Inspection.objects.get(batch=batch, round=1).pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=first.pk, checker=carol,
                                  marks={first.sample[0]: ["answer_incorrect"]})
    label_batch()  # round 2, the same annotator
    second = batches.inspection_claim(
        inspection_id=Inspection.objects.get(batch=batch, round=2).pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=second.pk, checker=carol, marks={})
    batch.refresh_from_db()
    assert batch.status == "accepted"

    rows = by_name(worker_stats.project_workers(project=project))
    assert (rows["alice"]["rejections"], rows["alice"]["inspections"]) == (1, 2)
    assert rows["alice"]["tasks"] == 4  # two items, labelled in two rounds
    # One annotator per item: nothing to estimate competence or agreement from.
    assert rows["alice"]["competence"] == [] and rows["alice"]["agreement"] is None
    assert rows["carol"]["rejections"] == 0
    html = client_for(admin_user).get(
        reverse("annotation:project_workers", args=[project.pk])).content.decode()
    assert re.search(r'data-testid="rejections-alice">1 <span class="hint">of 2 inspections',
                     html)


def test_the_chinese_page_names_the_stages_in_chinese(crowd, client_for, admin_user,
                                                      committed):
    """The stage filter and a paused worker's 'where' gave the recipe's English stage
    names on the Chinese page (the table's standings already translated them)."""
    fail_gold(crowd, committed)
    client = client_for(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = page(client, crowd).content.decode()
    answer = crowd["stages"]["newsqa_answer"]
    assert f'<option value="{answer.pk}">{answer.order}. 答案收集</option>' in html
    assert re.search(r'data-testid="reason-ann2">答案收集: 黄金题正确率', html)
    assert "Answer sourcing" not in html


def test_the_plots_titles_follow_the_readers_language(crowd, client_for, admin_user,
                                                       committed, monkeypatch):
    """The workers page's plot titles were English f-strings on the Chinese page: they go
    through the catalogue (here holding this change's msgids, as the catalogue will)."""
    from django.utils.translation import trans_real

    catalogue = trans_real.translation("zh-hans")._catalog._catalogs[0]
    monkeypatch.setitem(catalogue, "Submissions per hour", "每小时提交数")
    monkeypatch.setitem(catalogue, "Gold accuracy after each check (cumulative)",
                        "每次检查后的金标准准确率（累计）")
    fail_gold(crowd, committed)
    client = client_for(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-CN"
    text = page(client, crowd).content.decode()
    assert 'aria-label="每次检查后的金标准准确率（累计）"' in text
    assert 'aria-label="每小时提交数' in text
    assert "Gold accuracy after" not in text and "Submissions per hour" not in text


def test_medians_of_even_counts_set_aside_work_and_one_stage(crowd, committed):
    """The median of two is their mean; set-aside answers count in no time; a stage's
    filter takes that stage's answers only."""
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    more_work(crowd)
    item = Item.objects.get(project=project, key="more-work")
    aside = work(project, crowd["ann3"], item, {"no_answer": True}, committed, active_s=1000)
    Submission.objects.filter(pk=aside.pk).update(set_aside=True)
    rows = by_name(worker_stats.project_workers(project=project))
    on_task = Submission.objects.get(worker=crowd["ann2"], item=crowd["q"][1]).time_on_task_s
    assert rows["ann2"]["median_time_s"] == round((40 + on_task) / 2, 1)
    assert (rows["ann3"]["tasks"], rows["ann3"]["set_aside"]) == (1, 1)
    assert (rows["ann3"]["median_time_s"], rows["ann3"]["active_time_s"]) == (30.0, 30.0)
    assert (rows["val1"]["median_time_s"], rows["val1"]["active_time_s"]) == (11.0, 22.0)
    assert rows["chk"]["median_time_s"] is None and rows["chk"]["active_time_s"] == 0
    validate = crowd["stages"]["newsqa_validate"]
    only = by_name(worker_stats.project_workers(project=project, stage=validate))
    assert (only["val1"]["median_time_s"], only["ann1"]["median_time_s"]) == (11.0, None)
    only = by_name(worker_stats.project_workers(project=project, stage=answer))
    assert (only["ann1"]["median_time_s"], only["ann1"]["tasks"]) == (40.0, 3)
    assert (only["val1"]["median_time_s"], only["val1"]["tasks"]) == (None, 0)


def _rows_read(project, monkeypatch) -> tuple[int, int]:
    """The statements the workers' figures take and the rows they read, the competence
    estimate cached."""
    return reads(monkeypatch, lambda: worker_stats.project_workers(project=project), warm_up=2)


def test_the_workers_figures_read_rows_per_worker_not_per_answer(crowd, committed,
                                                                 monkeypatch):
    """Three more answers each (gold checks, answered rightly) cost the workers' figures no
    more rows: the database sums each worker's answers per stage and finds their median."""
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    more_work(crowd)

    def answer_gold(key: str) -> None:
        item = gold_check(project, answer, key)
        for name in ("ann1", "ann2", "ann3"):
            work(project, crowd[name], item, phrase(item, "Dario Weiss"), committed,
                 active_s=15)

    answer_gold("g0")  # their standings on the stage exist from here on
    before = _rows_read(project, monkeypatch)
    for key in ("g1", "g2", "g3"):
        answer_gold(key)
    assert _rows_read(project, monkeypatch) == before
    rows = by_name(worker_stats.project_workers(project=project))
    assert (rows["ann1"]["tasks"], rows["ann1"]["active_time_s"]) == (7, 180.0)
    assert rows["ann1"]["median_time_s"] == 15.0  # 15 x4, 20, 40, 60


def _refreshed_and_fresh(project, views) -> tuple[dict, dict]:
    """The estimate as the page makes it after new work (from the memo of the last one)
    and one computed from scratch (no memo)."""
    stages = list(project.stages.order_by("order"))
    refreshed = worker_stats.project_competence(project=project, stages=stages,
                                                fingerprint=("view", next(views)))
    return refreshed, worker_stats._competence(project, stages)


def test_the_incremental_estimate_equals_one_from_scratch_after_every_kind_of_change(
        crowd, committed, admin_user):
    """Each change that can alter a figure is seen by the estimate that starts from the
    last one's memo: new answers, a correction, items finished and re-opened, a worker
    blocked (their open answers set aside), an answered item made gold, an answer counted
    again, a gold answer edited. After each, the figures equal a computation from
    scratch."""
    import itertools

    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    views = itertools.count()
    cache.clear()
    history = []

    def same(step: str) -> None:
        refreshed, fresh = _refreshed_and_fresh(project, views)
        assert refreshed == fresh, step
        history.append(refreshed)

    same("first view")
    more_work(crowd)
    q4 = Item.objects.get(project=project, key="more-work", stage=answer)
    first = work(project, crowd["ann1"], q4, phrase(q4, "Dario Weiss"), committed,
                 active_s=10)
    same("a new answer to an open item")
    with committed():
        engine.submission_correct(submission_id=first.pk, worker=crowd["ann1"],
                                  payload=phrase(q4, "Lena Ortiz"))
    same("an answer corrected")
    work(project, crowd["ann3"], q4, phrase(q4, "Mayor Lena Ortiz"), committed, active_s=10)
    q4.refresh_from_db()
    assert q4.status != Item.Status.OPEN  # answered: to validation
    validate = Item.objects.get(project=project, stage__kind="newsqa_validate", key=q4.key)
    work(project, crowd["val1"], validate, {"choice": 1}, committed)
    same("an item finished, a validation begun")
    work(project, crowd["val2"], validate, {"choice": 1}, committed)
    assert Item.objects.filter(project=project, stage__kind="newsqa_consolidate", key=q4.key,
                               status="done").exists()
    same("a question consolidated")
    # ann2 answers a fifth question, still open, then is blocked: with the stage's
    # gold_set_aside that answer is set aside.
    engine.items_emit(source_stage=crowd["stages"]["newsqa_question"], emits=[Emit(
        kind="newsqa_answer", key="fifth", data={"question": "Who opposed the plan?"},
        document_id=q4.document_id)])
    q5 = Item.objects.get(project=project, key="fifth", stage=answer)
    work(project, crowd["ann1"], q5, phrase(q5, "Dario Weiss"), committed)
    work(project, crowd["ann2"], q5, phrase(q5, "Lena Ortiz"), committed)
    answer.params = {**answer.params, "gold_set_aside": True}
    answer.save(update_fields=["params"])
    same("answers to an open item")
    q5.refresh_from_db()
    if q5.status != Item.Status.OPEN:  # two answers may close it: re-open it for the test
        Item.objects.filter(pk=q5.pk).update(status=Item.Status.OPEN)
    engine.member_status_set(member=ProjectMember.objects.get(
        project=project, user=crowd["ann2"], role="annotator"), status="blocked",
        actor=admin_user)
    assert Submission.objects.filter(item=q5, worker=crowd["ann2"], set_aside=True).exists()
    same("a worker blocked, their open answer set aside")
    Item.objects.filter(project=project, stage__kind="newsqa_consolidate",
                        key=crowd["q"][2].key).update(status=Item.Status.OPEN)
    same("a consolidated question re-opened")
    Item.objects.filter(pk=crowd["q"][0].pk).update(gold="check")
    same("an answered item made a gold check")
    Item.objects.filter(pk=crowd["q"][0].pk).update(gold="")
    same("and back")
    Submission.objects.filter(item=q5, worker=crowd["ann2"]).update(set_aside=False)
    same("a set-aside answer counted again")
    gold = gold_check(project, answer, "edited")
    Item.objects.filter(pk=gold.pk).update(result={"expected": {"spans": [[0, 4]]}})
    same("a gold answer edited")
    # The changes did change the figures (the test would prove nothing otherwise).
    assert history[0] != history[-1]
    assert len({repr(h) for h in history}) >= 5


def test_a_refresh_reads_the_new_answers_not_all_of_them(crowd, committed, monkeypatch):
    """After new work the estimate reads the answers added since the last one, not the
    project's every answer again."""
    project = crowd["project"]
    stages = list(project.stages.order_by("order"))
    memo: dict = {}
    worker_stats._competence(project, stages, memo)

    def rows_read(run) -> int:
        return reads(monkeypatch, run)[1]

    answers = Submission.objects.filter(stage__project=project, set_aside=False,
                                        stage__kind__in=("newsqa_answer", "newsqa_validate"))
    assert answers.count() == 10
    refresh = rows_read(lambda: worker_stats._competence(project, stages, memo))
    scratch = rows_read(lambda: worker_stats._competence(project, stages))
    assert scratch - refresh == 10 - 1  # the answers, against one row of two sums
    more_work(crowd)
    q4 = Item.objects.get(project=project, key="more-work")
    work(project, crowd["ann1"], q4, phrase(q4, "Dario Weiss"), committed)
    assert rows_read(lambda: worker_stats._competence(project, stages, memo)) == refresh + 1


def test_a_fit_kept_by_another_process_from_fewer_answers_is_not_reused(crowd, committed):
    """Two web processes share the cached memo but each keeps its own answers: a label fit
    another process made from fewer answers is made again, not taken for this one's."""
    project, answer = crowd["project"], crowd["stages"]["newsqa_answer"]
    stages = list(project.stages.order_by("order"))
    more_work(crowd)
    q4 = Item.objects.get(project=project, key="more-work", stage=answer)
    work(project, crowd["ann1"], q4, phrase(q4, "Dario Weiss"), committed)
    work(project, crowd["ann3"], q4, phrase(q4, "Lena Ortiz"), committed)
    validate = Item.objects.get(project=project, stage__kind="newsqa_validate", key=q4.key)
    work(project, crowd["val1"], validate, {"choice": 1}, committed)
    other: dict = {}
    old = worker_stats._competence(project, stages, other)  # the other process, earlier
    work(project, crowd["val2"], validate, {"choice": 0}, committed)
    mine: dict = {}
    worker_stats._competence(project, stages, mine)  # this process, now
    # The shared memo is the other process's (written last); this process's answers.
    shared = {**{k: v for k, v in other.items() if k != "answers"}, "answers": mine["answers"]}
    engine.items_emit(source_stage=crowd["stages"]["newsqa_question"], emits=[Emit(
        kind="newsqa_answer", key="fifth", data={"question": "Who opposed the plan?"},
        document_id=q4.document_id)])
    q5 = Item.objects.get(project=project, key="fifth", stage=answer)
    work(project, crowd["ann2"], q5, phrase(q5, "Lena Ortiz"), committed)  # no validation
    refreshed = worker_stats._competence(project, stages, shared)
    fresh = worker_stats._competence(project, stages)
    labels = crowd["stages"]["newsqa_validate"].pk
    assert old[labels] != fresh[labels]  # the validation answer changed the fit
    assert refreshed == fresh
