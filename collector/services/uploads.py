"""Starting an import from an uploaded file: keep the file where workers can read it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.text import get_valid_filename

from collector.job_handlers import UPLOAD_DIR
from collector.jobs import job_create
from collector.models import Job

QUERIES = "queries"  # the upload form's "format" for query lists


def upload_store(*, upload: UploadedFile) -> tuple[str, str]:
    """Copy an upload under MEDIA_ROOT/imports/; returns (relative path, original name)."""
    original = Path(upload.name or "upload").name
    relative = Path(UPLOAD_DIR) / uuid.uuid4().hex / (get_valid_filename(original) or "upload")
    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return str(relative), original


def import_job_start(*, upload: UploadedFile, options: dict[str, Any], user: Any) -> Job:
    """Store the upload and create the import job (queued once the transaction commits)."""
    relative, original = upload_store(upload=upload)
    params: dict[str, Any] = {
        "upload": relative, "filename": original, "corpus": options["corpus"],
        "language": options["language"],
    }
    if options["format"] == QUERIES:
        kind = "queries_import"
    else:
        kind = "corpus_import"
        params.update(
            format=options["format"], mapping=options.get("mapping", "").strip(),
            split_mode=options.get("split_mode") or None,
            window_tokens=options.get("window_tokens"),
            window_overlap=options.get("window_overlap"),
            description=options.get("description", ""),
        )
    with transaction.atomic():
        return job_create(kind=kind, params=params, user=user)
