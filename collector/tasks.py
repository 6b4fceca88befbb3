"""Celery tasks of the collector: thin wrappers that pass ids and re-read state."""

from celery import shared_task

from collector.jobs import job_run


@shared_task(name="collector.tasks.job_run_task", acks_late=True)
def job_run_task(job_id: int) -> str:
    """Run a recorded job by id (idempotent: a finished job is not run again)."""
    job = job_run(job_id=job_id)
    return job.status
