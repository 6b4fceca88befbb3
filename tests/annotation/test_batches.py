"""Batches per annotator, inspection by checkers, the return-to-annotator loop."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
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
    engine.project_member_add(project=project, user=users["carol"], role=Role.CHECKER)
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
    inspection = finished_batch(project, alice)
    with pytest.raises(PermissionDenied, match="own batch"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=alice)


def test_checker_pages(project, people, client_for, committed):
    from django.urls import reverse

    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice)
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
    # Sent again (the back button, a second click): it is done, and the checker is told so.
    again = client.post(url, {"action": "accept"}, follow=True)
    assert again.redirect_chain[0] == (reverse("annotation:checker_home"), 302)
    assert "You finished this inspection already: the batch was returned" in \
        again.content.decode()
    with pytest.raises(ValidationError, match="finished this inspection already"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={})
    with pytest.raises(PermissionDenied, match="not yours"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=alice, marks={})


# The quality loop: numbering, explicit verdicts, comments back to the annotator -------------

RECIPES["test-batched-twice"] = [StageSpec("test_source", "Source"),
                                 StageSpec("test_batched", "Label A"),
                                 StageSpec("test_batched", "Label B"),
                                 StageSpec("test_sink", "Final")]


def test_batches_are_numbered_per_project_not_per_stage(db, settings, committed):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Twice", recipe="test-batched-twice",
                                    params={2: {"batch_size": 2}, 3: {"batch_size": 2}})
    Project.objects.filter(pk=project.pk).update(status="active")
    first, second = project.stages.get(order=2), project.stages.get(order=3)
    with committed():
        engine.items_emit(source_stage=project.stages.get(order=1), emits=[
            Emit(kind="test_batched", key=f"a{n}", data={}) for n in range(4)])
        engine.items_emit(source_stage=first, emits=[
            Emit(kind="test_batched", key=f"b{n}", data={}) for n in range(2)])
    assert list(first.batches.values_list("number", flat=True)) == [1, 2]
    assert list(second.batches.values_list("number", flat=True)) == [3]
    # another project counts from 1 again
    other = engine.project_create(name="Other", recipe="test-batched",
                                  params={2: {"batch_size": 2}})
    with committed():
        engine.items_emit(source_stage=other.stages.get(order=1), emits=[
            Emit(kind="test_batched", key="c", data={}) for _ in range(1)])
    assert batches.batches_flush_ready(project_id=other.pk) == 1
    assert list(other.batches.values_list("number", flat=True)) == [1]


def finished_batch(project, annotator, label="yes"):
    for _ in range(4):
        task = engine.task_claim(worker=annotator, project=project)
        engine.task_submit(assignment_id=task.pk, worker=annotator, payload={"label": label})
    return Inspection.objects.get(batch__annotator=annotator, status="open")


def test_an_explicit_verdict_must_agree_with_the_papers_rule(project, people, committed):
    carol = people["carol"]
    inspection = finished_batch(project, people["alice"])
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    one_wrong = {inspection.sample[0]: ["answer_incorrect"]}
    with pytest.raises(ValidationError, match=r"accuracy 0\.500 is not above the threshold "
                       r"0\.95, so the batch cannot be accepted"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                                  marks=one_wrong, verdict="accept")
    with pytest.raises(ValidationError, match=r"accuracy 1\.000 is above the threshold"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={},
                                  verdict="return")
    with pytest.raises(ValidationError, match="verdict: 'maybe'"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={},
                                  verdict="maybe")
    inspection.refresh_from_db()
    assert inspection.status == "active"  # nothing written by the refusals
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={},
                                  verdict="accept")
    assert Batch.objects.get(pk=inspection.batch_id).status == "accepted"


def test_comments_and_marks_go_back_with_the_returned_batch(project, people, committed):
    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice, label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    bad, fine = inspection.sample
    with pytest.raises(ValidationError, match="not in the sample"):
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={},
                                  verdict="return", item_comments={bad + 999: "x"})
    batches.inspection_submit(
        inspection_id=inspection.pk, checker=carol, verdict="return",
        marks={bad: ["answer_incorrect", "evidence_irrelevant"]},
        comment="  Most labels are the wrong way round.  ",
        item_comments={bad: "This one is a clear yes.", fine: " "})
    inspection.refresh_from_db()
    assert inspection.comment == "Most labels are the wrong way round."
    assert inspection.item_comments == {str(bad): "This one is a clear yes."}
    seen = {}
    for _ in range(4):  # the returned batch comes back to her, whole
        task = engine.task_claim(worker=alice, project=project)
        feedback = batches.returned_feedback(assignment=task)
        seen[task.item_id] = feedback
        engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    assert set(seen) == set(Batch.objects.get(pk=inspection.batch_id).items
                            .values_list("pk", flat=True))
    assert seen[bad]["sampled"] and seen[bad]["comment"] == "This one is a clear yes."
    assert [(r, strict) for r, _, strict in seen[bad]["rules"]] == [
        ("answer_incorrect", True), ("evidence_irrelevant", False)]
    assert seen[bad]["batch_comment"] == "Most labels are the wrong way round."
    assert seen[bad]["previous"].payload == {"label": "no"}
    assert seen[fine]["sampled"] and seen[fine]["rules"] == [] and seen[fine]["comment"] == ""
    unsampled = [pk for pk in seen if pk not in inspection.sample]
    assert unsampled and not seen[unsampled[0]]["sampled"]
    # the first round's answers never count again once the batch is accepted
    second = Inspection.objects.get(batch_id=inspection.batch_id, round=2)
    batches.inspection_claim(inspection_id=second.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=second.pk, checker=carol, marks={},
                                  verdict="accept")
    finals = Item.objects.filter(stage__kind="test_sink")
    assert {f.result["label"] for f in finals} == {"yes"}
    # a first-round task is not a relabelling: no feedback
    assert batches.returned_feedback(
        assignment=Assignment.objects.filter(round=1).exclude(worker=None).first()) is None


def test_checker_pages_name_project_and_annotator_and_colour_the_verdict(
        project, people, client_for, committed, settings):
    from django.urls import reverse

    settings.CELERY_TASK_ALWAYS_EAGER = True
    other = engine.project_create(name="Batched two", recipe="test-batched",
                                  params={2: {"batch_size": 4, "inspect_fraction": 0.5}})
    Project.objects.filter(pk=other.pk).update(status="active")
    with committed():
        engine.items_emit(source_stage=other.stages.get(order=1), emits=[
            Emit(kind="test_batched", key=f"o{n}", data={}) for n in range(4)])
    engine.project_member_add(project=other, user=people["bob"], role=Role.ANNOTATOR)
    engine.project_member_add(project=other, user=people["carol"], role=Role.CHECKER)
    mine = finished_batch(project, people["alice"])
    theirs = finished_batch(other, people["bob"])
    assert mine.batch.number == theirs.batch.number == 1
    client = client_for(people["carol"])
    home = client.get(reverse("annotation:checker_home")).content.decode()
    assert f'data-testid="inspect-{project.pk}-1"' in home
    assert f'data-testid="inspect-{other.pk}-1"' in home
    assert "Batched · Label" in home and "Batched two · Label" in home
    url = reverse("annotation:inspection_detail", args=[mine.pk])
    client.post(url, {"action": "claim"})
    page = client.get(url).content.decode()
    for testid in ("accept", "return", "accuracy", "batch-comment", "comment-1"):
        assert f'data-testid="{testid}"' in page
    assert 'data-threshold="0.95"' in page and "js/inspection.js" in page
    # a verdict the marks do not allow: refused, the marks and comments are kept
    refused = client.post(url, {f"rules-{mine.sample[0]}": ["answer_incorrect"],
                                f"comment-{mine.sample[0]}": "wrong label",
                                "comment": "please relabel", "action": "accept"})
    body = refused.content.decode()
    assert refused.status_code == 400 and "cannot be accepted" in body
    assert "wrong label" in body and "please relabel" in body
    assert 'value="answer_incorrect" data-item' in body and "checked" in body
    with committed():
        done = client.post(url, {f"rules-{mine.sample[0]}": ["answer_incorrect"],
                                 "comment": "please relabel", "action": "return"}, follow=True)
    body = done.content.decode()
    assert 'class="message warning"' in body and 'class="message success"' not in body
    assert "returned to alice" in body and "please relabel" in body
    annotator_home = client_for(people["alice"]).get(reverse("annotation:annotator_home"))
    text = annotator_home.content.decode()
    assert 'data-testid="returned-batches"' in text and "Batch 1 of Batched" in text
    assert "please relabel" in text


def test_a_failed_inspection_is_drawn_at_its_real_accuracy_on_the_checker_home(
        project, people, client_for, committed):
    """All sampled items marked wrong: accuracy 0.0, drawn on the 0 tick (the axis used to
    start at 0.5 and clip it there), with named axes."""
    import re

    from django.urls import reverse

    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice)
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                                  marks={i: ["answer_incorrect"] for i in inspection.sample})
    inspection.refresh_from_db()
    assert inspection.accuracy == 0.0
    home = client_for(carol).get(reverse("annotation:checker_home")).content.decode()
    svg = home.split('data-testid="plot-accuracy"', 1)[1].split("</svg>", 1)[0]
    ticks = {text: float(y) for y, text in re.findall(
        r'<text x="[\d.]+" y="([\d.]+)" text-anchor="end">([\d.]+)</text>', svg)}
    assert set(ticks) == {"0", "0.5", "1"}
    [dot_y] = re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)"', svg)
    assert float(dot_y) == ticks["0"] - 4  # on the 0 tick (labels sit 4 px lower)
    assert ">accuracy</text>" in svg and ">inspections, in order</text>" in svg


# Who inspects what, and the lists of batches ------------------------------------------------

def test_checkers_see_and_inspect_only_the_batches_of_projects_they_check(
        project, people, client_for, committed):
    """A checker is a project member like any worker: a checker of another project sees
    none of this project's batches and may not claim their inspection; an admin oversees
    every project."""
    from django.urls import reverse

    inspection = finished_batch(project, people["alice"])
    outsider = user_with_roles("dave", Role.CHECKER)
    home = client_for(outsider).get(reverse("annotation:checker_home")).content.decode()
    assert 'data-testid="empty-batches"' in home and "alice" not in home
    assert "alice" not in client_for(outsider).get(
        reverse("annotation:batch_list")).content.decode()
    with pytest.raises(PermissionDenied, match="not a checker of this batch's project"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=outsider)
    detail = reverse("annotation:inspection_detail", args=[inspection.pk])
    assert client_for(outsider).get(detail).status_code == 403  # not even its sample
    assert client_for(outsider).post(detail, {"action": "claim"}).status_code == 403
    member = engine.project_member_add(project=project, user=outsider, role=Role.CHECKER)
    member.status = "paused"
    member.save(update_fields=["status"])
    with pytest.raises(PermissionDenied, match="not a checker"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=outsider)
    boss = user_with_roles("boss", Role.ADMIN)
    home = client_for(boss).get(reverse("annotation:checker_home")).content.decode()
    assert f'data-testid="inspect-{project.pk}-{inspection.batch.number}"' in home
    batches.inspection_claim(inspection_id=inspection.pk, checker=people["carol"])


def test_batch_lists_search_filter_and_page(project, people, client_for, committed,
                                            monkeypatch):
    from django.urls import reverse

    from annotation import lists

    first = finished_batch(project, people["alice"])
    second = finished_batch(project, people["bob"])
    client = client_for(people["carol"])
    home = reverse("annotation:checker_home")

    def waiting(query):
        page = client.get(home, query).content.decode()
        return page.split('data-testid="waiting-filters"', 1)[1].split("</section>", 1)[0]

    assert "alice" in waiting({}) and "bob" in waiting({})
    only_bob = waiting({"q": "bob"})
    assert "bob" in only_bob and "alice" not in only_bob.split("</form>", 1)[1]
    by_number = waiting({"q": f"#{first.batch.number}"})
    assert f'inspect-{project.pk}-{first.batch.number}"' in by_number
    assert f'inspect-{project.pk}-{second.batch.number}"' not in by_number
    assert "No waiting batch matches these filters." in waiting({"q": "nobody"})
    # one per page: a pager keeps the search and filter across pages
    monkeypatch.setattr(lists, "PER_PAGE", 1)
    paged = waiting({"project": project.pk})
    assert 'data-testid="pager"' in paged and "Page 1 of 2 (2 in all)" in paged
    assert f"?project={project.pk}&amp;page=2" in paged
    assert "Page 2 of 2" in waiting({"project": project.pk, "page": 2})
    monkeypatch.setattr(lists, "PER_PAGE", 25)

    # The batch list: every batch, by status, each with its last inspection.
    batches.inspection_claim(inspection_id=first.pk, checker=people["carol"])
    with committed():
        batches.inspection_submit(inspection_id=first.pk, checker=people["carol"],
                                  marks={first.sample[0]: ["answer_incorrect"]},
                                  comment="relabel the first")
    listing = reverse("annotation:batch_list")
    page = client.get(listing).content.decode()
    assert f'data-testid="batch-{project.pk}-{first.batch.number}"' in page
    assert f'data-testid="batch-{project.pk}-{second.batch.number}"' in page
    returned = client.get(listing, {"status": "returned"}).content.decode()
    rows = returned.split('data-testid="batch-list"', 1)[1]
    assert "alice" in rows and "bob" not in rows
    assert "by carol, returned" in rows and "relabel the first" in rows
    assert "waiting for a checker" in client.get(listing, {"q": "bob"}).content.decode()
    assert "No batch matches these filters." in client.get(
        listing, {"status": "accepted"}).content.decode()
    # a project the checker does not check is no choice, and filters nothing
    refused = client.get(listing, {"project": 999999}).content.decode()
    assert "Select a valid choice" in refused
    # annotators have no batch list; the project page links to it
    assert client_for(people["alice"]).get(listing).status_code == 403
    boss = user_with_roles("boss", Role.ADMIN)
    detail = client_for(boss).get(reverse("annotation:project_detail", args=[project.pk]))
    assert f'{listing}?project={project.pk}' in detail.content.decode()


def test_a_claimed_inspection_can_be_put_back_by_its_checker_or_an_admin(
        project, people, client_for, committed):
    """A checker who took a batch and cannot finish it (or who left the project) no longer
    holds it for ever: they give it back, or an admin puts it back, and another checker of
    the project inspects it."""
    from django.urls import reverse

    carol = people["carol"]
    inspection = finished_batch(project, people["alice"])
    detail = reverse("annotation:inspection_detail", args=[inspection.pk])
    client_for(carol).post(detail, {"action": "claim"})
    # The checker gives it back unfinished: it waits again, with the same sample.
    response = client_for(carol).post(
        detail, {"action": "release", f"rules-{inspection.sample[0]}": ["answer_incorrect"]})
    assert response.status_code == 302
    inspection.refresh_from_db()
    assert (inspection.status, inspection.checker, inspection.marks) == ("open", None, {})
    # Taken again, and the checker is paused on the project: nobody else could take it.
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    member = project.members.get(user=carol)
    member.status = "paused"
    member.save(update_fields=["status"])
    erin = user_with_roles("erin", Role.CHECKER)
    engine.project_member_add(project=project, user=erin, role=Role.CHECKER)
    with pytest.raises(PermissionDenied, match="another checker has this batch"):
        batches.inspection_claim(inspection_id=inspection.pk, checker=erin)
    assert client_for(erin).get(detail).status_code == 403
    assert client_for(erin).post(detail, {"action": "release"}).status_code == 403
    assert Inspection.objects.get(pk=inspection.pk).checker == carol
    # An admin sees who holds it and puts it back.
    boss = user_with_roles("boss", Role.ADMIN)
    listed = client_for(boss).get(reverse("annotation:batch_list")).content.decode()
    assert f'href="{detail}" data-testid="held-inspection"' in listed
    page = client_for(boss).get(detail).content.decode()
    assert 'data-testid="held-by-other"' in page and "carol" in page
    assert 'name="rules-' not in page
    assert client_for(boss).post(detail, {"action": "release"}).status_code == 302
    batches.inspection_claim(inspection_id=inspection.pk, checker=erin)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=erin, marks={},
                                  verdict="accept")
    assert Batch.objects.get(pk=inspection.batch_id).status == "accepted"
    # Nothing to put back once it is done.
    with pytest.raises(ValidationError, match="nothing to put back"):
        batches.inspection_release(inspection_id=inspection.pk, user=boss)


def test_an_answer_of_a_returned_batch_is_relabelled_not_corrected(
        project, people, client_for, committed):
    """Once a checker returns a batch its items are open again, but the first round's
    answers never count again: correcting one ("Correct" on My tasks) would be lost. The
    annotator is sent to the relabelling task instead."""
    from django.urls import reverse

    from annotation.models import Submission

    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice, label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, verdict="return",
                                  marks={inspection.sample[0]: ["answer_incorrect"]})
    last = Submission.objects.filter(worker=alice).latest("id")
    assert last.item.status == "open"
    assert "returned its batch" in engine.submission_correctable(submission=last)
    with pytest.raises(engine.TaskError, match="returned its batch"):
        engine.submission_correct(submission_id=last.pk, worker=alice, payload={"label": "yes"})
    home = client_for(alice).get(reverse("annotation:annotator_home")).content.decode()
    assert 'data-testid="correct-last"' not in home
    assert 'data-testid="returned-answer"' in home
    correct = reverse("annotation:submission_correct", args=[last.pk])
    assert client_for(alice).post(correct, {"label": "yes"}).status_code == 302
    assert Submission.objects.get(pk=last.pk).superseded_by is None
    # The relabelling round's answer is the current one: it waits for the inspection.
    task = engine.task_claim(worker=alice, project=project)
    relabel = engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    assert "returned its batch" not in engine.submission_correctable(submission=relabel)


def test_checker_dashboard_draws_the_inspections_own_threshold(db, settings, client_for,
                                                                 committed):
    """A stage that passes batches above 0.9: the dashed pass line of the accuracy plot is
    at 0.9 (it was always drawn at 0.95, so a batch accepted at 0.92 looked failed)."""
    from django.urls import reverse

    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = engine.project_create(name="Lenient", recipe="test-batched", params={
        2: {"batch_size": 4, "inspect_fraction": 0.5, "pass_threshold": 0.9}})
    Project.objects.filter(pk=project.pk).update(status="active")
    with committed():
        engine.items_emit(source_stage=project.stages.get(order=1), emits=[
            Emit(kind="test_batched", key=f"q{n}", data={"query": f"query {n}"})
            for n in range(4)])
    alice = user_with_roles("alice", Role.ANNOTATOR)
    carol = user_with_roles("carol", Role.CHECKER)
    engine.project_member_add(project=project, user=alice, role=Role.ANNOTATOR)
    engine.project_member_add(project=project, user=carol, role=Role.CHECKER)
    inspection = finished_batch(project, alice)
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={},
                                  verdict="accept")
    home = client_for(carol).get(reverse("annotation:checker_home")).content.decode()
    svg = home.split('data-testid="plot-accuracy"', 1)[1].split("</svg>", 1)[0]
    assert "threshold 0.9<" in svg and "threshold 0.95" not in svg


def test_why_no_task_names_a_recipes_stage_in_the_interface_language(project, people,
                                                                      client_for):
    from django.urls import reverse
    from django.utils import translation

    from annotation import selectors

    project.stages.filter(order=2).update(name="Validation")  # a recipe's name, translated
    for _ in range(2):  # both full batches taken: nothing left for dave
        engine.task_claim(worker=people["alice"], project=project)
        engine.task_claim(worker=people["bob"], project=project)
    dave = user_with_roles("dave", Role.ANNOTATOR)
    engine.project_member_add(project=project, user=dave, role=Role.ANNOTATOR)
    with translation.override("zh-hans"):
        reasons = selectors.availability_why(worker=dave, project=project)
    assert reasons and all(r.startswith("验证") for r in reasons), reasons
    # The home pages' reasons under each project (the checker home's "Answers to review"
    # uses the same list), and the workers page's stage filter.
    client = client_for(dave)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    home = client.get(reverse("annotation:annotator_home")).content.decode()
    listed = home.split('data-testid="no-task-reasons"', 1)[1].split("</ul>", 1)[0]
    assert "<li>验证: " in listed and "Validation" not in listed
    carol = people["carol"]
    client = client_for(carol)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    workers = client.get(reverse("annotation:project_workers", args=[project.pk]))
    assert ">2. 验证</option>" in workers.content.decode()


# A batch its annotator can no longer work goes to whoever takes a batch next ----------------

def test_a_batch_whose_annotator_is_blocked_goes_whole_to_the_next_annotator(
        project, people, committed):
    """Alice begins batch 1 (one answer in, one task live) and is blocked on the stage: the
    batch no longer waits for her. Bob takes it whole in a new round (one annotator per
    round); alice's answer stays as history and only bob's answers reach the final set."""
    from annotation import quality

    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    stage = project.stages.get(order=2)
    first = engine.task_claim(worker=alice, project=project)
    engine.task_submit(assignment_id=first.pk, worker=alice, payload={"label": "no"})
    live = engine.task_claim(worker=alice, project=project)
    batch = Batch.objects.get(pk=first.item.batch_id)
    engine.standing_decide(standing=quality.standing_for(
        member=project.members.get(user=alice), stage=stage), action="block")
    live.refresh_from_db()
    assert live.status == "released"
    batch.refresh_from_db()
    assert (batch.status, batch.annotator, batch.round) == ("open", None, 2)
    assert not Assignment.objects.filter(item__batch=batch, status="open",
                                         reserved_for__isnull=False).exists()
    assert set(batch.items.values_list("status", flat=True)) == {"open"}
    # Bob takes it (the lowest-numbered open batch) and labels all four of its items.
    assert engine.task_claim(worker=bob, project=project).item.batch_id == batch.pk
    batch.refresh_from_db()
    assert (batch.status, batch.annotator) == ("working", bob)
    for _ in range(4):
        task = engine.task_claim(worker=bob, project=project)
        assert task.item.batch_id == batch.pk and task.round == 2
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=bob, payload={"label": "yes"})
    inspection = Inspection.objects.get(batch=batch, status="open")
    assert inspection.round == 2
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    with committed():
        batches.inspection_submit(inspection_id=inspection.pk, checker=carol, marks={})
    finals = Item.objects.filter(stage__kind="test_sink", key__in=list(
        batch.items.values_list("key", flat=True)))
    assert finals.count() == 4 and all(i.result == {"label": "yes"} for i in finals)
    assert Item.objects.get(pk=first.item_id).submissions.filter(worker=alice).exists()


def test_a_returned_batch_of_a_paused_member_goes_to_the_next_annotator(project, people):
    """Returned to alice, who is then paused on the project: bob takes it (same round,
    nothing relabelled yet) and sees the checker's feedback; also when alice was paused
    before the checker returned it."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    inspection = finished_batch(project, alice, label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                              marks={str(inspection.sample[0]): ["answer_incorrect"]},
                              comment="read the evidence again")
    batch = Batch.objects.get(pk=inspection.batch_id)
    assert (batch.status, batch.round) == ("returned", 2)
    engine.member_status_set(member=project.members.get(user=alice), status="paused",
                             actor=None)
    batch.refresh_from_db()
    assert (batch.status, batch.annotator, batch.round) == ("open", None, 2)
    task = engine.task_claim(worker=bob, project=project)
    assert task.item.batch_id == batch.pk and task.round == 2
    feedback = batches.returned_feedback(assignment=task)
    assert feedback["batch_comment"] == "read the evidence again"
    # The first round's inspection still names who labelled that round, not bob.
    from django.test import Client
    from django.urls import reverse

    checker = Client()
    checker.force_login(carol)
    page = checker.get(reverse("annotation:inspection_detail", args=[inspection.pk]))
    assert '<strong data-testid="batch-annotator">alice</strong>' in page.content.decode()
    # Paused first, returned after: the batch does not wait for alice either.
    engine.member_status_set(member=project.members.get(user=alice), status="active",
                             actor=None)
    other = finished_batch(project, alice, label="no")
    engine.member_status_set(member=project.members.get(user=alice), status="blocked",
                             actor=None)
    batches.inspection_claim(inspection_id=other.pk, checker=carol)
    batches.inspection_submit(inspection_id=other.pk, checker=carol,
                              marks={str(other.sample[0]): ["answer_incorrect"]})
    second = Batch.objects.get(pk=other.batch_id)
    assert (second.status, second.annotator, second.round) == ("open", None, 2)
    assert not Assignment.objects.filter(item__batch=second, reserved_for=alice,
                                         status="open").exists()


def test_the_next_annotator_of_a_returned_batch_never_gets_the_last_ones_answers(
        project, people):
    """Returned to alice, who is then blocked: bob relabels her batch with the checker's
    feedback, but her answers are hers: they are not his "previous answer" (filled in on
    his task page), so he neither reads them nor resubmits them unread."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    inspection = finished_batch(project, alice, label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    bad = inspection.sample[0]
    batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                              marks={str(bad): ["answer_incorrect"]},
                              item_comments={bad: "This one is a clear yes."})
    engine.member_status_set(member=project.members.get(user=alice), status="blocked",
                             actor=None)
    seen = {}
    for _ in range(4):
        task = engine.task_claim(worker=bob, project=project)
        assert task.round == 2
        seen[task.item_id] = batches.returned_feedback(assignment=task)
        engine.task_submit(assignment_id=task.pk, worker=bob, payload={"label": "yes"})
    assert all(feedback["previous"] is None for feedback in seen.values())
    # the checker's feedback on the batch still reaches him
    assert seen[bad]["comment"] == "This one is a clear yes."


def test_an_admin_puts_a_batch_back_from_the_batch_list(project, people, client_for):
    from django.test import Client
    from django.urls import reverse

    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    live = engine.task_claim(worker=alice, project=project)
    batch = Batch.objects.get(pk=live.item.batch_id)
    url = reverse("annotation:batch_put_back", args=[batch.pk])
    boss = user_with_roles("boss", Role.ADMIN)
    listed = client_for(boss).get(reverse("annotation:batch_list")).content.decode()
    assert f'action="{url}"' in listed
    assert f'action="{url}"' not in client_for(carol).get(
        reverse("annotation:batch_list")).content.decode()
    assert client_for(carol).post(url).status_code == 403  # checkers cannot
    with pytest.raises(PermissionDenied):
        batches.batch_put_back(batch_id=batch.pk, actor=carol, check_admin=True)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(boss)
    assert strict.post(url).status_code == 403  # no CSRF token
    assert client_for(boss).get(url).status_code == 405
    response = client_for(boss).post(url, follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:batch_list")
    assert "was taken from alice" in response.content.decode()
    live.refresh_from_db()
    batch.refresh_from_db()
    assert live.status == "released"
    assert (batch.status, batch.annotator, batch.round) == ("open", None, 1)  # not begun
    assert engine.task_claim(worker=bob, project=project).item.batch_id == batch.pk
    # Alice, still active, takes the next batch; the put-back one is bob's now.
    nxt = engine.task_claim(worker=alice, project=project).item.batch_id
    assert nxt != batch.pk
    url = reverse("annotation:batch_put_back", args=[nxt])
    client_for(boss).post(url)
    assert "nothing to put back" in client_for(boss).post(url, follow=True).content.decode()


def test_a_finished_inspection_opened_by_its_url_is_read_only_with_its_verdict(
        project, people, client_for):
    from django.urls import reverse

    carol = people["carol"]
    inspection = finished_batch(project, people["alice"], label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    bad = inspection.sample[0]
    batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                              marks={str(bad): ["answer_incorrect"]}, comment="redo these",
                              item_comments={str(bad): "see the evidence"})
    url = reverse("annotation:inspection_detail", args=[inspection.pk])
    for viewer in (carol, user_with_roles("boss", Role.ADMIN)):
        page = client_for(viewer).get(url).content.decode()
        assert 'data-testid="inspection-done"' in page
        assert "Returned for relabelling" in page and "accuracy 0.500" in page
        assert page.count('data-testid="marked-') == 1 and "The answer is incorrect" in page
        assert "redo these" in page and "see the evidence" in page
        assert 'data-testid="accept"' not in page and 'data-testid="return"' not in page
        assert 'name="rules-' not in page and "<textarea" not in page


def test_a_returned_batch_is_paid_for_both_rounds(project, people):
    """The rule README's pay section states: each submission of each round is paid."""
    from annotation import pay

    alice, carol = people["alice"], people["carol"]
    stage = project.stages.get(order=2)
    stage.params = {**stage.params, "pay_model": "submission", "pay_rate": "0.10"}
    stage.save(update_fields=["params"])
    inspection = finished_batch(project, alice, label="no")
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    batches.inspection_submit(inspection_id=inspection.pk, checker=carol,
                              marks={str(inspection.sample[0]): ["answer_incorrect"]})
    relabelled = label_all(alice, project)  # the returned batch, then the next one
    assert relabelled >= 4
    earned = pay.worker_earnings(worker=alice, project=project)["total"]
    assert earned == {project.currency: Decimal("0.10") * (4 + relabelled)}


def test_a_verdict_sent_after_the_session_ended_comes_back_after_logging_in(
    project, people, client, committed
):
    """A checker's ticks and comments, sent after their session had ended, went to the
    login page and were lost; they come back filled in on the inspection page."""
    from django.urls import reverse

    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice)
    url = reverse("annotation:inspection_detail", args=[inspection.pk])
    client.force_login(carol)
    client.post(url, {"action": "claim"})
    client.logout()
    first = inspection.sample[0]
    sent = client.post(url, {f"rules-{first}": ["answer_incorrect"], "action": "return",
                             f"comment-{first}": "The text says no.", "comment": "Recheck."})
    assert sent.status_code == 302 and sent["Location"].startswith(reverse("login"))
    client.force_login(carol)
    page = client.get(url).content.decode()
    assert "You had been logged out, so your answer was not saved." in page
    assert "The text says no.</textarea>" in page and "Recheck.</textarea>" in page
    box = page.split(f'name="rules-{first}" value="answer_incorrect"', 1)[1].split(">", 1)[0]
    assert "checked" in box
    with committed():
        assert client.post(url, {f"rules-{first}": ["answer_incorrect"], "action": "return",
                                 "comment": "Recheck."}).status_code == 302
    inspection.refresh_from_db()
    assert inspection.passed is False and inspection.comment == "Recheck."


def test_the_language_switch_keeps_a_checker_s_marks_and_comments(project, people, client):
    """A checker who switched language halfway through an inspection lost their ticks and
    comments; the switch now carries them (no verdict button was pressed)."""
    import json

    from django.urls import reverse

    alice, carol = people["alice"], people["carol"]
    inspection = finished_batch(project, alice)
    url = reverse("annotation:inspection_detail", args=[inspection.pk])
    client.force_login(carol)
    client.post(url, {"action": "claim"})
    first = inspection.sample[0]
    carried = {f"rules-{first}": ["answer_incorrect"], f"comment-{first}": ["The text says no."],
               "comment": ["Recheck."]}
    client.post(reverse("set_language"), {"language": "zh-hans", "next": url,
                                          "unsent_answer": json.dumps(carried)})
    page = client.get(url).content.decode()
    assert "The text says no.</textarea>" in page and "Recheck.</textarea>" in page
    box = page.split(f'name="rules-{first}" value="answer_incorrect"', 1)[1].split(">", 1)[0]
    assert "checked" in box
    assert "You had been logged out" not in page


def _logged(model: str, pk: int, to: str) -> list[tuple[Any, str]]:
    from annotation.models import TransitionLog

    return [(log.actor, log.note) for log in TransitionLog.objects.filter(
        model=model, object_id=pk, to_status=to).select_related("actor")]


@pytest.mark.parametrize("how", ["paused", "blocked"])
def test_a_stopped_checker_s_inspection_goes_back_at_once(project, people, client_for, how):
    """A checker paused or blocked in the project kept the inspection they had claimed:
    nobody else could take it until an admin put it back. Now it goes back with the
    member's status (as an annotator's live tasks do), the log naming the admin."""
    from django.urls import reverse

    carol = people["carol"]
    boss = user_with_roles("boss", Role.ADMIN)
    inspection = finished_batch(project, people["alice"])
    batches.inspection_claim(inspection_id=inspection.pk, checker=carol)
    engine.member_status_set(member=project.members.get(user=carol), status=how, actor=boss)
    inspection.refresh_from_db()
    assert (inspection.status, inspection.checker, inspection.claimed_at) == ("open", None, None)
    assert _logged("Inspection", inspection.pk, "open") == [
        (boss, f"member {how} by an admin")]
    erin = user_with_roles("erin", Role.CHECKER)
    engine.project_member_add(project=project, user=erin, role=Role.CHECKER)
    detail = reverse("annotation:inspection_detail", args=[inspection.pk])
    assert client_for(erin).post(detail, {"action": "claim"}).status_code == 302
    assert Inspection.objects.get(pk=inspection.pk).checker == erin
    # An annotator's pause leaves the checkers' inspections alone.
    other = finished_batch(project, people["bob"])
    batches.inspection_claim(inspection_id=other.pk, checker=erin)
    engine.member_status_set(member=project.members.get(user=people["alice"]),
                             status=how, actor=boss)
    assert Inspection.objects.get(pk=other.pk).checker == erin


def test_a_block_on_a_stage_logs_the_admin_who_acted_not_the_worker(project, people):
    """Blocking a worker on a stage logged the worker as the one who gave back their live
    task and their batch: the log names the admin."""
    from annotation import quality

    alice = people["alice"]
    boss = user_with_roles("boss", Role.ADMIN)
    stage = project.stages.get(order=2)
    first = engine.task_claim(worker=alice, project=project)
    engine.task_submit(assignment_id=first.pk, worker=alice, payload={"label": "no"})
    live = engine.task_claim(worker=alice, project=project)
    standing = quality.standing_for(member=project.members.get(user=alice), stage=stage)
    engine.standing_decide(standing=standing, action="block", actor=boss,
                           reason="copied answers")
    assert [actor for actor, _ in _logged("Assignment", live.pk, "released")] == [boss]
    assert [actor for actor, _ in _logged("Batch", live.item.batch_id, "open")] == [boss]
