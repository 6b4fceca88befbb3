"""Releases: a finished NewsQA project exported in every format, reloaded independently."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import engine, releases
from annotation.models import Item, Project, Release, Stage
from collector.jobs import JobError
from tests.annotation.test_newsqa_flow import claim_item

REPO = Path(__file__).resolve().parents[2]

ANSWERS = {
    # question -> phrases per answerer (None = no answer)
    "When will the builders begin work?": ["in March", "in March"],
    "Who opposed the plan?": ["Dario Weiss", "Lena Ortiz"],
    "How much did the repairs cost?": ["$12 million", "$12 million"],
    "Who is the county engineer?": [None, None],
}


def _answer(worker, project, item, phrase, committed):
    task = claim_item(worker, project, item)
    body = item.document.body
    payload = {"no_answer": True} if phrase is None else {
        "spans": [[body.index(phrase), body.index(phrase) + len(phrase)]]}
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


@pytest.fixture
def finished_project(newsqa_project, workers, committed, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    Stage.objects.filter(project=newsqa_project, kind="newsqa_answer").update(
        params={**newsqa_project.stages.get(kind="newsqa_answer").params,
                "max_extra_answers": 0})
    texts = {"portvale-library": ["When will the builders begin work?", "Who opposed the plan?"],
             "riverton-bridge": ["How much did the repairs cost?", "Who is the county engineer?"]}
    for _ in range(2):
        task = engine.task_claim(worker=workers["questioner"], project=newsqa_project)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=workers["questioner"],
                               payload={"questions": texts[task.item.document.external_id]})
    for question, phrases in ANSWERS.items():
        item = Item.objects.get(stage__kind="newsqa_answer", data__question=question)
        for name, phrase in zip(("ann1", "ann2"), phrases, strict=True):
            _answer(workers[name], newsqa_project, item, phrase, committed)
    validation = Item.objects.get(stage__kind="newsqa_validate")
    for name in ("val1", "val2"):
        task = claim_item(workers[name], newsqa_project, validation)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=workers[name], payload={"choice": 0})
    assert Item.objects.filter(stage__kind="newsqa_consolidate", status="done").count() == 4
    return newsqa_project


def release_folder(release) -> Path:
    """A fresh copy of the release's files taken from the release storage."""
    import tempfile

    from django.conf import settings

    parent = Path(settings.MEDIA_ROOT).parent
    folder = Path(tempfile.mkdtemp(prefix=f"release-{release.pk}-", dir=parent))
    releases.release_copy(release=release, out_dir=folder)
    return folder


def _release(project, admin_user, committed, formats, version="1.0.0"):
    with committed():
        release = releases.release_create(project=project, version=version, formats=formats,
                                          user=admin_user)
    release.refresh_from_db()
    assert release.status == "ready", release.error
    return release


def _reco_labelled(row: dict, *, query_id: int, n: int, annotator) -> dict:
    """A ReCO final item's data, labelled with a shared sample row's evidence and answer."""
    from annotation.stages import reco

    alternatives = dict(zip(list(reco.ANSWERS), row["alternatives"].split("|"), strict=True))
    start = row["doc"].index(row["passage"])
    return {"query_id": query_id, "query": row["query"], "source": "batch",
            "annotators": [annotator.pk],
            "document": {"text": row["doc"], "url": row["url"], "external_id": f"d{n}"},
            "label": {"evidence_text": row["passage"], "alternatives": alternatives,
                      "answer": next(k for k, v in alternatives.items() if v == row["answer"]),
                      "evidence": [start, start + len(row["passage"])]}}


def test_every_newsqa_format_reloads_with_the_database_values(
    finished_project, admin_user, committed, workers
):
    release = _release(finished_project, admin_user, committed,
                       ["squad-v1", "squad-v2", "newsqa-json", "newsqa-csv", "hf"])
    root = release_folder(release)
    records = {i.result["q"]: i for i in Item.objects.filter(
        stage__kind="newsqa_consolidate").select_related("document")}

    squad = json.loads((root / "train-v2.0.json").read_text())
    questions = {qa["question"]: (qa, p["context"]) for a in squad["data"]
                 for p in a["paragraphs"] for qa in p["qas"]}
    assert set(questions) == set(ANSWERS)
    for text, (qa, context) in questions.items():
        item = records[text]
        assert context == item.document.body
        consensus = item.result["consensus"]
        assert qa["is_impossible"] == ("s" not in consensus)
        for answer in qa["answers"]:
            assert context[answer["answer_start"]:][:len(answer["text"])] == answer["text"]
        if "s" in consensus:
            assert qa["answers"][0]["answer_start"] == consensus["s"]
    assert questions["Who opposed the plan?"][0]["answers"][0]["text"] == "Dario Weiss"
    v1 = json.loads((root / "train-v1.1.json").read_text())
    assert sum(len(p["qas"]) for a in v1["data"] for p in a["paragraphs"]) == 3

    newsqa = json.loads((root / "combined-newsqa-data-v1.json").read_text())
    stories = {s["storyId"]: s for s in newsqa["data"]}
    # Not CNN story files (no story_file / story_id metadata): the source's own ids.
    assert set(stories) == {"portvale-library", "riverton-bridge"}
    for story in stories.values():
        for q in story["questions"]:
            item = records[q["q"]]
            assert story["type"] == item.split
            assert q["consensus"] == item.result["consensus"]
            assert q["isAnswerAbsent"] == item.result["isAnswerAbsent"]
    weiss = next(q for s in stories.values() for q in s["questions"]
                 if q["q"] == "Who opposed the plan?")
    assert weiss["validatedAnswers"][0]["count"] == 2

    with (root / "combined-newsqa-data-v1.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["question"] for r in rows} == set(ANSWERS)
    none_row = next(r for r in rows if r["question"] == "Who is the county engineer?")
    assert none_row["answer_char_ranges"] == "None|None"

    import pyarrow.parquet as pq

    hf_files = release.files.filter(format="hf").exclude(split="")
    rows = sum(pq.read_table(root / f.path).num_rows for f in hf_files)
    assert rows == 4
    import datasets

    loaded = datasets.load_dataset(str(root / releases.hf_folder(release)))
    assert sum(len(split) for split in loaded.values()) == 4
    assert set(loaded) == {f.split for f in hf_files}
    assert {row["question"] for split in loaded.values() for row in split} == set(ANSWERS)
    assert (root / "newsqa-test-1.0.0" / "README.md").read_text().startswith("---")

    # Checksums verify; no worker name anywhere.
    for f in release.files.all():
        path = root / f.path
        assert (_sha256(path), path.stat().st_size) == (f.sha256, f.bytes)
    sums = (root / "SHA256SUMS").read_text()
    assert all(f"{f.sha256}  {f.path}" in sums for f in release.files.exclude(format="datasheet"))
    names = [u.username for u in workers.values()] + [admin_user.username]
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".csv", ".md", ".jsonl"):
            text = path.read_text()
            assert not [n for n in names if f'"{n}"' in text or f" {n} " in text], path
    sheet = (root / "DATASHEET.md").read_text()
    assert "held-out" in sheet or "Human performance" in sheet


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_squad_exports_score_100_against_themselves(finished_project, admin_user, committed):
    release = _release(finished_project, admin_user, committed, ["squad-v1", "squad-v2"])
    root = release_folder(release)
    for command, name, keys in (("squad-v1", "train-v1.1.json", ("exact_match", "f1")),
                                ("squad-v2", "train-v2.0.json", ("exact", "f1"))):
        data = json.loads((root / name).read_text())
        preds = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "")
                 for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]}
        pred_path = root.parent / f"{command}-pred.json"
        pred_path.write_text(json.dumps(preds))
        out = subprocess.run([sys.executable, "-m", "collector.metrics", command,
                              str(root / name), str(pred_path)], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
        scores = json.loads(out)
        assert [scores[k] for k in keys] == [100.0, 100.0]


def test_releases_are_immutable_and_versions_unique(finished_project, admin_user, committed):
    release = _release(finished_project, admin_user, committed, ["squad-v2"])
    with pytest.raises(ValidationError, match="exists already"):
        releases.release_create(project=finished_project, version="1.0.0",
                                formats=["squad-v2"], user=admin_user)
    from collector.jobs import JobError

    with pytest.raises(JobError, match="built once"):
        releases.release_build(release=release)
    with pytest.raises(ValidationError, match="does not apply"):
        releases.release_create(project=finished_project, version="1.0.1", formats=["reco"])
    # "$" matched before a final newline and "\d" any script's digits: each of these passed
    # (and read as 1.0.0 beside it), as did leading zeros.
    for version in ("v1", "1.0.0\n", "１.0.0", "٣.0.0", "01.0.0", "1.0", "1.0.0.0", " 1.0.0"):
        with pytest.raises(ValidationError, match="semantic version"):
            releases.release_create(project=finished_project, version=version,
                                    formats=["squad-v2"])
    releases.release_publish(release=release, actor=admin_user)
    release.refresh_from_db()
    assert release.status == "published"


def test_publishing_twice_from_the_project_page_says_it_is_published(
    finished_project, admin_user, committed, client_for
):
    """A double click, or two admins at once: the second publish is told, not a 500."""
    release = _release(finished_project, admin_user, committed, ["squad-v2"])
    client = client_for(admin_user)
    # The page shows each file's whole SHA-256 (it showed 17 characters of 64).
    page = client.get(reverse("annotation:release_detail", args=[release.pk])).content.decode()
    assert all(f.sha256 in page for f in release.files.all())
    url = reverse("annotation:release_action", args=[finished_project.pk])
    first = client.post(url, {"action": "publish", "release": release.pk}, follow=True)
    assert "Release 1.0.0 published." in first.content.decode()
    second = client.post(url, {"action": "publish", "release": release.pk}, follow=True)
    assert second.status_code == 200
    assert "release 1.0.0 is published already" in second.content.decode()
    stale = Release.objects.get(pk=release.pk)
    stale.status = "ready"  # read before the other admin's publish went through
    with pytest.raises(ValidationError, match="published already"):
        releases.release_publish(release=stale, actor=admin_user)
    release.status = "failed"
    with pytest.raises(ValidationError, match="is failed: only a ready release"):
        releases.release_publish(release=release, actor=admin_user)


def test_only_admins_create_and_workers_see_only_published(
    finished_project, admin_user, committed, workers, client_for
):
    api = APIClient()
    url = reverse("api_project_releases", args=[finished_project.pk])
    api.force_authenticate(workers["ann1"])
    assert api.post(url, {"version": "1.0.0", "formats": ["squad-v2"]},
                    format="json").status_code == 403
    api.force_authenticate(admin_user)
    with committed():
        created = api.post(url, {"version": "1.0.0", "formats": ["squad-v2"]}, format="json")
    assert created.status_code == 201, created.content
    release = Release.objects.get()
    api.force_authenticate(workers["ann1"])
    assert api.get(url).json()["results"] == []
    squad_file = release.files.get(format="squad-v2")
    download = reverse("annotation:release_file", args=[release.pk, squad_file.path])
    assert client_for(workers["ann1"]).get(download).status_code == 404
    releases.release_publish(release=release, actor=admin_user)
    listed = api.get(url).json()["results"]
    assert [r["version"] for r in listed] == ["1.0.0"]
    assert squad_file.sha256 in {f["sha256"] for f in listed[0]["files"]}
    response = client_for(workers["ann1"]).get(download)
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b'{"version"')


def test_a_token_client_downloads_a_release_file_by_its_listed_url(
    finished_project, admin_user, committed, workers
):
    """A research group's script with an API token lists a release and downloads its files
    from the ``url`` the list gives (the release page's link answered a token with a
    redirect to the login page), whatever it accepts; errors are JSON."""
    from rest_framework.authtoken.models import Token

    with committed():
        release = releases.release_create(project=finished_project, user=admin_user,
                                          version="1.0.0", formats=["squad-v2"])
    release.refresh_from_db()
    releases.release_publish(release=release, actor=admin_user)
    token = Token.objects.create(user=workers["ann1"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    listed = api.get(reverse("api_project_releases", args=[finished_project.pk])).json()
    entry = next(f for f in listed["results"][0]["files"] if f["format"] == "squad-v2")
    for accept in ("*/*", "application/octet-stream", "application/json"):
        download = api.get(entry["url"], HTTP_ACCEPT=accept)
        assert download.status_code == 200, (accept, download.status_code)
        body = b"".join(download.streaming_content)
        assert len(body) == entry["bytes"] and body.startswith(b'{"version"')
    missing = api.get(entry["url"] + ".gz", HTTP_ACCEPT="application/octet-stream")
    assert missing.status_code == 404 and "detail" in missing.json()
    anonymous = APIClient().get(entry["url"], HTTP_ACCEPT="application/octet-stream")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"
    assert "detail" in anonymous.json()


def test_an_admin_script_creates_and_publishes_a_release_through_the_api(
    finished_project, admin_user, committed, workers
):
    """A release made through the API can be published through it (only the project page
    could publish, so a script's release stayed invisible to workers), and a create retried
    after a timeout gets the release it made."""
    api = APIClient()
    api.force_authenticate(admin_user)
    with committed():
        created = api.post(reverse("api_project_releases", args=[finished_project.pk]),
                           {"version": "1.0.0", "formats": ["squad-v2"]}, format="json")
    assert created.status_code == 201, created.content
    # The create retried (its answer lost): the release it made, not a refusal; the same
    # version with other formats is still refused.
    releases_url = reverse("api_project_releases", args=[finished_project.pk])
    retried = api.post(releases_url, {"version": "1.0.0", "formats": ["squad-v2"]},
                       format="json")
    assert retried.status_code == 200 and retried.json()["id"] == created.json()["id"]
    other = api.post(releases_url, {"version": "1.0.0", "formats": ["squad-v1"]},
                     format="json")
    assert other.status_code == 400 and "exists already" in other.json()["errors"][0]
    assert Release.objects.count() == 1
    publish = reverse("api_release_publish", args=[created.json()["id"]])
    worker = APIClient()
    worker.force_authenticate(workers["ann1"])
    assert worker.post(publish).status_code == 403
    published = api.post(publish)
    assert published.status_code == 200, published.content
    assert published.json()["status"] == "published" and published.json()["published_at"]
    assert published.json()["files"]
    again = api.post(publish)
    assert again.status_code == 409 and "published already" in again.json()["errors"][0]
    listed = worker.get(reverse("api_project_releases", args=[finished_project.pk])).json()
    assert [r["version"] for r in listed["results"]] == ["1.0.0"]
    assert api.post(reverse("api_release_publish", args=[10**9])).status_code == 404


def test_create_release_command_writes_files_and_prints_checksums(finished_project, tmp_path):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = StringIO()
    call_command("create_release", "--project", finished_project.name, "--version", "2.0.0",
                 "--format", "newsqa-json", "--format", "squad-v2", "--out",
                 str(tmp_path / "rel"), stdout=out, verbosity=0)
    printed = out.getvalue()
    assert "combined-newsqa-data-v1.json" in printed and "train-v2.0.json" in printed
    digest = printed.split()[0]
    assert len(digest) == 64
    assert json.loads((tmp_path / "rel" / "train-v2.0.json").read_text())["version"] == "v2.0"
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_release", "--project", finished_project.name, "--version",
                     "2.0.0", "--format", "squad-v2", "--out", str(tmp_path / "other"),
                     verbosity=0)
    with pytest.raises(CommandError, match="no project named"):
        call_command("create_release", "--project", "nope", "--version", "1.0.0",
                     "--format", "squad-v2", "--out", str(tmp_path / "x"), verbosity=0)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    with pytest.raises(CommandError, match=f"--out: {a_file} is a file, not a folder"):
        call_command("create_release", "--project", finished_project.name, "--version",
                     "2.0.1", "--format", "squad-v2", "--out", str(a_file), verbosity=0)
    assert a_file.read_text() == "kept"
    assert not Release.objects.filter(version="2.0.1").exists()


def _unwritable_folder(tmp_path) -> Path:
    """A folder in which no file can be made: read-only, or for root (who writes in any
    folder) sysfs, which refuses new files even to root."""
    import os

    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if not Path("/sys/kernel").is_dir():
        pytest.skip("running as root without sysfs: no folder refuses root a new file")
    return Path("/sys")


def test_create_release_refuses_a_bad_out_before_any_work(finished_project, tmp_path,
                                                          settings):
    """--out is checked before the release is made: "" (an unset shell variable) was taken
    as no --out, and a folder that cannot be made or written failed after the build,
    leaving the release behind."""
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept")
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.json").write_text("{}")
    unwritable = _unwritable_folder(tmp_path)
    refused = {
        "": "--out: an empty path; name a folder (new or empty)",
        str(tmp_path / "missing" / "rel"):
            f"--out: cannot make {tmp_path / 'missing' / 'rel'}: {tmp_path / 'missing'} "
            "does not exist",
        str(a_file / "rel"):
            f"--out: cannot make {a_file / 'rel'}: {a_file} is a file, not a folder",
        str(full): f"--out: {full} is not empty: name a new or empty folder",
        str(unwritable / "crowdqa-rel"):
            f"--out: cannot write in {unwritable} (Permission denied)",
    }
    before = set(tmp_path.rglob("*"))
    for out, said in refused.items():
        with pytest.raises(CommandError) as caught:
            call_command("create_release", "--project", finished_project.name, "--version",
                         "2.0.0", "--format", "squad-v2", "--out", out, verbosity=0,
                         stdout=StringIO())
        assert str(caught.value) == said
    assert not Release.objects.filter(project=finished_project).exists()
    assert set(tmp_path.rglob("*")) == before  # the storage (MEDIA_ROOT) is there too
    assert a_file.read_text() == "kept" and not (unwritable / "crowdqa-rel").exists()
    # From the shell: the exit status and the message on stderr (checked before the
    # database is read, so a database with no tables will do).
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}"}
    env.pop("CROWDQA_SEARCH_BACKEND", None)
    shell = subprocess.run(
        [sys.executable, "manage.py", "create_release", "--project", finished_project.name,
         "--version", "2.0.0", "--format", "squad-v2", "--out", ""],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert (shell.returncode, shell.stderr.strip(), shell.stdout) == (
        1, f"CommandError: {refused['']}", "")
    call_command("create_release", "--project", finished_project.name, "--version", "2.0.0",
                 "--format", "squad-v2", "--out", str(tmp_path / "new"), verbosity=0,
                 stdout=StringIO())
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == [
        "DATASHEET.md", "SHA256SUMS", "train-v2.0.json"]


def test_create_release_names_the_option_it_refuses(finished_project):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    def refusal(*args: str) -> str:
        with pytest.raises(CommandError) as caught:
            call_command("create_release", "--project", finished_project.name, *args,
                         verbosity=0)
        return str(caught.value)

    assert refusal("--version", "1.x", "--format", "squad-v2") == (
        "--version: '1.x': Use a semantic version: X.Y.Z, whole numbers without leading "
        "zeros (e.g. 1.0.0).")
    assert refusal("--version", "1.0.0", "--format", "reco") == (
        "--format: reco does not apply to a newsqa project; use squad-v1, squad-v2, "
        "newsqa-json, newsqa-csv, hf")
    assert not Release.objects.exists()


def test_a_copy_that_fails_leaves_no_file_behind(finished_project, admin_user, committed,
                                                 tmp_path):
    """A stored file that no longer matches its checksum stops the copy: the files copied
    before it are removed, and the folders made for them."""
    release = _release(finished_project, admin_user, committed, ["squad-v2", "newsqa-json"])
    last = [f.path for f in release.files.all()][-1]  # copied last of the recorded files
    storage = releases.release_storage()
    name = releases.release_file_name(release, last)
    storage.delete(name)
    storage.save(name, ContentFile(b"tampered"))
    out = tmp_path / "copy" / "here"
    with pytest.raises(JobError, match=f"{last}: SHA-256 .* differs from the recorded"):
        releases.release_copy(release=release, out_dir=out)
    assert not (tmp_path / "copy").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(JobError):
        releases.release_copy(release=release, out_dir=empty)
    assert empty.is_dir() and not any(empty.iterdir())


# ReCO and MS MARCO: final records made by the stages' own record builders ----------------

def _final_items(project, records):
    from annotation.models import Item

    last = project.stages.order_by("-order").first()
    Item.objects.bulk_create([
        Item(project=project, stage=last, key=f"r{n}", status=Item.Status.DONE, split=split,
             result=record)
        for n, (record, split) in enumerate(records)
    ])


def test_reco_release_writes_the_official_layout(db, settings, tmp_path, admin_user, committed):
    from annotation.stages import reco

    settings.MEDIA_ROOT = tmp_path / "media"
    sample = json.loads((REPO / "data/datasets/reco/synthetic/ReCO.synthetic.json").read_text())
    project = engine.project_create(name="ReCO release", recipe="reco", language="zh")
    kinds = list(reco.ANSWERS)
    records = []
    for n, row in enumerate(sample):
        alternatives = dict(zip(kinds, row["alternatives"].split("|"), strict=True))
        answer = next(k for k, v in alternatives.items() if v == row["answer"])
        start = row["doc"].index(row["passage"])
        data = {"query_id": row["query_id"], "query": row["query"], "source": "batch",
                "annotators": [admin_user.pk],
                "document": {"text": row["doc"], "url": row["url"], "external_id": f"d{n}"},
                "label": {"evidence_text": row["passage"], "alternatives": alternatives,
                          "answer": answer, "evidence": [start, start + len(row["passage"])]}}
        records.append((reco.final_record(data, "train"), "train"))
    _final_items(project, records)
    release = _release(project, admin_user, committed, ["reco", "hf"])
    root = release_folder(release)
    written = json.loads((root / "ReCO.trainingset.json").read_text())
    by_id = {r["query_id"]: r for r in written}
    for row in sample:
        out = by_id[row["query_id"]]
        assert (out["query"], out["doc"], out["passage"], out["answer"]) == (
            row["query"], row["doc"], row["passage"], row["answer"])
        assert sorted(out["alternatives"].split("|")) == sorted(row["alternatives"].split("|"))
        assert out["alternatives"].split("|")[0] == row["answer"]  # gold first, as ReCO's code
    import pyarrow.parquet as pq

    table = pq.read_table(root / release.files.get(format="hf", split="train").path)
    assert table.num_rows == len(sample)
    annotators = table.column("annotator").to_pylist()
    assert annotators and all(str(v).startswith("w-") for v in annotators)  # pseudonyms only


def _marco_project(admin_user, splits=None):
    """A marco project with the MS MARCO sample's records as final records, in ``splits``
    (one per record; default: all train, as a project without a split stage)."""
    from annotation.stages.marco import marco_record

    sample = [json.loads(line) for line in (
        REPO / "data/datasets/msmarco_qa_v2.1/synthetic/msmarco_v2.1.synthetic.jsonl"
    ).read_text().splitlines() if line.strip()]
    project = engine.project_create(name="MARCO release", recipe="marco")
    records = []
    for row, split in zip(sample, splits or ["train"] * len(sample), strict=True):
        no_answer = row["answers"] == ["No Answer Present."]
        data = {"query_id": str(row["query_id"]), "query": row["query"],
                "query_type": row["query_type"], "question_type": "DESCRIPTION",
                "passages": [{"rank": n + 1, "text": p["passage_text"], "url": p["url"],
                              "is_selected": bool(p["is_selected"]), "document": p["url"]}
                             for n, p in enumerate(row["passages"])],
                "answers": [] if no_answer else [{"text": a, "worker_id": admin_user.pk}
                                                 for a in row["answers"]],
                "unanswerable": no_answer}
        records.append((marco_record(data), split))
    _final_items(project, records)
    return project, sample


def test_marco_release_writes_msmarco_and_dureader(db, settings, tmp_path, admin_user,
                                                   committed):
    settings.MEDIA_ROOT = tmp_path / "media"
    project, sample = _marco_project(admin_user)
    release = _release(project, admin_user, committed, ["msmarco", "dureader", "hf"])
    root = release_folder(release)
    written = [json.loads(line) for line in (root / "train_v2.1.jsonl").read_text()
               .splitlines()]
    assert {r["query_id"] for r in written} == {r["query_id"] for r in sample}
    for out in written:
        row = next(r for r in sample if r["query_id"] == out["query_id"])
        assert out["answers"] == row["answers"]
        assert [p["is_selected"] for p in out["passages"]] == [p["is_selected"]
                                                               for p in row["passages"]]
        assert out["wellFormedAnswers"] == "[]"
    dureader = [json.loads(line) for line in (root / "dureader.train.jsonl").read_text()
                .splitlines()]
    answered = [r for r in sample if r["answers"] != ["No Answer Present."]]
    assert len(dureader) == len(answered)
    assert {d["question"] for d in dureader} == {r["query"] for r in answered}
    # No split stage: every record is train, as split_counts says; one file per format,
    # named for that split.
    assert release.split_counts == {"train": len(sample)}
    assert sorted(release.files.exclude(format__in=["hf", "datasheet"])
                  .values_list("path", "split")) == [("dureader.train.jsonl", "train"),
                                                      ("train_v2.1.jsonl", "train")]


def test_marco_release_gives_colliding_query_ids_distinct_numbers(db, settings, tmp_path,
                                                                   admin_user, committed):
    """Non-numeric query ids become 31-bit numbers (CRC-32): at MS MARCO's size (100,000
    queries) some two collide, and both records were written with one ``query_id``, which
    the official scorers key answers by. Each now has a number of its own, in every format."""
    import zlib

    from annotation.stages.marco import marco_record

    settings.MEDIA_ROOT = tmp_path / "media"
    one, two = "613e215e48c82379db3df14c", "ae2806067e42f0ed9ae763d5"  # SQuAD-style ids
    shared = zlib.crc32(one.encode()) & 0x7FFFFFFF
    assert shared == zlib.crc32(two.encode()) & 0x7FFFFFFF == 108836082
    project = engine.project_create(name="MARCO ids", recipe="marco")
    # The third: a numeric id, the same number; then two ways of writing 7, and a numeric
    # id past 64 bits (its low 63 are compared).
    ids = [two, one, str(shared), "plain-id", "007", "7", str(2**64 + 5)]
    _final_items(project, [(marco_record({
        "query_id": qid, "query": f"query {qid}", "query_type": "DESCRIPTION",
        "question_type": "DESCRIPTION",
        "passages": [{"rank": 1, "text": f"passage of {qid}", "url": "",
                      "is_selected": True}],
        "answers": [{"text": f"answer to {qid}", "worker_id": admin_user.pk}]}), "train")
        for qid in ids])
    release = _release(project, admin_user, committed, ["msmarco", "dureader"])
    root = release_folder(release)
    marco = {json.loads(line)["query"]: json.loads(line)["query_id"]
             for line in (root / "train_v2.1.jsonl").read_text().splitlines()}
    dureader = {json.loads(line)["question"]: json.loads(line)["question_id"]
                for line in (root / "dureader.train.jsonl").read_text().splitlines()}
    assert len(set(marco.values())) == 7
    assert marco == dureader
    assert marco[f"query {shared}"] == shared  # a numeric id stays itself
    assert marco["query 7"] == 7 and marco["query 007"] not in (7, shared)
    assert marco[f"query {2**64 + 5}"] == 2**64 + 5
    assert marco["query plain-id"] == zlib.crc32(b"plain-id") & 0x7FFFFFFF
    assert shared not in (marco[f"query {one}"], marco[f"query {two}"])


def test_scoring_predictions_against_a_release(finished_project, admin_user, committed,
                                               tmp_path, workers):
    from io import StringIO

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.core.management.base import CommandError

    release = _release(finished_project, admin_user, committed, ["squad-v2"])
    data = json.loads((release_folder(release) / "train-v2.0.json").read_text())
    qas = [qa for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]
    perfect = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "") for qa in qas}
    wrong = {qid: "banana" for qid in perfect}
    (tmp_path / "perfect.json").write_text(json.dumps(perfect))
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    (tmp_path / "unknown.json").write_text(json.dumps({**perfect, "nope": "x"}))
    (tmp_path / "broken.json").write_text('{"a": ')
    (tmp_path / "empty.json").write_text("")

    def score(name, *options, fmt="squad-v2", err=None):
        out = StringIO()
        call_command("score_predictions", str(tmp_path / name), "--project",
                     finished_project.name, "--version", "1.0.0", "--format", fmt, *options,
                     stdout=out, stderr=err or StringIO())
        return json.loads(out.getvalue())

    assert (score("perfect.json")["exact"], score("perfect.json")["f1"]) == (100.0, 100.0)
    wrong_scores = score("wrong.json")
    assert wrong_scores["HasAns_exact"] == 0.0 and wrong_scores["total"] == len(qas)
    # An unknown id: ignored with a warning, as evaluate-v2.0.py; refused with --strict.
    err = StringIO()
    assert score("unknown.json", err=err) == score("perfect.json")
    assert "warning: 1 prediction(s) for ids not in the gold data ignored, e.g. 'nope'" in \
        err.getvalue()
    for name, options, message in (("unknown.json", ["--strict"], "nope"),
                                   ("broken.json", [], "broken.json"),
                                   ("empty.json", [], "empty")):
        with pytest.raises(CommandError, match=message):
            score(name, *options)

    api = APIClient()
    url = reverse("api_release_score", args=[release.pk])
    api.force_authenticate(workers["ann1"])
    upload = SimpleUploadedFile("perfect.json", json.dumps(perfect).encode())
    assert api.post(url, {"format": "squad-v2", "predictions": upload}).status_code == 404
    releases.release_publish(release=release, actor=admin_user)
    upload = SimpleUploadedFile("perfect.json", json.dumps(perfect).encode())
    result = api.post(url, {"format": "squad-v2", "predictions": upload})
    assert result.status_code == 200 and result.json()["exact"] == 100.0
    assert (result.json()["split"], result.json()["file"]) == ("train", "train-v2.0.json")
    # The answer is what the API's schema says it is, split and file included.
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    ok = schema["paths"]["/api/v1/releases/{id}/score/"]["post"]["responses"]["200"]
    ref = ok["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    component = schema["components"]["schemas"][ref]
    assert component["required"] == ["split", "file"]
    jsonschema.validate(result.json(), component)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"exact": 100.0}, component)
    bad = api.post(url, {"format": "squad-v2",
                         "predictions": SimpleUploadedFile("p.json", b"[1, 2]")})
    assert bad.status_code == 400 and bad.json()["errors"][0].startswith("p.json: ")


def test_documents_whose_questions_span_two_chunks_stay_attached(finished_project,
                                                                  monkeypatch):
    from annotation import release_records

    monkeypatch.setattr(release_records, "CHUNK", 3)  # 4 questions over 2 documents
    pairs = list(release_records._rows_with_documents(finished_project))
    assert len(pairs) == 4
    assert all(doc is not None and doc.pk == row["document_id"] for row, doc in pairs)


def test_flush_keeps_the_continuing_document_and_loads_new_ones(db):
    from annotation.release_records import _flush
    from collector.models import Corpus, Document

    corpus = Corpus.objects.create(name="flush", language="en")
    d1, d2, d3 = (Document.objects.create(corpus=corpus, external_id=f"d{n}", body=f"body {n}")
                  for n in range(3))
    cache: dict = {}
    first = list(_flush([{"document_id": d1.pk}, {"document_id": d2.pk}], cache))
    assert [doc.pk for _, doc in first] == [d1.pk, d2.pk]
    # The next chunk continues d2 and starts d3: both must come with their rows.
    second = list(_flush([{"document_id": d2.pk}, {"document_id": d3.pk}], cache))
    assert [doc.pk for _, doc in second] == [d2.pk, d3.pk]
    assert set(cache) == {d2.pk, d3.pk}


def test_two_releases_load_through_one_datasets_cache(finished_project, admin_user, committed,
                                                       tmp_path):
    """Each release's HF folder and card configuration are ``<project-slug>-<version>``, so
    ``datasets`` keeps their caches apart (a shared folder name and ``default`` config
    returned one release's rows for the other)."""
    import datasets

    from annotation.stages import reco

    newsqa = _release(finished_project, admin_user, committed, ["hf"])
    sample = json.loads((REPO / "data/datasets/reco/synthetic/ReCO.synthetic.json").read_text())
    project = engine.project_create(name="ReCO release", recipe="reco", language="zh")
    records = []
    for n, row in enumerate(sample):
        data = _reco_labelled(row, query_id=row["query_id"], n=n, annotator=admin_user)
        records.append((reco.final_record(data, "train"), "train"))
    _final_items(project, records)
    other = _release(project, admin_user, committed, ["hf"])
    cache = str(tmp_path / "one-cache")
    first = datasets.load_dataset(str(release_folder(newsqa) /
                                      releases.hf_folder(newsqa)), cache_dir=cache)
    second = datasets.load_dataset(str(release_folder(other) /
                                       releases.hf_folder(other)), cache_dir=cache)
    assert {r["question"] for s in first.values() for r in s} == set(ANSWERS)
    assert {r["query"] for s in second.values() for r in s} == {r["query"] for r in sample}
    assert (releases.hf_folder(newsqa), releases.hf_folder(other)) == (
        "newsqa-test-1.0.0", "reco-release-1.0.0")
    assert datasets.get_dataset_config_names(
        str(release_folder(other) / releases.hf_folder(other))) == ["reco-release-1.0.0"]


def test_releases_of_projects_whose_names_slug_alike_load_through_one_cache(
        db, admin_user, committed, tmp_path):
    """Two ReCO projects named in Chinese ("观点问答一", "观点问答二") both had the HF folder
    and card configuration ``project-1.0.0`` (the slug drops Chinese): ``datasets`` gave
    the first release's rows for the second. A slug another project shares now carries
    the project's id; a slug of its own stays as it was."""
    import datasets

    from annotation.stages import reco

    sample = json.loads((REPO / "data/datasets/reco/synthetic/ReCO.synthetic.json").read_text())
    built = []
    for number, name in enumerate(("观点问答一", "观点问答二")):
        project = engine.project_create(name=name, recipe="reco", language="zh")
        row = sample[number]
        data = _reco_labelled(row, query_id=row["query_id"], n=number, annotator=admin_user)
        _final_items(project, [(reco.final_record(data, "train"), "train")])
        built.append((project, row))
    cache = str(tmp_path / "one-cache")
    folders = []
    for project, row in built:
        release = _release(project, admin_user, committed, ["hf"])
        folders.append(releases.hf_folder(release))
        folder = release_folder(release) / releases.hf_folder(release)
        assert release.files.filter(path__startswith=f"{folders[-1]}/").count() == 2
        loaded = datasets.load_dataset(str(folder), cache_dir=cache)
        assert [r["query"] for s in loaded.values() for r in s] == [row["query"]]
        assert datasets.get_dataset_config_names(str(folder)) == [folders[-1]]
    assert folders == [f"project-{built[0][0].pk}-1.0.0", f"project-{built[1][0].pk}-1.0.0"]
    ascii_named = engine.project_create(name="ReCO one", recipe="reco", language="zh")
    _final_items(ascii_named, [(reco.final_record(_reco_labelled(
        sample[2], query_id=sample[2]["query_id"], n=2, annotator=admin_user), "train"),
        "train")])
    assert releases.hf_folder(_release(ascii_named, admin_user, committed, ["hf"])) == (
        "reco-one-1.0.0")


def test_the_platforms_dureader_release_is_scored(db, settings, tmp_path, admin_user,
                                                  committed):
    """score_predictions and ``python -m collector.metrics dureader`` read the release's
    own dureader.jsonl (DuReader's data layout, no ``source``), converted on read; the
    default scorer is MRC2018 with bonuses, DuReader 2.0's is offered by name."""
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    settings.MEDIA_ROOT = tmp_path / "media"
    project, _ = _marco_project(admin_user)
    release = _release(project, admin_user, committed, ["dureader"])
    root = release_folder(release)
    records = [json.loads(line) for line in
               (root / "dureader.train.jsonl").read_text().splitlines()]
    assert records and all("source" not in r and "documents" in r for r in records)
    perfect = tmp_path / "perfect.jsonl"
    perfect.write_text("".join(json.dumps({"question_id": r["question_id"],
                                           "answers": r["answers"][:1],
                                           "yesno_answers": []}) + "\n" for r in records))
    half = tmp_path / "half.jsonl"
    half.write_text(perfect.read_text().splitlines(keepends=True)[0]
                    + json.dumps({"question_id": 1, "answers": ["x"]}) + "\n")

    def score(path, *options, err=None):
        out = StringIO()
        call_command("score_predictions", str(path), "--project", project.name, "--version",
                     "1.0.0", "--format", "dureader", *options, stdout=out,
                     stderr=err or StringIO())
        return json.loads(out.getvalue())

    default = score(perfect)
    assert (default["scorer"], default["alpha"], default["beta"]) == ("mrc2018", 1.0, 1.0)
    assert (default["ROUGE-L"], default["BLEU-4"]) == (100.0, 100.0)
    assert default["questions"] == len(records)
    plain = score(perfect, "--scorer", "dureader2")
    assert (plain["scorer"], plain["alpha"], plain["beta"]) == ("dureader2", 0.0, 0.0)
    with pytest.raises(CommandError, match="no bonuses"):
        score(perfect, "--scorer", "dureader2", "--alpha", "2")
    err = StringIO()
    partial = score(half, err=err)
    assert partial["ROUGE-L"] < 100.0 and partial["missing_prediction_ids"] == len(records) - 1
    assert f"{len(records) - 1} unanswered question(s) scored as the empty answer" in \
        err.getvalue()
    assert "1 prediction(s) for ids not in the gold data ignored" in err.getvalue()
    with pytest.raises(CommandError, match="not in the reference file"):
        score(half, "--strict")
    cli = subprocess.run([sys.executable, "-m", "collector.metrics", "dureader", str(perfect),
                          str(root / "dureader.train.jsonl")], cwd=REPO, capture_output=True,
                         text=True, check=True)
    assert json.loads(cli.stdout)["ROUGE-L"] == 100.0
    helptext = subprocess.run([sys.executable, "-m", "collector.metrics", "dureader", "--help"],
                              cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "mrc2018" in helptext and "dureader_eval.py" in helptext and "(default)" in helptext
    command_help = " ".join(subprocess.run(
        [sys.executable, "manage.py", "score_predictions", "--help"], cwd=REPO,
        capture_output=True, text=True, check=True).stdout.split())
    assert "mrc2018: the MRC2018 / DuReader bonus scorer" in command_help
    assert "dureader2: DuReader 2.0's dureader_eval.py" in command_help
    assert "--strict" in command_help and "ignored (warning with their count)" in command_help


def test_release_files_live_only_in_the_storage(finished_project, admin_user, settings,
                                                tmp_path, workers, client_for):
    """One place for a release's files: the storage. With a storage that has no local
    path at all (InMemoryStorage), --out copies from it, scoring and downloads read it."""
    import hashlib
    from io import StringIO

    from django.core.management import call_command

    settings.STORAGES = {**settings.STORAGES,
                         "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"}}
    out = tmp_path / "copy"
    printed = StringIO()
    call_command("create_release", "--project", finished_project.name, "--version", "3.0.0",
                 "--format", "squad-v1", "--format", "hf", "--out", str(out), stdout=printed,
                 verbosity=0)
    release = Release.objects.get(version="3.0.0")
    assert release.status == "ready"
    assert not (Path(settings.MEDIA_ROOT) / release.directory).exists()
    storage = releases.release_storage()
    for f in release.files.all():
        with storage.open(releases.release_file_name(release, f.path), "rb") as handle:
            stored = handle.read()
        copied = (out / f.path).read_bytes()
        assert copied == stored and hashlib.sha256(copied).hexdigest() == f.sha256, f.path
        assert f"{f.sha256}  {out / f.path}" in printed.getvalue()
    for line in (out / "SHA256SUMS").read_text().splitlines():  # sha256sum -c, by hand
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest

    data = json.loads((out / "train-v1.1.json").read_text())
    preds = {qa["id"]: qa["answers"][0]["text"] for a in data["data"]
             for p in a["paragraphs"] for qa in p["qas"]}
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    scored = StringIO()
    call_command("score_predictions", str(tmp_path / "pred.json"), "--project",
                 finished_project.name, "--version", "3.0.0", "--format", "squad-v1",
                 stdout=scored)
    # The project has no dev or test records: its one split, train, is scored, and said.
    assert json.loads(scored.getvalue()) == {"exact_match": 100.0, "f1": 100.0,
                                             "split": "train", "file": "train-v1.1.json"}

    releases.release_publish(release=release, actor=admin_user)
    entry = release.files.get(format="squad-v1")
    response = client_for(workers["ann1"]).get(
        reverse("annotation:release_file", args=[release.pk, entry.path]))
    assert response.status_code == 200 and response.streaming
    assert b"".join(response.streaming_content) == (out / entry.path).read_bytes()
    storage.delete(releases.release_file_name(release, entry.path))
    gone = client_for(workers["ann1"]).get(
        reverse("annotation:release_file", args=[release.pk, entry.path]))
    assert gone.status_code == 404


def test_squad_v1_scoring_follows_the_official_script_unless_strict(
    finished_project, admin_user, committed, tmp_path, workers
):
    """evaluate-v1.1.py ignores unknown ids and scores a missing question 0; --strict
    refuses both. The API returns the same warnings."""
    from io import StringIO

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.core.management.base import CommandError

    release = _release(finished_project, admin_user, committed, ["squad-v1"])
    data = json.loads((release_folder(release) / "train-v1.1.json").read_text())
    qas = [qa for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]
    assert len(qas) == 3
    partial = {qa["id"]: qa["answers"][0]["text"] for qa in qas[:2]} | {"zz-unknown": "x"}
    (tmp_path / "partial.json").write_text(json.dumps(partial))

    def score(*options):
        out, err = StringIO(), StringIO()
        call_command("score_predictions", str(tmp_path / "partial.json"), "--project",
                     finished_project.name, "--version", "1.0.0", "--format", "squad-v1",
                     *options, stdout=out, stderr=err)
        return json.loads(out.getvalue()), err.getvalue()

    scores, warnings = score()
    assert scores == {"exact_match": pytest.approx(200 / 3), "f1": pytest.approx(200 / 3),
                      "split": "train", "file": "train-v1.1.json"}
    assert "1 prediction(s) for ids not in the gold data ignored, e.g. 'zz-unknown'" in warnings
    assert f"1 unanswered question(s) scored 0, e.g. '{qas[2]['id']}'" in warnings
    with pytest.raises(CommandError, match="unknown question ids, e.g. 'zz-unknown'"):
        score("--strict")
    del partial["zz-unknown"]
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    with pytest.raises(CommandError, match="1 question\\(s\\) without a prediction"):
        score("--strict")

    api = APIClient()
    api.force_authenticate(admin_user)
    url = reverse("api_release_score", args=[release.pk])
    upload = SimpleUploadedFile("partial.json", json.dumps(partial).encode())
    result = api.post(url, {"format": "squad-v1", "predictions": upload})
    assert result.status_code == 200
    assert result.json()["warnings"] == [
        f"1 unanswered question(s) scored 0, e.g. '{qas[2]['id']}'"]
    upload = SimpleUploadedFile("partial.json", json.dumps(partial).encode())
    strict = api.post(url, {"format": "squad-v1", "predictions": upload, "strict": "true"})
    assert strict.status_code == 400 and "without a prediction" in strict.json()["errors"][0]


# Splits: each split of a format in its own file, as the datasets ship them -------------

def _reco_project(admin_user, splits):
    """A ReCO project with one final record per split in ``splits``, made by the stage's
    own record builder from the synthetic sample's rows (in turn, each with its own
    query id)."""
    from annotation.stages import reco

    sample = json.loads((REPO / "data/datasets/reco/synthetic/ReCO.synthetic.json").read_text())
    project = engine.project_create(name="ReCO release", recipe="reco", language="zh")
    records = []
    for n, split in enumerate(splits):
        row = sample[n % len(sample)]
        data = _reco_labelled(row, query_id=910000 + n, n=n, annotator=admin_user)
        records.append((reco.final_record(data, split), split))
    _final_items(project, records)
    return project


def test_release_text_files_download_as_utf8(db, settings, tmp_path, admin_user, committed,
                                             client_for):
    """The datasheet, the dataset card and CSV files were served as text/markdown and
    text/csv without a charset: read as ASCII or Latin-1 (requests' .text, a browser
    showing it), a Chinese release's text came out garbled."""
    settings.MEDIA_ROOT = tmp_path / "media"
    project = _reco_project(admin_user, ["train"])
    Project.objects.filter(pk=project.pk).update(description="观点型问答：是、否、不确定。")
    release = _release(project, admin_user, committed, ["reco", "hf"])
    client = client_for(admin_user)
    readme = release.files.get(format="hf", split="").path
    types = {}
    for path in ("DATASHEET.md", readme, "ReCO.trainingset.json"):
        download = client.get(reverse("annotation:release_file", args=[release.pk, path]))
        types[path] = download["Content-Type"]
        body = b"".join(download.streaming_content)
        assert body == (release_folder(release) / path).read_bytes()
    assert types == {"DATASHEET.md": "text/markdown; charset=utf-8",
                     readme: "text/markdown; charset=utf-8",
                     "ReCO.trainingset.json": "application/json"}
    for path in ("DATASHEET.md", readme):
        download = client.get(reverse("annotation:release_file", args=[release.pk, path]))
        charset = download["Content-Type"].split("charset=")[1]
        assert "观点型问答" in b"".join(download.streaming_content).decode(charset)


def test_a_reco_release_writes_each_split_to_its_own_file(db, settings, tmp_path, admin_user,
                                                         committed, client_for):
    """QA: a release of split_counts {"dev": 1, "train": 7} wrote one reco.json of the 8
    records, without a split: the dev record could not be told from the training ones.
    Now ReCO's own files: ReCO.trainingset.json and ReCO.validationset.json (the names
    ReCO's code loads with json.load), each listed with its split, checksummed, in the
    datasheet and on the release page, and downloaded as written."""
    settings.MEDIA_ROOT = tmp_path / "media"
    splits = ["train"] * 5 + ["dev"] + ["train"] * 2
    project = _reco_project(admin_user, splits)
    release = _release(project, admin_user, committed, ["reco", "hf"])
    assert release.split_counts == {"dev": 1, "train": 7}
    reco_files = {f.path: (f.split, f.records) for f in release.files.filter(format="reco")}
    assert reco_files == {"ReCO.trainingset.json": ("train", 7),
                          "ReCO.validationset.json": ("dev", 1)}
    root = release_folder(release)
    assert not (root / "reco.json").exists()
    for path, split in (("ReCO.trainingset.json", "train"), ("ReCO.validationset.json", "dev")):
        with (root / path).open(encoding="utf-8") as handle:
            rows = json.load(handle)  # as ReCO's prepare_data.py reads it
        assert sorted(r["query_id"] for r in rows) == [
            910000 + n for n, s in enumerate(splits) if s == split], path
    hf = {f.split: f.records for f in release.files.filter(format="hf").exclude(split="")}
    assert hf == {"train": 7, "dev": 1}

    sums = (root / "SHA256SUMS").read_text()
    for f in release.files.exclude(format="datasheet"):
        assert f"{f.sha256}  {f.path}\n" in sums
    listed = {(f["path"], f["format"], f["split"], f["records"])
              for f in release.datasheet["files"]}
    assert {("ReCO.trainingset.json", "reco", "train", 7),
            ("ReCO.validationset.json", "reco", "dev", 1)} <= listed
    assert "| `ReCO.validationset.json` | reco | dev | 1 |" in (root / "DATASHEET.md").read_text()

    client = client_for(admin_user)
    page = client.get(reverse("annotation:release_detail", args=[release.pk])).content.decode()
    assert "ReCO.trainingset.json" in page and "ReCO.validationset.json" in page
    assert "<td>dev</td>" in page and "all splits" in page  # the card: of every split
    download = client.get(reverse("annotation:release_file",
                                  args=[release.pk, "ReCO.validationset.json"]))
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == (root / "ReCO.validationset.json").read_bytes()


@pytest.fixture
def split_project(finished_project):
    """The finished NewsQA project with its second article in dev, as the 90/5/5 split
    stage puts articles of a larger corpus (two articles are both train)."""
    Item.objects.filter(project=finished_project,
                        document__external_id="riverton-bridge").update(split="dev")
    return finished_project


TRAIN_QUESTIONS = {"When will the builders begin work?", "Who opposed the plan?"}
DEV_QUESTIONS = {"How much did the repairs cost?", "Who is the county engineer?"}


def _questions(path: Path) -> dict[str, dict]:
    data = json.loads(path.read_text())
    return {qa["question"]: qa for a in data["data"] for p in a["paragraphs"]
            for qa in p["qas"]}


def test_a_newsqa_release_keeps_the_split_of_its_articles(split_project, admin_user,
                                                          committed):
    """SQuAD has a file per split (train-v2.0.json, dev-v2.0.json), the Hugging Face folder
    a Parquet file per split; NewsQA's combined JSON and CSV hold both, the JSON with each
    story's type, beside the story-id lists by which NewsQA's split_dataset.py splits the
    CSV (read here as it reads them)."""
    import pandas as pd

    release = _release(split_project, admin_user, committed,
                       ["squad-v1", "squad-v2", "newsqa-json", "newsqa-csv", "hf"])
    assert release.split_counts == {"train": 2, "dev": 2}
    root = release_folder(release)
    assert set(_questions(root / "train-v2.0.json")) == TRAIN_QUESTIONS
    assert set(_questions(root / "dev-v2.0.json")) == DEV_QUESTIONS
    assert set(_questions(root / "train-v1.1.json")) == TRAIN_QUESTIONS
    assert set(_questions(root / "dev-v1.1.json")) == {"How much did the repairs cost?"}
    assert not release.files.filter(split="test", format__startswith="squad").exists()
    assert not (root / "squad-v2.0.json").exists()

    newsqa = json.loads((root / "combined-newsqa-data-v1.json").read_text())
    assert {s["storyId"]: s["type"] for s in newsqa["data"]} == {
        "portvale-library": "train", "riverton-bridge": "dev"}
    ids = {split: set(pd.read_csv(root / f"{split}_story_ids.csv")["story_id"].values)
           for split in ("train", "dev", "test")}
    assert ids == {"train": {"portvale-library"}, "dev": {"riverton-bridge"}, "test": set()}
    assert {(f.path, f.format, f.split, f.records) for f in
            release.files.filter(path__endswith="_story_ids.csv")} == {
        ("train_story_ids.csv", "newsqa-csv", "train", 1),
        ("dev_story_ids.csv", "newsqa-csv", "dev", 1),
        ("test_story_ids.csv", "newsqa-csv", "test", 0)}
    rows = pd.read_csv(root / "combined-newsqa-data-v1.csv", encoding="utf-8")
    by_split = {split: {r.question for r in rows.itertuples() if r.story_id in story_ids}
                for split, story_ids in ids.items()}
    assert by_split == {"train": TRAIN_QUESTIONS, "dev": DEV_QUESTIONS, "test": set()}

    import datasets

    loaded = datasets.load_dataset(str(root / releases.hf_folder(release)),
                                   cache_dir=str(root.parent / "hf-cache"))
    assert {name: {r["question"] for r in rows} for name, rows in loaded.items()} == {
        "train": TRAIN_QUESTIONS, "dev": DEV_QUESTIONS}
    sheet = (root / "DATASHEET.md").read_text()
    assert "| `dev-v2.0.json` | squad-v2 | dev | 2 |" in sheet
    assert "train_story_ids.csv, dev_story_ids.csv and test_story_ids.csv" in sheet


def test_scoring_takes_the_dev_split_unless_told_and_says_which(
    split_project, admin_user, committed, tmp_path, workers
):
    """Scoring against the release scores one split's file: dev by default (predictions
    for the dev questions alone score 100, where the one file of every split made SQuAD
    v2.0's scorer refuse the missing training questions), another with --split (split
    in the API), an absent split refused with the splits there are; the scores name the
    split and the file."""
    from io import StringIO

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.core.management.base import CommandError

    release = _release(split_project, admin_user, committed, ["squad-v2"])
    root = release_folder(release)
    preds = {}
    for split in ("train", "dev"):
        preds[split] = {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "")
                        for qa in _questions(root / f"{split}-v2.0.json").values()}
        (tmp_path / f"{split}.json").write_text(json.dumps(preds[split]))

    def score(name, *options):
        out = StringIO()
        call_command("score_predictions", str(tmp_path / name), "--project",
                     split_project.name, "--version", "1.0.0", "--format", "squad-v2",
                     *options, stdout=out, stderr=StringIO())
        return json.loads(out.getvalue())

    dev = score("dev.json")
    assert (dev["exact"], dev["total"], dev["split"], dev["file"]) == (
        100.0, 2, "dev", "dev-v2.0.json")
    train = score("train.json", "--split", "train")
    assert (train["exact"], train["total"], train["split"], train["file"]) == (
        100.0, 2, "train", "train-v2.0.json")
    with pytest.raises(CommandError, match="no squad-v2 file for the split 'test'; its "
                                           "splits: train, dev"):
        score("dev.json", "--split", "test")

    api = APIClient()
    api.force_authenticate(admin_user)
    url = reverse("api_release_score", args=[release.pk])
    upload = SimpleUploadedFile("train.json", json.dumps(preds["train"]).encode())
    result = api.post(url, {"format": "squad-v2", "split": "train", "predictions": upload})
    assert result.status_code == 200, result.content
    assert (result.json()["exact"], result.json()["split"]) == (100.0, "train")
    upload = SimpleUploadedFile("dev.json", json.dumps(preds["dev"]).encode())
    result = api.post(url, {"format": "squad-v2", "predictions": upload})
    assert (result.json()["exact"], result.json()["file"]) == (100.0, "dev-v2.0.json")


def test_a_marco_release_names_each_split_as_ms_marco_and_dureader_do(
    db, settings, tmp_path, admin_user, committed
):
    """MS MARCO's train / dev / eval files and DuReader's per-split files (a split whose
    only query has no answer has an empty DuReader file: DuReader leaves such queries
    out); MS MARCO's scorer, which wants exactly the reference's ids, scores dev
    candidates alone against dev."""
    from io import StringIO

    from django.core.management import call_command

    settings.MEDIA_ROOT = tmp_path / "media"
    project, sample = _marco_project(admin_user, splits=["train", "test", "dev"])
    release = _release(project, admin_user, committed, ["msmarco", "dureader"])
    files = {f.path: (f.format, f.split, f.records)
             for f in release.files.exclude(format="datasheet")}
    assert files == {
        "train_v2.1.jsonl": ("msmarco", "train", 1), "dev_v2.1.jsonl": ("msmarco", "dev", 1),
        "eval_v2.1.jsonl": ("msmarco", "test", 1),
        "dureader.train.jsonl": ("dureader", "train", 1),
        "dureader.dev.jsonl": ("dureader", "dev", 1),
        "dureader.test.jsonl": ("dureader", "test", 0)}
    root = release_folder(release)
    for path, query_id in (("train_v2.1.jsonl", 900001), ("eval_v2.1.jsonl", 900002),
                           ("dev_v2.1.jsonl", 900003)):
        assert [json.loads(line)["query_id"] for line in
                (root / path).read_text().splitlines()] == [query_id]
    dev = json.loads((root / "dev_v2.1.jsonl").read_text())
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps({"query_id": dev["query_id"],
                                      "answers": dev["answers"][:1]}) + "\n")
    out = StringIO()
    call_command("score_predictions", str(candidates), "--project", project.name,
                 "--version", "1.0.0", "--format", "msmarco", stdout=out, stderr=StringIO())
    scores = json.loads(out.getvalue())
    assert (scores["split"], scores["file"]) == ("dev", "dev_v2.1.jsonl")
    assert (scores["queries"], scores["rouge_l"]) == (1, pytest.approx(1.0))


def test_a_release_from_before_per_split_files_is_still_scored(db, admin_user):
    """A release built before files were per split has one file of every split (its
    split empty): scoring takes it and says "all"; asked for a split, it says why not."""
    from annotation.models import ReleaseFile

    project = engine.project_create(name="Old release", recipe="newsqa")
    release = Release.objects.create(project=project, version="0.9.0", formats=["squad-v2"],
                                     status=Release.Status.READY, pseudonym_salt="s")
    old = ReleaseFile.objects.create(release=release, format="squad-v2", path="squad-v2.0.json",
                                     records=4, sha256="0" * 64, bytes=1)
    assert releases.release_split_file(release, "squad-v2") == old
    with pytest.raises(LookupError, match="squad-v2.0.json holds every split"):
        releases.release_split_file(release, "squad-v2", "dev")
    with pytest.raises(LookupError, match="has no squad-v1 file; it has squad-v2"):
        releases.release_split_file(release, "squad-v1")


def test_the_datasheets_times_on_task_are_those_of_the_released_work(
        finished_project, workers, admin_user, committed):
    """The datasheet's median time on task read every submission: a correction (recorded
    with no time of its own), a gold check and an answer set aside when its worker was
    blocked counted beside the work the records hold."""
    from annotation.models import ProjectMember, Submission
    from annotation.stages import Emit
    from tests.annotation.test_quality import gold_item, weiss
    from tests.factories import held_since

    project = finished_project
    answer = project.stages.get(kind="newsqa_answer")
    answer.params = {**answer.params, "gold_set_aside": True}
    answer.save(update_fields=["params"])
    doc_id = Item.objects.filter(stage=answer).values_list("document_id", flat=True)[0]
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_question"), emits=[
        Emit(kind="newsqa_answer", key=key, data={"question": f"{key}?"}, document_id=doc_id)
        for key in ("late-x", "late-y")])
    released = releases.task_times(project)["Answer sourcing"]
    assert len(released) == 8  # the finished project's answers

    # ann3 answers X in 120 s, then corrects the answer.
    x = Item.objects.get(key="late-x")
    task = claim_item(workers["ann3"], project, x)
    held_since(task, seconds=120)
    with committed():
        first = engine.task_submit(assignment_id=task.pk, worker=workers["ann3"],
                                   payload={"no_answer": True})
    engine.submission_correct(submission_id=first.pk, worker=workers["ann3"],
                              payload=weiss(project) if x.document.body.count("Dario Weiss")
                              else {"no_answer": True})
    # ann1 answers a gold check; val1 answers Y in 200 s and is then blocked.
    check = gold_item(project, answer, "g1", expected=weiss(project))
    answer.params = {**answer.params, "gold_rate": 1.0}  # ann1's next claim is the check
    answer.save(update_fields=["params"])
    with committed():
        engine.task_submit(assignment_id=claim_item(workers["ann1"], project, check).pk,
                           worker=workers["ann1"], payload={"no_answer": True})
    answer.params = {**answer.params, "gold_rate": 0.0}
    answer.save(update_fields=["params"])
    y = Item.objects.get(key="late-y")
    task = claim_item(workers["val1"], project, y)
    held_since(task, seconds=200)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=workers["val1"],
                           payload={"no_answer": True})
    engine.member_status_set(member=ProjectMember.objects.get(project=project,
                                                              user=workers["val1"]),
                             status="blocked", actor=admin_user)
    assert Submission.objects.filter(stage=answer).count() == 12

    times = releases.task_times(project)["Answer sourcing"]
    assert len(times) == 9 and sorted(times)[:-1] == sorted(released)
    assert 120 <= max(times) < 130  # X's answer, with the time its correction took none of
