"""Import: the format detected from the file (and why), the first records previewed by the
importers' own readers before anything is imported."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from django.urls import reverse

from collector.importers import ImportFailure, source_open
from collector.importers.sniff import format_detect
from collector.models import Corpus, Job
from tests.collector.corpus_support import (
    DUREADER_DEV,
    MSMARCO_COLUMNAR,
    MSMARCO_JSONL,
    NEWSQA_CSV,
    NEWSQA_JSON,
    QUERIES_EN,
    QUERIES_ZH,
    RECO,
    SQUAD_V1,
    SQUAD_V2,
    STORY,
)


def _detect(path: Path) -> str:
    return format_detect(source_open(path, max_bytes=10**9)).format


@pytest.mark.parametrize(("path", "expected"), [
    (SQUAD_V1, "squad"), (SQUAD_V2, "squad"), (NEWSQA_JSON, "newsqa-json"),
    (NEWSQA_CSV, "newsqa-csv"), (STORY, "story"), (MSMARCO_JSONL, "msmarco"),
    (MSMARCO_COLUMNAR, "msmarco"), (DUREADER_DEV, "dureader"), (RECO, "reco"),
    (QUERIES_EN, "queries"), (QUERIES_ZH, "queries"),
])
def test_the_projects_datasets_are_recognised(path, expected):
    assert _detect(path) == expected


def test_generic_tables_lines_and_compressed_files(tmp_path):
    cases = {
        "docs.jsonl": ('{"id": "a", "body": "Text one."}\n{"id": "b", "body": "Two."}\n',
                       "jsonl"),
        "docs.csv": ("id,body\na,\"Text, with a comma\"\nb,Two\n", "csv"),
        "docs.tsv": ("id\tbody\na\tText one\n", "tsv"),
        "queries.txt": ("who wrote hamlet\nwhen did rome fall, and why\n", "queries"),
        "story.txt": ("Body line.\n\n@highlight\n\nA point\n", "story"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert _detect(path) == expected, name
    packed = tmp_path / "squad.json.gz"
    with SQUAD_V1.open("rb") as raw, gzip.open(packed, "wb") as out:
        shutil.copyfileobj(raw, out)
    assert _detect(packed) == "squad"  # read through the decompression


def test_unknown_json_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "weird.json"
    path.write_text('{\n  "rows": [1, 2]\n}\n', encoding="utf-8")
    with pytest.raises(ImportFailure, match=r"^weird\.json: is JSON, but not one of"):
        _detect(path)




@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_preview_then_import_without_uploading_again(django_capture_on_commit_callbacks,
                                                     client_for, admin_user, settings):
    client = client_for(admin_user)
    url = reverse("collector:import")
    with RECO.open("rb") as upload:
        response = client.post(url, {"file": upload, "corpus": "reco-up", "language": "zh",
                                     "action": "preview"})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'Detected format: <strong>reco</strong>' in page
    assert "ReCO" in page.split('data-testid="detected-format"')[1].split("</p>")[0]
    records = page.split('data-testid="preview-records"')[1].split("</table>")[0]
    assert records.count("<tr>") == 1 + 3  # header and the file's three records
    assert "The first 3 records" in page
    assert "示例市的公园晚上开放吗" in records
    assert not Job.objects.exists() and not Corpus.objects.filter(name="reco-up").exists()
    token = page.split('name="upload" value="')[1].split('"')[0]
    assert '<option value="reco" selected>' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"upload": token, "corpus": "reco-up", "language": "zh",
                                     "format": "reco", "action": "import"})
    job = Job.objects.get(kind="corpus_import")
    assert response["Location"] == reverse("collector:job_detail", args=[job.pk])
    assert job.status == Job.Status.DONE, job.error
    assert job.params["filename"] == "ReCO.synthetic.json"
    assert Corpus.objects.get(name="reco-up").documents.count() == job.result[
        "documents_created"] > 0


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_queries_are_previewed_as_queries(client_for, admin_user):
    with QUERIES_EN.open("rb") as upload:
        page = client_for(admin_user).post(reverse("collector:import"), {
            "file": upload, "corpus": "q", "language": "en", "action": "preview",
        }).content.decode()
    assert 'Detected format: <strong>queries</strong>' in page
    assert "when was the last time anyone was on the moon" in page
    records = page.split('data-testid="preview-records"')[1].split("</table>")[0]
    assert "<th>Query id</th>" in records
    assert records.count("<tr>") == 1 + 5  # a long list: the first five only


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_a_bad_record_is_named_in_the_preview_and_nothing_is_imported(client_for, admin_user,
                                                                     tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "title": "no body"}\n', encoding="utf-8")
    client = client_for(admin_user)
    with bad.open("rb") as upload:
        page = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "badc", "language": "en", "action": "preview",
        }).content.decode()
    error = page.split('data-testid="error-format"')[1].split("</p>")[0]
    assert "bad.jsonl: line 1: field &#x27;body&#x27;: is missing" in error
    assert 'data-testid="import-button"' not in page  # nothing to import from a failed read
    assert 'data-testid="uploaded-file"' in page  # choose a format or mapping, preview again
    assert not Job.objects.exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_a_forged_upload_reference_is_refused(client_for, admin_user):
    page = client_for(admin_user).post(reverse("collector:import"), {
        "upload": "imports/x/../../secret:forged", "corpus": "c", "language": "en",
        "format": "squad", "action": "import",
    }).content.decode()
    assert "The uploaded file has expired: upload it again." in page
    assert not Job.objects.exists()


@pytest.mark.parametrize(("window", "overlap", "field", "says"), [
    ("5", "", "window_tokens", "The overlap (20, left as it is) must be smaller than the "
                               "window (5 tokens)."),
    ("", "150", "window_overlap", "The overlap (150) must be smaller than the window (100 "
                                  "tokens, left as it is)."),
    ("10", "10", "window_overlap", "The overlap (10) must be smaller than the window (10 "
                                   "tokens)."),
])
def test_window_options_are_checked_with_what_an_empty_one_leaves(db, window, overlap, field,
                                                                  says):
    """Compared only when both were given, a window of 5 passed the preview and failed the
    import against the default overlap of 20."""
    from collector.forms import ImportForm

    form = ImportForm(data={"corpus": "new-one", "language": "en", "split_mode": "window",
                            "window_tokens": window, "window_overlap": overlap,
                            "upload": "x"})
    assert not form.is_valid()
    assert form.errors[field] == [says]
    fine = ImportForm(data={"corpus": "new-one", "language": "en", "split_mode": "window",
                            "window_tokens": "50", "window_overlap": "", "upload": "x"})
    fine.is_valid()
    assert "window_tokens" not in fine.errors and "window_overlap" not in fine.errors
