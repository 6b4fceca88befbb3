"""Create the demo users and load the demo data shipped in the repository (idempotent)."""

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
    help = "Create demo users (admin, checker, annotator1..3) and load the demo data."

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
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo users' password (demo mode only): {password}\n"
                "Log in at http://127.0.0.1:8000/accounts/login/"
            )
        )
