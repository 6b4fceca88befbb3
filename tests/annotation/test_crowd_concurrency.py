"""Limits and marketplace arrivals under concurrency (PostgreSQL: SQLite ignores row locks).

50 claims at once never pass a stage's per-worker limit or a session's quota; one external
id arriving twice at once makes one account.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter

import pytest
from django.db import connection, connections

from annotation import engine, studies
from annotation.models import Assignment, ExternalAccount, ProjectMember, StudySession
from annotation.roles import Role
from annotation.stages import Emit
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 50


@pytest.fixture
def open_project(news_corpus, settings):
    if connection.vendor != "postgresql":
        pytest.skip("row-lock concurrency needs PostgreSQL (DATABASE_URL=postgres://...)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "memory://"
    project = engine.project_create(name="Limits", recipe="newsqa", corpus=news_corpus)
    answer = project.stages.get(kind="newsqa_answer")
    engine.stage_params_update(stage=answer, params={"max_items_per_worker": 4})
    project.status = "active"
    project.save(update_fields=["status"])
    from collector.models import Document

    doc = Document.objects.filter(corpus=news_corpus).first()
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk) for n in range(120)])
    return project


def _run(threads: int, work) -> list[str]:
    start, errors = threading.Barrier(threads), []

    def run(n: int) -> None:
        try:
            start.wait()
            work(n)
        except Exception as exc:  # surfaced by the callers' assertions
            errors.append(repr(exc))
        finally:
            connections.close_all()

    pool = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


def _claim_and_submit_until_none(project, worker) -> None:
    while (task := engine.task_claim(worker=worker, project=project)) is not None:
        # Another thread of the same worker may have submitted this live slot first.
        with contextlib.suppress(engine.TaskError):
            engine.task_submit(assignment_id=task.pk, worker=worker,
                               payload={"no_answer": True})


def test_fifty_concurrent_claims_never_pass_a_stage_limit(open_project):
    workers = [user_with_roles(f"lim{n}", Role.ANNOTATOR) for n in range(5)]
    for user in workers:
        engine.project_member_add(project=open_project, user=user, role=Role.ANNOTATOR)
    # 10 threads per worker (a worker in many tabs, scripted clients), 50 at once.
    errors = _run(THREADS, lambda n: _claim_and_submit_until_none(open_project,
                                                                  workers[n % 5]))
    assert errors == []
    taken = Counter(Assignment.objects.filter(
        stage__kind="newsqa_answer", status__in=["active", "submitted"],
    ).values_list("worker_id", flat=True))
    assert taken == {user.pk: 4 for user in workers}
    for member in ProjectMember.objects.filter(project=open_project):
        assert list(member.stage_taken.values()) == [4]


def test_fifty_concurrent_claims_never_pass_a_session_quota(open_project):
    study = studies.study_create(project=open_project, platform="prolific",
                                 completion_code="Q1", quota=3)
    members = []
    for n in range(5):
        user, member, _ = studies.study_arrive(study=study, arrival=studies.Arrival(
            "prolific", f"pid{n:021d}", f"session{n}"))
        members.append(member)
    # Lift the stage limit so that only the session quota binds.
    answer = open_project.stages.get(kind="newsqa_answer")
    answer.params["max_items_per_worker"] = 0
    answer.save(update_fields=["params"])
    errors = _run(THREADS, lambda n: _claim_and_submit_until_none(open_project,
                                                                  members[n % 5].user))
    assert errors == []
    taken = Counter(Assignment.objects.filter(status__in=["active", "submitted"])
                    .values_list("worker_id", flat=True))
    assert taken == {member.user_id: 3 for member in members}
    assert set(ProjectMember.objects.filter(source="prolific")
               .values_list("session_taken", flat=True)) == {3}


def test_one_external_id_arriving_twice_at_once_makes_one_account(open_project):
    study = studies.study_create(project=open_project, platform="prolific",
                                 completion_code="Q1", quota=3)
    arrivals = [studies.Arrival("prolific", "5f1a2b3c4d5e6f708192a3b4", f"tab{n % 2}")
                for n in range(10)]
    errors = _run(10, lambda n: studies.study_arrive(study=study, arrival=arrivals[n]))
    assert errors == []
    assert ExternalAccount.objects.count() == 1
    user = ExternalAccount.objects.get().user
    assert ProjectMember.objects.filter(user=user).count() == 1
    assert StudySession.objects.count() == 2
    assert user.groups.filter(name="annotator").exists()


def test_no_slot_goes_to_an_unqualified_or_paused_worker_and_gold_never_finishes(
        open_project):
    from annotation import quality
    from annotation.eligibility import GOLD_PRIORITY
    from annotation.models import Item

    answer = open_project.stages.get(kind="newsqa_answer")
    answer.params.update({"max_items_per_worker": 0, "qualification_items": 1,
                          "gold_rate": 0.3, "gold_min_items": 1000})
    answer.save(update_fields=["params"])
    doc = Item.objects.filter(stage=answer).first().document
    for n in range(5):
        gold = Item.objects.create(
            project=open_project, stage=answer, key=f"gold:{n}", document=doc, gold="check",
            data={"question": "Who?"}, status="open", priority=GOLD_PRIORITY, overlap=3,
            result={"expected": {"no_answer": True}, "reason": "."})
        engine.slots_add(item=gold, n=3)
    users = [user_with_roles(f"q{n}", Role.ANNOTATOR) for n in range(10)]
    allowed = set()
    for n, user in enumerate(users):
        member = engine.project_member_add(project=open_project, user=user,
                                           role=Role.ANNOTATOR)
        standing = quality.standing_for(member=member, stage=answer)
        if n < 6:
            standing.qualified = True  # q0..q5 qualified
        if n in (4, 5):
            standing.status = "paused"  # ... but q4 and q5 paused
        standing.save()
        if n < 4:
            allowed.add(user.pk)
    errors = _run(THREADS, lambda n: _claim_and_submit_until_none(open_project,
                                                                  users[n % 10]))
    assert errors == []
    takers = set(Assignment.objects.filter(stage=answer, worker__isnull=False)
                 .values_list("worker_id", flat=True))
    assert takers == allowed
    assert Item.objects.filter(stage=answer, gold="", status="done").count() == 120
    gold = Item.objects.filter(stage=answer, gold="check")
    assert set(gold.values_list("status", flat=True)) == {"open"}
    assert not Item.objects.filter(parent__in=gold).exists()  # nothing emitted from gold
    assert Assignment.objects.filter(item__in=gold, status="submitted").exists()
