"""A worker asks to be removed (a GDPR erasure request, e.g. through Prolific): the admin
erases their personal identifiers and keeps their anonymised answers."""

from __future__ import annotations

import io

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management import call_command
from django.core.management.base import CommandError

import tests.annotation.test_batches  # noqa: F401 (the batched test recipe)
from annotation import engine, pay, studies
from annotation.models import (
    Assignment,
    ExternalAccount,
    Item,
    Project,
    StudySession,
    Submission,
)
from annotation.roles import Role
from annotation.stages import Emit
from annotation.studies import Arrival
from collector.exporters import Pseudonymizer
from tests.factories import user_with_roles

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
SESSION = "prolific-session-4242"
EMAIL = "worker.person@example.org"


@pytest.fixture
def worked(db, settings, committed, client):
    """A Prolific worker (with an e-mail address and a name given since) labelled four
    items of a paid project, was paid in an export, and once mistyped their password."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Erasure", recipe="test-batched", params={
        2: {"batch_size": 4, "inspect_fraction": 0.5, "pay_rate": 0.5}})
    Project.objects.filter(pk=project.pk).update(status="active")
    project.refresh_from_db()
    with committed():
        engine.items_emit(source_stage=project.stages.get(order=1), emits=[
            Emit(kind="test_batched", key=f"q{n}", data={"query": f"query {n}"})
            for n in range(8)])
    study = studies.study_create(project=project, platform="prolific", completion_code="C0DE")
    worker, _, _ = studies.study_arrive(study=study, arrival=Arrival(
        platform="prolific", external_id=PID, session_key=SESSION, external_study="STUDY1"))
    worker.groups.add(*user_with_roles("other", Role.ANNOTATOR).groups.all())
    worker.email, worker.first_name, worker.last_name = EMAIL, "Wanda", "Person"
    worker.save()
    for _ in range(4):
        task = engine.task_claim(worker=worker, project=project)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=worker, payload={"label": "yes"})
    export = pay.payments_export(project=project)
    held = engine.task_claim(worker=worker, project=project)  # of their second batch
    assert PID in export.content and worker.username in export.content
    client.post("/accounts/login/", {"username": worker.username, "password": "wrong"},
                REMOTE_ADDR="203.0.113.9")
    assert AccessAttempt.objects.filter(username=worker.username).exists()
    return {"project": project, "study": study, "worker": worker, "export": export,
            "held": held}


def _everything_stored() -> str:
    """Every row of the database, as text."""
    from django.apps import apps

    return "".join(serializers.serialize("json", model.objects.all())
                   for model in apps.get_models() if model._meta.managed)


def test_erasure_removes_the_workers_identifiers_and_keeps_their_answers(worked, client):
    worker, export = worked["worker"], worked["export"]
    username = worker.username
    answers = list(Submission.objects.filter(worker=worker).values_list("pk", "payload"))
    pseudonym = Pseudonymizer("s" * 64)(worker.pk)
    stored = _everything_stored()
    assert all(text in stored for text in (PID, SESSION, EMAIL, "Wanda", "203.0.113.9"))

    out = io.StringIO()
    call_command("worker_erase", "--prolific", PID, stdout=out)

    stored = _everything_stored()
    for text in (PID, SESSION, EMAIL, "Wanda", "Person", "203.0.113.9", f'"{username}"'):
        assert text not in stored, f"{text!r} is still stored"
    said = out.getvalue()
    assert "marketplace id" in said and "e-mail address" in said and "name" in said
    assert "answers" in said and "deactivated" in said
    # The answers stay, under the same account id: releases' pseudonyms come out the same.
    erased = get_user_model().objects.get(pk=worker.pk)
    assert not erased.is_active and not erased.has_usable_password()
    assert list(Submission.objects.filter(worker=erased).values_list("pk", "payload")) \
        == answers
    assert Pseudonymizer("s" * 64)(erased.pk) == pseudonym
    assert not ExternalAccount.objects.filter(user=erased).exists()
    assert StudySession.objects.filter(member__user=erased).count() == 1
    # The export keeps its amounts, but is no longer a Prolific bonus line for them.
    export.refresh_from_db()
    assert export.total > 0 and "2.00" in export.content
    assert pay.prolific_bonuses(export) == {}
    assert Item.objects.filter(stage__project=worked["project"], status="review").count() == 4
    # What they held goes to other workers at once: the task and the batch it is of.
    assert Assignment.objects.get(pk=worked["held"].pk).status != Assignment.Status.ACTIVE
    other = user_with_roles("next-worker", Role.ANNOTATOR)
    engine.project_member_add(project=worked["project"], user=other, role=Role.ANNOTATOR)
    assert engine.task_claim(worker=other, project=worked["project"]).item.batch_id \
        == worked["held"].item.batch_id


def test_an_erased_worker_who_comes_back_is_a_stranger(worked):
    call_command("worker_erase", "--user", worked["worker"].username, stdout=io.StringIO())
    again, _, _ = studies.study_arrive(study=worked["study"], arrival=Arrival(
        platform="prolific", external_id=PID, session_key="another-session"))
    assert again.pk != worked["worker"].pk
    assert not Submission.objects.filter(worker=again).exists()


def test_erasing_someone_unknown_says_so(worked):
    call_command("worker_erase", "--prolific", PID, stdout=io.StringIO())
    with pytest.raises(CommandError, match="no Prolific worker '5f1a.*erased already"):
        call_command("worker_erase", "--prolific", PID, stdout=io.StringIO())


def test_an_empty_or_admin_name_is_refused_naming_the_option(worked, admin_user):
    """An empty --user or --prolific was taken for "--mturk None"; an admin's account was
    erased (the worker page refuses it)."""
    def refusal(*args: str) -> str:
        with pytest.raises(CommandError) as caught:
            call_command("worker_erase", *args, stdout=io.StringIO())
        return str(caught.value)

    assert refusal("--user", "") == "--user: no user '' (erased already, or never here)"
    assert refusal("--prolific", "") == ("--prolific: no Prolific worker '' (erased already, "
                                         "or never here)")
    assert refusal("--user", admin_user.username) == (
        f"--user: user {admin_user.username!r} is an admin; admins are not erased: remove "
        "the admin role first")
    kept = get_user_model().objects.get(pk=admin_user.pk)
    assert kept.is_active and kept.username == admin_user.username
    assert ExternalAccount.objects.filter(external_id=PID).exists()


def test_an_admin_erases_a_worker_from_their_page(worked, client_for, admin_user):
    project, worker = worked["project"], worked["worker"]
    page = f"/manage/projects/{project.pk}/workers/{worker.pk}/"
    erase = f"{page}erase/"
    admin = client_for(admin_user)
    assert PID in admin.get(page).content.decode()
    unconfirmed = admin.post(erase, follow=True).content.decode()
    assert "Check the box" in unconfirmed and PID in unconfirmed
    said = admin.post(erase, {"confirm": "on"}, follow=True).content.decode()
    assert "Erased: marketplace id, e-mail address, name, username" in said
    assert "Their answers stay" in said and PID not in said
    assert not get_user_model().objects.get(pk=worker.pk).is_active
    other = engine.project_create(name="Elsewhere", recipe="test-batched")
    assert admin.post(f"/manage/projects/{other.pk}/workers/{worker.pk}/erase/",
                      {"confirm": "on"}).status_code == 404
    checker = user_with_roles("chk", Role.CHECKER)  # the same client, signed in again
    engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
    assert client_for(checker).post(erase, {"confirm": "on"}).status_code == 403
