"""A security round with untrusted workers: what a worker an admin stopped (blocked or
paused in the project, or on a stage) can still change, and what other findings need."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import engine, quality, studies
from annotation.models import (
    Assignment,
    ExternalAccount,
    Item,
    ProjectMember,
    StudySession,
    Submission,
    WorkerStage,
)
from annotation.roles import Role
from tests.annotation.test_newsqa_flow import _write_questions, claim_item, phrase_span
from tests.annotation.test_studies import answer_items, api, arrive, csrf_client, prolific


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


# Completion codes: giving back every task empties a worker's queue; that is no work done.

@pytest.fixture
def study_project(newsqa_project):
    answer_items(newsqa_project, 6)
    return newsqa_project


def _release_everything(client) -> int:
    """Through the API, as a script would: give back each task the claim brings, until
    none comes; how many were given back."""
    released = 0
    while True:
        task = api(client, "post", "/api/v1/tasks/next/")
        if task.status_code == 204:
            return released
        assert task.status_code == 200, task.content
        given = api(client, "post", f"/api/v1/tasks/{task.json()['id']}/release/")
        assert given.status_code == 204, given.content
        released += 1


@pytest.mark.parametrize("no_work_code", ["", "EMPTY1"])
def test_a_worker_who_gives_back_every_task_gets_no_completion_code(study_project,
                                                                     no_work_code):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="FULL1", no_work_code=no_work_code)
    client = csrf_client()
    arrive(client, study, prolific())  # the arrival claims their first task
    assert _release_everything(client) > 1
    page = client.get("/tasks/next/").content.decode()
    assert "FULL1" not in page and "EMPTY1" not in page
    assert 'data-testid="screened-out"' in page
    assert 'data-testid="screened-out-why"' in page and "gave back" in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.SCREENED_OUT
    # A new session (another SESSION_ID typed into the link) finds no code either.
    again = csrf_client()
    arrive(again, study, prolific(session="sess2"))
    page = again.get("/tasks/next/").content.decode()
    assert "FULL1" not in page and "EMPTY1" not in page
    assert 'data-testid="screened-out"' in page


def test_a_worker_who_did_the_work_and_gave_one_back_gets_the_no_work_code(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="FULL1", no_work_code="EMPTY1")
    # Answer tasks only (the article's question tasks want questions, not this answer).
    Assignment.objects.filter(status="open", stage__kind="newsqa_question").update(
        status="cancelled")
    client = csrf_client()
    arrive(client, study, prolific())
    held = api(client, "post", "/api/v1/tasks/next/").json()["id"]
    assert api(client, "post", f"/api/v1/tasks/{held}/release/").status_code == 204
    while True:  # then everything else, answered
        task = api(client, "post", "/api/v1/tasks/next/")
        if task.status_code == 204:
            break
        done = api(client, "post", f"/api/v1/tasks/{task.json()['id']}/submit/",
                   {"payload": {"no_answer": True}})
        assert done.status_code == 201, done.content
    page = client.get("/tasks/next/").content.decode()
    assert "cc=EMPTY1" in page and 'data-testid="screened-out"' not in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.NO_WORK


# The new-workers-per-hour limit: one IPv6 client holds a whole /64 (2^64 addresses).

def test_new_workers_from_one_ipv6_network_share_one_hourly_count(study_project, settings):
    from django.core.cache import cache
    from django.test import Client

    cache.clear()
    settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = 2
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    ids = [f"5f1a2b3c4d5e6f708192a3c{n}" for n in range(4)]

    def from_address(address: str, n: int):
        browser = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
        return arrive(browser, study, prolific(pid=ids[n], session=f"s{n}"))

    # Three addresses of one /64, as one host may pick at will: the third is refused.
    assert from_address("2001:db8:1:2::1", 0).status_code == 302
    assert from_address("2001:db8:1:2:aaaa::2", 1).status_code == 302
    refused = from_address("2001:db8:1:2:ffff:ffff:ffff:fffe", 2)
    assert refused.status_code == 429
    assert not ExternalAccount.objects.filter(external_id=ids[2]).exists()
    # Another /64 is another network; IPv4 addresses still count one by one.
    assert from_address("2001:db8:1:3::1", 2).status_code == 302
    assert from_address("192.0.2.7", 3).status_code == 302


# Sign-ups through an invite link: an open link (no use limit) is as open as a study link.

def _signup(client, invite, username: str, email: str = ""):
    from tests.annotation.test_invites import NEW_PASSWORD

    return client.post(reverse("annotation:invite_join", args=[invite.token]), {
        "username": username, "email": email, "password1": NEW_PASSWORD,
        "password2": NEW_PASSWORD, "agree": "on"})


def test_new_accounts_from_one_address_through_an_invite_link_are_limited_per_hour(
        settings, mailoutbox, annotator, client_for):
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client

    from annotation import invites

    cache.clear()
    settings.CROWDQA_INVITE_SIGNUPS_PER_HOUR = 2
    project = engine.project_create(name="Harbor news", recipe="newsqa")
    invite = invites.invite_create(project=project, role="annotator")
    users = get_user_model().objects
    one = Client(REMOTE_ADDR="198.51.100.4")
    assert _signup(one, invite, "bot1").status_code == 302
    assert _signup(Client(REMOTE_ADDR="198.51.100.4"), invite, "bot2").status_code == 302
    refused = _signup(Client(REMOTE_ADDR="198.51.100.4"), invite, "bot3")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    page = refused.content.decode()
    assert "Too many accounts were made from your network address this hour" in page
    assert not users.filter(username="bot3").exists()
    # A link that confirms addresses by mail sends none past the limit either.
    by_mail = invites.invite_create(project=project, role="annotator",
                                    allowed_domains=["uni.edu"])
    assert _signup(Client(REMOTE_ADDR="198.51.100.4"), by_mail, "bot4",
                   "victim@uni.edu").status_code == 429
    assert mailoutbox == [] and not users.filter(username="bot4").exists()
    # Other addresses have their own count; a signed-in user joining makes no account.
    assert _signup(Client(REMOTE_ADDR="198.51.100.5"), invite, "maria").status_code == 302
    joined = client_for(annotator).post(
        reverse("annotation:invite_join", args=[invite.token]), {"agree": "on"},
        REMOTE_ADDR="198.51.100.4")
    assert joined.status_code == 302
    assert ProjectMember.objects.filter(project=project, user=annotator).exists()
    settings.CROWDQA_INVITE_SIGNUPS_PER_HOUR = 0  # no limit
    assert _signup(Client(REMOTE_ADDR="198.51.100.4"), invite, "bot5").status_code == 302


# A marketplace worker whose account an admin deactivated (Django admin, "Active" unticked).

def test_a_deactivated_marketplace_worker_coming_back_starts_nothing_and_holds_no_task(
        study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    first = csrf_client()
    arrive(first, study, prolific(session="a"))
    account = ExternalAccount.objects.get(external_id=prolific()["PROLIFIC_PID"]).user
    held = Assignment.objects.get(worker=account, status="active")
    engine.task_release(assignment_id=held.pk, worker=account)
    account.is_active = False
    account.save(update_fields=["is_active"])
    again = csrf_client()
    refused = arrive(again, study, prolific(session="b"))
    assert refused.status_code == 409
    assert "account is closed" in refused.content.decode()
    assert not Assignment.objects.filter(worker=account, status="active").exists()
    assert not StudySession.objects.filter(session_key="b").exists()
    assert "_auth_user_id" not in again.session


# Counts that leak: which project ids exist, to a worker who is not their member.

def test_the_api_claim_answers_another_projects_id_as_it_answers_a_missing_one(
        newsqa_project, annotator):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    missing = api.post("/api/v1/tasks/next/", {"project": 10**12}, format="json")
    theirs = api.post("/api/v1/tasks/next/", {"project": newsqa_project.pk}, format="json")
    assert missing.status_code == theirs.status_code == 400
    assert theirs.json() == {"project": [
        f'Invalid pk "{newsqa_project.pk}" - object does not exist.']}
    # A member with nothing waiting for them still gets 204.
    engine.project_member_add(project=newsqa_project, user=annotator, role=Role.ANNOTATOR)
    ProjectMember.objects.filter(user=annotator).update(status="paused")
    assert api.post("/api/v1/tasks/next/", {"project": newsqa_project.pk},
                    format="json").status_code == 204


def test_behind_a_proxy_the_new_workers_limit_counts_each_client(study_project, settings):
    """CROWDQA_PROXY_COUNT=1: the hourly limit counts the client X-Forwarded-For names,
    not the proxy every request comes through (all of a study's crowd would share it)."""
    from django.core.cache import cache
    from django.test import Client

    cache.clear()
    settings.AXES_IPWARE_PROXY_COUNT = 1
    settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = 1
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    ids = [f"5f1a2b3c4d5e6f708192a3c{n}" for n in range(3)]

    def through_the_proxy(forwarded: str, n: int):
        browser = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.2",
                         HTTP_X_FORWARDED_FOR=forwarded)
        return arrive(browser, study, prolific(pid=ids[n], session=f"s{n}"))

    assert through_the_proxy("198.51.100.1", 0).status_code == 302
    assert through_the_proxy("198.51.100.2", 1).status_code == 302
    # the first client again, with a made-up address of its own to the left
    assert through_the_proxy("192.0.2.9, 198.51.100.1", 2).status_code == 429
