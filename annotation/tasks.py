"""Periodic jobs of the engine."""

from celery import shared_task

from annotation.engine import leases_expire


@shared_task(name="annotation.tasks.leases_expire_task")
def leases_expire_task() -> int:
    """Return expired leases' slots to the pool (idempotent; also checked at claim time)."""
    return leases_expire()


@shared_task(name="annotation.tasks.stages_pick_up_task")
def stages_pick_up_task() -> list[int]:
    """Periodic: run again automatic stages whose pending items have no live run."""
    from annotation.workflow import stages_pick_up

    return stages_pick_up()
