"""Export what a project's workers are owed as a payments CSV, recorded like the pay page's
export (nothing already paid is paid again)."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import pay
from annotation.models import Project


class Command(BaseCommand):
    help = ("Record a payment export of project NAME and write its CSV to FILE ("
            + ",".join(pay.CSV_COLUMNS) + "). What the admin must know before paying "
            "(MTurk workers left out of a project that does not pay in USD, or as they "
            "submitted no assignment to pay on) is written to standard error.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="the project's name")
        parser.add_argument("--out", required=True, help="the CSV file to write")
        parser.add_argument("--reason", default="",
                            help="the reason shown to the workers with their bonus (MTurk "
                                 "e-mails it; default: payment for your work on the project "
                                 "up to the export's end)")

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"no project named {options['project']!r}")
        out = Path(options["out"])
        if not out.parent.is_dir():
            raise CommandError(f"{out.parent} is not a directory")
        if out.is_dir():
            raise CommandError(f"{out} is a directory, not a file")
        existed = out.exists()
        try:  # before the export is recorded: a file that cannot be written records nothing
            handle = out.open("w", encoding="utf-8", newline="")
        except OSError as exc:
            raise CommandError(f"--out: cannot write {out} ({exc.strerror})") from exc
        with handle:
            try:
                export = pay.payments_export(project=project, reason=options["reason"])
            except ValidationError as exc:
                handle.close()
                if not existed:
                    out.unlink()
                # "reason: ..." is the --reason option's (the message may be translated:
                # the field it names says so)
                option = "reason" in getattr(exc, "error_dict", {})
                raise CommandError(("--" if option else "") + exc.messages[0]) from exc
            # The export is recorded: should writing fail now, its CSV stays downloadable
            # from the pay page.
            handle.write(export.content)
        rows = export.lines.count()
        self.stdout.write(f"{rows} row(s), total {export.total} {export.currency}, "
                          f"written to {out}")
        for warning in export.warnings:
            self.stderr.write(f"warning: {warning}")
