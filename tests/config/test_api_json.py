"""The API's JSON renderer (``config.api_json``): orjson writing what DRF's own renderer
wrote, and an article's tokens sent as the JSON they already hold."""

from __future__ import annotations

import datetime
import decimal
import ipaddress
import json
import uuid

import pytest
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer as DrfJSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from annotation.stages.newsqa import article_tokens
from config.api_json import JSONRenderer


def test_it_writes_byte_for_byte_what_drfs_renderer_writes():
    moment = datetime.datetime(2026, 11, 26, 3, 4, 5, 678901, tzinfo=datetime.UTC)
    data = ReturnDict({
        "aware": moment, "naive": moment.replace(tzinfo=None),
        "local": moment.astimezone(datetime.timezone(datetime.timedelta(hours=8))),
        "date": datetime.date(2026, 11, 26), "time": datetime.time(7, 8, 9, 123456),
        "duration": datetime.timedelta(minutes=3, seconds=1.5),
        "decimal": decimal.Decimal("12.50"), "uuid": uuid.UUID(int=7),
        "address": ipaddress.ip_address("10.0.0.1"), "lazy": gettext_lazy("Yes"),
        "safe": mark_safe("<b>x</b>"), "bytes": b"raw", "tuple": (1, 2),
        "numbers": [0, -1, 2**62, 1.5, -0.0, 1e300, 0.1, True, False, None],
        "text": "été 中文 \U0001F600 \" \\ \n \t \x00 \u2028 \u2029 </script>",
        "nested": ReturnList([{"a": [{"b": {}}]}], serializer=None), "empty": [],
    }, serializer=None)
    assert JSONRenderer().render(data) == DrfJSONRenderer().render(data)


def test_an_article_is_sent_as_the_json_it_holds():
    tokens = article_tokens("Dario said: the sea rose\u2028again.")
    data = {"task": {"question": "Who?", "tokens": tokens}}
    rendered = JSONRenderer().render(data)
    assert rendered == DrfJSONRenderer().render(data)
    assert json.loads(rendered)["task"]["tokens"] == list(tokens)
    assert tokens.json in rendered.replace(b"\\u2028", "\u2028".encode())


def test_indented_json_for_a_person_is_drfs_own():
    data = {"task": {"tokens": article_tokens("The sea rose.")}, "n": [1, 2]}
    for media_type, context in (("application/json; indent=4", {}),
                                ("application/json", {"indent": 4})):
        rendered = JSONRenderer().render(data, media_type, context)
        assert rendered == DrfJSONRenderer().render(data, media_type, context)
        assert rendered.startswith(b'{\n    "task": {')


def test_what_drf_cannot_write_is_refused_not_written_as_null():
    with pytest.raises(TypeError):
        JSONRenderer().render({"x": object()})
    with pytest.raises(TypeError):
        DrfJSONRenderer().render({"x": object()})
    for iterable in ({3}, frozenset({4}), (n for n in range(2))):
        assert JSONRenderer().render({"x": iterable}) in (b'{"x":[3]}', b'{"x":[4]}',
                                                          b'{"x":[0,1]}')
    assert JSONRenderer().render(None) == b""


def test_the_api_answers_with_it(client, django_user_model):
    user = django_user_model.objects.create_user("reader", password="x" * 12)
    client.force_login(user)
    response = client.get("/api/v1/me/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert type(response.accepted_renderer) is JSONRenderer
    assert response.json()["username"] == "reader"


def test_errors_of_a_lists_items_are_keyed_by_index_as_drf_writes_them():
    errors = {"formats": {0: ["\"\" is not a valid choice."], 2: ["This field may not be null."]}}
    assert JSONRenderer().render(errors) == DrfJSONRenderer().render(errors)


@pytest.fixture
def api(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def annotator_api(client, annotator):
    client.force_login(annotator)
    return client


def test_a_bad_item_in_a_list_is_a_400_naming_it(api):
    from annotation import engine

    project = engine.project_create(name="Lists", recipe="newsqa")
    for formats in ([""], [None], [{}], ["squad-v1", []]):
        response = api.post(f"/api/v1/projects/{project.pk}/releases/",
                            {"version": "1.0.0", "formats": formats},
                            content_type="application/json")
        assert response.status_code == 400, (formats, response.content)
        assert set(response.json()) == {"formats"} and response.json()["formats"]


@pytest.mark.parametrize(("body", "says"), [
    (b'{"project": "\\ud800"}', "surrogate"),
    (b'{"project": 1e400}', "infinity"),
    (b'{"project": NaN}', "JSON parse error"),
    (b'{"project": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "depth limit"),
    (b"\xff\xfe{}", "JSON parse error"),
])
def test_json_that_could_not_be_written_back_is_a_400(annotator_api, body, says):
    """Python's parser took these: a lone surrogate was stored, and then broke the answer
    (and every page showing it); deep nesting recursed until a 500."""
    response = annotator_api.post("/api/v1/tasks/next/", body,
                                  content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert says in response.json()["detail"]


def test_a_body_in_another_declared_charset_is_read(annotator_api):
    # The test client encodes the text in the charset the content type declares.
    response = annotator_api.post("/api/v1/tasks/next/", '{"project": "é"}',
                                  content_type="application/json; charset=latin-1")
    assert response.status_code == 400
    assert "project" in response.json()  # read, then refused by the field, not the parser


def test_a_body_over_the_limit_is_a_json_413(annotator_api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = annotator_api.post("/api/v1/tasks/next/", {"project": "x" * 5000},
                        content_type="application/json")
    assert response.status_code == 413, response.content
    assert response.json()["detail"] == "The request body is larger than this server accepts."
