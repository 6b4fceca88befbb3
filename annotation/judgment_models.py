"""The judgment recipe's one table: the reports its study stage writes (kept, never
changed; a new run is a new report). Imported by ``annotation.models``."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Project, Stage


class JudgmentReport(models.Model):
    """One run of a judgment study: Tables 1-3, bootstrap, sweeps, distributions and the
    per-candidate values (``collector.metrics.judgment.judgment_study``'s output)."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT,
                                related_name="judgment_reports")
    stage = models.ForeignKey(Stage, on_delete=models.PROTECT, related_name="+")
    report = models.JSONField()
    job = models.ForeignKey("collector.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "annotation"
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"judgment report {self.pk} of {self.project}"
