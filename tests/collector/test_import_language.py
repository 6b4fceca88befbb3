"""The import page's refusals of a stored upload in the interface language (they were
English in the Chinese interface)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from collector.models import Job
from collector.services.uploads import upload_token
from tests.factories import zh_catalogue_holds

CHINESE = {
    "The uploaded file has expired: upload it again.": "上传的文件已过期：请重新上传。",
    "%(name)s is no longer on the server: upload it again.":
        "%(name)s 已不在服务器上：请重新上传。",
}


@pytest.fixture
def chinese_catalogue():
    """The committed Chinese catalogue holds ``CHINESE`` (the pages are read in it)."""
    zh_catalogue_holds(CHINESE)


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_a_stale_or_forged_upload_is_refused_in_chinese(chinese_catalogue, client_for,
                                                        admin_user):
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    url = reverse("collector:import")
    forged = client.post(url, {"upload": "imports/x/../../secret:forged", "corpus": "c",
                               "language": "en", "format": "squad",
                               "action": "import"}).content.decode()
    assert "上传的文件已过期：请重新上传。" in forged and "has expired" not in forged
    gone = upload_token(relative="imports/0123456789abcdef/books.jsonl", original="books.jsonl")
    page = client.post(url, {"upload": gone, "corpus": "c", "language": "en",
                             "format": "jsonl", "action": "import"}).content.decode()
    assert "books.jsonl 已不在服务器上：请重新上传。" in page
    assert "no longer on the server" not in page
    assert not Job.objects.exists()
