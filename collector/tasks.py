"""Celery tasks of the collector: thin wrappers that pass ids and re-read state."""

from celery import shared_task

from collector.jobs import job_run, jobs_recover


# acks_late: the message is acknowledged only after the run, so a worker that dies mid-job
# leaves it with the broker; reject_on_worker_lost: a pool child that dies puts it back at
# once (a whole worker killed gets it back after the broker's visibility timeout). Either
# way the conditional claim in job_run keeps a job from running twice.
@shared_task(name="collector.tasks.job_run_task", acks_late=True, reject_on_worker_lost=True)
def job_run_task(job_id: int) -> str:
    """Run a recorded job by id (idempotent: a finished or running job is not run again)."""
    job = job_run(job_id=job_id)
    return job.status


@shared_task(name="collector.tasks.jobs_recover_task")
def jobs_recover_task() -> dict[str, int]:
    """Periodic: queue again (or fail with "worker lost") jobs whose worker stopped, and send
    again queued jobs whose message the broker lost (or mark them stalled)."""
    return jobs_recover()
