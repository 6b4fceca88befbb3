"""What the benchmarks share on the database side (import after ``django.setup()``)."""

from __future__ import annotations


def project_drop(project) -> None:
    """Delete a bench project and everything it made: history rows first, since they
    protect what they point at (submissions their slots and items, items their parents)."""
    from annotation.models import Assignment, Item, Project, Submission, TransitionLog

    slots = Assignment.objects.filter(stage__project=project).values_list("id", flat=True)
    TransitionLog.objects.filter(model="Assignment", object_id__in=list(slots)).delete()
    Submission.objects.filter(stage__project=project).delete()
    Item.objects.filter(project=project).update(parent=None)
    Project.objects.filter(pk=project.pk).delete()
