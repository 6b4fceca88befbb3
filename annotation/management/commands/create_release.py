"""Create a release of a project, then copy it from the storage to a folder: files and
checksums printed."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation import releases
from annotation.models import Project
from annotation.release_records import UNAGREED_CHOICES
from collector.jobs import JobError


class Command(BaseCommand):
    help = ("Create release VERSION of project NAME in FORMAT. The release is built into the "
            "release storage (STORAGES['releases'], else the default storage: MEDIA_ROOT), "
            "where downloads and score_predictions read it; --out DIR also copies its files "
            "from there to DIR, each checked against its SHA-256.")

    def add_base_argument(self, parser, *args, **kwargs) -> None:
        # The contract's --version is the release's version, not Django's.
        if "--version" not in args:
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="the project's name")
        parser.add_argument("--version", required=True, help="semantic version X.Y.Z")
        parser.add_argument("--format", required=True, action="append", dest="formats",
                            choices=sorted(releases.FORMATS),
                            help="repeat for several formats")
        parser.add_argument("--out", help="also copy the release's files to this folder "
                            "(new or empty)")
        parser.add_argument("--omit-workers", action="store_true")
        parser.add_argument("--unagreed-questions", default="unanswerable",
                            choices=list(UNAGREED_CHOICES),
                            help="NewsQA: how SQuAD and Hugging Face get questions without "
                            "agreement after validation: " + "; ".join(
                                f"{k}: {v}" for k, v in UNAGREED_CHOICES.items())
                            + " (default: unanswerable)")

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"no project named {options['project']!r}")
        out = Path(options["out"]) if options["out"] else None
        if out is not None and out.exists() and not out.is_dir():
            raise CommandError(f"--out: {out} is a file, not a folder")
        if out is not None and out.exists() and any(out.iterdir()):
            raise CommandError(f"{out} is not empty: releases are written once")
        try:
            release = releases.release_create(
                project=project, version=options["version"], formats=options["formats"],
                omit_workers=options["omit_workers"],
                unagreed_questions=options["unagreed_questions"], build=False,
            )
        except ValidationError as exc:
            raise CommandError(exc.messages[0]) from exc
        bar = tqdm(total=None, unit="rec", desc=f"{project.name} {release.version}",
                   disable=options["verbosity"] == 0)
        try:
            releases.release_build(release=release, progress=_TqdmProgress(bar))
        except Exception as exc:
            releases.release_fail(release=release, error=str(exc))
            raise CommandError(f"release failed: {exc}") from exc
        finally:
            bar.close()
        if out is not None:
            try:
                releases.release_copy(release=release, out_dir=out)
            except (OSError, JobError) as exc:
                raise CommandError(f"release {release.version} is ready in the storage, but "
                                   f"copying it to {out} failed: {exc}") from exc
        where = out if out is not None else Path(releases.release_file_name(release, ""))
        for f in release.files.all():
            self.stdout.write(f"{f.sha256}  {where / f.path}  ({f.records} records, "
                              f"{f.bytes} bytes)")


class _TqdmProgress:
    """The job Progress interface, shown as a terminal progress bar."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar

    def start(self, *, total: int | None, message: str = "") -> None:
        self.bar.reset(total=total)
        self.bar.set_postfix_str(str(message))

    def set(self, done: int, *, total: int | None = None, message: str | None = None) -> None:
        self.bar.n = done
        if message:
            self.bar.set_postfix_str(str(message), refresh=False)
        self.bar.refresh()

    def advance(self, n: int = 1, *, message: str | None = None) -> None:
        self.set(self.bar.n + n, message=message)
