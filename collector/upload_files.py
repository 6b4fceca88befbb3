"""Uploaded import files in Django's default storage, where every web host and worker sees
them: the web process that receives an upload saves it there (``upload_save``), a preview on
any web host and the import job on any worker read it from there (``upload_local``), and
the job removes it once its import is done or refused (``upload_discard``).

The importers read a local path (they sniff zip and gzip archives and seek in them): with
a storage on this host's file system that is the stored file itself; otherwise (an object
store: no ``path``, or a path with no file behind it) the file is streamed, in chunks, into
a temporary file for the time of the read.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from django.core.files.storage import Storage, default_storage
from django.core.files.uploadedfile import UploadedFile
from django.utils.text import get_valid_filename

UPLOAD_DIR = "imports"
_COPY_CHUNK = 1024 * 1024


class UploadRefused(ValueError):
    """A name that is not one of the stored uploads (the message says which)."""


def upload_storage() -> Storage:
    return default_storage


def upload_name(relative: str) -> str:
    """The storage name of an upload, checked: under ``imports/``, no ``..``."""
    path = PurePosixPath(relative.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or path.parts[:1] != (UPLOAD_DIR,) \
            or len(path.parts) < 2:
        raise UploadRefused(f"refusing to read {relative!r}: not an upload")
    return str(path)


def upload_save(*, upload: UploadedFile) -> tuple[str, str]:
    """Save an upload under ``imports/<random>/`` in the storage; returns (storage name,
    original file name)."""
    original = Path(upload.name or "upload").name
    wanted = f"{UPLOAD_DIR}/{uuid.uuid4().hex}/{get_valid_filename(original) or 'upload'}"
    return upload_storage().save(wanted, upload), original


def upload_exists(relative: str) -> bool:
    return upload_storage().exists(upload_name(relative))


def upload_local(relative: str) -> contextlib.AbstractContextManager[Path]:
    """A local path holding the upload for the time of a ``with`` block: the stored file
    when the storage is on this host's file system, else a temporary copy streamed from the
    storage in chunks (removed afterwards). Raises at once, before any ``with``:
    ``UploadRefused`` for a name that is not an upload, ``FileNotFoundError`` when the
    upload is gone."""
    name = upload_name(relative)
    storage = upload_storage()
    try:
        local: Path | None = Path(storage.path(name))
    except NotImplementedError:  # not on the file system (an object store)
        local = None
    if local is not None and local.is_file():
        return contextlib.nullcontext(local)
    if not storage.exists(name):
        raise FileNotFoundError(name)
    return _streamed_copy(storage, name)


@contextlib.contextmanager
def _streamed_copy(storage: Storage, name: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="crowdqa-upload-") as folder:
        target = Path(folder) / PurePosixPath(name).name
        with storage.open(name, "rb") as source, target.open("wb") as out:
            shutil.copyfileobj(source, out, _COPY_CHUNK)
        yield target


def upload_discard(relative: str) -> None:
    """Remove a stored upload (and, on the file system, its now empty folder)."""
    name = upload_name(relative)
    storage = upload_storage()
    storage.delete(name)
    with contextlib.suppress(NotImplementedError, OSError):
        Path(storage.path(name)).parent.rmdir()
