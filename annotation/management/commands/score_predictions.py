"""Score a predictions file against a project's release; prints one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Release
from annotation.scoring import SCORED_FORMATS, release_score
from collector.metrics import MetricsInputError
from collector.metrics.cli import bonus_weight
from collector.metrics.dureader import SCORERS
from collector.metrics.files import IDS_HELP


class Command(BaseCommand):
    help = ("Score PRED against release VERSION of project NAME with the official scorers; "
            "prints one JSON object, warnings on stderr. The release's gold file of the "
            "split (--split; by default dev, else test) is read from the release storage; "
            "the JSON names the split and file scored. " + IDS_HELP + " DuReader: "
            + "; ".join(f"{k}: {v}" for k, v in SCORERS.items())
            + "; the release's dureader.<split>.jsonl (DuReader's data layout) is converted "
            "on read.")

    def add_base_argument(self, parser, *args, **kwargs) -> None:
        if "--version" not in args:  # --version is the release's version here
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser) -> None:
        parser.add_argument("predictions", help="the predictions file")
        parser.add_argument("--project", required=True)
        parser.add_argument("--version", required=True)
        parser.add_argument("--format", required=True, choices=SCORED_FORMATS)
        parser.add_argument("--split", default=None,
                            help="the split whose file is the gold data (train, dev, test); "
                            "default: dev, else test, else the release's only split")
        parser.add_argument("--strict", action="store_true",
                            help="refuse predictions for unknown ids (and, for squad-v1, "
                            "questions without a prediction) instead of the official "
                            "behaviour: ignored / scored 0 with a warning")
        parser.add_argument("--scorer", choices=list(SCORERS), default="mrc2018",
                            help="DuReader scorer: mrc2018, the MRC2018 bonus scorer "
                            "(default); dureader2, DuReader 2.0's dureader_eval.py "
                            "(coco-caption BLEU and ROUGE-L, no bonuses)")
        parser.add_argument("--alpha", type=bonus_weight, default=None,
                            help="DuReader yes-no bonus, a number >= 0 (mrc2018; 1.0)")
        parser.add_argument("--beta", type=bonus_weight, default=None,
                            help="DuReader entity bonus, a number >= 0 (mrc2018; 1.0)")

    def handle(self, *args, **options) -> None:
        path = Path(options["predictions"])
        if path.is_dir():
            raise CommandError(f"{path}: is a directory, expected a predictions file")
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        if not path.is_file():
            raise CommandError(f"{path}: not a regular file")
        release = Release.objects.filter(project__name=options["project"],
                                         version=options["version"]).first()
        if release is None:
            raise CommandError(f"no release {options['version']} of project "
                               f"{options['project']!r}")
        try:
            scores, warnings = release_score(
                release=release, format=options["format"], predictions=path,
                strict=options["strict"], scorer=options["scorer"], alpha=options["alpha"],
                beta=options["beta"], split=options["split"])
        except MetricsInputError as exc:
            raise CommandError(str(exc)) from exc
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(json.dumps(scores, ensure_ascii=False))
