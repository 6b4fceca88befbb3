"""Starting an import from an uploaded file: keep the file in the default storage, where
every web host and worker reads it (``collector.upload_files``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.translation import gettext, gettext_noop

from collector.importers import (
    ByteCounter,
    ImportFailure,
    ImportUnit,
    QueryRecord,
    format_get,
    queries_read,
    source_open,
    units_read,
)
from collector.importers.sniff import QUERIES, Detection, format_detect
from collector.jobs import job_create
from collector.models import Job
from collector.stored_text import StoredText
from collector.upload_files import UploadRefused, upload_exists, upload_local, upload_save


def upload_store(*, upload: UploadedFile) -> tuple[str, str]:
    """Save an upload in the default storage, where every worker and web host reads it;
    returns (storage name, original name)."""
    return upload_save(upload=upload)


def import_job_start(*, upload: UploadedFile | None = None, stored: tuple[str, str] | None = None,
                     options: dict[str, Any], user: Any) -> Job:
    """Create the import job of an upload (stored now) or of one stored for a preview
    (``stored``: relative path, original name); queued once the transaction commits."""
    relative, original = stored if stored is not None else upload_store(upload=upload)
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


PREVIEW_RECORDS = 5
_SIGNED_UPLOAD = "collector.import.upload"
_SIGNED_UPLOAD_MAX_AGE = 24 * 3600


def upload_token(*, relative: str, original: str) -> str:
    """A signed reference to a stored upload, for the form that confirms its import."""
    return signing.dumps([relative, original], salt=_SIGNED_UPLOAD)


def upload_from_token(token: str) -> tuple[str, str]:
    """The stored upload a token names; ValidationError when it is forged, expired or
    its file is gone."""
    try:
        relative, original = signing.loads(token, salt=_SIGNED_UPLOAD,
                                           max_age=_SIGNED_UPLOAD_MAX_AGE)
    except signing.BadSignature as exc:
        raise ValidationError(gettext("The uploaded file has expired: upload it again.")
                              ) from exc
    try:
        present = upload_exists(relative)
    except UploadRefused as exc:
        raise ValidationError(str(exc)) from exc
    if not present:
        raise ValidationError(gettext("%(name)s is no longer on the server: upload it again.")
                              % {"name": original})
    return relative, original


@dataclass
class ImportPreview:
    detected: Detection | None  # None when the admin chose the format
    format: str
    units: list[ImportUnit] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)

    @property
    def records(self) -> int:
        return len(self.units) + len(self.queries)


def import_preview(*, relative: str, original: str, fmt: str = "",
                   mapping: dict[str, str] | None = None,
                   limit: int = PREVIEW_RECORDS) -> ImportPreview:
    """The format of a stored upload (detected when ``fmt`` is empty) and its first
    ``limit`` records, read by the import's own readers; ImportFailure names what is
    wrong (file, line, field)."""
    chosen = format_get(fmt) if fmt and fmt != QUERIES else None
    try:
        local = upload_local(relative)
    except (UploadRefused, FileNotFoundError) as exc:
        raise ImportFailure(StoredText(gettext_noop("is no longer on the server: upload it "
                                                    "again")), file=original) from exc
    with local as path:
        source = source_open(path, max_bytes=settings.CROWDQA_IMPORT_MAX_BYTES, name=original,
                             folder_suffix=chosen.folder_suffix if chosen else None)
        detected = None
        if not fmt:
            detected = format_detect(source)
            fmt = detected.format
        preview = ImportPreview(detected=detected, format=fmt)
        counter = ByteCounter()
        if fmt == QUERIES:
            preview.queries = list(islice(queries_read(source, counter=counter), limit))
        else:
            preview.units = list(islice(units_read(format_get(fmt), source, counter=counter,
                                                   mapping=mapping), limit))
    return preview
