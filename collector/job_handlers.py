"""Job kinds of the collector: imports and index builds, run by ``collector.jobs``.

Handlers are thin: read the job's parameters, call a service, turn bad input into a
``JobError`` the job page shows. Everything that writes a search index runs on the
``index`` queue (one worker, concurrency 1), so each index has a single writer. All of
them are idempotent (imports skip the ids a corpus has, index builds start over), so a
run cut short by a dead worker is run again (``rerun_when_lost``). Uploads are read from
the default storage (``collector.upload_files``), so any worker can run an import; an upload
is removed once its import is done or refused; after any other failure it stays for a Retry.
"""

from __future__ import annotations

import contextlib
from dataclasses import fields
from pathlib import Path
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from collector.importers import ImportFailure
from collector.jobs import JobError, Progress, job_handler
from collector.models import Corpus, ImportRun, Job
from collector.search import IndexBusy
from collector.services import (
    SplitOptions,
    corpus_import,
    index_rebuild,
    queries_import,
)
from collector.services.bulk import ImportCounts
from collector.upload_files import UploadRefused, upload_discard, upload_exists, upload_local

# The job parameter holding the import run its import committed.
IMPORT_RUN = "import_run"
IMPORT_COUNTS = tuple(f.name for f in fields(ImportCounts))


def _upload_read(params: dict[str, Any]) -> contextlib.AbstractContextManager[Path]:
    """The job's upload as a local path for a ``with`` block
    (``collector.upload_files.upload_local``); a JobError when it is gone."""
    try:
        return upload_local(params["upload"])
    except UploadRefused as exc:
        raise JobError(str(exc)) from exc
    except FileNotFoundError as exc:
        raise JobError(f"the uploaded file {params.get('filename') or params['upload']} is "
                       "gone (removed after an earlier run); upload it again") from exc


def upload_kept(job: Job) -> bool:
    """An import can run again while its upload is kept (a refused one is discarded)."""
    return bool(job.params.get("upload")) and upload_exists(job.params["upload"])


def corpus_subject(job: Job) -> list[tuple[str, str, str]]:
    """The corpus a job works on, for its page: (label, text, link)."""
    name = job.params.get("corpus") or job.result.get("corpus")
    if not name:
        return []
    link = (reverse("collector:corpus_detail", args=[name])
            if Corpus.objects.filter(name=name).exists() else "")
    source = job.params.get("filename")
    return [(_("Corpus"), name, link), *([(_("File"), source, "")] if source else [])]


def import_summary(job: Job) -> list[str]:
    r = job.result
    if "queries_created" in r:
        return [_("%(created)s queries imported into %(corpus)s (%(skipped)s skipped: already "
                  "present).") % {"created": f"{r['queries_created']:,}", "corpus": r["corpus"],
                                  "skipped": f"{r['queries_skipped']:,}"}]
    lines = [_("%(documents)s documents imported into %(corpus)s (%(skipped)s skipped: already "
               "present), %(passages)s passages, %(questions)s questions (%(questions_skipped)s "
               "skipped).") % {
        "documents": f"{r.get('documents_created', 0):,}", "corpus": r["corpus"],
        "skipped": f"{r.get('documents_skipped', 0):,}",
        "passages": f"{r.get('passages_created', 0):,}",
        "questions": f"{r.get('questions_created', 0):,}",
        "questions_skipped": f"{r.get('questions_skipped', 0):,}"}]
    if r.get("passages_indexed") is not None:
        lines.append(ngettext("%(count)s passage added to the search index.",
                              "%(count)s passages added to the search index.",
                              r["passages_indexed"]) % {"count": f"{r['passages_indexed']:,}"})
    if not r.get("run"):
        lines.append(_("Nothing new: every record was in the corpus already."))
    return lines


def index_summary(job: Job) -> list[str]:
    return [_("Search index of %(corpus)s rebuilt: %(count)s passages indexed.") % {
        "corpus": job.result["corpus"], "count": f"{job.result['passages_indexed']:,}"}]


@job_handler("corpus_import", queue="index", rerun_when_lost=True, subject=corpus_subject,
             summary=import_summary, label=gettext_lazy("Corpus import"), can_retry=upload_kept)
def corpus_import_job(job: Job, progress: Progress) -> dict[str, Any]:
    params = job.params

    def committing(run_id: int) -> None:
        # Kept with the job (its parameters survive a re-run and an admin's Retry): a run
        # after a lost worker finds the documents there and says what this import made.
        Job.objects.filter(pk=job.pk).update(params={**params, IMPORT_RUN: run_id})

    try:
        with _upload_read(params) as path:
            report = corpus_import(
                path=path, corpus=params["corpus"], language=params["language"],
                format=params["format"], mapping=params.get("mapping") or None,
                source_name=params.get("filename") or path.name,
                split=SplitOptions(mode=params.get("split_mode"),
                                   window_tokens=params.get("window_tokens"),
                                   window_overlap=params.get("window_overlap")),
                description=params.get("description", ""), user=job.created_by,
                progress=progress, committing=committing,
            )
    except ImportFailure as exc:
        upload_discard(params["upload"])
        raise JobError(exc.text) from exc
    except IndexBusy as exc:
        raise JobError(str(exc)) from exc
    if report.run_id is None and params.get("index", True):
        # Nothing new: an earlier run of this job committed everything and died before
        # (or while) indexing it; the index catches up with the database here.
        from collector.services.indexing import index_pending

        caught_up = index_pending(corpus=Corpus.objects.get(name=report.corpus),
                                  progress=progress)
        if caught_up:
            report.indexed = caught_up
    if report.run_id is None and (earlier := _earlier_run(params)) is not None:
        # The documents were this job's own, imported by the run that lost its worker
        # (reported as "0 imported, all skipped: nothing new" before).
        report.run_id = earlier.pk
        report.counts = ImportCounts(**{f: getattr(earlier, f) for f in IMPORT_COUNTS})
    upload_discard(params["upload"])
    return report.as_dict()


def _earlier_run(params: dict[str, Any]) -> ImportRun | None:
    """The import run an earlier run of this job committed, if any."""
    run_id = params.get(IMPORT_RUN)
    if not isinstance(run_id, int):
        return None
    return ImportRun.objects.filter(pk=run_id, corpus__name=params["corpus"]).first()


@job_handler("queries_import", rerun_when_lost=True, subject=corpus_subject,
             summary=import_summary, label=gettext_lazy("Queries import"),
             can_retry=upload_kept)
def queries_import_job(job: Job, progress: Progress) -> dict[str, Any]:
    params = job.params
    try:
        with _upload_read(params) as path:
            report = queries_import(
                path=path, corpus=params["corpus"], language=params["language"],
                source_name=params.get("filename") or path.name, user=job.created_by,
                progress=progress,
            )
    except ImportFailure as exc:
        upload_discard(params["upload"])
        raise JobError(exc.text) from exc
    upload_discard(params["upload"])
    return report.as_dict()


@job_handler("index_rebuild", queue="index", rerun_when_lost=True, subject=corpus_subject,
             summary=index_summary, label=gettext_lazy("Index rebuild"))
def index_rebuild_job(job: Job, progress: Progress) -> dict[str, Any]:
    corpus = Corpus.objects.filter(name=job.params["corpus"]).first()
    if corpus is None:
        raise JobError(f"no corpus named {job.params['corpus']!r}")
    try:
        indexed = index_rebuild(corpus=corpus, progress=progress)
    except IndexBusy as exc:
        raise JobError(str(exc)) from exc
    return {"corpus": corpus.name, "passages_indexed": indexed}
