"""Dataset releases: frozen, versioned snapshots of a project in the formats people load.

``release_create`` records the release and enqueues its build job; the job streams the
project's consolidated records into the writers of ``collector.exporters`` (atomic files,
SHA-256 computed while writing) in a staging folder, writes the datasheet, the checksums
and, for ``hf``, a Hugging Face folder ``<project-slug>-<version>`` with a dataset card,
and puts them into the release storage (``release_storage``), the one place a release's
files live: downloads, scoring and ``create_release --out`` read them from there. A
release is never changed after its build: its directory is written once, an existing file
is never replaced, and a new version is a new release. Workers appear only as per-release
pseudonyms (HMAC with a salt that stays in the database), or not at all.

Splits stay apart as the datasets ship them: SQuAD, MS MARCO, DuReader and ReCO get one
file per split of the released records (``train-v1.1.json``, ``dev-v1.1.json``, ...;
``FORMATS``, ``SPLIT_NAMES``), the Hugging Face folder a Parquet file per split; NewsQA's
combined JSON and CSV hold every split, as NewsQA's do, with each story's split in the
JSON's ``type`` and the story ids of each split in ``<split>_story_ids.csv``. A project
without a split stage releases its records as train (``train-v2.0.json``), as its
``split_counts`` and Hugging Face folder say. ``release_split_file`` finds a split's file
(by default the evaluation split: dev, else test) for scoring.
"""

from __future__ import annotations

import contextlib
import mimetypes
import re
import statistics
import tempfile
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import Storage
from django.db import transaction
from django.http import FileResponse, Http404
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy

from annotation import release_records as rr
from annotation.models import Inspection, Item, Project, Release, ReleaseFile, Submission
from annotation.workflow import transition
from collector.exporters import (
    CharSpan,
    ManifestEntry,
    NewsqaJsonWriter,
    Pseudonymizer,
    SquadWriter,
    new_release_salt,
    write_checksums,
    write_dataset_card,
    write_datasheet,
    write_dureader,
    write_hf_split,
    write_msmarco_jsonl,
    write_newsqa_csv,
    write_newsqa_json,
    write_newsqa_story_ids,
    write_reco,
    write_squad_v1,
    write_squad_v2,
)
from collector.jobs import JobError, Progress, job_create, job_handler
from collector.metrics.squad import exact_match_tokens, f1_v1_tokens, squad_tokens
from collector.models import Job

# format -> (recipes it applies to, file name). A name with "{split}" is one file per split
# of the released records, named as the dataset names its own files (SPLIT_NAMES); the
# others hold every split: NewsQA's combined files (the JSON's "type" is each story's
# split, and the release adds the story-id lists, NEWSQA_STORY_IDS), the Hugging Face
# folder (a Parquet file per split) and the judgment study.
FORMATS: dict[str, tuple[frozenset[str], str]] = {
    "squad-v1": (frozenset({"newsqa"}), "{split}-v1.1.json"),  # train-v1.1.json, dev-v1.1.json
    "squad-v2": (frozenset({"newsqa"}), "{split}-v2.0.json"),
    "newsqa-json": (frozenset({"newsqa"}), "combined-newsqa-data-v1.json"),
    "newsqa-csv": (frozenset({"newsqa"}), "combined-newsqa-data-v1.csv"),
    "msmarco": (frozenset({"marco"}), "{split}_v2.1.jsonl"),  # train_v2.1, dev_v2.1, eval_v2.1
    "dureader": (frozenset({"marco"}), "dureader.{split}.jsonl"),  # as search.dev.json
    "reco": (frozenset({"reco"}), "ReCO.{split}.json"),  # ReCO.trainingset.json, ...
    "hf": (frozenset({"newsqa", "marco", "reco"}), "<project-slug>-<version>"),  # hf_folder
    "judgment": (frozenset({"judgment"}), "judgment"),
}
# A split's name in a format's file names where the dataset's own files call it otherwise:
# MS MARCO's test set is its eval set; ReCO's code reads ReCO.trainingset.json,
# ReCO.validationset.json and ReCO.testa.json.
SPLIT_NAMES: dict[str, dict[str, str]] = {
    "msmarco": {"test": "eval"},
    "reco": {"train": "trainingset", "dev": "validationset", "test": "testa"},
}
# NewsQA's official split: the story ids of each split, as the NewsQA repository's
# train_story_ids.csv, dev_story_ids.csv and test_story_ids.csv, by which its
# split_dataset.py splits the combined CSV. Written with NewsQA's combined formats.
NEWSQA_STORY_IDS = "{split}_story_ids.csv"
NEWSQA_SPLITS = ("train", "dev", "test")
# The split a model is evaluated on, in order of preference: scoring and the judgment
# study's references take this split's file unless told another.
EVALUATION_SPLITS = ("dev", "test")
HF_KIND = {"newsqa": "squad_v2", "marco": "msmarco", "reco": "reco"}
LICENCE_SPDX = {"CC BY-SA 4.0": "cc-by-sa-4.0", "Apache-2.0": "apache-2.0"}
_SPLIT_NAME = re.compile(r"[A-Za-z0-9_]+")


def formats_for(recipe: str) -> list[str]:
    return [name for name, (recipes, _) in FORMATS.items() if recipe in recipes]


def per_split(name: str) -> bool:
    """Whether format ``name`` writes one file per split."""
    return "{split}" in FORMATS[name][1]


def format_file_name(name: str, split: str = "") -> str:
    """The file of format ``name`` for ``split`` (relative to the release), e.g.
    ``dev-v2.0.json`` for ``squad-v2`` and ``dev``; a format that holds every split has
    one file whatever ``split`` is. A split name other than letters, digits and
    underscores is refused (it becomes part of a file name)."""
    template = FORMATS[name][1]
    if "{split}" not in template:
        return template
    if not _SPLIT_NAME.fullmatch(split):
        raise JobError(f"split {split!r}: a split name is letters, digits and underscores "
                       f"(it names the {name} file)")
    return template.format(split=SPLIT_NAMES.get(name, {}).get(split, split))


def hf_folder(release: Release) -> str:
    """The Hugging Face folder of a release, also its card's configuration name:
    ``<project-slug>-<version>``. ``datasets`` caches a local folder under its name and
    configuration, so two releases loaded through one ``cache_dir`` must differ in both:
    a slug another project shares (names that differ only in characters the slug drops,
    such as two Chinese names, both ``project``) is followed by the project's id,
    ``<project-slug>-<id>-<version>``. A built release keeps the folder it was built in."""
    from django.utils.text import slugify

    if release.pk is not None:
        card = (release.files.filter(format="hf", split="").values_list("path", flat=True)
                .first())
        if card:
            return card.split("/", 1)[0]
    project = release.project
    slug = slugify(project.name) or "project"
    shared = any((slugify(name) or "project") == slug
                 for name in Project.objects.exclude(pk=project.pk)
                 .values_list("name", flat=True).iterator())
    return f"{slug}-{project.pk}-{release.version}" if shared else f"{slug}-{release.version}"


CHECKSUMS = "SHA256SUMS"


def release_storage() -> Storage:
    """Where every release's files live: ``STORAGES["releases"]`` when configured, else
    Django's default storage (``MEDIA_ROOT`` on the file system by default). The build
    writes there, downloads stream from there, scoring and ``create_release --out`` read
    from there; nothing else holds a release's files."""
    from django.core.files.storage import default_storage, storages

    return storages["releases"] if "releases" in settings.STORAGES else default_storage


def release_file_name(release: Release, path: str) -> str:
    """The storage name of a file of the release (``path`` relative to the release)."""
    return f"{release.directory}/{path}"


def release_open(release: Release, path: str) -> File:
    """Open a recorded file of the release (or its ``SHA256SUMS``) from the storage, for
    reading in binary. ``FileNotFoundError`` names the storage name when it is gone."""
    if path != CHECKSUMS and not release.files.filter(path=path).exists():
        raise FileNotFoundError(f"release {release}: no file {path!r}")
    name = release_file_name(release, path)
    storage = release_storage()
    if not storage.exists(name):
        raise FileNotFoundError(f"release {release}: {name} is missing from the storage")
    return storage.open(name, "rb")


def release_download(*, user: Any, release_id: int, path: str) -> FileResponse:
    """The response that downloads file ``path`` of a release ``user`` may see, streamed
    from the release storage (the release page's links and the API). Http404 for a
    release they may not see, a path the release does not list, or a file gone from the
    storage."""
    from annotation.selectors import releases_visible
    from config.api_json import object_or_404

    release = object_or_404(releases_visible(user=user), pk=release_id)
    entry = release.files.filter(path=path).first()
    if entry is None:
        raise Http404(gettext("Release %(release)s has no file %(path)s.")
                      % {"release": release.pk, "path": path})
    try:
        handle = release_open(release, entry.path)
    except FileNotFoundError as exc:
        raise Http404(gettext("The file %(path)s of release %(release)s is missing from the "
                              "release storage.") % {"release": release.pk, "path": path}) from exc
    # Every text file of a release is UTF-8 (the datasheet, a dataset card, CSV): said so,
    # else clients read text/markdown and text/csv as ASCII or Latin-1 and garble Chinese.
    content_type, encoding = mimetypes.guess_type(entry.path)
    if content_type and content_type.startswith("text/") and encoding is None:
        content_type += "; charset=utf-8"
    return FileResponse(handle, as_attachment=True, filename=entry.path.rsplit("/", 1)[-1],
                        content_type=content_type)


def release_split_file(release: Release, format: str,  # noqa: A002
                       split: str | None = None) -> ReleaseFile:
    """The release's file of ``format`` for ``split``; without ``split``, the split a
    model is evaluated on: the first of ``EVALUATION_SPLITS`` (dev, then test) the release
    has, else its only or first split (a project without a split stage: train). A
    release built before files were per split has one file holding every split (its
    ``split`` is empty): taken when no split is asked for. ``LookupError`` says what the
    release has instead."""
    files = {f.split: f for f in release.files.filter(format=format)}
    if not files:
        raise LookupError(f"release {release.version} has no {format} file; it has "
                          f"{', '.join(sorted(set(release.formats)))}")
    if split:
        if split in files:
            return files[split]
        if set(files) == {""}:
            raise LookupError(f"release {release.version}: its {format} file "
                              f"{files[''].path} holds every split (built before files "
                              "were per split); leave the split out")
        raise LookupError(f"release {release.version} has no {format} file for the split "
                          f"{split!r}; its splits: {', '.join(_split_order(files))}")
    for name in (*EVALUATION_SPLITS, ""):
        if name in files:
            return files[name]
    return files[_split_order(files)[0]]


def _split_order(splits: Iterable[str]) -> list[str]:
    order = {"train": 0, "dev": 1, "test": 2}
    return sorted((s for s in splits if s), key=lambda s: (order.get(s, 9), s))


def release_copy(*, release: Release, out_dir: Path) -> list[Path]:
    """Copy the release's files and checksums from the storage into ``out_dir`` (never
    over an existing file), checking each against its recorded SHA-256. All or nothing:
    when a copy fails, the files and folders it made are removed before the error goes on."""
    import hashlib

    recorded = {f.path: f.sha256 for f in release.files.all()}
    written: list[Path] = []
    made: list[Path] = []  # folders made here, parents first
    try:
        for path in [*recorded, CHECKSUMS]:
            target = out_dir / path
            missing = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
            target.parent.mkdir(parents=True, exist_ok=True)
            made.extend(reversed(missing))
            digest = hashlib.sha256()
            with release_open(release, path) as source, target.open("xb") as out:
                written.append(target)
                for chunk in source.chunks():
                    digest.update(chunk)
                    out.write(chunk)
            if path in recorded and digest.hexdigest() != recorded[path]:
                raise JobError(f"{release_file_name(release, path)}: SHA-256 "
                               f"{digest.hexdigest()} differs from the recorded {recorded[path]}")
    except BaseException:
        for target in written:
            target.unlink(missing_ok=True)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return written


def _storage_names(storage: Storage, directory: str) -> Iterable[str]:
    try:
        folders, files = storage.listdir(directory)
    except FileNotFoundError:
        return
    for name in files:
        yield f"{directory}/{name}"
    for folder in folders:
        yield from _storage_names(storage, f"{directory}/{folder}")


def _store(release: Release, staging: Path) -> None:
    """Put the files built in ``staging`` into the storage under the release directory.
    Files there already come from a crashed earlier run (nothing of it was recorded) and
    are removed first; the storage must keep every name as given."""
    storage = release_storage()
    for stale in list(_storage_names(storage, release.directory)):
        storage.delete(stale)
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        name = release_file_name(release, path.relative_to(staging).as_posix())
        with path.open("rb") as handle:
            saved = storage.save(name, File(handle, name=path.name))
        if saved != name:
            raise JobError(f"the storage saved {name} as {saved}; releases keep their names")


@transaction.atomic
def release_create(*, project: Project, version: str, formats: Iterable[str], user: Any = None,
                   omit_workers: bool = False, unagreed_questions: str = "unanswerable",
                   build: bool = True) -> Release:
    """Record a release of ``project`` and enqueue its build (admins only, checked by
    callers). Refuses unknown or inapplicable formats and an existing version.
    ``unagreed_questions``: how SQuAD / Hugging Face get NewsQA questions without
    agreement after validation (``release_records.UNAGREED_CHOICES``)."""
    if unagreed_questions not in rr.UNAGREED_CHOICES:
        raise ValidationError(gettext("unagreed_questions: %(value)s is not one of "
                                      "%(choices)s")
                              % {"value": repr(unagreed_questions),
                                 "choices": ", ".join(rr.UNAGREED_CHOICES)})
    wanted = list(dict.fromkeys(formats))
    if not wanted:
        raise ValidationError(gettext("formats: choose at least one format"))
    for name in wanted:
        if name not in FORMATS:
            raise ValidationError(gettext("formats: unknown format %(name)s; known: "
                                          "%(known)s")
                                  % {"name": repr(name), "known": ", ".join(FORMATS)})
        if project.recipe not in FORMATS[name][0]:
            raise ValidationError(gettext("formats: %(name)s does not apply to a "
                                          "%(recipe)s project; use %(formats)s")
                                  % {"name": name, "recipe": project.recipe,
                                     "formats": ", ".join(formats_for(project.recipe))})
    if Release.objects.filter(project=project, version=version).exists():
        raise ValidationError(gettext("version: %(project)s %(version)s exists already; "
                                      "releases are immutable, choose a new version")
                              % {"project": project.name, "version": version})
    if not rr.final_items(project).exists():
        raise ValidationError(gettext("the project has no consolidated records yet"))
    release = Release(
        project=project, version=version, formats=wanted, omit_workers=omit_workers,
        unagreed_questions=unagreed_questions,
        pseudonym_salt=new_release_salt(), created_by=user if getattr(user, "pk", None) else None,
        stage_params=[{"order": s.order, "kind": s.kind, "name": s.name, "params": s.params}
                      for s in project.stages.order_by("order")],
    )
    release.full_clean(exclude=["job", "split_counts", "datasheet", "stage_params", "error"])
    release.save()
    if build:
        job = job_create(kind="release_build", params={"release_id": release.pk}, user=user)
        Release.objects.filter(pk=release.pk).update(job=job)
        release.job = job
    return release


def release_publish(*, release: Release, actor: Any) -> Release:
    """Publish a ready release. Publishing it again (a second click, two admins at once)
    is refused with a ValidationError that says it is published, as is any other status."""
    from annotation.workflow import TransitionError

    published = ValidationError(gettext("release %(version)s is published already")
                                % {"version": release.version})
    if release.status == Release.Status.PUBLISHED:
        raise published
    if release.status != Release.Status.READY:
        raise ValidationError(gettext("release %(version)s is %(status)s: only a ready "
                                      "release can be published")
                              % {"version": release.version,
                                 "status": release.get_status_display().lower()})
    try:
        transition(release, Release.Status.PUBLISHED, actor=actor, published_at=timezone.now())
    except TransitionError:  # another publish came first
        release.refresh_from_db(fields=["status"])
        if release.status == Release.Status.PUBLISHED:
            raise published from None
        raise
    return release


def release_fail(*, release: Release, error: str) -> None:
    if release.status == Release.Status.BUILDING:
        transition(release, Release.Status.FAILED, error=error[:2000],
                   finished_at=timezone.now())


def release_job_failed(job: Job, reason: str) -> None:
    """A build job ended failed (its worker was lost for good...): so does its release,
    which can then be rebuilt under the same version."""
    release = Release.objects.filter(pk=job.params.get("release_id")).first()
    if release is not None:
        release_fail(release=release, error=reason)


def release_job_retry(job: Job) -> None:
    """A failed build job queued again: its failed release goes back to building."""
    release = Release.objects.filter(pk=job.params.get("release_id")).first()
    if release is not None and release.status == Release.Status.FAILED:
        transition(release, Release.Status.BUILDING, error="", finished_at=None,
                   note=f"rebuilt by job {job.pk}")


def release_job_subject(job: Job) -> list[tuple[str, str, str]]:
    from django.urls import reverse

    release = Release.objects.select_related("project").filter(
        pk=job.params.get("release_id")).first()
    if release is None:
        gone = gettext("#%(id)s (deleted)") % {"id": job.params.get("release_id")}
        return [(gettext("Release"), gone, "")]
    return [(gettext("Project"), release.project.name,
             reverse("annotation:project_detail", args=[release.project_id])),
            (gettext("Release"), release.version, reverse("annotation:release_detail",
                                                    args=[release.pk]))]


def release_job_summary(job: Job) -> list[str]:
    r = job.result
    splits = ", ".join(f"{split} {n:,}" for split, n in r.get("splits", {}).items())
    words = {"files": r["files"], "records": f"{r['records']:,}", "splits": splits}
    if splits:
        return [gettext("%(files)s files written with %(records)s records (%(splits)s).") % words]
    return [gettext("%(files)s files written with %(records)s records.") % words]


def release_rebuild(*, release: Release, user: Any = None) -> Release:
    """Build a failed release again under the same version (it was never published, so
    nothing anyone downloaded changes): its build job is retried, or a new one made."""
    from collector.jobs import job_retry

    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.status != Release.Status.FAILED:
            raise ValidationError(gettext("release %(release)s: only a failed build can be "
                                          "rebuilt; this one is %(status)s")
                                  % {"release": release,
                                     "status": release.get_status_display().lower()})
        job = release.job
        if job is not None and job.status == Job.Status.FAILED:
            job_retry(job=job, user=user)  # its on_retry moves the release to building
        else:
            transition(release, Release.Status.BUILDING, error="", finished_at=None,
                       actor=user, note="rebuilt")
            job = job_create(kind="release_build", params={"release_id": release.pk},
                             user=user)
            Release.objects.filter(pk=release.pk).update(job=job)
    release.refresh_from_db()
    return release


@job_handler("release_build", rerun_when_lost=True, on_failed=release_job_failed,
             on_retry=release_job_retry, subject=release_job_subject,
             summary=release_job_summary, label=gettext_lazy("Release build"))
def release_build_job(job: Job, progress: Progress) -> dict[str, Any]:
    release = Release.objects.select_related("project", "project__corpus").filter(
        pk=job.params["release_id"]).first()
    if release is None:
        raise JobError(f"release {job.params['release_id']} no longer exists")
    # A failure of the job fails the release too (release_job_failed), whether the build
    # raised or its worker was lost for good.
    return release_build(release=release, progress=progress)


def release_build(*, release: Release, progress: Progress | None = None) -> dict[str, Any]:
    """Write every format of the release into the storage (``release_storage``); record
    files and checksums; mark it ready.

    The files are written in a local staging folder (atomic, checksummed) and then put
    into the storage. Runs once: a release that is not building is refused, and files
    under its directory in the storage (a crashed earlier run) are removed first, since
    nothing of them was recorded.
    """
    if release.status != Release.Status.BUILDING:
        raise JobError(f"release {release} is {release.status}: releases are built once")
    with tempfile.TemporaryDirectory(prefix="crowdqa-release-") as staging:
        return _build(release, Path(staging), progress)


def _writing(formats: str) -> Any:
    """The live progress message of the formats being written (their names as they are),
    put in the job page reader's language."""
    return format_lazy(gettext_lazy("writing {formats}"), formats=formats)


def _build(release: Release, root: Path, progress: Progress | None) -> dict[str, Any]:
    project = release.project
    total = rr.final_items(project).count()
    steps = len(release.formats) + 1
    if progress:
        progress.start(total=total * steps, message=gettext_lazy("writing the release"))
    base = 0

    def tick(message: Any) -> Callable[[int], None]:
        def report(done: int) -> None:
            if progress:
                progress.set(base + done, message=message)
        return report

    pseudonyms = Pseudonymizer(release.pseudonym_salt, omit=release.omit_workers)
    # One file per split for the formats that have them (``per_split``), in this order.
    splits = rr.splits_of(project)
    for split in splits:
        for name in release.formats:
            format_file_name(name, split)  # refuses a split that cannot name a file
    built: dict[str, list[tuple[str, str, ManifestEntry]]] = {}
    timings: dict[str, float] = {}
    statistics = None
    one_pass = [name for name in release.formats if name in ONE_PASS_FORMATS]
    if project.recipe == "newsqa":
        # One read of the final rows feeds the datasheet's figures and these formats; on
        # PostgreSQL two processes each read and write half of the documents.
        started = time.perf_counter()
        statistics = NewsqaRowStatistics()
        report = tick(_writing(", ".join(one_pass)) if one_pass
                      else gettext_lazy("writing the datasheet"))
        pivot = rr.document_pivot(project) if _can_fork() else None
        if pivot is None:
            writers = _newsqa_one_pass(release, one_pass, root, statistics, timings, report,
                                       steps=len(one_pass), splits=splits)
        else:
            writers = _newsqa_two_processes(release, one_pass, root, statistics, timings,
                                            report, pivot, splits)
        for (name, split), writer in writers.items():
            built.setdefault(name, []).append((name, split, writer.entry))
        timings["one_pass_s"] = round(time.perf_counter() - started, 2)
        base += total * len(one_pass)
    started = time.perf_counter()
    datasheet = datasheet_build(release=release, newsqa_statistics=statistics)
    timings["datasheet_rest_s"] = round(time.perf_counter() - started, 2)
    timings["datasheet_s"] = round(timings.get("datasheet_s", 0.0)
                                   + timings["datasheet_rest_s"], 2)
    for name in release.formats:
        if name in built:
            continue
        started = time.perf_counter()
        built[name] = _write_format(release, name, root, tick(_writing(name)),
                                    pseudonyms, datasheet, splits)
        timings[f"{name}_s"] = round(time.perf_counter() - started, 2)
        base += total
    carrier = next((name for name in ("newsqa-csv", "newsqa-json") if name in built), None)
    if carrier is not None:
        # NewsQA's official split beside its combined files (the CSV has no split field).
        built[carrier] += _write_story_ids(release, root)
    entries = [entry for name in release.formats for entry in built[name]]
    datasheet["files"] = [
        {"path": Path(entry.path).relative_to(root).as_posix(), "format": fmt,
         "split": split, "records": entry.records}
        for fmt, split, entry in entries]
    entries.append(("datasheet", "", write_datasheet(root / "DATASHEET.md", datasheet,
                                                     pseudonyms=pseudonyms)))
    write_checksums(root / CHECKSUMS, [e for _, _, e in entries], root=root)
    _store(release, root)
    counts = rr.split_counts(project)
    with transaction.atomic():
        ReleaseFile.objects.bulk_create([
            ReleaseFile(release=release, format=fmt, split=split,
                        path=str(Path(entry.path).relative_to(root)), records=entry.records,
                        sha256=entry.sha256, bytes=entry.bytes)
            for fmt, split, entry in entries
        ])
        transition(release, Release.Status.READY, split_counts=counts, datasheet=datasheet,
                   finished_at=timezone.now())
    if progress:
        progress.set(total * steps, message=gettext_lazy("done"))
    return {"files": len(entries), "records": total, "splits": counts, "timings": timings}


# The formats written in the one pass over a NewsQA project's rows (with the datasheet's
# figures); the others read the rows themselves.
ONE_PASS_FORMATS = frozenset({"squad-v1", "squad-v2", "newsqa-json"})


def _can_fork() -> bool:
    """Whether the build may write half of the rows from a forked process: on PostgreSQL
    (the child opens its own connection; SQLite's test databases live in memory), outside
    any transaction (the child could not see it), where ``os.fork`` exists, from the main
    thread only (a Celery worker's task; a job on the embedded runner's thread, beside a
    web server's threads, is not forked: a lock another thread held would stay held in
    the child), unless ``settings.CROWDQA_RELEASE_PROCESSES`` is 1."""
    import os
    import threading

    from django.db import connection

    return (settings.CROWDQA_RELEASE_PROCESSES > 1
            and hasattr(os, "fork") and connection.vendor == "postgresql"
            and not connection.in_atomic_block
            and threading.current_thread() is threading.main_thread())


class _ForkedCall:
    """``func()`` run in a forked child; ``result()`` waits for its (pickled) return value
    and raises ``JobError`` with the child's error when it failed; ``stop()`` ends a child
    still running (the parent failed) and reaps it. The parent's database connections are
    closed before the fork (they reconnect when next used), so the child opens its own;
    the child leaves by ``os._exit`` (no cleanup of what it inherited: the staging
    folder, the parent's objects)."""

    def __init__(self, func: Callable[[], Any]) -> None:
        import os
        import pickle
        import traceback

        from django.db import connections

        connections.close_all()
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            code = 0
            try:
                os.close(read)
                try:
                    outcome: tuple[str, Any] = ("ok", func())
                except BaseException as exc:  # reported to the parent
                    outcome = ("error", f"{type(exc).__name__}: {exc}\n"
                                        f"{traceback.format_exc()[-2000:]}")
                    code = 1
                connections.close_all()
                with os.fdopen(write, "wb") as pipe:
                    pickle.dump(outcome, pipe)
            except BaseException:  # the child must never return
                code = 2
            finally:
                os._exit(code)
        os.close(write)
        self._pipe = os.fdopen(read, "rb")
        self._reaped = False

    def result(self) -> Any:
        import os
        import pickle

        try:
            outcome = pickle.load(self._pipe)  # noqa: S301 - our own child, a private pipe
        except EOFError:
            outcome = ("error", "the process writing a format ended without a result")
        finally:
            self._pipe.close()
        _, status = os.waitpid(self.pid, 0)
        self._reaped = True
        kind, value = outcome
        if kind != "ok":
            raise JobError(f"writing in a second process failed: {value}")
        if os.waitstatus_to_exitcode(status) != 0:
            raise JobError(f"the process writing a format exited with {status}")
        return value

    def stop(self) -> None:
        import contextlib
        import os
        import signal

        if self._reaped:
            return
        self._pipe.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self._reaped = True


Writers = dict[tuple[str, str], SquadWriter | NewsqaJsonWriter]


def _newsqa_two_processes(release: Release, names: list[str], root: Path,
                          statistics: NewsqaRowStatistics, timings: dict[str, float],
                          report: Callable[[int], None], pivot: int, splits: list[str]
                          ) -> Writers:
    """The one pass in two processes: this one writes the documents below ``pivot`` into
    the release's files, a forked child (its own read, its own connection) the others
    into fragments, which this one appends to its files before closing them (the bytes
    one process writes); the child's figures are merged after this one's (the same
    sums, in the same order)."""
    with tempfile.TemporaryDirectory(prefix="crowdqa-release-parts-") as parts:
        folder = Path(parts)
        child = _ForkedCall(lambda: _newsqa_part_child(release, names, folder, pivot, splits))

        def append_the_childs(writers: Writers) -> None:
            waited = time.perf_counter()
            theirs, their_statistics, their_timings = child.result()
            joining = time.perf_counter()
            timings["child_wait_s"] = round(joining - waited, 2)
            for key, writer in writers.items():
                writer.add_fragment(*theirs[key])
            timings["join_s"] = round(time.perf_counter() - joining, 2)
            statistics.merge(their_statistics)
            timings.update(their_timings)

        def both_halves(done: int) -> None:
            # The child reports nothing; its half (the rows from the median document on)
            # advances about as fast as this one's.
            report(2 * done)

        try:
            writers = _newsqa_one_pass(release, names, root, statistics, timings,
                                       both_halves, steps=len(names), splits=splits,
                                       documents=(None, pivot),
                                       before_close=append_the_childs)
        finally:
            child.stop()
    return writers


def _newsqa_part_child(release: Release, names: list[str], folder: Path, pivot: int,
                       splits: list[str]
                       ) -> tuple[dict[tuple[str, str], tuple[str, int, bool]],
                                  NewsqaRowStatistics, dict[str, float]]:
    """The forked child's part: the documents from ``pivot`` on, each file's fragment in
    ``folder`` (``b-<file>``), its statistics and timings (prefixed ``child_``, with its
    peak RSS)."""
    import resource

    started = time.perf_counter()
    statistics = NewsqaRowStatistics()
    timings: dict[str, float] = {}
    writers = _newsqa_one_pass(release, names, folder, statistics, timings,
                               lambda done: None, steps=len(names), splits=splits,
                               fragments=folder / "b", documents=(pivot, None))
    out = {f"child_{key}": value for key, value in timings.items()}
    out["child_s"] = round(time.perf_counter() - started, 2)
    out["child_peak_rss_mb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return ({key: (str(writer.path), writer.entry.records, writer.empty)
             for key, writer in writers.items()}, statistics, out)


def _newsqa_one_pass(release: Release, names: list[str], root: Path,
                     statistics: NewsqaRowStatistics | None, timings: dict[str, float],
                     report: Callable[[int], None], *, steps: int, splits: list[str],
                     fragments: Path | None = None,
                     documents: tuple[int | None, int | None] = (None, None),
                     before_close: Callable[[Writers], None] | None = None
                     ) -> Writers:
    """Read the final rows of a NewsQA release once (those of the ``documents`` id
    range), by document, build each question's official record once
    (``rr.newsqa_question``) and feed the datasheet's ``statistics`` and the writers of
    ``names`` (a subset of ``ONE_PASS_FORMATS``) from them: a SQuAD file per split of
    ``splits`` (each document's rows by split, ``rr.split_parts``) and the one NewsQA
    JSON, in ``root``, or with ``fragments`` (a path prefix) fragments
    ``<prefix>-<file>`` for another writer's ``add_fragment``; ``before_close(writers)``
    runs after the last document, before the files are closed. Returns the closed
    writers (``entry``, ``path``, ``empty``) by (format, split; "" for the NewsQA JSON),
    format by format in ``names`` order, a format's splits in ``splits`` order.
    ``timings`` gets the seconds spent in each consumer (``datasheet_s``,
    ``<format>_s``), in reading and building the records (``read_s``) and in closing the
    files (``close_s``)."""
    from contextlib import ExitStack

    project = release.project
    namespace = f"{project.pk}:{project.name}"
    unagreed = release.unagreed_questions

    def path(name: str, split: str) -> Path:
        filename = format_file_name(name, split)
        return root / filename if fragments is None else Path(f"{fragments}-{filename}")

    part = fragments is not None
    writers: Writers = {}
    for name in names:
        for split in (splits if per_split(name) else [""]):
            writers[name, split] = (
                SquadWriter(path(name, split), v2=name == "squad-v2",
                            skip_unanswerable=name == "squad-v1", fragment=part)
                if name.startswith("squad-") else NewsqaJsonWriter(path(name, split),
                                                                   fragment=part))
    squad = [name for name in names if name.startswith("squad-")]
    newsqa = [writers[name, ""] for name in names if name == "newsqa-json"]
    spent = dict.fromkeys(["read_s", "datasheet_s", *(f"{name}_s" for name in names)], 0.0)
    clock = time.perf_counter
    done = 0
    with ExitStack() as stack:
        for writer in writers.values():
            stack.enter_context(writer)
        started = clock()
        for doc, rows in rr.documents_with_rows(project, documents=documents):
            questions = [rr.newsqa_question(row["result"]) for row in rows]
            now = clock()
            spent["read_s"] += now - started
            if statistics is not None:
                statistics.add_document(doc, rows, questions)
                started, now = now, clock()
                spent["datasheet_s"] += now - started
            for split, part_rows, part_questions in rr.split_parts(rows, questions):
                if squad:
                    article = rr.squad_article(doc, part_rows, part_questions,
                                               namespace=namespace, unagreed=unagreed)
                    if article is not None:
                        for name in squad:
                            writer = writers.get((name, split))
                            if writer is None:
                                raise JobError(f"a final record of the split {split!r} "
                                               "appeared during the build; build again")
                            writer.add(article)
                            started, now = now, clock()
                            spent[f"{name}_s"] += now - started
                if newsqa:
                    story = rr.newsqa_story(doc, part_rows, part_questions)
                    for writer in newsqa:
                        writer.add(story)
                        started, now = now, clock()
                        spent["newsqa-json_s"] += now - started
            done += len(rows)
            report(done * steps)
            started = clock()
        if before_close is not None:
            before_close(writers)
        finishing = clock()
    spent["close_s"] = clock() - finishing  # the files' ends, fsync and rename
    timings.update({key: round(value, 2) for key, value in spent.items()})
    return writers


def _write_format(release: Release, name: str, root: Path, report: Callable[[int], None],
                  pseudonyms: Pseudonymizer, datasheet: dict[str, Any], splits: list[str]
                  ) -> list[tuple[str, str, ManifestEntry]]:
    """Write format ``name``: a file per split of ``splits`` (each from its own read of
    that split's rows) when the format is ``per_split``, else its one file or folder."""
    project = release.project
    namespace = f"{project.pk}:{project.name}"
    unagreed = release.unagreed_questions
    writers: dict[str, Callable[[Path, str | None, Callable[[int], None]], ManifestEntry]] = {
        "squad-v1": lambda path, split, progress: write_squad_v1(
            path, rr.squad_articles(project, split=split, namespace=namespace,
                                    unagreed=unagreed),
            progress=progress, skip_unanswerable=True),
        "squad-v2": lambda path, split, progress: write_squad_v2(
            path, rr.squad_articles(project, split=split, namespace=namespace,
                                    unagreed=unagreed),
            progress=progress),
        "newsqa-json": lambda path, split, progress: write_newsqa_json(
            path, rr.newsqa_stories(project, split=split), progress=progress),
        "newsqa-csv": lambda path, split, progress: write_newsqa_csv(
            path, rr.newsqa_stories(project, split=split), progress=progress),
        "msmarco": lambda path, split, progress: write_msmarco_jsonl(
            path, rr.marco_records(project, split=split), progress=progress),
        "dureader": lambda path, split, progress: write_dureader(
            path, rr.dureader_records(project, split=split), progress=progress),
        "reco": lambda path, split, progress: write_reco(
            path, rr.reco_records(project, split=split), progress=progress),
    }
    if name == "judgment":
        from annotation.stages.judgment_report import release_files

        return release_files(release, root / FORMATS[name][1], report)
    if name == "hf":
        return _write_hf(release, root / hf_folder(release), report, pseudonyms, datasheet,
                         splits)
    if not per_split(name):
        return [(name, "", writers[name](root / format_file_name(name), None, report))]
    out: list[tuple[str, str, ManifestEntry]] = []
    for split, progress in _split_progress(splits, report):
        entry = writers[name](root / format_file_name(name, split), split, progress)
        out.append((name, split, entry))
    return out


def _split_progress(splits: list[str], report: Callable[[int], None]
                    ) -> Iterable[tuple[str, Callable[[int], None]]]:
    """Each split with a progress callback for its writer that counts on from the
    records the writers of the splits before it wrote (each writer counts from 0)."""
    written = 0

    def progress(done: int) -> None:
        nonlocal last
        last = done
        report(written + done)

    for split in splits:
        last = 0
        yield split, progress
        written += last


def _write_story_ids(release: Release, root: Path) -> list[tuple[str, str, ManifestEntry]]:
    """NewsQA's story-id list of each of its splits (``NEWSQA_STORY_IDS``; a split
    without stories gets the header alone, so NewsQA's ``split_dataset.py``, which reads
    the three, still runs), recorded under the release's combined CSV format, else its
    JSON."""
    fmt = "newsqa-csv" if "newsqa-csv" in release.formats else "newsqa-json"
    return [(fmt, split, write_newsqa_story_ids(
                root / NEWSQA_STORY_IDS.format(split=split),
                rr.newsqa_story_ids(release.project, split=split)))
            for split in NEWSQA_SPLITS]


def _write_hf(release: Release, folder: Path, report: Callable[[int], None],
              pseudonyms: Pseudonymizer, datasheet: dict[str, Any], splits: list[str]
              ) -> list[tuple[str, str, ManifestEntry]]:
    project = release.project
    kind = HF_KIND[project.recipe]
    namespace = f"{project.pk}:{project.name}"
    sources: dict[str, Callable[[str], Iterable[Any]]] = {
        "squad_v2": lambda split: rr.squad_articles(project, split=split, namespace=namespace,
                                                    unagreed=release.unagreed_questions),
        "msmarco": lambda split: rr.marco_records(project, split=split),
        "reco": lambda split: rr.reco_records(project, split=split),
    }
    out: list[tuple[str, str, ManifestEntry]] = []
    split_entries = {}
    for split, progress in _split_progress(splits, report):
        entry = write_hf_split(folder, split, sources[kind](split), kind=kind,
                               pseudonyms=pseudonyms, progress=progress)
        split_entries[split] = entry
        out.append(("hf", split, entry))
    licence = (project.corpus.licence if project.corpus else "") or ""
    card = write_dataset_card(
        folder, kind=kind, splits=split_entries, datasheet=datasheet, pseudonyms=pseudonyms,
        pretty_name=f"{project.name} {release.version}",
        license_id=LICENCE_SPDX.get(licence.strip().split("\n")[0].strip()),
        language=(project.language,), config_name=folder.name,
    )
    out.append(("hf", "", card))
    return out


# The datasheet -------------------------------------------------------------------------

PROTOCOLS = {
    "newsqa": "NewsQA (Trischler et al.): articles split 90/5/5 by article; questioners see "
              "only headline and highlights; answerers mark spans in the full article; "
              "questions without answer agreement go to validators, who choose the best "
              "answer; spans less than 3 words apart are merged.",
    "reco": "ReCO (Wang et al.): queries filtered for question intent, inappropriate content "
            "and yes/no features; top-10 documents retrieved and filtered for trivial "
            "overlap; annotators extract evidence and write positive / negative / uncertain "
            "alternatives in batches that checkers inspect on samples (accuracy > 0.95).",
    "judgment": "Human judgment study (adapted ROUGE/BLEU paper, section 4): questions sampled "
                "per type with a seed; every system's answer rated 1-5 by several raters "
                "(blind to the system, in an order of their own) with the paper's guideline; "
                "ROUGE-L and BLEU-4 with and without the yes-no / entity bonuses correlated "
                "with the mean rating (Tables 1-3, paired bootstrap, alpha / beta sweeps).",
    "marco": "MS MARCO answer distillation (Bajaj et al.; pa-metrics paper): queries judged, "
             "passages retrieved and curated, answers written by several editors and "
             "weighted by consensus (pa-BLEU importance); outliers reviewed by checkers.",
}


def datasheet_build(*, release: Release,
                    newsqa_statistics: NewsqaRowStatistics | None = None) -> dict[str, Any]:
    """The release's datasheet. A NewsQA project's figures that read every final question
    come from ``newsqa_statistics`` when the caller fed it the rows already (the release
    build's one pass), else from a read of the rows here."""
    project = release.project
    stages = list(project.stages.order_by("order"))
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for stage_name, split, n in _stage_split_counts(project):
        counts[stage_name][split or "all"] = n
    times = task_times(project)
    corpus = project.corpus
    sheet: dict[str, Any] = {
        "title": project.name,
        "version": release.version,
        "created": timezone.now().isoformat(timespec="seconds"),
        "recipe": project.recipe,
        "description": project.description,
        "protocol": PROTOCOLS.get(project.recipe, ""),
        "stages": [{"name": s.name, "kind": s.kind, "automatic": s.kind_spec.automatic,
                    "parameters": s.params} for s in stages],
        "counts": dict(counts),
        "splits": rr.split_counts(project),
        "median_time_on_task_s": {name: round(statistics.median(v), 1)
                                  for name, v in times.items() if v},
        "licence": {"name": (corpus.licence.strip().split("\n")[0] if corpus and corpus.licence
                             else "see the source corpus"),
                    "source": corpus.name if corpus else ""},
        "agreement": agreement_statistics(project),
        "batch_inspections": [
            {"batch": i.batch.number, "annotator": i.batch.annotator_id, "round": i.round,
             "sampled": len(i.sample), "errors": i.errors, "accuracy": i.accuracy,
             "passed": i.passed}
            for i in Inspection.objects.filter(batch__project=project,
                                               status=Inspection.Status.DONE)
            .select_related("batch").order_by("id")
        ],
        "notes": ["Workers appear only as per-release pseudonyms."
                  if not release.omit_workers else "Worker identities are omitted."],
    }
    if project.recipe == "newsqa":
        if newsqa_statistics is None:
            newsqa_statistics = NewsqaRowStatistics()
            for doc, rows in rr.documents_with_rows(project):
                newsqa_statistics.add_document(
                    doc, rows, [rr.newsqa_question(row["result"]) for row in rows])
        sheet["human_performance"], consensus, ids = newsqa_statistics.result()
        sheet["agreement"] = {**sheet["agreement"], **consensus}
        sheet["notes"] = [*sheet["notes"], *newsqa_notes(release, consensus, ids)]
    if project.recipe == "judgment":
        from annotation.stages.judgment_report import datasheet_agreement, datasheet_rated

        sheet["rated"] = datasheet_rated(project)
        sheet["agreement"] = {**sheet["agreement"], **datasheet_agreement(project)}
    return sheet


def task_times(project: Project) -> dict[str, list[float]]:
    """Each stage's times on task (claim to submit) of the work behind the records: not
    gold checks (never released), answers set aside (out of the records), nor corrections
    (recorded with no time of their own: their task's time is the answer they replaced)."""
    times: dict[str, list[float]] = defaultdict(list)
    for stage_name, seconds in (Submission.objects.filter(
            stage__project=project, set_aside=False, item__gold="", supersedes__isnull=True)
            .values_list("stage__name", "time_on_task_s").iterator()):
        times[stage_name].append(seconds)
    return dict(times)


def _choice_label(choice: Any) -> str:
    return f"{choice.s}:{choice.e}" if isinstance(choice, CharSpan) else str(choice)


def newsqa_row_statistics(project: Project
                          ) -> tuple[dict[str, Any], dict[str, int], dict[str, int]]:
    """The datasheet's figures that read every final question with its document, in one
    pass over them (a release of a million questions reads them once here, not once per
    figure): human performance (``HumanPerformance``) and where the platform's consensus
    and the official one differ, with the story-id rules (``ConsensusStatistics``)."""
    statistics = NewsqaRowStatistics()
    for doc, rows in rr.documents_with_rows(project):
        statistics.add_document(doc, rows, [rr.newsqa_question(row["result"]) for row in rows])
    return statistics.result()


class NewsqaRowStatistics:
    """``HumanPerformance`` and ``ConsensusStatistics`` fed together, a document at a
    time, with the official questions the caller built for its writers."""

    def __init__(self) -> None:
        self.performance, self.consensus = HumanPerformance(), ConsensusStatistics()

    def add_document(self, doc: Any, rows: list[dict[str, Any]], questions: list[Any]
                     ) -> None:
        performance, consensus = self.performance.add, self.consensus.add
        for row, question in zip(rows, questions, strict=True):
            performance(row, doc)
            consensus(row, doc, question)

    def merge(self, later: NewsqaRowStatistics) -> None:
        """Add the figures of ``later``, fed the documents after this one's (another
        process's part of the rows): as if this one had been fed them all."""
        self.performance.merge(later.performance)
        for key, n in later.consensus.stats.items():
            self.consensus.stats[key] += n
        for key, n in later.consensus.ids.items():
            self.consensus.ids[key] += n

    def result(self) -> tuple[dict[str, Any], dict[str, int], dict[str, int]]:
        return self.performance.result(), self.consensus.stats, self.consensus.ids


class ConsensusStatistics:
    """Where the platform's consensus (its agreement over normalised merged spans, kept in
    the record) and the official NewsQA consensus (``rr.newsqa_question``) differ, and
    which story-id rule the released documents follow (``rr.story_id_kind``): ``add``
    each final (row, document), then read ``stats`` and ``ids``."""

    def __init__(self) -> None:
        self.stats = {"consensus_differs": 0, "consensus_differs_span": 0,
                      "consensus_differs_answerable": 0}
        self.ids: dict[str, int] = {"newsqa": 0, "cnn": 0, "source": 0}
        self._seen: set[int] = set()

    def add(self, row: dict[str, Any], doc: Any, question: Any = None) -> None:
        """``question``: the row's ``rr.newsqa_question`` when the caller has it."""
        if doc is not None and doc.pk not in self._seen:
            self._seen.add(doc.pk)
            self.ids[rr.story_id_kind(doc)] += 1
        official = (question or rr.newsqa_question(row["result"])).consensus
        platform = rr._choice(row["result"].get("consensus")) or official
        if _choice_label(platform) == _choice_label(official):
            return
        self.stats["consensus_differs"] += 1
        if isinstance(platform, CharSpan) and isinstance(official, CharSpan):
            self.stats["consensus_differs_span"] += 1
        elif isinstance(platform, CharSpan) or isinstance(official, CharSpan):
            self.stats["consensus_differs_answerable"] += 1


def newsqa_notes(release: Release, consensus: dict[str, int], ids: dict[str, int]
                 ) -> list[str]:
    option = release.unagreed_questions
    others = ", ".join(f"{name} ({text})" for name, text in rr.UNAGREED_CHOICES.items()
                       if name != option)
    return [
        "Consensus in the NewsQA JSON and CSV: the one Maluuba's loader computes from the "
        "same answers. With validation, the answer most validators chose when it has at "
        "least half of their votes (max_count >= total / 2); without validation, the "
        "sourcer range most answerers gave; with no span consensus, badQuestion when "
        "isQuestionBad >= 0.5, else noAnswer (the NewsQA paper's marking of questions "
        "without agreement). The platform's own agreement (SQuAD-normalised text of the "
        "merged spans of at least min_agree answerers, or validators) decides whether a "
        f"question is agreed; the two choose differently on {consensus['consensus_differs']} "
        f"question(s): {consensus['consensus_differs_span']} with two different spans, "
        f"{consensus['consensus_differs_answerable']} where only one of them is a span.",
        f"Questions without agreement after validation, in SQuAD and Hugging Face: "
        f"{rr.UNAGREED_CHOICES[option]} (release option unagreed_questions={option}; the "
        f"others: {others}). In SQuAD and Hugging Face the first answer is the official "
        "consensus.",
        "Validators may vote that all answers are bad. The NewsQA JSON and CSV have no "
        "mark for that vote (their validated answers are spans, none and bad_question, and "
        "Maluuba's loader reads nothing else), so there it is counted as noAnswer / none. "
        "A question where it is the most chosen option has no agreed answer: its consensus "
        "reads noAnswer, and SQuAD and Hugging Face treat it as a question without "
        "agreement (above).",
        f"Story ids (NewsQA storyId / story_id): {ids['newsqa']} stor(ies) imported from "
        f"NewsQA keep their storyId, {ids['cnn']} CNN story file(s) are "
        f"./cnn/stories/<file name>, and {ids['source']} document(s) from other sources "
        "keep the source's own id (e.g. a SQuAD paragraph is <title>#<paragraph index>).",
        "Splits: the NewsQA JSON and CSV hold every split, as NewsQA's combined files do; "
        "each story's split is the JSON's type, and train_story_ids.csv, "
        "dev_story_ids.csv and test_story_ids.csv list the stories of each split (the "
        "lists by which NewsQA's split_dataset.py splits the CSV). SQuAD and Hugging Face "
        "have a file per split.",
    ]


def _stage_split_counts(project: Project) -> Iterable[tuple[str, str, int]]:
    from django.db.models import Count

    return (Item.objects.filter(project=project, status=Item.Status.DONE)
            .values_list("stage__name", "split").annotate(n=Count("id")).order_by())


def agreement_statistics(project: Project) -> dict[str, Any]:
    """Share agreed without validation, share needing validation, share without agreement
    after it, and Krippendorff's alpha (nominal) over the answerers' answer keys."""
    from collector.consolidation import Answer, answer_key

    if project.recipe != "newsqa":
        return {}
    checked = Item.objects.filter(project=project, stage__kind="newsqa_agreement",
                                  status=Item.Status.DONE)
    final = rr.final_items(project)
    n_checked, n_final = checked.count(), final.count()
    stats: dict[str, Any] = {}
    if n_checked:
        agreed = checked.filter(result__agreed=True).count()
        stats["share_agreed"] = round(agreed / n_checked, 4)
        stats["share_validated"] = round(1 - agreed / n_checked, 4)
    if n_final:
        stats["share_no_agreement"] = round(
            1 - final.filter(result__agreed=True).count() / n_final, 4)
    columns: list[list[Any]] = []
    for item in (Item.objects.filter(project=project, stage__kind="newsqa_agreement",
                                     status=Item.Status.DONE).select_related("document")
                 .only("data", "document__body").iterator(chunk_size=500)):
        body = item.document.body
        keys = ["|".join(answer_key(body, Answer.from_record(a))) for a in item.data["answers"]]
        columns.append([f"{item.pk}:{k}" for k in keys])
    if columns:
        # Imported only when needed: it loads scipy.stats, seconds of a release build.
        from collector.metrics import krippendorff_alpha
        from collector.metrics.errors import MetricsInputError

        raters = max(len(c) for c in columns)
        data = [[c[r] if r < len(c) else None for c in columns] for r in range(raters)]
        try:
            stats["krippendorff_alpha"] = round(krippendorff_alpha(data), 4)
        except (MetricsInputError, ValueError, ZeroDivisionError):
            stats["krippendorff_alpha"] = None
    return stats


class HumanPerformance:
    """NewsQA section 6.1: EM/F1 of one held-out human answer (the first answerer's)
    against the others, over questions with at least two span answers: ``add`` each final
    (row, document), then ``result``.

    Per split it keeps the count of exact matches and each question's F1 in an
    ``array('d')`` (8 bytes a question: a million questions in 8 MB, not 100), and sums
    the F1 in question order, split after split: the float additions of one list of
    every question's scores, so the same figures to the last bit."""

    def __init__(self) -> None:
        self._per_split: dict[str, tuple[list[int], array[float]]] = {}

    def add(self, row: dict[str, Any], doc: Any) -> None:
        answers = [a["sourcerAnswers"] for a in row["result"]["answers"]]
        texts = [doc.body[a[0]["s"]:a[-1]["e"]] for a in answers if "s" in a[0]]
        if len(texts) < 2:
            return
        # exact_match and f1_v1 of the held-out answer against each other one, each text
        # normalised once (the answers of a question often repeat one span).
        held_out = texts[0]
        tokens = {held_out: squad_tokens(held_out)}
        mine = tokens[held_out]
        em: int = 0
        f1: float = 0
        for g in texts[1:]:
            theirs = tokens.get(g)
            if theirs is None:
                theirs = tokens[g] = squad_tokens(g)
            em = max(em, exact_match_tokens(mine, theirs))
            f1 = max(f1, f1_v1_tokens(mine, theirs))
        split = row["split"] or "train"
        scores = self._per_split.get(split)
        if scores is None:
            scores = self._per_split[split] = ([0], array("d"))
        scores[0][0] += em
        scores[1].append(f1)

    def merge(self, later: HumanPerformance) -> None:
        """Add the scores of ``later``, fed the questions after this one's."""
        for split, (em, f1) in later._per_split.items():
            scores = self._per_split.setdefault(split, ([0], array("d")))
            scores[0][0] += em[0]
            scores[1].extend(f1)

    def result(self) -> dict[str, Any]:
        per_split = self._per_split
        n = sum(len(f1) for _, f1 in per_split.values())
        if not n:
            return {"questions": 0, "method": "no question had two span answers"}
        return {
            "exact_match": round(100 * sum(em[0] for em, _ in per_split.values()) / n, 2),
            "f1": round(100 * sum(chain.from_iterable(f1 for _, f1 in per_split.values()))
                        / n, 2),
            "questions": n,
            "method": "first answerer's answer scored against the other answerers' (SQuAD "
                      "v1.1 EM/F1), as in NewsQA section 6.1",
            "by_split": {split: {"exact_match": round(100 * em[0] / len(f1), 2),
                                 "f1": round(100 * sum(f1) / len(f1), 2),
                                 "questions": len(f1)}
                         for split, (em, f1) in per_split.items()},
        }
