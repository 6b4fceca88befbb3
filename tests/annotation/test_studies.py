"""Marketplace studies: arrivals from Prolific and MTurk, consent, quotas, completion codes,
and the limits the claim enforces (per stage, per session, paused members)."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import engine, gold, studies
from annotation.models import (
    Assignment,
    ExternalAccount,
    ProjectMember,
    Study,
    StudySession,
    WorkerStage,
)
from annotation.roles import Role
from annotation.stages import Emit
from tests.annotation.test_gold import build, training_jsonl
from tests.annotation.test_quality import gold_item, weiss

PID = "5f1a2b3c4d5e6f708192a3b4"


def answer_items(project, n: int) -> None:
    """``n`` answer items (two slots each) of the project's first article."""
    question_stage = project.stages.get(kind="newsqa_question")
    doc_id = project.items.filter(stage=question_stage).values_list("document_id", flat=True)[0]
    engine.items_emit(source_stage=question_stage, emits=[
        Emit(kind="newsqa_answer", key=f"s{n}", data={"question": f"Question {n}?"},
             document_id=doc_id) for n in range(n)])


@pytest.fixture
def study_project(newsqa_project):
    answer_items(newsqa_project, 6)
    return newsqa_project


def prolific(pid: str = PID, session: str = "sess1", study: str = "st1") -> dict[str, str]:
    return {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}


def mturk(worker: str = "A1B2C3D4E5F6G7", assignment: str = "3ASSIGN1",
          submit_to: str = "https://workersandbox.mturk.com") -> dict[str, str]:
    return {"workerId": worker, "assignmentId": assignment, "hitId": "3HIT",
            "turkSubmitTo": submit_to}


def arrive(client: Client, study: Study, params: dict[str, str]):
    """Open the study link, then press "I agree" (the form posts the parameters back)."""
    path = studies.study_path(study)
    page = client.get(path, params)
    assert page.status_code == 200, page.content.decode()
    signed_in = "_auth_user_id" in client.session  # then the header has "Sign out" too
    assert page.content.decode().count('type="submit"') == 1 + signed_in
    token = client.cookies["csrftoken"].value
    return client.post(path + "?" + "&".join(f"{k}={v}" for k, v in params.items()),
                       {**params, "csrfmiddlewaretoken": token})


def csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def api(client: Client, method: str, path: str, data=None):
    token = client.cookies["csrftoken"].value
    return getattr(client, method)(path, data or {}, content_type="application/json",
                                   HTTP_X_CSRFTOKEN=token)


def test_study_create_prints_the_entry_path_last(study_project):
    out = io.StringIO()
    call_command("study_create", "--project", study_project.name, "--platform", "prolific",
                 "--completion-code", "C1AB2CD3", "--quota", "3", stdout=out)
    last = out.getvalue().strip().splitlines()[-1]
    study = Study.objects.get()
    assert last == f"/study/{study.token}/" and last.startswith("/")
    assert (study.platform, study.completion_code, study.quota) == ("prolific", "C1AB2CD3", 3)
    with pytest.raises(CommandError, match="no project named 'nope'"):
        call_command("study_create", "--project", "nope", "--platform", "mturk",
                     "--completion-code", "X")
    with pytest.raises(CommandError) as refused:
        call_command("study_create", "--project", study_project.name, "--platform", "mturk",
                     "--completion-code", "has space")
    for args, says in ((["--quota", str(10**20)], "--quota: 100000000000000000000 tasks per "
                                                  "session is more than 2,147,483,647"),
                       (["--name", "x" * 201], "--name: at most 200 characters (201 given)")):
        with pytest.raises(CommandError, match=re.escape(says)):
            call_command("study_create", "--project", study_project.name, "--platform",
                         "prolific", "--completion-code", "C1AB2CD3", *args)
    assert Study.objects.count() == 1
    # The option is named as typed; the message's own words are left as they are.
    assert str(refused.value).startswith("--completion-code: 'has space' is not a code")
    assert "letters, digits, '_' and '-'" in str(refused.value)


def test_a_prolific_worker_consents_works_to_the_quota_and_gets_the_code(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C1AB2CD3", quota=2)
    study_project.consent = "**Please read**: we keep your answers."
    study_project.save()
    client = csrf_client()
    consent = client.get(studies.study_path(study), prolific()).content.decode()
    assert "<strong>Please read</strong>" in consent and "I agree" in consent
    landed = arrive(client, study, prolific())
    assert landed.status_code == 302 and "/tasks/" in landed["Location"]
    account = ExternalAccount.objects.get(platform="prolific", external_id=PID)
    assert not account.user.has_usable_password()
    assert PID not in account.user.username  # the external id stays out of names
    member = ProjectMember.objects.get(user=account.user, project=study_project)
    assert (member.source, member.role, member.session_limit) == ("prolific", "annotator", 2)
    me = api(client, "get", "/api/v1/me/").json()
    assert me["id"] == account.user.pk and "annotator" in me["roles"]
    # Through the API with the session and the CSRF header, as any annotator; each submit
    # asks for the next task: the first answer brings the second task, and the quota of 2
    # holds on that path too, so the second brings none.
    task = api(client, "post", "/api/v1/tasks/next/")
    assert task.status_code == 200
    held = task.json()["id"]
    for brings_next in (True, False):
        done = api(client, "post", f"/api/v1/tasks/{held}/submit/",
                   {"payload": {"no_answer": True}, "next": True})
        assert done.status_code == 201, done.content
        assert (done.json()["next"] is not None) is brings_next
        held = done.json()["next"] and done.json()["next"]["id"]
    assert api(client, "post", "/api/v1/tasks/next/").status_code == 204  # quota done
    page = client.get("/tasks/next/").content.decode()
    assert "C1AB2CD3" in page
    assert "https://app.prolific.com/submissions/complete?cc=C1AB2CD3" in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.QUOTA
    # Without the CSRF header the session may not claim.
    assert client.post("/api/v1/tasks/next/", {}, content_type="application/json"
                       ).status_code == 403


def test_the_same_prolific_id_is_the_same_account_and_a_new_session_a_new_quota(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=1)
    first = csrf_client()
    arrive(first, study, prolific(session="a"))
    user_id = api(first, "get", "/api/v1/me/").json()["id"]
    task = api(first, "post", "/api/v1/tasks/next/").json()
    api(first, "post", f"/api/v1/tasks/{task['id']}/submit/", {"payload": {"no_answer": True}})
    assert api(first, "post", "/api/v1/tasks/next/").status_code == 204
    # The same worker comes back in a new Prolific session, from another browser.
    again = csrf_client()
    arrive(again, study, prolific(session="b"))
    assert api(again, "get", "/api/v1/me/").json()["id"] == user_id
    assert ExternalAccount.objects.count() == 1 and StudySession.objects.count() == 2
    second = api(again, "post", "/api/v1/tasks/next/").json()
    items = Assignment.objects.filter(pk__in=[task["id"], second["id"]]).values_list(
        "item_id", flat=True)
    assert len(set(items)) == 2  # their history stays: never the same item twice


def test_two_tabs_share_one_session_and_one_live_task(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    client = csrf_client()
    first = arrive(client, study, prolific())
    # The consent page was open in a second tab too: "I agree" there as well.
    path = studies.study_path(study)
    second = client.post(path, {**prolific(),
                                "csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert first["Location"] == second["Location"]
    # Opening the link again once agreed goes straight on.
    assert client.get(path, prolific())["Location"] == reverse("annotation:task_next")
    assert StudySession.objects.count() == 1
    assert Assignment.objects.filter(status="active").count() == 1
    member = ProjectMember.objects.get(source="prolific")
    assert member.session_taken == 1


def test_nothing_left_gives_the_no_work_code(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="FULL1", no_work_code="EMPTY1",
                                 no_work_completes=False)
    Assignment.objects.filter(status="open").update(status="cancelled")
    client = csrf_client()
    landed = arrive(client, study, prolific())
    assert landed["Location"] == reverse("annotation:task_next")
    page = client.get(landed["Location"]).content.decode()
    assert "EMPTY1" in page and "FULL1" not in page and "cc=EMPTY1" in page
    assert "No work is left" in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.NO_WORK
    # The home page sends marketplace workers to the same place.
    assert client.get(reverse("annotation:annotator_home"))["Location"] == "/tasks/next/"


def work_through_the_api(client: Client, tasks: int) -> None:
    for _ in range(tasks):
        task = api(client, "post", "/api/v1/tasks/next/")
        assert task.status_code == 200, task.content
        done = api(client, "post", f"/api/v1/tasks/{task.json()['id']}/submit/",
                   {"payload": {"no_answer": True}})
        assert done.status_code == 201, done.content


@pytest.mark.parametrize("looks_again", [True, False],
                         ids=["sees-work-come-back", "goes-straight-on"])
def test_work_that_comes_back_after_none_was_left_ends_in_the_completion_code(
        study_project, looks_again):
    """Nothing was left when the worker came (the no-work code); then other workers'
    tasks came back, and the worker did their quota: the completion code, and the session
    counts as a quota done, whether or not they looked at the next-task page between."""
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="FULL1", no_work_code="EMPTY1", quota=2)
    Assignment.objects.filter(status="open").update(status="cancelled")
    client = csrf_client()
    arrive(client, study, prolific())
    assert "EMPTY1" in client.get("/tasks/next/").content.decode()
    Assignment.objects.filter(status="cancelled").update(status="open")
    if looks_again:
        page = client.get("/tasks/next/").content.decode()
        assert 'data-testid="next-task"' in page and "EMPTY1" not in page
        session = StudySession.objects.get()
        assert (session.outcome, session.finished_at) == (StudySession.Outcome.WORKING, None)
    work_through_the_api(client, 2)
    page = client.get("/tasks/next/").content.decode()
    assert "You have finished this session" in page
    assert "cc=FULL1" in page and "EMPTY1" not in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.QUOTA


def test_a_worker_in_two_studies_gets_the_code_of_the_study_they_come_back_by(
        study_project, news_corpus, admin_user, committed):
    """A Prolific worker takes a second study (another project) while the first session is
    open, finishes both, and opens the first study's link again: its code, not the last."""
    other = engine.project_create(name="NewsQA second", recipe="newsqa", corpus=news_corpus,
                                  user=admin_user)
    with committed():
        engine.project_start(project=other, actor=admin_user)
    answer_items(other, 2)
    first = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="FIRST1", quota=2)
    second = studies.study_create(project=other, platform="prolific",
                                  completion_code="SECOND2", quota=1)
    client = csrf_client()
    arrive(client, first, prolific(session="sessB", study="st1"))
    api(client, "post", f"/api/v1/tasks/{Assignment.objects.get(status='active').pk}/release/")
    arrive(client, second, prolific(session="sessX", study="st2"))
    work_through_the_api(client, 1)
    assert "cc=SECOND2" in client.get("/tasks/next/").content.decode()
    # Back by the first study's link: its session, its quota, its code.
    back = client.get(studies.study_path(first), prolific(session="sessB", study="st1"))
    assert back["Location"] == reverse("annotation:task_next")
    page = client.get(back["Location"]).content.decode()
    assert "cc=FIRST1" not in page and "cc=SECOND2" not in page
    assert 'data-testid="next-task"' in page and f'value="{study_project.pk}"' in page
    work_through_the_api(client, 2)
    page = client.get("/tasks/next/").content.decode()
    assert "cc=FIRST1" in page and "SECOND2" not in page
    outcomes = dict(StudySession.objects.values_list("session_key", "outcome"))
    assert outcomes == {"sessB": "quota", "sessX": "quota"}


def test_mturk_preview_shows_a_sample_and_claims_nothing(study_project):
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MT1")
    client = csrf_client()
    page = client.get(studies.study_path(study),
                      mturk(assignment=studies.PREVIEW_ASSIGNMENT))
    content = page.content.decode()
    assert page.status_code == 200 and 'data-testid="preview"' in content
    assert "<fieldset disabled" in content and "I agree" not in content
    assert not Assignment.objects.filter(status="active").exists()
    assert not ExternalAccount.objects.exists() and not StudySession.objects.exists()
    assert "_auth_user_id" not in client.session


def test_mturk_worker_finishes_with_a_form_to_the_submit_url(study_project):
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MT1", quota=1)
    client = csrf_client()
    arrive(client, study, mturk())
    task = api(client, "post", "/api/v1/tasks/next/").json()
    api(client, "post", f"/api/v1/tasks/{task['id']}/submit/", {"payload": {"no_answer": True}})
    page = client.get("/tasks/next/").content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    assert 'name="assignmentId" value="3ASSIGN1"' in page and "MT1" in page
    assert ExternalAccount.objects.get().platform == "mturk"


@pytest.mark.parametrize(("params", "status", "says"), [
    ({"STUDY_ID": "s", "SESSION_ID": "x"}, 400, "PROLIFIC_PID: missing"),
    (prolific(pid="{{%PROLIFIC_PID%}}"), 400, "placeholder"),
    (prolific(pid="a b"), 400, "not a valid id"),
    (prolific(session=""), 400, "SESSION_ID: missing"),
])
def test_malformed_prolific_links_get_a_clear_page(study_project, params, status, says):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C1")
    client = csrf_client()
    for response in (client.get(studies.study_path(study), params),
                     Client().post(studies.study_path(study), params)):
        assert response.status_code == status
        assert says in response.content.decode()
    assert not ExternalAccount.objects.exists()


def test_mturk_submit_url_must_be_mturk_and_unknown_or_closed_studies_say_so(study_project):
    study = studies.study_create(project=study_project, platform="mturk", completion_code="C")
    client = Client()
    evil = client.get(studies.study_path(study), mturk(submit_to="https://evil.example/x"))
    assert evil.status_code == 400 and "not an MTurk address" in evil.content.decode()
    assert client.get("/study/unknown-token/", prolific()).status_code == 404
    studies.study_close(study=study)
    closed = client.post(studies.study_path(study), mturk())
    assert closed.status_code == 410 and "closed" in closed.content.decode()
    assert not ExternalAccount.objects.exists()


def test_a_released_task_no_longer_counts_against_the_session(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C", quota=1)
    client = csrf_client()
    arrive(client, study, prolific())
    member = ProjectMember.objects.get(source="prolific")
    live = Assignment.objects.get(worker=member.user, status="active")
    engine.task_release(assignment_id=live.pk, worker=member.user)
    member.refresh_from_db()
    assert member.session_taken == 0
    again = engine.task_claim(worker=member.user, project=study_project)
    assert again is not None
    # An expired lease gives the count back too.
    engine.leases_expire(now=timezone.now() + timedelta(days=1))
    member.refresh_from_db()
    assert member.session_taken == 0


def test_a_task_whose_time_ran_out_does_not_end_the_session_with_the_code(study_project):
    """The quota counts the tasks a session took; a task whose lease ran out gives its
    count back, but only once it is expired (by the periodic job, or a claim that finds
    nothing open). Until then ``/tasks/next/`` took the quota as done: a worker who
    submitted 1 task of 2 got the completion code, and the session stayed "quota done"."""
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C1AB2CD3", quota=2)
    client = csrf_client()
    first = arrive(client, study, prolific())
    token = client.cookies["csrftoken"].value
    with_answer = client.post(first["Location"], {"flag": "no_answer",
                                                  "csrfmiddlewaretoken": token})
    assert with_answer.status_code == 302
    member = ProjectMember.objects.get(source="prolific")
    second = Assignment.objects.get(worker=member.user, status="active")
    Assignment.objects.filter(pk=second.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    page = client.get("/tasks/next/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "C1AB2CD3" not in body and 'data-testid="next-task"' in body
    assert "<strong>1</strong> of 2" in body
    assert StudySession.objects.get().outcome == StudySession.Outcome.WORKING
    # The worker takes a task again, finishes the quota and gets the code then.
    again = client.post(reverse("annotation:task_next"), {"project": study_project.pk,
                                                          "csrfmiddlewaretoken": token})
    assert again.status_code == 302 and again["Location"].startswith("/tasks/")
    done = client.post(again["Location"], {"flag": "no_answer", "csrfmiddlewaretoken": token},
                       follow=True)
    assert "C1AB2CD3" in done.content.decode()
    assert StudySession.objects.get().outcome == StudySession.Outcome.QUOTA


def test_stage_limit_and_paused_members(news_corpus, workers, admin_user, committed, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Limited", recipe="newsqa", corpus=news_corpus)
    answer_stage = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer_stage, params={"max_items_per_worker": 2})
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    answer_items(project, 5)
    worker = workers["ann1"]
    taken = []
    while (task := engine.task_claim(worker=worker, project=project)) is not None:
        assert task.stage_id == answer_stage.pk or task.stage.kind == "newsqa_question"
        taken.append(task.stage_id)
        engine.task_submit(assignment_id=task.pk, worker=worker,
                           payload={"no_answer": True} if task.stage_id == answer_stage.pk
                           else {"questions": ["Who voted against the plan?"]})
        if len(taken) > 10:
            break
    assert taken.count(answer_stage.pk) == 2
    member = ProjectMember.objects.get(user=worker, project=project)
    assert member.stage_taken == {str(answer_stage.pk): 2}
    assert not engine.work_waiting(worker=worker, project=project)
    # A paused member claims nothing at all.
    other = workers["ann2"]
    ProjectMember.objects.filter(user=other, project=project).update(status="paused")
    assert engine.work_waiting(worker=workers["ann3"], project=project)
    assert not engine.work_waiting(worker=other, project=project)
    assert engine.task_claim(worker=other, project=project) is None


def test_the_admin_pauses_blocks_and_resumes_a_member_from_the_members_page(
        news_corpus, workers, admin_user, client_for, committed, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Watched", recipe="newsqa", corpus=news_corpus)
    for user in workers.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    worker = workers["ann1"]
    live = engine.task_claim(worker=worker, project=project)
    assert live is not None
    member = ProjectMember.objects.get(user=worker, project=project)
    url = reverse("annotation:member_status", args=[member.pk])
    # Only admins decide; a bad status names the field.
    assert client_for(workers["ann2"]).post(url, {"status": "paused"}).status_code == 403
    admin = client_for(admin_user)
    bad = admin.post(url, {"status": "sleeping"})
    assert bad.status_code == 400 and b"status" in bad.content
    response = admin.post(url, {"status": "paused"}, follow=True)
    member.refresh_from_db()
    assert member.status == "paused"
    assert "1 live task went back to the pool." in response.content.decode()
    live.refresh_from_db()
    assert live.status == "released"
    # Its slot is open again for someone else; the paused member gets nothing.
    assert Assignment.objects.filter(item_id=live.item_id, stage_id=live.stage_id,
                                     status="open").exists()
    assert engine.task_claim(worker=worker, project=project) is None
    page = admin.get(reverse("annotation:project_members", args=[project.pk])).content.decode()
    assert f'data-testid="resume-{worker.username}"' in page
    admin.post(url, {"status": "blocked"})
    assert engine.task_claim(worker=worker, project=project) is None
    admin.post(url, {"status": "active"})
    assert engine.task_claim(worker=worker, project=project) is not None


def test_stage_limit_is_not_a_parameter_of_batched_stages(db):
    from annotation.stages import stage_kind

    assert "max_items_per_worker" in stage_kind("newsqa_answer").all_params()
    assert "max_items_per_worker" not in stage_kind("reco_evidence").all_params()
    assert "pay_rate" in stage_kind("reco_evidence").all_params()
    with pytest.raises(Exception, match="pay_model"):
        stage_kind("newsqa_answer").clean_params({"pay_model": "piecework"})


def _csp(response) -> dict[str, str]:
    return {part.split()[0]: part.strip()
            for part in response["Content-Security-Policy"].split(";") if part.strip()}


MTURK_FRAMERS = "frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"


def test_mturk_may_frame_its_workers_pages_and_take_the_completion_form(study_project):
    """MTurk shows an external HIT in an iframe and the HIT ends by posting to MTurk: the
    pages of an MTurk worker allow both, from MTurk's hosts only."""
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MT1", quota=1)
    client = csrf_client()
    consent = client.get(studies.study_path(study), mturk())
    preview = client.get(studies.study_path(study), mturk(assignment=studies.PREVIEW_ASSIGNMENT))
    landed = arrive(client, study, mturk())
    task_page = client.get(landed["Location"])
    task = api(client, "post", "/api/v1/tasks/next/")
    assert task.status_code == 200  # the API's JSON keeps the strict policy
    assert _csp(task)["frame-ancestors"] == "frame-ancestors 'none'"
    api(client, "post", f"/api/v1/tasks/{task.json()['id']}/submit/",
        {"payload": {"no_answer": True}})
    done = client.get("/tasks/next/")
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in done.content.decode()
    for page in (consent, preview, landed, task_page, done):
        assert "X-Frame-Options" not in page, page
        policy = _csp(page)
        assert policy["frame-ancestors"] == MTURK_FRAMERS
        assert policy["form-action"] == (
            "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com")


def test_every_other_page_keeps_refusing_frames(study_project, client_for, admin_user):
    prolific_study = studies.study_create(project=study_project, platform="prolific",
                                          completion_code="P1")
    client = csrf_client()
    pages = [client.get(studies.study_path(prolific_study), prolific())]
    pages.append(client.get(arrive(client, prolific_study, prolific())["Location"]))
    pages.append(client_for(admin_user).get(reverse("annotation:project_detail",
                                                    args=[study_project.pk])))
    pages.append(Client().get("/study/no-such-token/", mturk()))
    for page in pages:
        assert page["X-Frame-Options"] == "DENY"
        assert _csp(page)["frame-ancestors"] == "frame-ancestors 'none'"
        assert _csp(page)["form-action"] == "form-action 'self'"


def test_over_https_a_framed_workers_cookies_are_sent_inside_the_frame(study_project,
                                                                         settings):
    """Inside MTurk's frame the site is a third party: the browser sends its cookies only
    when they are SameSite=None (and Secure), so the session and CSRF cookies of an MTurk
    worker's pages are; everyone else's stay Lax."""
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MT1")
    client = Client(enforce_csrf_checks=True)
    path = studies.study_path(study)
    consent = client.get(path, mturk(), secure=True)
    assert consent.cookies["csrftoken"]["samesite"] == "None"
    assert consent.cookies["csrftoken"]["secure"] is True
    landed = client.post(path, {**mturk(), "csrfmiddlewaretoken":
                                client.cookies["csrftoken"].value}, secure=True,
                         HTTP_REFERER=f"https://testserver{path}")
    assert landed.status_code == 302, landed.content.decode()
    assert landed.cookies["sessionid"]["samesite"] == "None"
    assert landed.cookies["sessionid"]["secure"] is True
    assert landed.cookies["sessionid"]["httponly"] is True
    # A Prolific arrival over https: its cookies stay Lax.
    other = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="P1")
    page = Client().get(studies.study_path(other), prolific(), secure=True)
    assert page.cookies["csrftoken"]["samesite"] == "Lax"


def test_mturk_preview_never_shows_other_workers_answers(study_project):
    """A validation task (the latest stage, so first in line) shows the answers other
    workers gave; someone previewing a HIT has not joined: they see an answer task."""
    agreement = study_project.stages.get(kind="newsqa_agreement")
    answer = study_project.items.filter(stage__kind="newsqa_answer").first()
    secret = "SECRET-ANSWER-OF-ANOTHER-WORKER"
    answers = [{"spans": [[0, 3]]}, {"spans": [[4, 9]]}]
    engine.items_emit(source_stage=agreement, emits=[Emit(
        kind="newsqa_validate", key="v0", document_id=answer.document_id,
        data={"question": secret, "answers": answers, "unique_answers": answers})])
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MT1")
    preview = studies.study_path(study)
    params = mturk(assignment=studies.PREVIEW_ASSIGNMENT)
    page = Client().get(preview, params).content.decode()
    assert 'data-testid="preview"' in page and secret not in page
    assert answer.data["question"] in page or "Question" in page
    assert studies.sample_item(study=study).stage.kind == "newsqa_answer"
    # With only such tasks open, the preview shows none.
    study_project.items.exclude(stage__kind="newsqa_validate").update(status="done")
    page = Client().get(preview, params).content.decode()
    assert "There is no sample task to show yet" in page
    assert secret not in page


@pytest.mark.parametrize("status", ["blocked", "paused"])
def test_a_worker_blocked_or_paused_gets_no_completion_code_and_no_new_session(
        study_project, admin_user, status):
    """Blocked by the admin (or paused by the gold checks) mid-session: the worker is told
    to return the study, with no code, and a new session of theirs is not started."""
    study = studies.study_create(project=study_project, platform="mturk",
                                 completion_code="MTDONE", no_work_code="MTNONE", quota=4)
    client = csrf_client()
    arrive(client, study, mturk(assignment="3ASSIGN1"))
    work_through_the_api(client, 1)
    member = ProjectMember.objects.get(source="mturk")
    engine.member_status_set(member=member, status=status, actor=admin_user)
    page = client.get("/tasks/next/").content.decode()
    assert 'data-testid="screened-out"' in page
    assert "MTDONE" not in page and "MTNONE" not in page and "externalSubmit" not in page
    assert "return the HIT" in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.SCREENED_OUT
    # A new HIT (a new assignment) starts nothing and shows no code either.
    again = csrf_client()
    refused = arrive(again, study, mturk(assignment="3ASSIGN2"))
    assert refused.status_code == 409
    assert "cannot start a new session" in refused.content.decode()
    assert StudySession.objects.count() == 1
    assert "_auth_user_id" not in again.session
    # Resumed by the admin: the same session works on to its code.
    engine.member_status_set(member=member, status="active", actor=admin_user)
    page = client.get("/tasks/next/").content.decode()
    assert 'data-testid="next-task"' in page and "screened-out" not in page
    work_through_the_api(client, 3)
    assert "MTDONE" in client.get("/tasks/next/").content.decode()
    assert StudySession.objects.get().outcome == StudySession.Outcome.QUOTA


def test_a_worker_the_gold_checks_paused_gets_no_completion_code(
        news_corpus, workers, admin_user, committed, settings):
    """The gold checks pause a worker on the stage they failed (their standing there; their
    membership stays active): they go on with the other stages' work, and when none is
    left they are screened out, told to return the study, with no code, as a worker the
    admin paused is; a new session of theirs gets no code either. Resumed on the stage, the
    same session works on to its code."""
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            gold_rate=1.0, gold_min_items=1, gold_min_accuracy=0.7)
    gold_item(project, answer, "g1", expected=weiss(project))
    study = studies.study_create(project=project, platform="prolific",
                                 completion_code="DONE1", no_work_code="NONE1")
    client = csrf_client()
    arrive(client, study, prolific())
    kinds = []
    while (task := api(client, "post", "/api/v1/tasks/next/")).status_code == 200:
        kind = task.json()["kind"]
        kinds.append(kind)
        payload = ({"questions": ["Who voted against the plan?"]}
                   if kind == "newsqa_question" else {"no_answer": True})
        with committed():
            done = api(client, "post", f"/api/v1/tasks/{task.json()['id']}/submit/",
                       {"payload": payload})
        assert done.status_code == 201, done.content
    assert task.status_code == 204
    # The gold check first (rate 1), failed: paused on answering; then the two articles'
    # questions, and nothing is left for them.
    assert kinds == ["newsqa_answer", "newsqa_question", "newsqa_question"]
    standing = WorkerStage.objects.get(member__source="prolific", stage=answer)
    assert standing.status == "paused"
    assert ProjectMember.objects.get(source="prolific").status == "active"
    assert Assignment.objects.filter(item__project=project, item__gold="",
                                     stage=answer, status="open").exists()
    page = client.get("/tasks/next/").content.decode()
    assert 'data-testid="screened-out"' in page
    assert "DONE1" not in page and "NONE1" not in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.SCREENED_OUT
    # A new session of the same worker ends the same way.
    again = csrf_client()
    arrive(again, study, prolific(session="sess2"))
    page = again.get("/tasks/next/").content.decode()
    assert 'data-testid="screened-out"' in page
    assert "DONE1" not in page and "NONE1" not in page
    # Resumed on the stage by the admin: work again, to the completion code.
    engine.standing_decide(standing=standing, action="resume", actor=admin_user)
    assert 'data-testid="next-task"' in again.get("/tasks/next/").content.decode()


def work_all_through_the_api(client: Client) -> list[str]:
    """Take and submit tasks until none is left for the worker; their kinds."""
    kinds = []
    while (task := api(client, "post", "/api/v1/tasks/next/")).status_code == 200:
        kind = task.json()["kind"]
        kinds.append(kind)
        payload = ({"questions": ["Who voted against the plan?"]}
                   if kind == "newsqa_question" else {"no_answer": True})
        done = api(client, "post", f"/api/v1/tasks/{task.json()['id']}/submit/",
                   {"payload": payload})
        assert done.status_code == 201, done.content
    assert task.status_code == 204
    return kinds


def fail_a_qualification_try(client: Client, url: str) -> str:
    """Start a try on the qualification page and answer each item wrongly, page by page;
    the last feedback page."""
    token = client.cookies["csrftoken"].value
    location = client.post(url, {"qualification_action": "start",
                                 "csrfmiddlewaretoken": token})["Location"]
    while True:
        answered = client.post(location, {"flag": "no_answer", "csrfmiddlewaretoken": token})
        assert answered.status_code == 302 and "?answered=" in answered["Location"]
        feedback = client.get(answered["Location"]).content.decode()
        following = re.search(r'href="(\?item=\d+)" data-testid="next"', feedback)
        if following is None:
            return feedback
        location = url + following.group(1)


@pytest.mark.parametrize("platform", ["prolific", "mturk"])
def test_a_worker_who_fails_the_qualification_is_screened_out_with_no_code(
        news_corpus, workers, admin_user, committed, settings, platform):
    """The answer stage asks for a qualification. A marketplace worker works what is theirs
    (the questions), fails both tries of the qualification, and has nothing left: their
    session ends screened out, told why and to return the study, with no code (the no-work
    code paid them as if they had worked through); a new session of theirs ends the same
    way, and the admin's studies page counts them screened out."""
    project, answer = build(news_corpus, workers, admin_user, committed, settings,
                            qualification_items=2, qualification_tries=2,
                            qualification_threshold=0.8)
    gold.gold_items_import(stage=answer, text=training_jsonl(), name="training.jsonl",
                           purpose="training")
    study = studies.study_create(project=project, platform=platform,
                                 completion_code="DONE1", no_work_code="NONE1")
    arrival = prolific if platform == "prolific" else mturk
    client = csrf_client()
    arrive(client, study, arrival())
    with committed():
        assert work_all_through_the_api(client) == ["newsqa_question", "newsqa_question"]
    page = client.get("/tasks/next/").content.decode()
    assert 'data-testid="qualify-first"' in page and 'data-testid="completion"' not in page
    url = reverse("annotation:qualification", args=[answer.pk])
    assert f'href="{url}"' in page

    first = fail_a_qualification_try(client, url)
    assert 'data-testid="failed"' in first and "You have 1 try left" in first
    page = client.get("/tasks/next/").content.decode()  # a try left: no end yet
    assert 'data-testid="qualify-first"' in page and "screened-out" not in page
    last = fail_a_qualification_try(client, url)
    assert 'data-testid="failed"' in last and "No try is left." in last
    assert engine.work_waiting(worker=ProjectMember.objects.get(source=platform).user,
                               project=project) is False
    # On from the feedback page: the worker's tasks, which end their session.
    on = re.search(r'href="([^"]+)" data-testid="my-tasks"', last).group(1)
    page = client.get(on, follow=True).content.decode()
    assert 'data-testid="screened-out"' in page
    assert "You did not pass the qualification this study asks for" in page
    assert "The tasks you submitted are recorded" in page  # the two questions
    for code in ("DONE1", "NONE1", "completion-code", "completion-link", "externalSubmit"):
        assert code not in page
    if platform == "mturk":
        assert "Please return the HIT on MTurk" in page
    else:
        assert "Please return the study on Prolific" in page
    assert StudySession.objects.get().outcome == StudySession.Outcome.SCREENED_OUT
    # A new session of the same worker (a new assignment or Prolific session) ends so too.
    again = csrf_client()
    arrive(again, study, arrival(session="sess2") if platform == "prolific"
           else arrival(assignment="3ASSIGN2"))
    page = again.get("/tasks/next/").content.decode()
    assert 'data-testid="screened-out"' in page and "You did not pass" in page
    assert "DONE1" not in page and "NONE1" not in page
    assert "The tasks you submitted are recorded" not in page  # none in this session
    assert [s.outcome for s in StudySession.objects.order_by("id")] == [
        StudySession.Outcome.SCREENED_OUT] * 2
    # The admin's studies page counts both sessions screened out, none as no work left.
    admin = Client()
    admin.force_login(admin_user)
    table = admin.get(reverse("annotation:study_list", args=[project.pk])).content.decode()
    assert 'data-testid="screened-out">2<' in table and 'data-testid="no-work">0<' in table


def test_a_session_that_started_goes_on_to_its_code_after_the_study_closes(study_project):
    """The researcher closes the study while a worker is in it: no new session starts,
    but the worker who opens their link again (another browser too) gets to their code."""
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE7", quota=1)
    client = csrf_client()
    arrive(client, study, prolific(session="open1"))
    studies.study_close(study=study)
    work_through_the_api(client, 1)
    back = client.get(studies.study_path(study), prolific(session="open1"))
    assert back["Location"] == reverse("annotation:task_next")
    assert "cc=DONE7" in client.get(back["Location"]).content.decode()
    elsewhere = csrf_client()
    landed = arrive(elsewhere, study, prolific(session="open1"))
    assert landed["Location"] == reverse("annotation:task_next")
    assert "cc=DONE7" in elsewhere.get(landed["Location"]).content.decode()
    # A new session is refused.
    new = csrf_client().get(studies.study_path(study), prolific(session="new2"))
    assert new.status_code == 410 and "This study is closed" in new.content.decode()
    assert StudySession.objects.count() == 1


def test_a_chinese_worker_reads_the_study_pages_in_chinese(study_project):
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C1")
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    unknown = client.get("/study/no-such-token/", prolific()).content.decode()
    assert "没有这个研究" in unknown and "No such study" not in unknown
    broken = client.get(studies.study_path(study), prolific(session="")).content.decode()
    assert "SESSION_ID：研究链接中缺少此参数。请返回 Prolific 并从那里打开研究。" in broken
    studies.study_close(study=study)
    closed = client.get(studies.study_path(study), prolific()).content.decode()
    assert "此研究已关闭" in closed and "This study is closed" not in closed


def test_another_browser_with_a_workers_id_does_not_take_over_their_live_task(study_project):
    """Anyone can type a worker's Prolific id into the study link: while the worker is on a
    task, a new session from another browser is refused, and nothing of theirs changes;
    the worker's own browser may start a new session."""
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    worker = csrf_client()
    landed = arrive(worker, study, prolific(session="mine"))
    task_url = landed["Location"]
    assert task_url.startswith("/tasks/")
    member = ProjectMember.objects.get(source="prolific")
    stranger = csrf_client()
    refused = arrive(stranger, study, prolific(session="theirs"))
    assert refused.status_code == 409
    assert "working on a task in another browser" in refused.content.decode()
    assert "_auth_user_id" not in stranger.session
    assert stranger.get(task_url).status_code == 302  # to the login page
    assert StudySession.objects.filter(session_key="theirs").count() == 0
    member.refresh_from_db()
    assert member.session.session_key == "mine"
    # The worker's own browser opens a new session (Prolific gave them another one).
    again = arrive(worker, study, prolific(session="mine-2"))
    assert again.status_code == 302 and again["Location"] == task_url


def test_new_workers_from_one_address_are_limited_per_hour(study_project, settings):
    """Each made-up id in a study link would be a new account holding a task: one address
    makes at most CROWDQA_STUDY_NEW_WORKERS_PER_HOUR of them an hour (429, with when to
    come back); workers seen before, and other addresses, still come in."""
    from django.core.cache import cache

    cache.clear()
    settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = 2
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE1", quota=3)
    ids = [f"5f1a2b3c4d5e6f708192a3c{n}" for n in range(3)]
    browsers = [csrf_client() for _ in ids[:2]]
    for n, (pid, browser) in enumerate(zip(ids[:2], browsers, strict=True)):
        assert arrive(browser, study, prolific(pid=pid, session=f"s{n}")).status_code == 302
    refused = arrive(csrf_client(), study, prolific(pid=ids[2], session="s2"))
    assert refused.status_code == 429
    assert "Too many new workers have started this hour from your network address" \
        in refused.content.decode()
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert not ExternalAccount.objects.filter(external_id=ids[2]).exists()
    assert not StudySession.objects.filter(session_key="s2").exists()
    # A worker seen before comes back in a new session from the same address.
    assert arrive(browsers[0], study, prolific(pid=ids[0], session="s0-b")).status_code \
        == 302
    # Another address has its own count.
    other = Client(enforce_csrf_checks=True, REMOTE_ADDR="192.0.2.7")
    assert arrive(other, study, prolific(pid=ids[2], session="s2")).status_code == 302
    assert ExternalAccount.objects.filter(external_id=ids[2]).exists()
    settings.CROWDQA_STUDY_NEW_WORKERS_PER_HOUR = 0  # no limit
    assert arrive(csrf_client(), study, prolific(pid="5f1a2b3c4d5e6f708192a3d9",
                                                 session="s9")).status_code == 302


def test_a_corrected_answer_is_not_a_second_task_of_the_session(study_project):
    """A Prolific worker with a quota of 2 submits two answers and corrects the last one:
    the completion page says 2 of 2 submitted, not 3 of 2 (the correction replaces the
    answer, as pay counts it)."""
    from annotation.models import Submission

    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="DONE2", quota=2)
    client = csrf_client()
    arrive(client, study, prolific())
    work_through_the_api(client, 2)
    last = Submission.objects.order_by("-id").first()
    corrected = client.post(reverse("annotation:submission_correct", args=[last.pk]),
                            {"flag": "no_answer",
                             "csrfmiddlewaretoken": client.cookies["csrftoken"].value})
    assert corrected.status_code == 302
    assert Submission.objects.filter(worker=last.worker).count() == 3
    page = client.get("/tasks/next/").content.decode()
    assert "DONE2" in page
    progress = page.split('data-testid="session-progress"')[1].split("</p>")[0]
    assert "<strong>2</strong>" in progress, progress


def test_the_login_page_tells_a_logged_out_study_worker_to_reopen_their_study_link(
        study_project):
    """A Prolific or MTurk account has no password: a worker whose session ended and who
    lands on the login page is told to open the study link again, not to log in."""
    study = studies.study_create(project=study_project, platform="prolific",
                                 completion_code="C1AB2CD3", quota=2)
    client = csrf_client()
    task_path = arrive(client, study, prolific())["Location"]
    # Their session ended: a task page sends them to the login page, which says it too.
    client.logout()
    page = client.get(task_path, follow=True).content.decode()
    assert 'data-testid="study-hint"' in page
    assert "Those accounts have no password: open the study link again" in page
    # Sent there from the study link itself: said first, above the form.
    login = reverse("login") + "?" + "next=" + studies.study_path(study)
    page = client.get(login).content.decode()
    assert page.index('data-testid="study-reopen"') < page.index('name="username"')
    assert 'data-testid="study-hint"' not in page
