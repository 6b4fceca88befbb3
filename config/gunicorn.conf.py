"""gunicorn's settings for CrowdQA's web processes: ``gunicorn -c config/gunicorn.conf.py
config.wsgi``. Command-line flags (``--workers``, ``--bind``, ...) still apply on top."""

# The sync worker, woken one at a time per connection (config/gunicorn_worker.py).
worker_class = "config.gunicorn_worker.SyncWorker"
