"""Active times stored before the server checked them (``engine.active_time_clean``): a
negative one measured nothing, and one longer than the task was held is held to it (a
correction, which holds no task, to a task's lease). Hourly pay is paid on them."""

from django.conf import settings
from django.db import migrations
from django.db.models import F


def hold(apps, schema_editor):
    Submission = apps.get_model("annotation", "Submission")
    rows = Submission.objects.using(schema_editor.connection.alias)
    rows.filter(active_time_s__lt=0).update(active_time_s=None)
    rows.filter(time_on_task_s__gt=0, active_time_s__gt=F("time_on_task_s")).update(
        active_time_s=F("time_on_task_s"))
    lease_s = 60.0 * getattr(settings, "CROWDQA_LEASE_MINUTES", 30)
    rows.filter(time_on_task_s__lte=0, active_time_s__gt=lease_s).update(
        active_time_s=lease_s)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0012_assignment_unique_worker_first")]

    operations = [migrations.RunPython(hold, migrations.RunPython.noop)]
