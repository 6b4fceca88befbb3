"""Admin pages in the Simplified Chinese interface."""

from __future__ import annotations

import re

from django.urls import reverse


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_new_project_form_is_in_chinese(admin_user, client):
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = client.get(reverse("annotation:project_create")).content.decode()
    labels = re.findall(r'<label for="id_[a-z_]+">([^<]*)</label>', html)
    assert labels == ["名称", "方案", "语料库", "语言", "描述"], labels
    assert "Recipe" not in _text(html) and "Corpus" not in _text(html)


def test_the_project_dashboard_names_stages_in_chinese(admin_user, client):
    from annotation import engine

    project = engine.project_create(name="判断", recipe="judgment", language="zh",
                                    user=admin_user)
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = client.get(reverse("annotation:project_detail", args=[project.pk])).content.decode()
    plot = re.search(r'data-testid="plot-stages">(.*?)</svg>', html, re.S).group(1)
    assert "1. 按类型抽样问题" in plot and "2. 给答案打 1–5 分" in plot
    assert "Sample questions per type" not in plot


def test_the_project_page_names_member_roles_in_chinese(admin_user, client):
    from annotation import engine
    from annotation.roles import Role
    from tests.factories import user_with_roles

    project = engine.project_create(name="成员", recipe="judgment", language="zh",
                                    user=admin_user)
    engine.project_member_add(project=project, user=user_with_roles("rater9", Role.ANNOTATOR),
                              role=Role.ANNOTATOR)
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    page = _text(client.get(reverse("annotation:project_detail", args=[project.pk]))
                 .content.decode())
    assert "rater9 — 标注员" in page and "rater9 — annotator" not in page


def test_the_workers_page_offers_the_stages_by_their_chinese_names(admin_user, client):
    from annotation import engine

    project = engine.project_create(name="工作人员", recipe="judgment", language="zh",
                                    user=admin_user)
    client.force_login(admin_user)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-hans"
    html = client.get(reverse("annotation:project_workers", args=[project.pk])).content.decode()
    options = re.findall(r'<option value="\d+"[^>]*>([^<]*)</option>', html)
    assert "2. 给答案打 1–5 分" in options, options
