"""The API's refusals in the reader's language (``Accept-Language: zh-CN``): a 404 names the
kind of object and what was asked for (Django's "No Project matches the given query." was
English only), a release's missing file, the releases' admin check, a malformed JSON body."""

from __future__ import annotations

import pytest

from annotation import engine
from annotation.models import Release, ReleaseFile

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


@pytest.fixture
def release(admin_user):
    project = engine.project_create(name="p", recipe="newsqa", user=admin_user)
    made = Release.objects.create(project=project, version="1.0.0", status=Release.Status.READY,
                                  formats=["hf"], pseudonym_salt="0" * 64)
    ReleaseFile.objects.create(release=made, format="datasheet",  # not in the storage
                               path="gone-from-storage.md", records=0, sha256="0" * 64, bytes=0)
    return made


def _detail(client, method: str, url: str, status: int, headers: dict, **kwargs) -> str:
    response = getattr(client, method)(url, **kwargs, **headers)
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()["detail"]


def test_an_unknown_object_is_a_404_naming_its_kind_in_the_readers_language(
        client_for, admin_user, annotator, release):
    admin, worker = admin_user, annotator  # one test client: logged in per case
    cases = [
        (admin, "/api/v1/projects/999999/", "No project with id 999999.",
         "没有 id 999999 的项目。"),
        (admin, "/api/v1/projects/999999/records/", "No project with id 999999.",
         "没有 id 999999 的项目。"),
        (worker, "/api/v1/corpora/no-such/search/?q=a", "No corpus with name 'no-such'.",
         "没有 name 'no-such' 的语料库。"),
        # an unpublished release is not the worker's to see: as one that does not exist
        (worker, f"/api/v1/releases/{release.pk}/files/gone-from-storage.md",
         f"No release with id {release.pk}.", f"没有 id {release.pk} 的发布版本。"),
        (admin, f"/api/v1/releases/{release.pk}/files/nothing.json",
         f"Release {release.pk} has no file nothing.json.",
         f"发布版本 {release.pk} 没有文件 nothing.json。"),
        (admin, f"/api/v1/releases/{release.pk}/files/gone-from-storage.md",
         f"The file gone-from-storage.md of release {release.pk} is missing from the release "
         "storage.",
         f"发布版本 {release.pk} 的文件 gone-from-storage.md 不在发布存储中。"),
    ]
    for user, url, english, chinese in cases:
        assert _detail(client_for(user), "get", url, 404, EN) == english
        assert _detail(client_for(user), "get", url, 404, ZH) == chinese


def test_the_apis_other_refusals_in_the_readers_language(client_for, checker, annotator,
                                                         release):
    url = f"/api/v1/projects/{release.project_id}/releases/"
    assert (_detail(client_for(checker), "post", url, 403, EN, data={},
                    content_type="application/json") == "Only admins create releases.")
    assert (_detail(client_for(checker), "post", url, 403, ZH, data={},
                    content_type="application/json") == "只有管理员可以创建发布版本。")
    for headers, frame in ((EN, "JSON parse error - "), (ZH, "JSON 解析错误 - ")):
        said = _detail(client_for(annotator), "post", "/api/v1/tasks/next/", 400, headers,
                       data="{bad", content_type="application/json")
        assert said.startswith(frame) and "line 1 column 2" in said, said
