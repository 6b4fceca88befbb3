"""Open a project to a marketplace: create a study and print its entry path."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import studies
from annotation.models import Platform, Project


class Command(BaseCommand):
    help = ("Create a Prolific or MTurk study of project NAME; the last line printed is the "
            "study's entry path (add the platform's URL parameters to it).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="the project's name")
        parser.add_argument("--platform", required=True, choices=Platform.values)
        parser.add_argument("--completion-code", required=True,
                            help="the code workers get when they finish")
        parser.add_argument("--quota", type=int, default=None, help="tasks per session")
        parser.add_argument("--no-work-code", default="",
                            help="the code for workers who leave because no work is left "
                                 "(default: the completion code)")
        parser.add_argument("--no-work-incomplete", action="store_true",
                            help="leaving because no work is left does not count as complete")
        parser.add_argument("--name", default="")

    def handle(self, *args, **options) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"--project: no project named {options['project']!r}")
        try:
            study = studies.study_create(
                project=project, platform=options["platform"],
                completion_code=options["completion_code"], quota=options["quota"],
                no_work_code=options["no_work_code"], name=options["name"],
                no_work_completes=not options["no_work_incomplete"])
        except ValidationError as exc:
            # "completion_code: ..." names the option --completion-code; the rest is as said.
            field, _, why = exc.messages[0].partition(": ")
            raise CommandError(f"--{field.replace('_', '-')}: {why}") from exc
        external, session, study_param = studies.PARAMS[study.platform]
        self.stdout.write(f"{study} created for project {project.name!r} "
                          f"(quota: {study.quota or 'none'} per session).")
        self.stdout.write(f"Workers arrive with ?{external}=…&{study_param}=…&{session}=…"
                          + ("&turkSubmitTo=…" if study.platform == Platform.MTURK else ""))
        self.stdout.write(studies.study_path(study))
