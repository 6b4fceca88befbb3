"""Uploads live in Django's default storage, not on the web host's disk: with a storage that
has no local files (InMemoryStorage, as an object store) the preview, the import job and the
clean-up all go through it, and nothing is written under MEDIA_ROOT."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import InMemoryStorage, storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from collector.models import Corpus, Job
from collector.upload_files import UploadRefused, upload_local, upload_name, upload_save
from tests.collector.corpus_support import NEWSQA_CSV, SQUAD_V1, indexed


@pytest.fixture
def object_store(settings, tmp_path):
    """The default storage in memory (its ``path`` has no file behind it); MEDIA_ROOT a
    folder that must never be created."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {**settings.STORAGES,
                         "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"}}
    assert isinstance(storages["default"], InMemoryStorage)
    return storages["default"]


def _stored_uploads(storage) -> list[str]:
    folders, files = storage.listdir("imports") if storage.exists("imports") else ([], [])
    return [f"{folder}/{name}" for folder in folders for name in storage.listdir(
        f"imports/{folder}")[1]] + files


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_preview_and_import_read_the_upload_from_the_storage(
        object_store, django_capture_on_commit_callbacks, client_for, admin_user, settings):
    client = client_for(admin_user)
    url = reverse("collector:import")
    with SQUAD_V1.open("rb") as upload:
        page = client.post(url, {"file": upload, "corpus": "stored", "language": "en",
                                 "action": "preview"}).content.decode()
    assert "Detected format: <strong>squad</strong>" in page
    [stored] = _stored_uploads(object_store)
    assert object_store.open(f"imports/{stored}").read() == SQUAD_V1.read_bytes()
    token = page.split('name="upload" value="')[1].split('"')[0]
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"upload": token, "corpus": "stored", "language": "en",
                          "format": "squad", "action": "import"})
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.DONE, job.error
    assert job.params["filename"] == SQUAD_V1.name
    corpus = Corpus.objects.get(name="stored")
    assert job.result["documents_created"] == corpus.documents.count() > 0
    assert indexed(corpus) == job.result["passages_indexed"] > 0
    # Removed from the storage once imported; nothing was ever on the local disk.
    assert _stored_uploads(object_store) == []
    assert not Path(settings.MEDIA_ROOT).exists()
    # The confirmed preview of a removed upload names the file.
    page = client.post(url, {"upload": token, "corpus": "stored", "language": "en",
                             "format": "squad", "action": "import"}).content.decode()
    assert f"{SQUAD_V1.name} is no longer on the server: upload it again" in page


@pytest.mark.django_db
def test_a_refused_upload_is_removed_and_a_gone_one_fails_its_retry(
        object_store, django_capture_on_commit_callbacks, client_for, admin_user):
    from collector.jobs import job_create

    client = client_for(admin_user)
    with NEWSQA_CSV.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collector:import"), {
            "file": upload, "corpus": "wrong", "language": "en", "format": "squad"})
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.FAILED
    assert job.error.startswith(f"{NEWSQA_CSV.name}: ")  # the importer's own message
    assert _stored_uploads(object_store) == []
    with django_capture_on_commit_callbacks(execute=True):
        job_create(kind="corpus_import", params={**job.params, "corpus": "again"})
    again = Job.objects.exclude(pk=job.pk).get()
    assert again.status == Job.Status.FAILED
    assert again.error == (f"the uploaded file {NEWSQA_CSV.name} is gone (removed after an "
                           "earlier run); upload it again")


def test_an_object_store_upload_is_streamed_into_a_temporary_file(object_store):
    body = b'{"id": "a", "body": "Text one."}\n' * 50_000
    name, original = upload_save(upload=SimpleUploadedFile("docs.jsonl", body))
    assert (original, name.rsplit("/", 1)[-1]) == ("docs.jsonl", "docs.jsonl")
    with upload_local(name) as path:
        assert path.name == "docs.jsonl" and path.read_bytes() == body
    assert not path.exists() and not path.parent.exists()
    assert object_store.exists(name)  # reading does not remove it


def test_a_local_storage_reads_the_stored_file_itself(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    name, _ = upload_save(upload=SimpleUploadedFile("q.txt", b"who wrote hamlet\n"))
    with upload_local(name) as path:
        assert path == tmp_path / name
    assert path.exists()


@pytest.mark.parametrize("name", ["../etc/passwd", "imports/../../x", "/imports/a/b",
                                  "releases/1/data.json", "imports"])
def test_only_names_under_imports_are_uploads(name):
    with pytest.raises(UploadRefused, match="not an upload"):
        upload_name(name)
