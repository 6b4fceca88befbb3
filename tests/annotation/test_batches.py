"""Batches per annotator, inspection by checkers, the return-to-annotator loop."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation import batches, engine
from annotation.models import Assignment, Batch, Inspection, Item, Project
from annotation.recipes import RECIPES, StageSpec
from annotation.roles import Role
from annotation.stages import BATCH_PARAMS, Emit, Param, StageKind, register
from tests.factories import user_with_roles


@register
class _Source(StageKind):
    key = "test_source"
    label = "Source"
    automatic = True

    def run(self, stage, progress) -> dict[str, Any]:
        return {}


@register
class _Labelled(StageKind):
    key = "test_batched"
    label = "Label in batches"
    batched = True
    overlap_param = "overlap"
    params = {"overlap": Param(1, "Annotators per item.", minimum=1), **BATCH_PARAMS}
    inspection_rules = ("answer_incorrect", "evidence_irrelevant")

    def clean_payload(self, item, payload):
        if payload.get("label") not in ("yes", "no"):
            raise ValidationError("label: yes or no")
        return {"label": payload["label"]}

    def on_items_complete(self, item, submissions):
        return [Emit(kind="test_sink", key=item.key,
                     data={"label": submissions[-1].payload["label"]})]


@register
class _Sink(StageKind):
    key = "test_sink"
    label = "Final set"
    automatic = True

    def run(self, stage, progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        for item in items_pending_locked(stage, progress, "final"):
            item_finish(item=item, emits=[], result=item.data)
        return {}


RECIPES["test-batched"] = [StageSpec("test_source", "Source"),
                           StageSpec("test_batched", "Label"), StageSpec("test_sink", "Final")]


@pytest.fixture
def project(db, settings, committed):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Batched", recipe="test-batched",
                                    params={2: {"batch_size": 4, "inspect_fraction": 0.5}})
    Project.objects.filter(pk=project.pk).update(status="active")
    project.refresh_from_db()
    source = project.stages.get(order=1)
    with committed():
        engine.items_emit(source_stage=source, emits=[
            Emit(kind="test_batched", key=f"q{n}", data={"query": f"query {n}"})
            for n in range(10)
        ])
    return project


@pytest.fixture
def people(project):
    users = {name: user_with_roles(name, Role.ANNOTATOR) for name in ("alice", "bob")}
    users["carol"] = user_with_roles("carol", Role.CHECKER)
    for name in ("alice", "bob"):
        engine.project_member_add(project=project, user=users[name], role=Role.ANNOTATOR)
    return users


def label_all(worker, project, label="yes", committed=None):
    done = 0
    while (task := engine.task_claim(worker=worker, project=project)) is not None:
        if committed:
            with committed():
                engine.task_submit(assignment_id=task.pk, worker=worker,
                                   payload={"label": label})
        else:
            engine.task_submit(assignment_id=task.pk, worker=worker, payload={"label": label})
        done += 1
    return done


def test_full_batches_only_until_upstream_is_idle(project):
    stage = project.stages.get(order=2)
    assert list(stage.batches.values_list("number", flat=True)) == [1, 2]
    assert stage.items.filter(batch__isnull=True).count() == 2
    assert batches.batches_flush_ready(project_id=project.pk) == 1
    assert Counter(stage.items.values_list("batch__number", flat=True)) == {1: 4, 2: 4, 3: 2}


def test_one_annotator_per_batch_and_never_another_batch(project, people):
    alice, bob = people["alice"], people["bob"]
    first = engine.task_claim(worker=alice, project=project)
    other = engine.task_claim(worker=bob, project=project)
    assert first.item.batch_id != other.item.batch_id
    batch = Batch.objects.get(pk=first.item.batch_id)
    assert (batch.status, batch.annotator) == ("working", alice)
    # Alice's batch's open slots are reserved for her: bob never sees them.
    assert not Assignment.objects.filter(item__batch=batch, reserved_for=bob).exists()
    engine.task_submit(assignment_id=first.pk, worker=alice, payload={"label": "yes"})
    nxt = engine.task_claim(worker=alice, project=project)
    assert nxt.item.batch_id == batch.pk


def test_inspection_accepts_and_items_flow_on(project, people, committed):
    alice, carol = people["alice"], people["carol"]
    for _ in range(4):  # one whole batch
        task = engine.task_claim(worker=alice, project=project)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    batch = Batch.objects.get(annotator=alice)
    assert batch.status == "inspection"
    assert set(batch.items.values_list("status", flat=True)) == {"review"}
    inspection = Inspection.objects.get(batch=batch)
    assert len(inspection.sample) == 2 and set(inspection.sample) <= set(
        batch.items.values_list("pk", flat=True))
    with pytest.raises(PermissionDenied):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={})
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={})
    batch.refresh_from_db()
    assert batch.status == "accepted"
    assert Item.objects.filter(stage__kind="test_sink", status="done").count() == 4


def test_failed_inspection_returns_the_batch_to_its_annotator(project, people, committed):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    for _ in range(4):
        task = engine.task_claim(worker=alice, project=project)
        engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "no"})
    batch = Batch.objects.get(annotator=alice)
    inspection = batches.inspection_claim(
        inspection_id=Inspection.objects.get(batch=batch).pk, checker=carol)
    bad = inspection.sample[0]
    with pytest.raises(ValidationError, match="not sampled"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                                  marks={str(max(inspection.sample) + 999): ["answer_incorrect"]})
    batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                              marks={str(bad): ["answer_incorrect", "evidence_irrelevant"]})
    inspection.refresh_from_db()
    # strict + loose on one item: capped at 1.0 error; 1 of 2 sampled -> accuracy 0.5
    assert (inspection.errors, inspection.accuracy, inspection.passed) == (1.0, 0.5, False)
    batch.refresh_from_db()
    assert (batch.status, batch.round) == ("returned", 2)
    assert set(batch.items.values_list("status", flat=True)) == {"open"}
    # Only alice gets the batch back; old submissions stay as history.
    assert not any(engine.task_claim(worker=bob, project=project).item.batch_id == batch.pk
                   for _ in range(1))
    assert label_all(alice, project) >= 4
    batch.refresh_from_db()
    assert batch.status in ("inspection", "working")
    assert Item.objects.get(pk=bad).submissions.count() == 2
    second = Inspection.objects.get(batch=batch, round=2)
    assert second.seed != inspection.seed
    batches.inspection_claim(inspection_id=second.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=second.pk, checker=carol, marks={})
    batch.refresh_from_db()
    assert batch.status == "accepted"
    finals = dict(Item.objects.filter(stage__kind="test_sink").values_list("key", "result"))
    assert all(r == {"label": "yes"} for r in finals.values()) and len(finals) == 4


def test_annotator_cannot_inspect_own_batch(project, people):
    alice = people["alice"]
    for _ in range(4):
        task = engine.task_claim(worker=alice, project=project)
        engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    inspection = Inspection.objects.get(batch__annotator=alice)
    with pytest.raises(PermissionDenied, match="own batch"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=alice)


def test_checker_pages(project, people, client_for, committed):
    from django.urls import reverse

    alice, carol = people["alice"], people["carol"]
    for _ in range(4):
        task = engine.task_claim(worker=alice, project=project)
        engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    inspection = Inspection.objects.get(batch__annotator=alice)
    url = reverse("annotation:inspection_detail", args=[inspection.pk])
    assert client_for(alice).get(url).status_code == 403  # annotators never inspect
    client = client_for(carol)
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="waiting-batches"' in home and "alice" in home
    client.post(url, {"action": "claim"})
    page = client.get(url).content.decode()
    assert page.count('name="rules-') == 2 * len(inspection.sample)
    with committed():
        response = client.post(url, {f"rules-{inspection.sample[0]}": ["answer_incorrect"],
                                     "action": "return"})
    assert response.status_code == 302
    inspection.refresh_from_db()
    assert inspection.passed is False and inspection.marks == {str(inspection.sample[0]):
                                                              ["answer_incorrect"]}
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="plot-accuracy"' in home and "the answer is incorrect: 1" in home
