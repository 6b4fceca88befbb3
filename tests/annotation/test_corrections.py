"""Workers see their recent answers and correct the last one while its item is open (a new
submission superseding the old one); refused submits say what is wrong next to the field."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db.models import F
from django.urls import reverse

from annotation import engine, pay
from annotation.models import Item, Stage, Submission
from annotation.views import field_errors
from tests.annotation.test_newsqa_flow import _write_questions, claim_item, phrase_span


@pytest.fixture
def when(newsqa_project, workers, committed):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    return Item.objects.get(stage__kind="newsqa_answer", document=article.document,
                            data__question="When will the builders begin work?")


def answer(worker, project, item, payload, committed):
    task = claim_item(worker, project, item)
    with committed():
        return engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


def test_the_last_answer_is_corrected_by_a_new_submission_that_agreement_uses(
        newsqa_project, workers, committed, client_for, when):
    ann1, ann2 = workers["ann1"], workers["ann2"]
    Stage.objects.filter(pk=when.stage_id).update(params={**when.stage.params, "pay_rate": 1.0})
    wrong = answer(ann1, newsqa_project, when, {"spans": [phrase_span(when, "March")]},
                   committed)
    client = client_for(ann1)
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    url = reverse("annotation:submission_correct", args=[wrong.pk])
    assert 'data-testid="recent-submissions"' in home and url in home
    page = client.get(url).content.decode()
    assert 'data-testid="correcting"' in page and 'data-testid="release"' not in page
    assert json.dumps({"spans": wrong.payload["spans"]}).replace('"', "&quot;") in page
    refused = client.post(url, {"payload": json.dumps({"spans": [[0, 10**6]]})})
    assert refused.status_code == 400
    assert 'data-testid="field-error-spans"' in refused.content.decode()
    right = {"spans": [phrase_span(when, "in March")]}
    # Answered 30 s ago; the correction's page measured 4 active seconds since.
    Submission.objects.filter(pk=wrong.pk).update(
        created_at=F("created_at") - timedelta(seconds=30))
    with committed():
        done = client.post(url, {"payload": json.dumps(right), "active_time_s": "4"})
    assert done.status_code == 302
    wrong.refresh_from_db()
    new = wrong.superseded_by
    assert wrong.payload == {"spans": [phrase_span(when, "March")]}  # kept as it was
    assert new.payload == right and new.assignment_id == wrong.assignment_id
    assert new.active_time_s == 4.0 and new.worker == ann1
    # paid once: the correction counts, the answer it replaced does not
    assert [row["total"] for row in pay.worker_earnings(worker=ann1)["rows"]] == [1]
    assert Submission.objects.filter(worker=ann1, item=when).count() == 2
    # a second tap on the correction's Submit: it was saved, and the page says so (it said
    # "You cannot correct this answer: this answer was corrected already.")
    twice = client.post(url, {"payload": json.dumps(right), "active_time_s": "4"}, follow=True)
    assert [str(m) for m in twice.context["messages"]][-1] == (
        "Corrected: your new answer replaces the old one (both are kept).")
    assert Submission.objects.filter(worker=ann1, item=when).count() == 2
    # a corrected answer cannot be corrected again; the correction itself can
    assert client.get(url).status_code == 302
    other = client.post(url, {"payload": json.dumps(wrong.payload)}, follow=True)
    assert [str(m) for m in other.context["messages"]][-1] == (
        "You cannot correct this answer: this answer was corrected already.")
    assert engine.submission_correctable(submission=new) == ""
    answer(ann2, newsqa_project, when, {"spans": [phrase_span(when, "in March")]}, committed)
    when.refresh_from_db()
    assert when.status == "done"
    agreement = Item.objects.get(stage__kind="newsqa_agreement", key=when.key)
    assert agreement.data["answers"] == [right, right]  # the newest answer of ann1
    assert agreement.result["agreed"] is True
    # the item is closed now: no more corrections
    new = Submission.objects.get(pk=new.pk)
    assert "no longer open" in engine.submission_correctable(submission=new)
    with pytest.raises(engine.TaskError, match="no longer open"):
        engine.submission_correct(submission_id=new.pk, worker=ann1, payload=right)


def test_a_corrections_active_time_is_held_to_the_time_since_the_answer(
        newsqa_project, workers, committed, when, settings):
    """No lease runs while a worker corrects: their page's measure is held to the time since
    the answer they correct, and to a task's lease at most."""
    ann1 = workers["ann1"]
    wrong = answer(ann1, newsqa_project, when, {"spans": [phrase_span(when, "March")]},
                   committed)
    right = {"spans": [phrase_span(when, "in March")]}
    Submission.objects.filter(pk=wrong.pk).update(
        created_at=F("created_at") - timedelta(seconds=40))
    with committed():
        new = engine.submission_correct(submission_id=wrong.pk, worker=ann1, payload=right,
                                        active_time_s=10**6)
    assert 40 <= new.active_time_s < 50
    settings.CROWDQA_LEASE_MINUTES = 1
    Submission.objects.filter(pk=new.pk).update(created_at=F("created_at") - timedelta(hours=5))
    with committed():
        newer = engine.submission_correct(submission_id=new.pk, worker=ann1, payload=right,
                                          active_time_s="7200")
    assert newer.active_time_s == 60.0
    with pytest.raises(ValidationError, match="active_time_s: -1 is not a time"):
        engine.submission_correct(submission_id=newer.pk, worker=ann1, payload=right,
                                  active_time_s="-1")


def test_only_the_workers_own_last_answer_can_be_corrected(newsqa_project, workers, committed,
                                                           client_for, when):
    ann1, ann2 = workers["ann1"], workers["ann2"]
    first = answer(ann1, newsqa_project, when, {"spans": [phrase_span(when, "March")]},
                   committed)
    with pytest.raises(engine.TaskError, match="not yours"):
        engine.submission_correct(submission_id=first.pk, worker=ann2, payload=first.payload)
    assert client_for(ann2).get(
        reverse("annotation:submission_correct", args=[first.pk])).status_code == 404
    who = Item.objects.get(stage__kind="newsqa_answer", document=when.document,
                           data__question="Who opposed the plan?")
    answer(ann1, newsqa_project, who, {"no_answer": True}, committed)
    assert "only your last answer" in engine.submission_correctable(submission=first)
    recent = engine.worker_recent_submissions(worker=ann1)
    assert [r["correctable"] for r in recent] == [True, False]
    with pytest.raises(engine.TaskError, match="only your last answer"):
        engine.submission_correct(submission_id=first.pk, worker=ann1, payload=first.payload)


def test_server_errors_are_shown_next_to_their_field():
    assert field_errors(["choice: pick one", "spans[2]: outside", "question 2: too easy",
                         "no field here", "decision: choose exclude"]) == {
        "choice": ["pick one"], "spans": ["outside"], "question_by_number": {2: ["too easy"]},
        "decision": ["choose exclude"]}


def test_validation_page_submits_on_enter_and_refusals_name_the_field(
        newsqa_project, workers, committed, client_for, when):
    Stage.objects.filter(project=newsqa_project, kind="newsqa_answer").update(
        params={**when.stage.params, "max_extra_answers": 0})
    answer(workers["ann1"], newsqa_project, when, {"spans": [phrase_span(when, "March")]},
           committed)
    answer(workers["ann2"], newsqa_project, when, {"no_answer": True}, committed)
    validation = Item.objects.get(stage__kind="newsqa_validate")
    task = claim_item(workers["val1"], newsqa_project, validation)
    client = client_for(workers["val1"])
    url = reverse("annotation:task_detail", args=[task.pk])
    page = client.get(url).content.decode()
    assert "data-enter-submits" in page and "then <kbd>Enter</kbd>" in page
    assert 'data-missing="Choose an answer first' in page
    refused = client.post(url, {"choice": "7"})
    body = refused.content.decode()
    assert refused.status_code == 400 and 'data-testid="field-error-choice"' in body
    assert "Pick one of the 2 answers" in body


@pytest.mark.django_db(transaction=True)
def test_a_correction_racing_the_completing_submit_is_either_used_or_refused(news_corpus,
                                                                              settings):
    """PostgreSQL row locks: the correction locks the item as a submit does, so agreement
    reads the correction when it came first, and a correction after completion is refused;
    never a correction recorded that agreement did not use."""
    import threading

    from django.db import connection, connections

    from annotation.roles import Role
    from annotation.stages import Emit
    from collector.models import Document
    from tests.factories import user_with_roles

    if connection.vendor != "postgresql":
        pytest.skip("row-lock concurrency needs PostgreSQL (DATABASE_URL=postgres://...)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "memory://"
    project = engine.project_create(name="Race", recipe="newsqa", corpus=news_corpus,
                                    params={4: {"max_extra_answers": 0}})
    project.status = "active"
    project.save(update_fields=["status"])
    doc = Document.objects.filter(corpus=news_corpus).first()
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk) for n in range(8)])
    first, second = (user_with_roles(name, Role.ANNOTATOR) for name in ("w1", "w2"))
    for user in (first, second):
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    correction = {"spans": [[0, 8]]}
    outcomes = []
    for item in Item.objects.filter(stage__kind="newsqa_answer").order_by("id"):
        old = engine.task_submit(assignment_id=claim_item(first, project, item).pk,
                                 worker=first, payload={"no_answer": True})
        other = claim_item(second, project, item)
        start, errors = threading.Barrier(2), []

        def correct(old=old, start=start, errors=errors):
            start.wait()
            try:
                engine.submission_correct(submission_id=old.pk, worker=first,
                                          payload=correction)
            except engine.TaskError as exc:
                errors.append(str(exc))
            finally:
                connections.close_all()

        def complete(other=other, start=start):
            start.wait()
            try:
                engine.task_submit(assignment_id=other.pk, worker=second,
                                   payload={"no_answer": True})
            finally:
                connections.close_all()

        threads = [threading.Thread(target=correct), threading.Thread(target=complete)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        old.refresh_from_db()
        agreement = Item.objects.get(stage__kind="newsqa_agreement", key=item.key)
        corrected = old.superseded_by_id is not None
        assert corrected != bool(errors), errors
        assert (agreement.data["answers"][0] == correction) is corrected
        outcomes.append(corrected)
    assert len(outcomes) == 8
