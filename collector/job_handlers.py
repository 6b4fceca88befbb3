"""Job kinds of the collector: imports and index builds, run by ``collector.jobs``.

Handlers are thin: read the job's parameters, call a service, turn bad input into a
``JobError`` the job page shows. Everything that writes a search index runs on the
``index`` queue (one worker, concurrency 1), so each index has a single writer.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from django.conf import settings

from collector.importers import ImportFailure
from collector.jobs import JobError, Progress, job_handler
from collector.models import Corpus, Job
from collector.search import IndexBusy
from collector.services import (
    SplitOptions,
    corpus_import,
    index_rebuild,
    queries_import,
)

UPLOAD_DIR = "imports"


def upload_path(relative: str) -> Path:
    """An uploaded file's path from its name relative to MEDIA_ROOT (shared with workers)."""
    root = Path(settings.MEDIA_ROOT).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root / UPLOAD_DIR):
        raise JobError(f"refusing to read {relative!r}: not an upload")
    return path


def _discard_upload(path: Path) -> None:
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        path.parent.rmdir()


@job_handler("corpus_import", queue="index")
def corpus_import_job(job: Job, progress: Progress) -> dict[str, Any]:
    params = job.params
    path = upload_path(params["upload"])
    try:
        report = corpus_import(
            path=path, corpus=params["corpus"], language=params["language"],
            format=params["format"], mapping=params.get("mapping") or None,
            source_name=params.get("filename") or path.name,
            split=SplitOptions(mode=params.get("split_mode"),
                               window_tokens=params.get("window_tokens"),
                               window_overlap=params.get("window_overlap")),
            description=params.get("description", ""), user=job.created_by, progress=progress,
        )
    except (ImportFailure, IndexBusy) as exc:
        raise JobError(str(exc)) from exc
    finally:
        _discard_upload(path)
    return report.as_dict()


@job_handler("queries_import")
def queries_import_job(job: Job, progress: Progress) -> dict[str, Any]:
    params = job.params
    path = upload_path(params["upload"])
    try:
        report = queries_import(
            path=path, corpus=params["corpus"], language=params["language"],
            source_name=params.get("filename") or path.name, user=job.created_by,
            progress=progress,
        )
    except ImportFailure as exc:
        raise JobError(str(exc)) from exc
    finally:
        _discard_upload(path)
    return report.as_dict()


@job_handler("index_rebuild", queue="index")
def index_rebuild_job(job: Job, progress: Progress) -> dict[str, Any]:
    corpus = Corpus.objects.filter(name=job.params["corpus"]).first()
    if corpus is None:
        raise JobError(f"no corpus named {job.params['corpus']!r}")
    try:
        indexed = index_rebuild(corpus=corpus, progress=progress)
    except IndexBusy as exc:
        raise JobError(str(exc)) from exc
    return {"corpus": corpus.name, "passages_indexed": indexed}
