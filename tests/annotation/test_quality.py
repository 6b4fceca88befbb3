"""Gold checks in the live queue, pauses, set-aside answers and qualification as the claim
sees them (the qualification pages and gold imports: test_gold.py)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import engine, quality
from annotation.eligibility import GOLD_PRIORITY
from annotation.models import Assignment, Item, ProjectMember, Submission, WorkerStage
from tests.annotation.test_gold import build

BODY_PHRASE = "Dario Weiss"


def gold_item(project, stage, key: str, *, expected: dict, purpose: str = "check",
              slots: int = 3) -> Item:
    """A gold item of ``stage`` about the project's first article."""
    question = project.stages.get(kind="newsqa_question")
    doc = project.items.filter(stage=question).first().document
    item = Item.objects.create(
        project=project, stage=stage, key=f"gold:{key}", document=doc, gold=purpose,
        data={"question": "Who voted against the plan?"}, status=Item.Status.OPEN,
        priority=GOLD_PRIORITY, overlap=slots,
        result={"expected": expected, "reason": "Weiss voted against it."})
    if slots:
        engine.slots_add(item=item, n=slots)
    return item


def weiss(project) -> dict:
    body = project.items.filter(stage__kind="newsqa_question").first().document.body
    start = body.index(BODY_PHRASE)
    return {"spans": [[start, start + len(BODY_PHRASE)]]}


def answer_claims(project, worker):
    """Claim until the answer stage comes up (the question stage is done first)."""
    while (task := engine.task_claim(worker=worker, project=project)) is not None:
        if task.stage.kind == "newsqa_answer":
            return task
        engine.task_submit(assignment_id=task.pk, worker=worker,
                           payload={"questions": ["Who voted against the plan?"]})
    return None


def test_gold_checks_come_at_the_rate_are_scored_and_never_finish(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=1.0, gold_min_items=50)
    gold = gold_item(project, answer, "g1", expected=weiss(project))
    worker = workers["ann1"]
    task = answer_claims(project, worker)
    assert task.item_id == gold.pk  # rate 1: a gold check first, while one is open to them
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker, payload=weiss(project))
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    assert (standing.gold_seen, standing.gold_accuracy) == (1, 1.0)
    gold.refresh_from_db()
    assert gold.status == Item.Status.OPEN and gold.finished_at is None
    assert Assignment.objects.filter(item=gold, status="open").count() == 3  # replenished
    # The worker saw that gold item: next comes work, and nothing was emitted from gold.
    following = engine.task_claim(worker=worker, project=project)
    assert following.item_id != gold.pk and not following.item.gold
    assert not Item.objects.filter(parent=gold).exists()


def test_rate_zero_never_gives_gold(news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    gold = gold_item(project, answer, "g1", expected=weiss(project))
    worker = workers["ann2"]
    seen = []
    while (task := answer_claims(project, worker)) is not None:
        seen.append(task.item_id)
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    assert len(seen) == 6 and gold.pk not in seen


def test_failing_gold_pauses_the_worker_sets_answers_aside_and_resume_restores(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=0.0, gold_min_items=2, gold_min_accuracy=0.7,
                            gold_set_aside=True)
    golds = [gold_item(project, answer, f"g{n}", expected=weiss(project)) for n in range(3)]
    worker = workers["ann3"]
    work = answer_claims(project, worker)
    engine.task_submit(assignment_id=work.pk, worker=worker, payload={"no_answer": True})
    answer.params["gold_rate"] = 1.0  # from now on every claim is a gold check
    answer.save(update_fields=["params"])
    for _ in range(2):
        task = engine.task_claim(worker=worker, project=project)
        assert task.item.gold == "check"
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    assert standing.status == "paused" and "below 70%" in standing.status_reason
    assert answer_claims(project, worker) is None  # other stages only
    assert not engine.work_waiting(worker=worker, project=project)
    # Their answer to the still-open item is set aside, and the item wants another worker.
    aside = Submission.objects.get(worker=worker, item=work.item)
    assert aside.set_aside
    assert Assignment.objects.filter(item=work.item, status="open").count() == 2
    # Their gold answers too (gold items are open items: the worker's list showed them
    # apart as "waiting for others"), with no slot added to the gold items.
    checks = Submission.objects.filter(worker=worker, item__gold="check")
    assert checks.count() == 2 and all(each.set_aside for each in checks)
    assert {Assignment.objects.filter(item=g, status="open").count() for g in golds} == {3}
    # Another worker is not affected; the admin resumes the paused one.
    assert engine.task_claim(worker=workers["ann1"], project=project) is not None
    engine.standing_decide(standing=standing, action="resume", actor=admin_user)
    assert engine.task_claim(worker=worker, project=project).item_id == golds[2].pk


def test_blocking_releases_the_live_slot(news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    worker = workers["ann1"]
    live = answer_claims(project, worker)
    standing = quality.standing_for(member=ProjectMember.objects.get(user=worker,
                                                                     project=project),
                                    stage=answer)
    engine.standing_decide(standing=standing, action="block", actor=admin_user)
    live.refresh_from_db()
    assert live.status == "released"
    assert answer_claims(project, worker) is None
    with pytest.raises(Exception, match="action"):
        engine.standing_decide(standing=standing, action="promote")


def test_a_stage_asking_for_qualification_is_offered_only_to_qualified_workers(
        news_corpus, workers, admin_user, committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            qualification_items=1)
    worker = workers["ann1"]
    assert answer_claims(project, worker) is None  # the question stage was all they got
    standing = quality.standing_for(member=ProjectMember.objects.get(user=worker,
                                                                     project=project),
                                    stage=answer)
    standing.qualified = True
    standing.save(update_fields=["qualified"])
    task = engine.task_claim(worker=worker, project=project)
    assert task is not None and task.stage_id == answer.pk


def test_a_resumed_worker_gets_fresh_gold_checks_before_another_pause(
        news_corpus, workers, admin_user, committed, settings):
    """Resume kept the whole gold record in the pause rule, so the next check paused the
    worker again at once, even answered right (1 of 3 is below 70%): resuming did nothing."""
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=1.0, gold_min_items=2, gold_min_accuracy=0.7)
    for n in range(6):
        gold_item(project, answer, f"g{n}", expected=weiss(project))
    worker = workers["ann3"]
    task = answer_claims(project, worker)
    for _ in range(2):
        assert task.item.gold == "check"
        engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
        task = engine.task_claim(worker=worker, project=project)
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    assert standing.status == "paused"
    if task is not None:  # other stages' work only: give it back
        assert task.stage_id != answer.pk
        engine.task_release(assignment_id=task.pk, worker=worker)
    engine.standing_decide(standing=standing, action="resume", actor=admin_user)
    task = engine.task_claim(worker=worker, project=project)
    assert task.item.gold == "check"
    engine.task_submit(assignment_id=task.pk, worker=worker, payload=weiss(project))
    standing.refresh_from_db()
    assert standing.status == "active"
    assert (standing.gold_seen, round(standing.gold_accuracy, 2)) == (3, 0.33)  # kept whole
    # Two fresh checks decide again: one right, one wrong is 50%, below 70%.
    task = engine.task_claim(worker=worker, project=project)
    engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    standing.refresh_from_db()
    assert standing.status == "paused"
    assert standing.status_reason == ("gold accuracy 50% below 70% after 2 checks since their "
                                      "standing last changed")
    # Retraining gives fresh checks too.
    engine.standing_decide(standing=standing, action="retrain", actor=admin_user)
    task = engine.task_claim(worker=worker, project=project)
    engine.task_submit(assignment_id=task.pk, worker=worker, payload=weiss(project))
    standing.refresh_from_db()
    assert standing.status == "active" and standing.gold_seen == 5


def test_a_gold_check_looks_like_any_task_in_the_recent_answers_and_its_correction(
        news_corpus, workers, admin_user, committed, settings, client_for):
    """Gold answers were left out of "Your recent answers" and their correction answered
    "gold checks cannot be corrected": a worker could tell (and tell others) which shared
    items were gold. Now it is listed and corrected as work is; the first answer is scored."""
    from django.urls import reverse

    from annotation.models import GoldAnswer

    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            name="Crowd", gold_rate=1.0, gold_min_items=50)
    gold = gold_item(project, answer, "g1", expected=weiss(project))
    worker = workers["ann1"]
    client = client_for(worker)
    task = answer_claims(project, worker)
    assert task.item_id == gold.pk
    with committed():
        sent = client.post(reverse("annotation:task_detail", args=[task.pk]),
                           {"payload": '{"no_answer": true}'})
    assert sent.status_code == 302
    first = Submission.objects.get(worker=worker, item=gold)
    url = reverse("annotation:submission_correct", args=[first.pk])
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert 'data-testid="recent-submissions"' in home and url in home
    # An item with neither question nor query is labelled by its key: not "gold:g1".
    Item.objects.filter(pk=gold.pk).update(data={})
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert "gold" not in home.split('data-testid="recent-submissions"')[1].lower()
    Item.objects.filter(pk=gold.pk).update(data=gold.data)
    page = client.get(url)
    assert page.status_code == 200 and 'data-testid="correcting"' in page.content.decode()
    with committed():
        done = client.post(url, {"payload": json.dumps(weiss(project))})
    assert done.status_code == 302
    first.refresh_from_db()
    assert first.superseded_by is not None and first.superseded_by.payload == weiss(project)
    # Scored once, on the first answer: the correction changes nothing of the record.
    assert list(GoldAnswer.objects.filter(item=gold).values_list("score", flat=True)) == [0.0]
    standing = WorkerStage.objects.get(member__user=worker, stage=answer)
    assert (standing.gold_seen, standing.gold_accuracy) == (1, 0.0)


def test_an_answerer_whose_answer_was_set_aside_does_not_validate_that_question(
        news_corpus, workers, admin_user, committed, settings):
    """Validators are a third group (NewsQA 3.4): a worker who answered the question is
    refused its validation, and so is one whose answer was set aside when the gold checks
    paused them (their answer is out of the record, but they read the question, marked an
    answer and would now judge the others' answers to it)."""
    from tests.annotation.test_newsqa_flow import claim_item

    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=0.0, gold_min_items=1, gold_min_accuracy=0.7,
                            gold_set_aside=True, max_extra_answers=0)
    check = gold_item(project, answer, "g1", expected=weiss(project))
    item = Item.objects.filter(stage=answer, gold="").order_by("id").first()
    dropped = workers["ann3"]
    with committed():
        engine.task_submit(assignment_id=claim_item(dropped, project, item).pk,
                           worker=dropped, payload={"no_answer": True})
    answer.params["gold_rate"] = 1.0  # their next claim is the gold check
    answer.save(update_fields=["params"])
    with committed():
        engine.task_submit(assignment_id=claim_item(dropped, project, check).pk,
                           worker=dropped, payload={"no_answer": True})  # fails: paused
    assert Submission.objects.get(worker=dropped, item=item).set_aside
    for name, payload in (("ann1", weiss(project)), ("ann2", {"no_answer": True})):
        with committed():
            engine.task_submit(assignment_id=claim_item(workers[name], project, item).pk,
                               worker=workers[name], payload=payload)
    validation = Item.objects.get(project=project, stage__kind="newsqa_validate",
                                  parent__parent=item)
    assert set(validation.exclusions.values_list("user__username", flat=True)) >= {
        "ann1", "ann2", "ann3"}
    offered = []  # every task ann3 is given, each handed back
    while (task := engine.task_claim(worker=dropped, project=project)) is not None:
        offered.append(task.item_id)
        engine.task_release(assignment_id=task.pk, worker=dropped)
    assert validation.pk not in offered


def test_no_gold_check_while_its_stage_has_no_work_for_the_worker(
        news_corpus, workers, admin_user, committed, settings):
    """At the start only questions are written; the answer stage holds a gold check and no
    work yet. The first worker was given that gold check (an obvious one, and a task
    counted against a marketplace quota). Gold is mixed into work: questions come first,
    and the gold check once the answer stage has work for them."""
    from annotation.roles import Role

    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Gold first", recipe="newsqa", corpus=news_corpus)
    answer = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params={"gold_rate": 1.0, "gold_min_items": 50})
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    gold = gold_item(project, answer, "g1", expected=weiss(project))
    assert not Assignment.objects.filter(stage=answer, status="open",
                                         priority__gt=GOLD_PRIORITY).exists()
    questioner, answerer = workers["questioner"], workers["ann1"]
    first = engine.task_claim(worker=answerer, project=project)
    assert first.stage.kind == "newsqa_question" and not first.item.gold
    engine.task_release(assignment_id=first.pk, worker=answerer)
    # Once a question is written, the answer stage has work, and the gold check comes.
    with committed():
        while (task := engine.task_claim(worker=questioner, project=project)) is not None:
            engine.task_submit(assignment_id=task.pk, worker=questioner,
                               payload={"questions": ["Who voted against the plan?"]})
    assert engine.task_claim(worker=answerer, project=project).item_id == gold.pk


@pytest.mark.parametrize("status", ["blocked", "paused"])
def test_blocking_a_member_on_the_members_page_sets_their_open_answers_aside(
        news_corpus, workers, admin_user, committed, settings, client, status):
    """The admin blocks (or pauses) a careless worker from the project's members page: on a
    stage with ``gold_set_aside`` their answers to items still open are set aside and each
    such item gets a replacement worker, as when the admin blocks them on the stage from
    the workers page, so that the item is finished from the other workers' answers alone."""
    from tests.annotation.test_newsqa_flow import claim_item

    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_set_aside=True, max_extra_answers=0)
    careless = workers["ann3"]
    items = list(Item.objects.filter(stage=answer, gold="").order_by("id")[:2])
    for item in items:
        with committed():
            engine.task_submit(assignment_id=claim_item(careless, project, item).pk,
                               worker=careless, payload={"no_answer": True})
    slots = Assignment.objects.filter(item=items[0]).count()
    member = ProjectMember.objects.get(project=project, user=careless)
    client.force_login(admin_user)
    response = client.post(reverse("annotation:member_status", args=[member.pk]),
                           {"status": status})
    assert response.status_code == 302
    assert all(s.set_aside for s in Submission.objects.filter(worker=careless,
                                                              stage=answer))
    assert Assignment.objects.filter(item=items[0]).count() == slots + 1
    assert Assignment.objects.filter(item=items[0], status="open").count() == 2
    # The item is finished from the two other workers' answers; the set-aside one is out.
    for name in ("ann1", "ann2"):
        with committed():
            engine.task_submit(assignment_id=claim_item(workers[name], project, items[0]).pk,
                               worker=workers[name], payload=weiss(project))
    items[0].refresh_from_db()
    assert items[0].status == Item.Status.DONE
    agreement = Item.objects.get(parent=items[0])
    assert len(agreement.data["answers"]) == 2
    # Resumed, they work on; their set-aside answers stay aside.
    client.post(reverse("annotation:member_status", args=[member.pk]), {"status": "active"})
    assert Submission.objects.filter(worker=careless, set_aside=False).count() == 0
