"""Create the three role groups."""

from django.db import migrations

ROLE_NAMES = ("annotator", "checker", "admin")


def create_groups(apps, schema_editor):
    group = apps.get_model("auth", "Group")
    for name in ROLE_NAMES:
        group.objects.get_or_create(name=name)


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_NAMES).delete()


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_groups, remove_groups)]
