"""Erase a worker's personal identifiers on their request (GDPR), keeping their anonymised
answers: ``annotation.services.worker_erase``."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.models import ExternalAccount, Platform
from annotation.roles import Role, has_role
from annotation.services import worker_erase


class Command(BaseCommand):
    help = ("Erase a worker's personal identifiers (marketplace id, e-mail, name, username, "
            "password, session ids, login records, their ids in payment exports) and "
            "deactivate the account; their answers stay, anonymised, so releases and "
            "agreement stay reproducible. Name the worker by exactly one of --user, "
            "--prolific or --mturk.")

    def add_arguments(self, parser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--user", help="the worker's CrowdQA username")
        who.add_argument("--prolific", help="the worker's Prolific participant id")
        who.add_argument("--mturk", help="the worker's MTurk WorkerId")

    def handle(self, *args, **options) -> None:
        # "is not None": an empty --user (or --prolific) was taken for --mturk None.
        if options["user"] is not None:
            option = "--user"
            user = get_user_model().objects.filter(username=options["user"]).first()
            named = f"user {options['user']!r}"
        else:
            option = "--prolific" if options["prolific"] is not None else "--mturk"
            platform = Platform.PROLIFIC if option == "--prolific" else Platform.MTURK
            external = options[option[2:]]
            account = (ExternalAccount.objects.filter(platform=platform, external_id=external)
                       .select_related("user").first())
            user = account.user if account is not None else None
            named = f"{platform.label} worker {external!r}"
        if user is None:
            raise CommandError(f"{option}: no {named} (erased already, or never here)")
        if has_role(user, Role.ADMIN):  # as the worker page refuses it
            raise CommandError(f"{option}: {named} is an admin; admins are not erased: "
                               "remove the admin role first")
        summary = worker_erase(user=user)
        self.stdout.write(
            f"{named} erased: removed {', '.join(map(str, summary.removed))}; the account "
            f"(id {summary.user_id}) is now {summary.username}, deactivated. Kept: their "
            "answers, time on task, pay and quality records under the same account id, so "
            "releases (whose files name workers only by per-release pseudonyms), agreement "
            "and payments stay reproducible.")
