"""Each payments export lists the Prolific studies it pays in, so the pay page need not
read every export's CSV; exports made before are read once here."""

import csv
import io

from django.db import migrations, models


def studies_of_earlier_exports(apps, schema_editor):
    PaymentExport = apps.get_model("annotation", "PaymentExport")
    for export in PaymentExport.objects.filter(content__contains="\nprolific,").iterator():
        export.prolific_studies = sorted({
            row.get("external_study") or ""
            for row in csv.DictReader(io.StringIO(export.content))
            if row.get("platform") == "prolific"})
        export.save(update_fields=["prolific_studies"])


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0015_study_session_screened_out"),
    ]

    operations = [
        migrations.AddField(
            model_name="paymentexport",
            name="prolific_studies",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(studies_of_earlier_exports, migrations.RunPython.noop),
    ]
