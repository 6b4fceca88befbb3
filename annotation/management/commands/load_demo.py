"""Create the demo users, load the demo data shipped in the repository and build the demo
projects from it (idempotent)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.roles import Role
from annotation.services import user_ensure

DEMO_USERS: tuple[tuple[str, tuple[Role, ...]], ...] = (
    ("admin", (Role.ADMIN,)),
    ("checker", (Role.CHECKER,)),
    ("annotator1", (Role.ANNOTATOR,)),
    ("annotator2", (Role.ANNOTATOR,)),
    ("annotator3", (Role.ANNOTATOR,)),
)


class Command(BaseCommand):
    help = ("Create demo users (admin, checker, annotator1..3), load the demo data and build "
            "the demo projects (finished ones with releases, and fresh work).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-projects", action="store_true",
                            help="Only users and data: do not build the demo projects.")

    def handle(self, *args, **options) -> None:
        if settings.PRODUCTION:
            raise CommandError("load_demo is for demo mode only; CROWDQA_ENV=production is set.")
        password = settings.CROWDQA_DEMO_PASSWORD
        for username, roles in DEMO_USERS:
            _, created = user_ensure(username=username, password=password, roles=roles)
            state = "created" if created else "exists"
            self.stdout.write(f"  user {username:<11} {'/'.join(roles):<9} {state}")
        from collector.demo import demo_data_load

        for line in demo_data_load():
            self.stdout.write(f"  {line}")
        if not options["no_projects"]:
            self._projects()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo users' password (demo mode only): {password}\n"
                "Log in at /accounts/login/ of the server (runserver: http://127.0.0.1:8000 "
                "unless given another address)"
            )
        )

    def _projects(self) -> None:
        from annotation.demo import DemoError, demo_projects_load

        # Stage and release jobs run inline here (demo_projects_load sees to it): each
        # scripted step needs the previous job's result.
        try:
            for line in demo_projects_load():
                self.stdout.write(f"  {line}")
        except DemoError as exc:
            raise CommandError(f"demo projects: {exc}") from exc
