"""Periodic jobs of the engine."""

from celery import shared_task

from annotation.engine import leases_expire


@shared_task(name="annotation.tasks.leases_expire_task")
def leases_expire_task() -> int:
    """Return expired leases' slots to the pool (idempotent; also checked at claim time)."""
    return leases_expire()
