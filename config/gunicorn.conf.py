"""gunicorn's settings for CrowdQA's web processes: ``gunicorn -c config/gunicorn.conf.py
config.wsgi``. Command-line flags (``--workers``, ``--bind``, ...) still apply on top."""

import gc

# The sync worker, woken one at a time per connection (config/gunicorn_worker.py).
worker_class = "config.gunicorn_worker.SyncWorker"


def post_worker_init(worker) -> None:
    """The worker has loaded the application (Django, the URLs, the apps' modules): move
    what exists now out of the garbage collector's sight (``gc.freeze``). Those objects
    live as long as the process; without this every full collection walks them again (about
    88,000 of the 150,000 a worker serving the task pages and the API tracks: a full pass
    took about 115 ms, frozen about 68, in the middle of some request). What requests create
    is collected as before."""
    gc.collect()
    gc.freeze()
