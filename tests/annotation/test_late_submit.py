"""A submit after the task's lease ran out: accepted while the item still waits for the
answer and nobody took its slot meanwhile, refused (nothing written) otherwise."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import engine
from annotation.models import Assignment, ProjectMember, Submission
from tests.annotation.test_newsqa_flow import claim, claim_item

QUESTIONS = {"questions": ["Who opposed the plan?"]}


def _expire(task: Assignment) -> None:
    Assignment.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert engine.leases_expire() == 1


def test_a_late_submit_whose_slot_is_still_open_is_accepted(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    submission = engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                                    payload=QUESTIONS, active_time_s="40")
    assert submission.payload == QUESTIONS
    assert submission.worker == workers["ann1"] and submission.item_id == task.item_id
    # The expired slot stays in the history; its replacement carries the answer, claimed
    # when the worker claimed the task.
    task.refresh_from_db()
    assert task.status == "expired"
    slot = Assignment.objects.get(pk=submission.assignment_id)
    assert slot.pk != task.pk and slot.status == "submitted"
    assert slot.worker == workers["ann1"] and slot.claimed_at == task.claimed_at
    assert not task.item.assignments.filter(status__in=["open", "active"]).exists()
    # Nobody else gets the item now.
    other = engine.task_claim(worker=workers["ann2"], project=newsqa_project)
    assert other is None or other.item_id != task.item_id


def test_a_late_submit_before_the_lease_job_ran_is_accepted(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    Assignment.objects.filter(pk=task.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    submission = engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                                    payload=QUESTIONS)
    assert submission.assignment_id == task.pk
    task.refresh_from_db()
    assert task.status == "submitted"


def test_a_late_submit_whose_slot_another_worker_took_is_refused(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    taken = claim(workers["ann2"], newsqa_project)
    assert taken.item_id == task.item_id
    with pytest.raises(engine.TaskError, match="another worker took it"):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"], payload=QUESTIONS)
    assert not Submission.objects.filter(item_id=task.item_id).exists()
    taken.refresh_from_db()
    assert taken.status == "active" and taken.worker == workers["ann2"]


def test_a_late_submit_to_an_item_answered_meanwhile_is_refused(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    taken = claim(workers["ann2"], newsqa_project)
    engine.task_submit(assignment_id=taken.pk, worker=workers["ann2"], payload=QUESTIONS)
    with pytest.raises(engine.TaskError, match="needs no more answers"):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"], payload=QUESTIONS)
    assert Submission.objects.filter(item_id=task.item_id).count() == 1


def test_a_late_submit_is_validated_as_any_and_leaves_nothing_half_written(
        newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    with pytest.raises(ValidationError):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"],
                           payload={"questions": ["Why is the sky blue today?"]})
    # The slot is still open for anyone, the claim not counted again.
    assert task.item.assignments.filter(status="open", worker__isnull=True).count() == 1
    assert not task.item.assignments.filter(status="active").exists()
    assert claim(workers["ann2"], newsqa_project).item_id == task.item_id


def test_a_paused_worker_late_submit_is_refused(newsqa_project, workers):
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    ProjectMember.objects.filter(project=newsqa_project, user=workers["ann1"]).update(
        status=ProjectMember.Status.PAUSED)
    with pytest.raises(engine.TaskError, match="ran out"):
        engine.task_submit(assignment_id=task.pk, worker=workers["ann1"], payload=QUESTIONS)
    assert task.item.assignments.filter(status="open").count() == 1


def test_a_late_submit_over_the_api_follows_the_same_rule(newsqa_project, workers):
    api = APIClient()
    api.force_authenticate(workers["ann1"])
    task = claim(workers["ann1"], newsqa_project)
    _expire(task)
    url = reverse("api_task_submit", kwargs={"pk": task.pk})
    accepted = api.post(url, {"payload": QUESTIONS}, format="json")
    assert accepted.status_code == 201, accepted.content
    assert Submission.objects.get(pk=accepted.json()["submission"]).worker == workers["ann1"]

    second = claim(workers["ann1"], newsqa_project)
    _expire(second)
    claim_item(workers["ann2"], newsqa_project, second.item)
    refused = api.post(reverse("api_task_submit", kwargs={"pk": second.pk}),
                       {"payload": QUESTIONS}, format="json")
    assert refused.status_code == 409
    assert "another worker took it" in refused.json()["errors"][0]


def test_the_task_page_saves_a_late_answer_whose_slot_is_still_open(
        client_for, newsqa_project, workers, committed):
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=workers["questioner"], status="active")
    _expire(task)
    with committed():
        saved = client.post(location, {"question": ["Who opposed the plan?"]}, follow=True)
    assert saved.status_code == 200
    assert "Saved." in saved.content.decode()
    assert Submission.objects.get(worker=workers["questioner"]).payload == QUESTIONS


def test_a_refused_late_answer_stays_on_the_page_to_copy(
        client_for, newsqa_project, workers):
    client = client_for(workers["questioner"])
    location = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=workers["questioner"], status="active")
    _expire(task)
    claim_item(workers["ann1"], newsqa_project, task.item)
    refused = client.post(location, {"question": ["Who opposed the <plan>?", ""],
                                     "active_time_s": "50"})
    assert refused.status_code == 409
    page = refused.content.decode()
    assert "another worker took it" in page
    assert 'data-testid="typed-question"' in page
    assert "Who opposed the &lt;plan&gt;?" in page  # as typed, escaped
    assert "active_time_s" not in page and "csrfmiddlewaretoken" not in page.split(
        'data-testid="submit-refused"')[1]
    assert reverse("annotation:annotator_home") in page
    assert not Submission.objects.exists()
