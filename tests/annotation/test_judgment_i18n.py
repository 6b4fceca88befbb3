"""The judgment recipe in the Simplified Chinese interface: what a rater and the admin
read is in Chinese where the catalogue has it (stage names, question types)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import engine
from annotation.judgment_demo import references_upload, system_uploads
from annotation.roles import Role
from annotation.stages.judgment_import import judgment_import
from tests.annotation.test_judgment import _rate_all, draft, raters  # noqa: F401


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def started(draft, raters, admin_user, committed, settings):  # noqa: F811
    settings.CELERY_TASK_ALWAYS_EAGER = True
    judgment_import(project=draft, references=references_upload(),
                    predictions=system_uploads())
    for rater in raters:
        engine.project_member_add(project=draft, user=rater, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=draft, actor=admin_user)
    return draft


def test_why_a_rater_has_no_task_names_the_stage_in_chinese(started, raters, client,  # noqa: F811
                                                             committed):
    with committed():
        _rate_all(started, raters[0])
    client.force_login(raters[0])
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    page = _text(client.get(reverse("annotation:annotator_home"),
                            {"project": started.pk}).content.decode())
    assert "给答案打 1–5 分：它的 22 个开放任务都不适合你" in page, page
    assert "Rate answers 1-5" not in page
