"""The hand-written SQL of the hot path (annotation.sql, annotation.slots), on whichever
database the suite runs: SQLite by default, PostgreSQL in CI."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import eligibility, engine, slots, sql
from annotation.models import Assignment, Item, Stage, Submission, TransitionLog
from annotation.roles import Role
from annotation.stages import Emit
from annotation.workflow import TransitionError, transition_rows
from collector.models import Document, Job
from tests.factories import user_with_roles


@pytest.fixture
def answer_stage(newsqa_project):
    return newsqa_project.stages.get(kind="newsqa_answer")


@pytest.fixture
def answer_items(newsqa_project, answer_stage):
    question_stage = newsqa_project.stages.get(kind="newsqa_question")
    doc = Document.objects.filter(corpus=newsqa_project.corpus).first()
    engine.items_emit(source_stage=question_stage, emits=[
        Emit(kind="newsqa_answer", key=f"q{n}", data={"question": f"Question {n}?"},
             document_id=doc.pk) for n in range(3)
    ])
    return list(Item.objects.filter(stage=answer_stage).order_by("id"))


def test_rows_load_gives_what_the_orm_gives(answer_items, workers):
    slot = engine.task_claim(worker=workers["ann1"], project=answer_items[0].project)
    engine.task_submit(assignment_id=slot.pk, worker=workers["ann1"],
                       payload={"spans": [[0, 3]]}, active_time_s=1.5)
    for model, pk in ((Assignment, slot.pk), (Item, slot.item_id),
                      (Submission, Submission.objects.get(assignment=slot).pk),
                      (Document, answer_items[0].document_id)):
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {sql.columns(model)} FROM {model._meta.db_table}"  # noqa: S608
                           " WHERE id = %s", [pk])
            (raw,) = sql.rows_load(model, cursor.fetchall())
        orm = model.objects.get(pk=pk)
        for field in model._meta.concrete_fields:
            assert getattr(raw, field.attname) == getattr(orm, field.attname), field.name
        assert not raw._state.adding


def _values(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def test_the_task_pages_read_gives_what_select_related_gives(answer_stage, answer_items,
                                                              workers):
    """``slots.slot_related`` (the task page's one statement) loads the slot, its item,
    stage, project and document as the ORM's ``select_related`` does, linked so that
    nothing more is read; an item without a document has none; no slot gives None."""
    slot = engine.task_claim(worker=workers["ann1"], project=answer_items[0].project)
    orm = (Assignment.objects.select_related("item", "stage", "stage__project",
                                             "item__document").get(pk=slot.pk))
    # On PostgreSQL a statement is prepared at its second use in a session (a PREPARE then
    # beside it): read twice first, whatever earlier tests did on this connection.
    slots.slot_related(slot.pk)
    slots.slot_related(slot.pk)
    with CaptureQueriesContext(connection) as queries:
        got = slots.slot_related(slot.pk)
        pairs = ((got, orm), (got.item, orm.item), (got.stage, orm.stage),
                 (got.stage.project, orm.stage.project), (got.item.document, orm.item.document),
                 (got.item.stage, orm.stage))
        for mine, theirs in pairs:
            assert type(mine) is type(theirs) and _values(mine) == _values(theirs)
            assert not mine._state.adding
    assert len(queries) == 1
    assert got.item.stage is got.stage

    bare = Item.objects.create(stage=answer_stage, project=answer_stage.project, key="bare",
                               data={"question": "Where?"}, document=None)
    engine.slots_add(item=bare, n=1)
    bare_slot = Assignment.objects.get(item=bare)
    loaded = slots.slot_related(bare_slot.pk)
    assert loaded.item.pk == bare.pk and loaded.item.document is None
    assert slots.slot_related(10**12) is None


def test_a_task_of_another_worker_is_not_read_out(answer_items, workers):
    slot = engine.task_claim(worker=workers["ann1"], project=answer_items[0].project)
    assert engine.assignment_for_worker(assignment_id=slot.pk, worker=workers["ann1"]).pk == slot.pk
    for pk, worker in ((slot.pk, workers["ann2"]), (10**12, workers["ann1"])):
        with pytest.raises(engine.TaskError, match="not yours"):
            engine.assignment_for_worker(assignment_id=pk, worker=worker)


def test_statements_are_prepared_once_per_session(db):
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    text = "SELECT %s::int + 1"
    with CaptureQueriesContext(connection) as seen, connection.cursor() as cursor:
        for n in range(3):
            sql.execute(cursor, text, [n])
            assert cursor.fetchone() == (n + 1,)
    statements = [q["sql"] for q in seen.captured_queries]
    # Run plainly the first time (a short session pays nothing), prepared at the second.
    assert statements[0].startswith("SELECT")
    assert sum(s.startswith("PREPARE") for s in statements) == 1
    assert sum(s.startswith("EXECUTE") for s in statements) == 2


def test_prepared_statements_can_be_turned_off(db, settings):
    settings.CROWDQA_PREPARED_STATEMENTS = False  # behind a pooler in transaction mode
    with CaptureQueriesContext(connection) as seen, connection.cursor() as cursor:
        sql.execute(cursor, "SELECT 1 + %s", [1])
        assert cursor.fetchone() == (2,)
    assert not any(q["sql"].startswith(("PREPARE", "EXECUTE")) for q in seen.captured_queries)


def test_a_new_session_prepares_again(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    with connection.cursor() as cursor:
        for n in (21, 22):
            sql.execute(cursor, "SELECT %s::int * 2", [n])
            assert cursor.fetchone() == (2 * n,)
    connection.close()  # a new session knows none of the old one's statements
    with CaptureQueriesContext(connection) as seen, connection.cursor() as cursor:
        for n in (4, 5):
            sql.execute(cursor, "SELECT %s::int * 2", [n])
            assert cursor.fetchone() == (2 * n,)
    assert [q["sql"].split()[0] for q in seen.captured_queries] == ["SELECT", "PREPARE",
                                                                    "EXECUTE"]


def test_transition_rows_moves_only_rows_still_in_the_source_status(answer_items, workers):
    item = answer_items[0]
    first, second = Assignment.objects.filter(item=item).order_by("id")
    Assignment.objects.filter(pk=second.pk).update(status="cancelled")
    moved = transition_rows(
        Assignment, Assignment.Status.ACTIVE, source=Assignment.Status.OPEN,
        where="item_id = %s", params=[item.pk], actor=workers["ann1"],
        fields={"worker": workers["ann1"], "claimed_at": timezone.now()},
        returning=("id", "worker_id"),
    )
    assert moved == [(first.pk, workers["ann1"].pk)]
    log = TransitionLog.objects.get(model="Assignment", object_id=first.pk)
    assert (log.from_status, log.to_status, log.actor_id) == ("open", "active",
                                                              workers["ann1"].pk)
    assert not TransitionLog.objects.filter(model="Assignment", object_id=second.pk).exists()
    with pytest.raises(TransitionError, match="submitted -> open is not an allowed"):
        transition_rows(Assignment, "open", source="submitted", where="id = %s",
                        params=[first.pk])


def test_a_stage_run_is_wanted_once_per_queue(newsqa_project):
    agreement = newsqa_project.stages.get(kind="newsqa_agreement")
    other = newsqa_project.stages.get(kind="newsqa_consolidate")
    assert not slots.stage_run_wanted(agreement.pk)  # nothing pending
    Item.objects.create(project=newsqa_project, stage=agreement, key="a1",
                        status=Item.Status.PENDING)
    assert slots.stage_run_wanted(agreement.pk)
    Job.objects.create(kind="stage_run", params={"stage_id": other.pk})
    assert slots.stage_run_wanted(agreement.pk)  # a run of another stage does not count
    job = Job.objects.create(kind="stage_run", params={"stage_id": agreement.pk})
    assert not slots.stage_run_wanted(agreement.pk)  # the queued run will see the item
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)
    assert slots.stage_run_wanted(agreement.pk)  # a started run may have missed it


def test_worker_queue_gives_the_live_slot_and_the_stages_latest_first(
        newsqa_project, answer_stage, answer_items, workers):
    worker = workers["ann1"]
    kinds = {Role.ANNOTATOR.value: ["newsqa_question", "newsqa_answer", "newsqa_validate"]}
    live, stages = slots.worker_queue(worker=worker, kinds_by_role=kinds,
                                      project_id=newsqa_project.pk, now=timezone.now())
    assert live is None
    assert [stage.kind for stage in stages] == ["newsqa_validate", "newsqa_answer",
                                                "newsqa_question"]
    # Validation has nothing open: the claim goes on to the answer stage.
    slot = engine.task_claim(worker=worker, project=newsqa_project)
    assert slot.stage_id == answer_stage.pk
    live, _ = slots.worker_queue(worker=worker, kinds_by_role=kinds,
                                 project_id=newsqa_project.pk, now=timezone.now())
    assert live == slot.pk
    # Past its lease the slot is no longer live.
    live, _ = slots.worker_queue(worker=worker, kinds_by_role=kinds,
                                 project_id=newsqa_project.pk,
                                 now=timezone.now() + timedelta(days=1))
    assert live is None
    # Not a member: no stages at all.
    outsider = user_with_roles("outsider", Role.ANNOTATOR)
    assert slots.worker_queue(worker=outsider, kinds_by_role=kinds,
                              project_id=newsqa_project.pk) == (None, [])


def test_reserved_slots_go_only_to_their_annotator(answer_stage, answer_items, workers):
    item = answer_items[0]
    Assignment.objects.filter(item=item).update(reserved_for=workers["ann2"])
    now, lease = timezone.now(), timedelta(minutes=5)
    # The pool claim never takes a reserved slot; the reserved claim only for its owner.
    pool = slots.slot_claim(worker=workers["ann1"], stage_id=answer_stage.pk, now=now,
                            lease=lease)
    assert pool.item_id != item.pk and pool.status == "active"
    assert slots.slot_claim(worker=workers["ann1"], stage_id=answer_stage.pk, now=now,
                            lease=lease, reserved=True) is None
    mine = slots.slot_claim(worker=workers["ann2"], stage_id=answer_stage.pk, now=now,
                            lease=lease, reserved=True)
    assert mine.item_id == item.pk and mine.worker_id == workers["ann2"].pk
    assert mine.lease_expires_at == now + lease


def test_submitting_a_task_that_does_not_exist_is_refused(db, workers):
    with pytest.raises(engine.TaskError, match="does not exist"):
        engine.task_submit(assignment_id=987654, worker=workers["ann1"],
                           payload={"no_answer": True})


def test_emitting_is_idempotent_and_keeps_the_first_item(newsqa_project, answer_stage):
    question_stage = newsqa_project.stages.get(kind="newsqa_question")
    emit = Emit(kind="newsqa_answer", key="same", data={"question": "First?"})
    assert engine.items_emit(source_stage=question_stage, emits=[emit]) == 1
    again = Emit(kind="newsqa_answer", key="same", data={"question": "Second?"})
    assert engine.items_emit(source_stage=question_stage, emits=[again]) == 0
    item = Item.objects.get(stage=answer_stage, key="same")
    assert item.data == {"question": "First?"} and item.created_at is not None
    assert Assignment.objects.filter(item=item).count() == 2  # slots added once
    assert slots.stage_after(question_stage, "newsqa_answer") == answer_stage
    assert slots.stage_after(answer_stage, "newsqa_question") is None
    assert isinstance(slots.stage_after(question_stage, "newsqa_validate"), Stage)


def test_a_long_history_does_not_slow_the_claim(newsqa_project, answer_stage, workers):
    """The worker's own slots are probed per candidate through the (item, worker) index, not
    read whole and compared with every candidate (an anti join: quadratic in the history,
    1 s per claim for a worker with 4,700 slots behind them)."""
    if connection.vendor != "postgresql":
        pytest.skip("the plan is PostgreSQL's")
    worker = workers["ann1"]
    items = Item.objects.bulk_create([
        Item(project=newsqa_project, stage=answer_stage, key=f"h{n}", overlap=2,
             status=Item.Status.OPEN, data={"question": f"Question {n}?"})
        for n in range(400)
    ])
    now = timezone.now()
    # The worker answered each of the first 300 items; their second slots are still open.
    Assignment.objects.bulk_create(
        [Assignment(item=item, stage=answer_stage, status="submitted", worker=worker,
                    claimed_at=now, submitted_at=now) for item in items[:300]]
        + [Assignment(item=item, stage=answer_stage) for item in items]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_assignment")
        candidates, params = eligibility.candidates_sql(worker_id=worker.pk)
        cursor.execute(f"EXPLAIN {candidates} LIMIT 1", [answer_stage.pk, *params])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Anti Join" not in plan, plan
    assert "annotation_slot_item_worker" in plan, plan
    slot = slots.slot_claim(worker=worker, stage_id=answer_stage.pk, now=now,
                            lease=timedelta(minutes=5))
    assert slot.item_id == items[300].pk


def test_the_claim_statement_takes_the_latest_stage_first_and_keeps_a_live_slot(
        newsqa_project, answer_stage, answer_items, workers):
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement claim is PostgreSQL's")
    worker = workers["ann1"]
    kinds = {Role.ANNOTATOR.value: ["newsqa_question", "newsqa_answer", "newsqa_validate"]}
    now, lease = timezone.now(), timedelta(minutes=5)

    def claim(at, **extra):
        return slots.slot_claim_next(worker=worker, kinds_by_role=kinds, now=at, lease=lease,
                                     project_id=newsqa_project.pk, **extra)

    # Validation has nothing open, so the answer stage comes before the question stage.
    got, slot, stages = claim(now)
    assert [stage.kind for stage in stages] == ["newsqa_validate", "newsqa_answer",
                                                "newsqa_question"]
    assert got == "claimed" and slot.stage_id == answer_stage.pk
    assert slot.item_id == answer_items[0].pk and slot.status == "active"
    assert slot.worker_id == worker.pk and slot.lease_expires_at == now + lease
    assert Assignment.objects.get(pk=slot.pk).status == "active"
    assert TransitionLog.objects.filter(model="Assignment", object_id=slot.pk,
                                        to_status="active", actor=worker).count() == 1
    # While its lease runs, the worker gets the same slot back and nothing more is claimed.
    got, again, _ = claim(now + timedelta(minutes=1))
    assert got == "live" and again.pk == slot.pk
    assert Assignment.objects.filter(worker=worker, status="active").count() == 1
    # A batched kind among the stages: nothing is tried (batches claim their own way).
    got, none, stages = claim(now + timedelta(days=1), batched_kinds=["newsqa_question"])
    assert (got, none, len(stages)) == ("", None, 3)
    assert Assignment.objects.filter(worker=worker, status="active").count() == 1
    # Not a member of the project: no stages and no claim.
    outsider = user_with_roles("outsider", Role.ANNOTATOR)
    assert slots.slot_claim_next(worker=outsider, kinds_by_role=kinds, now=now, lease=lease,
                                 project_id=newsqa_project.pk) == ("", None, [])
    # No kinds to work at all (a role without human stages).
    assert slots.slot_claim_next(worker=worker, kinds_by_role={}, now=now + timedelta(days=1),
                                 lease=lease) == ("", None, [])


def test_finishing_an_item_moves_it_logs_it_and_emits_once(newsqa_project, answer_items):
    item = answer_items[0]
    stale = Item.objects.select_related("stage").get(pk=item.pk)  # read while still open
    agreement = newsqa_project.stages.get(kind="newsqa_agreement")
    emit = Emit(kind="newsqa_agreement", key=f"a{item.pk}", data={"question": "Q?"})
    engine.item_finish(item=item, emits=[emit], result={"answers": 2})
    item.refresh_from_db()
    assert item.status == "done" and item.result == {"answers": 2}
    assert item.finished_at is not None
    assert TransitionLog.objects.filter(model="Item", object_id=item.pk,
                                        to_status="done").count() == 1
    (emitted,) = Item.objects.filter(stage=agreement, key=f"a{item.pk}")
    assert emitted.parent_id == item.pk and emitted.status == "pending"
    assert emitted.overlap == 1 and emitted.project_id == newsqa_project.pk
    # Finished already (another process was first): refused, nothing more emitted.
    with pytest.raises(TransitionError, match="another process"):
        engine.item_finish(item=stale, emits=[emit])
    assert Item.objects.filter(stage=agreement, key=f"a{item.pk}").count() == 1
    # An item emitted already (same stage and key) is kept; the finish still happens.
    other = answer_items[1]
    engine.item_finish(item=other, emits=[emit])
    other.refresh_from_db()
    assert other.status == "done"
    assert Item.objects.get(stage=agreement, key=f"a{item.pk}").parent_id == item.pk


def test_finishing_into_a_stage_the_project_lacks_writes_nothing(newsqa_project, answer_items):
    item = answer_items[0]
    emit = Emit(kind="marco_distill", key="x", data={})
    with pytest.raises(ValidationError, match="no stage of kind 'marco_distill'"):
        engine.item_finish(item=item, emits=[emit])
    item.refresh_from_db()
    assert item.status == "open"
    assert not TransitionLog.objects.filter(model="Item", object_id=item.pk,
                                            to_status="done").exists()


def test_a_claim_is_one_statement_and_a_submit_two_or_three(answer_items, workers):
    """The hot path's round trips on PostgreSQL, once its statements are prepared: a claim
    is one statement; a submit locks and loads, then writes; the submit that completes the
    item also finishes it and emits its successor in one more. (Transaction control and
    the check for a queued run after the commit come on top.)"""
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement paths are PostgreSQL's")
    project = answer_items[0].project

    def statements(call):
        with CaptureQueriesContext(connection) as seen:
            result = call()
        return result, [q["sql"].split()[0] for q in seen.captured_queries
                        if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]

    def cycle(worker):
        slot, claim = statements(lambda: engine.task_claim(worker=worker, project=project))
        _, submit = statements(lambda: engine.task_submit(
            assignment_id=slot.pk, worker=worker, payload={"no_answer": True}))
        return slot, claim, submit

    for _ in range(2):  # prepared at their second use
        cycle(workers["ann1"])
        cycle(workers["ann2"])
    slot, claim, submit = cycle(workers["ann1"])
    assert slot.item_id == answer_items[2].pk
    assert (claim, submit) == (["EXECUTE"], ["EXECUTE", "EXECUTE"])
    slot, claim, last = cycle(workers["ann2"])
    assert slot.item_id == answer_items[2].pk
    assert (claim, last) == (["EXECUTE"], ["EXECUTE", "EXECUTE", "EXECUTE"])
    assert Item.objects.get(pk=answer_items[2].pk).status == "done"


def test_the_api_claim_answers_from_the_claim_statement_alone(answer_items, workers):
    """``POST /api/v1/tasks/next/``: once the worker's token is cached and the statement
    prepared, the claim alone, which scopes by the project's id and loads the slot's item,
    document, stage and project itself; the answer is the task the ORM would give. A live
    slot is answered the same way."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    project = answer_items[0].project
    worker = workers["ann1"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=worker).key}")
    url = "/api/v1/tasks/next/"
    for _ in range(2):  # the token cached, the statement prepared at its second use
        first = api.post(url, {"project": project.pk}, format="json").json()
        engine.task_submit(assignment_id=first["id"], worker=worker,
                           payload={"no_answer": True})
    with CaptureQueriesContext(connection) as seen:
        claimed = api.post(url, {"project": project.pk}, format="json")
    assert claimed.status_code == 200
    sqls = [q["sql"] for q in seen.captured_queries]
    assert len(sqls) == (1 if connection.vendor == "postgresql" else len(sqls))
    if connection.vendor == "postgresql":
        assert sqls[0].startswith("EXECUTE")
    from annotation.api.serializers import TaskOutputSerializer

    expected = TaskOutputSerializer(engine.assignment_for_worker(
        assignment_id=claimed.json()["id"], worker=worker)).data
    assert claimed.json() == expected
    assert claimed.json()["task"]["tokens"] and claimed.json()["project"] == project.name
    # Claiming again while it is live gives the same task, as fully loaded.
    assert api.post(url, {"project": project.pk}, format="json").json() == expected


@pytest.mark.parametrize(("project", "message"), [
    (10**12, 'Invalid pk "1000000000000" - object does not exist.'),
    (0, 'Invalid pk "0" - object does not exist.'),
    (2**63, f'Invalid pk "{2**63}" - object does not exist.'),
    ("seven", "Incorrect type. Expected pk value, received str."),
    (True, "Incorrect type. Expected pk value, received bool."),
    ([1], "Incorrect type. Expected pk value, received list."),
])
def test_the_api_claim_refuses_a_project_that_is_not_there(answer_items, workers, project,
                                                           message):
    """The claim reads no project before its statement; a project that does not exist is
    still a 400 naming the field (checked once the claim found nothing), and a live slot
    of the worker elsewhere is not handed out for it."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    worker = workers["ann1"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=worker).key}")
    live = api.post("/api/v1/tasks/next/", {"project": answer_items[0].project.pk},
                    format="json")
    assert live.status_code == 200
    refused = api.post("/api/v1/tasks/next/", {"project": project}, format="json")
    assert refused.status_code == 400, refused.content
    assert refused.json() == {"project": [message]}
    # Without a project: the worker's live slot, whatever the project.
    assert api.post("/api/v1/tasks/next/", {}, format="json").json()["id"] == live.json()["id"]


def test_giving_back_a_task_no_longer_held_says_why_in_the_workers_language(answer_items,
                                                                             workers):
    from django.utils.translation import override

    worker = workers["ann1"]
    task = engine.task_claim(worker=worker, project=answer_items[0].project)
    engine.task_submit(assignment_id=task.pk, worker=worker, payload={"no_answer": True})
    with override("zh-hans"), pytest.raises(engine.TaskError) as refused:
        engine.task_release(assignment_id=task.pk, worker=worker)
    assert str(refused.value) == "这个任务已经是已提交状态"
    with pytest.raises(engine.TaskError, match="^this task is already submitted$"):
        engine.task_release(assignment_id=task.pk, worker=worker)
    assert Assignment.objects.get(pk=task.pk).status == Assignment.Status.SUBMITTED
