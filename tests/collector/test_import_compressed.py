"""Compressed input: gzip and one-file zip archives import like the plain file; other
archives, damaged ones and ones that decompress past the import limit are refused clearly."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile

import pytest
from django.urls import reverse

from collector.importers import ByteCounter, ImportFailure, format_get, source_open, units_read
from collector.models import Corpus, Document, Job, Query, SourceQuestion
from collector.services import corpus_import, queries_import
from tests.collector.corpus_support import (
    DUREADER_DEV,
    MSMARCO_COLUMNAR,
    NEWSQA_CSV,
    QUERIES_EN,
    RECO,
    SQUAD_V1,
    STORY,
    row_counts,
    squad_contexts,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_storage")]


def _gzip(path, target):
    target.write_bytes(gzip.compress(path.read_bytes()))
    return target


def _zip(target, members: dict[str, bytes], **kwargs):
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, **kwargs) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return target


def _contents(corpus: str) -> list[tuple]:
    return sorted(Document.objects.filter(corpus__name=corpus)
                  .values_list("external_id", "title", "url", "body"))


def _questions(corpus: str) -> list[tuple]:
    return sorted(SourceQuestion.objects.filter(corpus__name=corpus)
                  .values_list("external_id", "text", "answers"))


@pytest.mark.parametrize(("sample", "fmt", "language"), [
    (SQUAD_V1, "squad", "en"),
    (MSMARCO_COLUMNAR, "msmarco", "en"),  # read by one stream per column: many opens
    (NEWSQA_CSV, "newsqa-csv", "en"),
    (RECO, "reco", "zh"),
])
def test_gzip_and_zip_import_what_the_plain_file_imports(tmp_path, sample, fmt, language):
    corpus_import(path=sample, corpus="plain", language=language, format=fmt)
    packed = [_gzip(sample, tmp_path / f"{sample.name}.gz"),
              _zip(tmp_path / f"{sample.name}.zip", {f"inner/{sample.name}": sample.read_bytes()}),
              # Recognised by content, whatever the name says.
              _gzip(sample, tmp_path / sample.name)]
    for number, path in enumerate(packed):
        report = corpus_import(path=path, corpus=f"packed{number}", language=language,
                               format=fmt)
        assert report.counts.documents_created == Document.objects.filter(
            corpus__name="plain").count()
        assert _contents(f"packed{number}") == _contents("plain")
        assert _questions(f"packed{number}") == _questions("plain")


def test_progress_counts_the_bytes_on_disk(tmp_path):
    path = _gzip(SQUAD_V1, tmp_path / "squad.json.gz")
    source = source_open(path, max_bytes=10**9)
    assert source.total_bytes == path.stat().st_size < SQUAD_V1.stat().st_size
    counter = ByteCounter()
    units = list(units_read(format_get("squad"), source, counter=counter))
    assert len(units) == len(squad_contexts())
    assert counter.value == path.stat().st_size


def test_a_gzipped_query_list_imports(tmp_path):
    queries_import(path=QUERIES_EN, corpus="plain", language="en")
    queries_import(path=_gzip(QUERIES_EN, tmp_path / "queries.jsonl.gz"), corpus="packed",
                   language="en")
    texts = {corpus: sorted(Query.objects.filter(corpus__name=corpus)
                            .values_list("external_id", "text"))
             for corpus in ("plain", "packed")}
    assert texts["packed"] == texts["plain"] and texts["plain"]


def test_errors_inside_an_archive_name_the_file_inside_and_its_line(tmp_path):
    lines = b'{"id": "a", "body": "First text."}\n{"id": "a", "body": "Again."}\n'
    archive = _zip(tmp_path / "docs.zip", {"part/docs.jsonl": lines})
    with pytest.raises(ImportFailure) as caught:
        corpus_import(path=archive, corpus="c", language="en", format="jsonl")
    assert str(caught.value) == ("docs.zip/part/docs.jsonl: line 2: field 'id': duplicate "
                                 "document id 'a' (first used at line 1)")
    packed = tmp_path / "docs.jsonl.gz"
    packed.write_bytes(gzip.compress(lines))
    with pytest.raises(ImportFailure) as caught:
        corpus_import(path=packed, corpus="c", language="en", format="jsonl")
    assert str(caught.value).startswith("docs.jsonl.gz: line 2: field 'id': duplicate")


def _tar_gz() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = SQUAD_V1.read_bytes()
        info = tarfile.TarInfo("squad.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _refusals(tmp_path):
    squad = SQUAD_V1.read_bytes()
    packed = gzip.compress(squad)
    return [
        ("two.zip", _zip(tmp_path / "two.zip", {"a.json": squad, "b.json": squad}).read_bytes(),
         "two.zip: is a zip archive of 2 files (a.json, b.json); an import reads one file: "
         "unzip it and import its files one by one"),
        ("empty.zip", _zip(tmp_path / "empty.zip", {}).read_bytes(),
         "empty.zip: is a zip archive of 0 files"),
        ("squad.json.bz2", bz2.compress(squad),
         "squad.json.bz2: is a bzip2-compressed file, which cannot be read: decompress it, "
         "or compress it with gzip (.gz) or zip"),
        ("squad.json.xz", lzma.compress(squad), "squad.json.xz: is a xz-compressed file"),
        ("squad.tar.gz", _tar_gz(), "squad.tar.gz: is a tar archive, which cannot be read: "
                                    "extract it and import its files one by one"),
        ("cut.json.gz", packed[: len(packed) // 2],
         "cut.json.gz: is a damaged gzip file: cannot decompress it (Compressed file ended "
         "before the end-of-stream marker was reached)"),
        ("bad.json.gz", packed[:20] + bytes(200) + packed[220:],
         "bad.json.gz: is a damaged gzip file: cannot decompress it"),
    ]


def test_other_archives_and_damaged_ones_are_refused_clearly(tmp_path):
    rows = row_counts()
    for name, content, expected in _refusals(tmp_path):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ImportFailure) as caught:
            corpus_import(path=path, corpus="c", language="en", format="squad", batch_size=3)
        assert str(caught.value).startswith(expected), name
        assert "\n" not in str(caught.value)
        assert row_counts() == rows


def test_an_encrypted_zip_is_refused(tmp_path):
    path = _zip(tmp_path / "secret.zip", {"docs.jsonl": b'{"id": "a", "body": "x"}\n'})
    data = bytearray(path.read_bytes())
    # Set the "encrypted" flag in the local and central headers (what zip -e writes).
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature) + offset
        data[at] |= 0x1
    path.write_bytes(bytes(data))
    with pytest.raises(ImportFailure, match=r"^secret.zip: is an encrypted zip archive"):
        corpus_import(path=path, corpus="c", language="en", format="jsonl")


def test_decompressing_past_the_import_limit_is_refused(tmp_path, settings):
    # 3 MB of JSON Lines that compress to a few kilobytes.
    record = b'{"id": "%d", "body": "' + b"a b c d e f g h " * 100 + b'"}\n'
    data = b"".join(record.replace(b"%d", str(i).encode()) for i in range(2000))
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    settings.CROWDQA_IMPORT_MAX_BYTES = 1_000_000
    assert path.stat().st_size < settings.CROWDQA_IMPORT_MAX_BYTES < len(data)
    rows = row_counts()
    with pytest.raises(ImportFailure) as caught:
        corpus_import(path=path, corpus="c", language="en", format="jsonl", batch_size=100)
    assert str(caught.value) == ("bomb.jsonl.gz: decompresses to more than 1,000,000 bytes, "
                                 "over the import limit (setting CROWDQA_IMPORT_MAX_BYTES)")
    assert row_counts() == rows


def test_uploads_may_be_compressed_and_errors_reach_the_job_page(
        django_capture_on_commit_callbacks, client_for, admin_user, tmp_path):
    client = client_for(admin_user)
    packed = _gzip(NEWSQA_CSV, tmp_path / "newsqa.csv.gz")
    bad = _zip(tmp_path / "links.zip", {"links.jsonl": (
        b'{"id": "a", "body": "First text.", "url": "https://example.org/a"}\n'
        b'{"id": "b", "body": "Second text.", "url": "javascript:alert(4)"}\n')})
    for path, fmt in ((packed, "newsqa-csv"), (bad, "jsonl")):
        with path.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("collector:import"), {
                "file": upload, "corpus": path.stem.replace(".", "-"), "language": "en",
                "format": fmt,
            })
    done, failed = Job.objects.filter(kind="corpus_import").order_by("pk")
    assert done.status == Job.Status.DONE, done.error
    assert done.result["documents_created"] == 1 and done.result["questions_created"] == 4
    assert done.result["source"] == "newsqa.csv.gz"
    assert failed.status == Job.Status.FAILED
    assert failed.error == ("links.zip/links.jsonl: line 2: field 'url': 'javascript:alert(4)' "
                            "is not an http(s) URL (scheme 'javascript'); only http:// and "
                            "https:// links are accepted")
    assert not Corpus.objects.filter(name="links").exists()
    page = client.get(reverse("collector:job_detail", args=[failed.pk])).content.decode()
    assert "links.zip/links.jsonl: line 2: field &#x27;url&#x27;" in page


def test_dureader_in_a_zip_takes_its_source_type_from_the_file_inside(tmp_path):
    archive = _zip(tmp_path / "dureader.zip", {"zhidao.dev.json": DUREADER_DEV.read_bytes()})
    corpus_import(path=archive, corpus="zhidao", language="zh", format="dureader")
    assert set(Document.objects.values_list("source_type", flat=True)) == {"forum"}


def test_a_zipped_or_gzipped_story_keeps_its_story_id(tmp_path):
    """A .story file's id is its own name (NewsQA's story ids name it), also inside a
    zip or gzipped: not the archive's name, and packed again it is the same story."""
    corpus_import(path=STORY, corpus="stories", language="en", format="story")
    packed = [_zip(tmp_path / "stories.zip", {f"cnn/stories/{STORY.name}": STORY.read_bytes()}),
              _gzip(STORY, tmp_path / f"{STORY.name}.gz")]
    for number, path in enumerate(packed):
        report = corpus_import(path=path, corpus=f"packed{number}", language="en",
                               format="story")
        assert report.counts.documents_created == 1
        assert _contents(f"packed{number}") == _contents("stories")
        document = Document.objects.get(corpus__name=f"packed{number}")
        assert document.metadata["story_file"] == STORY.name
        again = corpus_import(path=path, corpus="stories", language="en", format="story")
        assert again.counts.documents_created == 0
    assert Document.objects.filter(corpus__name="stories").count() == 1


def test_an_uploaded_story_is_named_by_its_original_file_name(
        django_capture_on_commit_callbacks, client_for, admin_user):
    """The upload is stored under a cleaned-up name; the story id is the name uploaded."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = client_for(admin_user)
    upload = SimpleUploadedFile(f"cnn {STORY.name}", STORY.read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "uploaded", "language": "en", "format": "story"})
    assert response.status_code == 302
    assert Job.objects.get(kind="corpus_import").status == Job.Status.DONE
    assert Document.objects.get(corpus__name="uploaded").external_id == f"cnn {STORY.stem}"


def test_a_zip_made_by_macos_finder_imports_its_one_file(tmp_path):
    """Finder's "Compress" adds __MACOSX/ resource forks and .DS_Store files next to the
    file: they are not the user's, and the archive still holds one file to import."""
    archive = _zip(tmp_path / "squad.zip", {
        f"squad/{SQUAD_V1.name}": SQUAD_V1.read_bytes(),
        f"__MACOSX/squad/._{SQUAD_V1.name}": b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X",
        "squad/.DS_Store": b"\x00\x00\x00\x01Bud1",
    })
    corpus_import(path=SQUAD_V1, corpus="plain", language="en", format="squad")
    report = corpus_import(path=archive, corpus="finder", language="en", format="squad")
    assert report.counts.documents_created == len(squad_contexts())
    assert _contents("finder") == _contents("plain")
    # Two files of the user's are still two.
    two = _zip(tmp_path / "two.zip", {"a.jsonl": b'{"id": "a", "body": "x"}\n',
                                      "b.jsonl": b'{"id": "b", "body": "y"}\n',
                                      "__MACOSX/._a.jsonl": b"\x00\x05"})
    with pytest.raises(ImportFailure, match=r"is a zip archive of 2 files \(a\.jsonl, b\.jsonl\)"):
        corpus_import(path=two, corpus="two", language="en", format="jsonl")
