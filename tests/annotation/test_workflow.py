"""One table of allowed transitions; everything else is refused, races fail loudly."""

from __future__ import annotations

import itertools

import pytest

from annotation.models import Assignment, Item, Project, TransitionLog
from annotation.workflow import ALLOWED, TransitionError, transition

MODELS = {Project: Project.Status, Item: Item.Status, Assignment: Assignment.Status}


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
def test_every_transition_outside_the_table_is_refused(model):
    statuses = MODELS[model].values
    refused = 0
    for source, target in itertools.product(statuses, statuses):
        if (source, target) in ALLOWED[model]:
            continue
        obj = model(pk=1, status=source)
        with pytest.raises(TransitionError, match="not an allowed transition"):
            transition(obj, target)
        refused += 1
    assert refused == len(statuses) ** 2 - len(ALLOWED[model])


def test_transition_updates_logs_and_refuses_a_stale_status(newsqa_project, workers):
    slot = Assignment.objects.filter(status=Assignment.Status.OPEN).first()
    stale = Assignment.objects.get(pk=slot.pk)
    transition(slot, Assignment.Status.ACTIVE, actor=workers["ann1"], worker=workers["ann1"])
    slot.refresh_from_db()
    assert slot.status == "active" and slot.worker == workers["ann1"]
    log = TransitionLog.objects.filter(model="Assignment", object_id=slot.pk).get()
    assert (log.from_status, log.to_status, log.actor) == ("open", "active", workers["ann1"])
    # Another process read the row while it was open: its move must fail, loudly.
    with pytest.raises(TransitionError, match="expected status open, found active"):
        transition(stale, Assignment.Status.ACTIVE, worker=workers["ann2"])
    slot.refresh_from_db()
    assert slot.worker == workers["ann1"]
