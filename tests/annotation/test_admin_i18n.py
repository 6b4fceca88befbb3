"""Admin pages in the Simplified Chinese interface."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import engine


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def zh_judgment(admin_user, client):
    """A Chinese judgment study, and the client signed in as its admin in Chinese."""
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    return engine.project_create(name="判断", recipe="judgment", language="zh",
                                 user=admin_user)


def test_the_new_project_form_is_in_chinese(admin_user, client):
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = client.get(reverse("annotation:project_create")).content.decode()
    labels = re.findall(r'<label for="id_[a-z_]+">([^<]*)</label>', html)
    assert labels == ["名称", "方案", "语料库", "语言", "描述"], labels
    assert "Recipe" not in _text(html) and "Corpus" not in _text(html)


def test_the_project_dashboard_names_stages_in_chinese(zh_judgment, client):
    html = client.get(reverse("annotation:project_detail", args=[zh_judgment.pk])
                      ).content.decode()
    plot = re.search(r'data-testid="plot-stages">(.*?)</svg>', html, re.S).group(1)
    assert "1. 按类型抽样问题" in plot and "2. 给答案打 1–5 分" in plot
    assert "Sample questions per type" not in plot


def test_the_project_page_names_member_roles_in_chinese(zh_judgment, client):
    from annotation.roles import Role
    from tests.factories import user_with_roles

    engine.project_member_add(project=zh_judgment,
                              user=user_with_roles("rater9", Role.ANNOTATOR),
                              role=Role.ANNOTATOR)
    page = _text(client.get(reverse("annotation:project_detail", args=[zh_judgment.pk]))
                 .content.decode())
    assert "rater9 — 标注员" in page and "rater9 — annotator" not in page


def test_the_workers_page_offers_the_stages_by_their_chinese_names(zh_judgment, client):
    html = client.get(reverse("annotation:project_workers", args=[zh_judgment.pk])
                      ).content.decode()
    options = re.findall(r'<option value="\d+"[^>]*>([^<]*)</option>', html)
    assert "2. 给答案打 1–5 分" in options, options
