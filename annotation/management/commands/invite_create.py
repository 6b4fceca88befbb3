"""Create an invite link to a project; its path (``/join/<token>/``) is the last line printed.

Scripts rely on that contract: ``manage.py invite_create --project NAME --role
annotator|checker [--max-uses N] [--expires-days D] [--domains a.org,b.org]``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import invites
from annotation.models import Project

# invite_create's fields, as this command's options.
OPTIONS = {"role": "--role", "max_uses": "--max-uses", "expires_days": "--expires-days",
           "allowed_domains": "--domains"}


class Command(BaseCommand):
    help = "Create an invite link to project NAME in ROLE; prints its path as the last line."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="the project's name")
        parser.add_argument("--role", required=True,
                            help=f"one of {', '.join(invites.INVITE_ROLES)}")
        parser.add_argument("--max-uses", type=int, default=None,
                            help="how many people may join through it (default: no limit)")
        parser.add_argument("--expires-days", type=int, default=None,
                            help="days until it expires (default: never)")
        parser.add_argument("--domains", default="",
                            help="comma-separated e-mail domains allowed to sign up")

    def handle(self, *args, **options) -> None:
        name, role = options["project"], options["role"]
        project = Project.objects.filter(name=name).first()
        if project is None:
            raise CommandError(f"no project named {name!r}")
        if role not in invites.INVITE_ROLES:
            raise CommandError(
                f"unknown role {role!r}: use one of {', '.join(invites.INVITE_ROLES)}")
        try:
            invite = invites.invite_create(
                project=project, role=role, max_uses=options["max_uses"],
                expires_days=options["expires_days"],
                allowed_domains=options["domains"].split(","))
        except ValidationError as exc:
            raise CommandError("; ".join(
                f"{OPTIONS.get(field, field)}: {message}"
                for field, messages in exc.message_dict.items() for message in messages)
                if hasattr(exc, "error_dict") else "; ".join(exc.messages)) from exc
        limits = [f"max uses {invite.max_uses}" if invite.max_uses else "no use limit",
                  f"expires {invite.expires_at:%Y-%m-%d %H:%M %Z}" if invite.expires_at
                  else "never expires"]
        if invite.allowed_domains:
            limits.append(f"e-mail at {', '.join(invite.allowed_domains)}")
        self.stdout.write(f"{role} invite to {project.name}: {', '.join(limits)}")
        self.stdout.write(invites.invite_path(invite))
