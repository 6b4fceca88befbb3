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
from collector.management.arguments import new_or_empty_folder


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
        parser.add_argument("--out", help="also copy the release's files to this folder: an "
                            "empty one, or a new one made inside an existing folder (checked "
                            "before the release is made)")
        parser.add_argument("--omit-workers", action="store_true")
        parser.add_argument("--unagreed-questions", default="unanswerable",
                            choices=list(UNAGREED_CHOICES),
                            help="NewsQA: how SQuAD and Hugging Face get questions without "
                            "agreement after validation: " + "; ".join(
                                f"{k}: {v}" for k, v in UNAGREED_CHOICES.items())
                            + " (default: unanswerable)")

    def handle(self, *args, **options) -> None:
        # Checked before anything is done: a bad --out ("" from an unset shell variable
        # was taken as no --out) would otherwise fail, or be ignored, after the build.
        out = (new_or_empty_folder(options["out"], option="--out")
               if options["out"] is not None else None)
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"no project named {options['project']!r}")
        try:
            release = releases.release_create(
                project=project, version=options["version"], formats=options["formats"],
                omit_workers=options["omit_workers"],
                unagreed_questions=options["unagreed_questions"], build=False,
            )
        except ValidationError as exc:
            raise CommandError(_refusal(exc, options)) from exc
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


OPTIONS = {"version": "--version", "formats": "--format",
           "unagreed_questions": "--unagreed-questions"}


def _refusal(exc: ValidationError, options: dict) -> str:
    """The first message of ``release_create``'s refusal, its field said as the option."""
    if hasattr(exc, "error_dict"):  # the model's own checks: the message names no value
        field, errors = next(iter(exc.error_dict.items()))
        option = OPTIONS.get(field)
        message = errors[0].messages[0]
        if option is None:
            return f"{field}: {message}"
        return f"{option}: {options[field]!r}: {message}"  # fields are named as the dests
    message = exc.messages[0]
    field, colon, rest = message.partition(": ")
    return f"{OPTIONS[field]}: {rest}" if colon and field in OPTIONS else message


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
