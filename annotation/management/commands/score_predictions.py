"""Score a predictions file against a project's release; prints one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Release
from annotation.scoring import SCORED_FORMATS, release_score
from collector.metrics import MetricsInputError


class Command(BaseCommand):
    help = "Score PRED against release VERSION of project NAME (official scorers)."

    def add_base_argument(self, parser, *args, **kwargs) -> None:
        if "--version" not in args:  # --version is the release's version here
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser) -> None:
        parser.add_argument("predictions", help="the predictions file")
        parser.add_argument("--project", required=True)
        parser.add_argument("--version", required=True)
        parser.add_argument("--format", required=True, choices=SCORED_FORMATS)
        parser.add_argument("--alpha", type=float, default=1.0, help="DuReader yes-no bonus")
        parser.add_argument("--beta", type=float, default=1.0, help="DuReader entity bonus")

    def handle(self, *args, **options) -> None:
        release = Release.objects.filter(project__name=options["project"],
                                         version=options["version"]).first()
        if release is None:
            raise CommandError(f"no release {options['version']} of project "
                               f"{options['project']!r}")
        path = Path(options["predictions"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            scores = release_score(release=release, format=options["format"], predictions=path,
                                   alpha=options["alpha"], beta=options["beta"])
        except MetricsInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(scores, ensure_ascii=False))
