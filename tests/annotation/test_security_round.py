"""A security round with untrusted workers: what a worker an admin stopped (blocked or
paused in the project, or on a stage) can still change, and what other findings need."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import engine, quality
from annotation.models import Item, ProjectMember, Submission, WorkerStage
from tests.annotation.test_newsqa_flow import _write_questions, claim_item, phrase_span


@pytest.fixture
def when(newsqa_project, workers, committed):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    return Item.objects.get(stage__kind="newsqa_answer", document=article.document,
                            data__question="When will the builders begin work?")


def _answered(worker, project, item, committed) -> Submission:
    task = claim_item(worker, project, item)
    with committed():
        return engine.task_submit(assignment_id=task.pk, worker=worker,
                                  payload={"spans": [phrase_span(item, "March")]})


def _stop(how: str, worker, project, item, admin) -> None:
    member = ProjectMember.objects.get(project=project, user=worker)
    if how in ("blocked", "paused"):
        engine.member_status_set(member=member, status=how, actor=admin)
    else:  # blocked on the answer stage only, by the admin's decision on the workers page
        standing = quality.standing_for(member=member, stage=item.stage)
        engine.standing_decide(standing=standing, action="block", actor=admin)


@pytest.mark.parametrize("how", ["blocked", "paused", "blocked on the stage"])
def test_a_stopped_worker_can_no_longer_correct_their_answer(
        newsqa_project, workers, committed, client_for, admin_user, when, how):
    ann1 = workers["ann1"]
    answered = _answered(ann1, newsqa_project, when, committed)
    assert engine.submission_correctable(submission=answered) == ""  # before: they may
    _stop(how, ann1, newsqa_project, when, admin_user)
    if how == "blocked on the stage":
        assert WorkerStage.objects.get(member__user=ann1, stage=when.stage).status == "blocked"
    answered.refresh_from_db()
    assert "paused or stopped" in engine.submission_correctable(submission=answered)

    client = client_for(ann1)
    url = reverse("annotation:submission_correct", args=[answered.pk])
    other = {"spans": [phrase_span(when, "in March")]}
    with committed():
        refused = client.post(url, {"payload": json.dumps(other)})
    assert refused.status_code == 302  # back to their page, with why
    assert Submission.objects.filter(worker=ann1, item=when).count() == 1
    answered.refresh_from_db()
    assert answered.superseded_by_id is None
    with pytest.raises(engine.TaskError, match="paused or stopped"):
        engine.submission_correct(submission_id=answered.pk, worker=ann1, payload=other)
    # and their page offers no correction any more
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    assert url not in home


def test_a_resumed_worker_may_correct_again(newsqa_project, workers, committed, admin_user,
                                             when):
    ann1 = workers["ann1"]
    answered = _answered(ann1, newsqa_project, when, committed)
    member = ProjectMember.objects.get(project=newsqa_project, user=ann1)
    engine.member_status_set(member=member, status="paused", actor=admin_user)
    engine.member_status_set(member=member, status="active", actor=admin_user)
    answered.refresh_from_db()
    assert engine.submission_correctable(submission=answered) == ""
