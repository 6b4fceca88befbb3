"""Many workers claiming at once (PostgreSQL: SQLite ignores row locks)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from django.db import connection, connections, transaction

from annotation import engine
from annotation.models import Assignment, Item, Submission
from annotation.roles import Role
from annotation.stages import Emit
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def busy_project(news_corpus, settings):
    if connection.vendor != "postgresql":
        pytest.skip("row-lock concurrency needs PostgreSQL (DATABASE_URL=postgres://...)")
    # Completed items emit to the agreement stage; keep its jobs out of this test.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "memory://"
    project = engine.project_create(name="Concurrency", recipe="newsqa", corpus=news_corpus)
    project.status = "active"
    project.save(update_fields=["status"])
    question_stage = project.stages.get(kind="newsqa_question")
    from collector.models import Document

    doc = Document.objects.filter(corpus=news_corpus).first()
    engine.items_emit(source_stage=question_stage, emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk)
        for n in range(60)
    ])
    workers = [user_with_roles(f"w{n}", Role.ANNOTATOR) for n in range(12)]
    for user in workers:
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    return project, workers


def _work(project, worker, errors, start):
    start.wait()
    try:
        while True:
            task = engine.task_claim(worker=worker, project=project)
            if task is None:
                return
            engine.task_submit(assignment_id=task.pk, worker=worker,
                               payload={"no_answer": True})
    except Exception as exc:  # surfaced by the assertion below
        errors.append(repr(exc))
    finally:
        connections.close_all()


class Held:
    """``fn()`` run in a thread of its own, inside a transaction that stays open until
    ``release()``: its result in ``value`` once the constructor returns, an exception in
    ``errors``."""

    def __init__(self, fn, errors: list[str]):
        self.value = None
        done, self._release = threading.Event(), threading.Event()

        def run():
            try:
                with transaction.atomic():
                    self.value = fn()
                    done.set()
                    self._release.wait(60)
            except Exception as exc:  # surfaced by the tests' assertions
                errors.append(repr(exc))
                done.set()
            finally:
                connections.close_all()

        self._thread = threading.Thread(target=run)
        self._thread.start()
        assert done.wait(60)

    def release(self) -> None:
        self._release.set()
        self._thread.join(60)


def in_thread(fn, out: dict, key: str, errors: list[str],
              start: threading.Barrier | None = None) -> threading.Thread:
    """``fn()`` started in a thread of its own (after ``start``, when given): its result in
    ``out[key]``, an exception in ``errors``."""

    def run():
        if start is not None:
            start.wait()
        try:
            out[key] = fn()
        except Exception as exc:  # surfaced by the tests' assertions
            errors.append(repr(exc))
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _waits_on(thread, locktype: str) -> bool:
    """Whether ``thread``'s statement waits on a lock of ``locktype`` another transaction
    holds (a ``transactionid``: a row it changed; ``advisory``: the worker's claim gate),
    looked for until it does or the thread ends."""
    deadline = time.monotonic() + 60
    with connection.cursor() as cursor:
        while thread.is_alive() and time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = %s AND NOT granted",
                           [locktype])
            if cursor.fetchone()[0]:
                return True
            thread.join(0.01)
    return False


def test_concurrent_claims_never_double_assign_or_overfill(busy_project):
    project, workers = busy_project
    errors: list[str] = []
    start = threading.Barrier(len(workers))
    threads = [threading.Thread(target=_work, args=(project, w, errors, start)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    items = Item.objects.filter(stage__kind="newsqa_answer")
    assert set(items.values_list("status", flat=True)) == {"done"}
    submitted = Assignment.objects.filter(stage__kind="newsqa_answer", status="submitted")
    per_item = Counter(submitted.values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}  # overlap 2, never more
    pairs = Counter(submitted.values_list("item_id", "worker_id"))
    assert max(pairs.values()) == 1  # never the same worker twice on an item
    assert not Assignment.objects.filter(stage__kind="newsqa_answer",
                                         status__in=["open", "active"]).exists()
    # Work was spread over the workers, not done by one.
    assert len({w for _, w in pairs}) > 1


def test_expired_lease_returns_under_concurrency(busy_project):
    from datetime import timedelta

    from django.utils import timezone

    project, workers = busy_project
    task = engine.task_claim(worker=workers[0], project=project)
    Assignment.objects.filter(pk=task.pk).update(lease_expires_at=timezone.now() - timedelta(1))
    results: list[int] = []
    threads = [threading.Thread(target=lambda: (results.append(engine.leases_expire()),
                                                connections.close_all()))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(results) == 1  # expired once, whoever got there first
    slots = Counter(Assignment.objects.filter(item=task.item).values_list("status", flat=True))
    assert slots == {"open": 2, "expired": 1}  # the untouched slot and the returned one


def test_one_workers_claims_at_once_take_one_task(busy_project):
    """A second claim of one worker that starts while the first one's transaction is still
    open waits for it and then gets the same task. A claim is one statement, whose snapshot
    cannot see the first claim's commit: before the worker's gate the second took another
    task (a script's parallel claims held as many tasks as it sent)."""
    project, workers = busy_project
    worker = workers[0]
    # Another worker holds the first item's first slot: the worker's first claim takes the
    # item's last one, and a claim that does not see it would take the next item's.
    assert engine.task_claim(worker=workers[1], project=project) is not None
    second: dict[str, Assignment | None] = {}
    errors: list[str] = []
    first = Held(lambda: engine.task_claim(worker=worker, project=project), errors)
    other = in_thread(lambda: engine.task_claim(worker=worker, project=project),
                      second, "slot", errors)
    # Until the second claim waits on the first one's gate, or (without the gate) is done.
    _waits_on(other, "advisory")
    first.release()
    other.join(60)
    assert errors == []
    assert first.value is not None
    assert second["slot"] is not None and second["slot"].pk == first.value.pk
    assert list(Assignment.objects.filter(worker=worker, status="active")
                .values_list("pk", flat=True)) == [first.value.pk]


@pytest.fixture
def single_slot_item(busy_project):
    """An item of one slot whose first worker's lease ran out: its slot is open again, with
    the one answer it needs still to come (the project's other items are done)."""
    from datetime import timedelta

    from django.utils import timezone

    project, workers = busy_project
    # One answer per question, and no extra one asked: the item's one slot is all there is.
    answers = project.stages.get(kind="newsqa_answer")
    answers.params = {**answers.params, "answers_per_question": 1, "max_extra_answers": 0}
    answers.save(update_fields=["params"])
    Item.objects.filter(stage__kind="newsqa_answer").update(status="done")
    Assignment.objects.filter(stage__kind="newsqa_answer").update(status="cancelled")

    def make(key: str, late: object) -> Assignment:
        stage = project.stages.get(kind="newsqa_question")
        engine.items_emit(source_stage=stage, emits=[
            Emit(kind="newsqa_answer", key=key, data={"question": "Who?"},
                 document_id=Item.objects.filter(document__isnull=False).first().document_id,
                 overlap=1)])
        task = engine.task_claim(worker=late, project=project)
        assert task is not None and task.item.key == key
        Assignment.objects.filter(pk=task.pk).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert engine.leases_expire() == 1
        return task

    return project, workers, make


def _late_submit(task, worker):
    """``worker``'s late answer to ``task``: the submission, or the ``TaskError`` refusing it."""
    try:
        return engine.task_submit(assignment_id=task.pk, worker=worker,
                                  payload={"no_answer": True})
    except engine.TaskError as exc:
        return exc


def test_a_late_submit_waits_for_a_claim_holding_the_slot_and_is_refused(single_slot_item):
    """Another worker's claim took the open slot and has not committed yet: the late
    submit waits for it (a skipped slot would look free or missing by chance), then finds
    the slot taken and is refused. Exactly one of them has the slot."""
    project, workers, make = single_slot_item
    late, other = workers[0], workers[1]
    task = make("race-1", late)
    out: dict[str, object] = {}
    errors: list[str] = []
    held = Held(lambda: engine.task_claim(worker=other, project=project), errors)
    submitter = in_thread(lambda: _late_submit(task, late), out, "late", errors)
    waited = _waits_on(submitter, "transactionid")
    held.release()
    submitter.join(60)
    assert errors == []
    assert waited
    assert held.value is not None and held.value.item_id == task.item_id
    assert isinstance(out["late"], engine.TaskError)
    assert "another worker took it" in str(out["late"])
    slots = Counter(Assignment.objects.filter(item_id=task.item_id)
                    .values_list("status", "worker_id"))
    assert slots == {("expired", late.pk): 1, ("active", other.pk): 1}


def test_a_claim_while_a_late_submit_holds_the_slot_gets_nothing(single_slot_item):
    project, workers, make = single_slot_item
    late, other = workers[0], workers[1]
    task = make("race-2", late)
    errors: list[str] = []
    held = Held(lambda: _late_submit(task, late), errors)
    claimed: dict[str, object] = {}
    in_thread(lambda: engine.task_claim(worker=other, project=project),
              claimed, "slot", errors).join(60)
    held.release()
    assert errors == []
    assert claimed["slot"] is None
    assert isinstance(held.value, Submission)
    statuses = Counter(Assignment.objects.filter(item_id=task.item_id)
                       .values_list("status", "worker_id"))
    assert statuses == {("expired", late.pk): 1, ("submitted", late.pk): 1}


def test_late_submits_racing_claims_give_each_slot_to_exactly_one(single_slot_item):
    project, workers, make = single_slot_item
    late, other = workers[0], workers[1]
    for n in range(8):
        task = make(f"free-race-{n}", late)
        start = threading.Barrier(2)
        out: dict[str, object] = {}
        errors: list[str] = []
        threads = [
            in_thread(lambda task=task: _late_submit(task, late), out, "late", errors, start),
            in_thread(lambda: engine.task_claim(worker=other, project=project), out, "claim",
                      errors, start)]
        for t in threads:
            t.join(60)
        assert errors == []
        won_late = isinstance(out["late"], Submission)
        won_claim = out["claim"] is not None
        assert won_late != won_claim, (n, out)
        live = Assignment.objects.filter(item_id=task.item_id,
                                         status__in=["active", "submitted"])
        assert list(live.values_list("worker_id", flat=True)) == [
            late.pk if won_late else other.pk]
        # The item is out of the way of the next round.
        if won_claim:
            engine.task_release(assignment_id=out["claim"].pk, worker=other)
        Item.objects.filter(pk=task.item_id).update(status="done")
        Assignment.objects.filter(item_id=task.item_id, status="open").update(
            status="cancelled")
