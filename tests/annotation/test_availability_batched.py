"""Open tasks in a batched stage: the worker's own batch and the batches nobody took."""

from __future__ import annotations

from annotation import engine, selectors
from tests.annotation.test_batches import people, project  # noqa: F401 (fixtures)


def test_batched_stage_counts_own_batch_and_untaken_batches(request):
    batched, crowd = request.getfixturevalue("project"), request.getfixturevalue("people")
    alice, bob = crowd["alice"], crowd["bob"]
    available = selectors.worker_availability(worker=alice)[batched.pk]
    assert available.count == 8  # two full batches nobody took (the rest waits to fill)
    first = engine.task_claim(worker=alice, project=batched)
    assert selectors.worker_availability(worker=alice)[batched.pk].count == 7  # 3 + 4
    assert selectors.worker_availability(worker=bob)[batched.pk].count == 4
    engine.task_claim(worker=bob, project=batched)
    engine.task_submit(assignment_id=first.pk, worker=alice, payload={"label": "yes"})
    while (task := engine.task_claim(worker=alice, project=batched)) is not None:
        engine.task_submit(assignment_id=task.pk, worker=alice, payload={"label": "yes"})
    (stage,) = selectors.worker_availability(worker=alice)[batched.pk].stages
    assert (stage.count, stage.rule) == (0, "pool")
    assert stage.reason == "its open tasks are in other annotators' batches"
    assert selectors.worker_availability(worker=bob)[batched.pk].count == 3
