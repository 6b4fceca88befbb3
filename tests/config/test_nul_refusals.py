"""A NUL character (%00) in a URL or a posted field, in the reader's language: a page's form
names its field next to it (the form's own error, the page kept), other posts and URLs get
a page that says where, and the API answers in JSON naming the field. It was an English
``BadRequest`` (a bare "Bad Request (400)" page outside DEBUG) on every page."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from annotation import engine
from annotation.models import Project, ProjectMember
from tests.annotation.test_stage_params import posted_form

pytestmark = pytest.mark.django_db


def _in_chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


def _field_errors(page: str, field: str) -> str:
    """The text between a form's field and the next field (its errors, its help)."""
    after = page.split(f'name="{field}"', 1)[1]
    return html.unescape(re.split(r"<(?:input|select|textarea) ", after, maxsplit=1)[0])


def test_a_page_form_names_the_field_that_holds_a_nul(client_for, admin_user):
    client = client_for(admin_user)
    response = client.post(reverse("annotation:project_create"),
                           {"name": "News\x00QA", "recipe": "newsqa", "language": "en"})
    assert response.status_code == 200  # the form again, not a bare 400 page
    page = response.content.decode()
    assert "Null characters are not allowed." in _field_errors(page, "name")
    assert 'value="newsqa" selected' in page  # the rest of what was posted kept
    assert not Project.objects.exists()


def test_the_stage_parameters_form_names_the_parameter_that_holds_a_nul(client_for,
                                                                         admin_user):
    project = engine.project_create(name="p", recipe="reco", user=admin_user)
    stage = project.stages.get(kind="reco_query_filter")
    before = dict(stage.params)
    field = f"stage{stage.pk}-blocklists"
    response = client_for(admin_user).post(
        reverse("annotation:project_action", args=[project.pk]),
        posted_form(stage, {"blocklists": '{"en": ["sex\x00"]}'}))
    assert response.status_code == 400
    page = response.content.decode()
    error = page.split('data-testid="param-error-blocklists"', 1)[1].split("</div>", 1)[0]
    assert "Enter a valid JSON." in error
    assert "not saved" in page and f'name="{field}"' in page
    stage.refresh_from_db()
    assert stage.params == before


def test_a_post_no_form_checks_is_refused_on_a_page_naming_the_field(
        client_for, admin_user, annotator):
    """The members action looks users up by the posted names: the guard refuses it before
    the database sees the NUL, on a page of the site that says which field."""
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    client = client_for(admin_user)
    url = reverse("annotation:project_action", args=[project.pk])
    posted = {"action": "members", "user": [f"{annotator.username}\x00:annotator"]}
    response = client.post(url, posted)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    page = html.unescape(response.content.decode())
    refusal = page.split('data-testid="refusal">', 1)[1].split("</p>", 1)[0]
    assert refusal == ("The form field 'user' contains a NUL character (%00), which no form "
                       "here accepts.")
    assert 'href="/manage/"' in page or "Back to your home page" in page
    _in_chinese(client)
    page = html.unescape(client.post(url, posted).content.decode())
    assert "表单字段 'user' 包含 NUL 字符（%00），这里的任何表单都不接受。" in page
    assert "请求被拒绝" in page
    assert not ProjectMember.objects.filter(user=annotator).exists()


def test_a_nul_in_a_page_url_is_refused_in_the_readers_language(client_for, admin_user):
    client = client_for(admin_user)
    _in_chinese(client)
    for url, chinese in [
            ("/collector/corpora/%00/", "URL 路径包含 NUL 字符（%00），这里的任何 URL 都不接受。"),
            ("/collector/search/?q=%00", "查询参数 'q' 包含 NUL 字符（%00）")]:
        response = client.get(url)
        assert response.status_code == 400, url
        assert response["Content-Type"].startswith("text/html")
        assert chinese in html.unescape(response.content.decode()), url


def test_the_api_answers_a_nul_in_json_naming_the_field(client_for,
                                                         admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    client = client_for(admin_user)
    url = f"/api/v1/projects/{project.pk}/releases/"
    # a form-encoded field: DRF's own check, which names it
    response = client.post(url, {"version": "1.0\x00", "formats": "squad"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "version" in response.json()
    assert not project.releases.exists()
    # the URL: the guard's refusal, in JSON, in the reader's language
    _in_chinese(client)
    refused = client.get("/api/v1/corpora/%00/documents/")
    assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
    assert refused.json()["detail"] == "URL 路径包含 NUL 字符（%00），这里的任何 URL 都不接受。"
    missing = client.get("/api/v1/no-such-endpoint/")
    assert missing.json()["detail"] == "未找到：/api/v1/no-such-endpoint/ 处没有 API 端点或对象。"
