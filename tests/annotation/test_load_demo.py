from __future__ import annotations

from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import authenticate
from django.core.management import call_command


def _row_counts() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for model in apps.get_models()
        if model._meta.app_label in {"auth", "collector", "annotation"}
    }


@pytest.mark.django_db
def test_load_demo_twice_leaves_the_same_rows(settings):
    out = StringIO()
    call_command("load_demo", stdout=out)
    first = _row_counts()
    call_command("load_demo", stdout=StringIO())
    assert _row_counts() == first
    assert first["auth.User"] == 5
    assert f"password (demo mode only): {settings.CROWDQA_DEMO_PASSWORD}" in out.getvalue()
    user = authenticate(username="annotator2", password=settings.CROWDQA_DEMO_PASSWORD)
    assert [g.name for g in user.groups.all()] == ["annotator"]


@pytest.mark.django_db
def test_load_demo_refuses_production(settings):
    from django.core.management.base import CommandError

    settings.PRODUCTION = True
    with pytest.raises(CommandError, match="demo mode only"):
        call_command("load_demo", stdout=StringIO())
