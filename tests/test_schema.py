"""The OpenAPI schema at /api/v1/schema/ and its Swagger UI at /api/v1/docs/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.roles import Role
from tests.factories import user_with_roles

SCHEMA = "/api/v1/schema/"
DOCS = "/api/v1/docs/"


def _api_routes() -> set[str]:
    """Every API route of the URLconf, in the schema's spelling (``{pk}`` as ``{id}``)."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern)

    routes = set()
    for route in walk(get_resolver().url_patterns):
        if route.startswith("api/v1/") and route not in ("api/v1/schema/", "api/v1/docs/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
            routes.add("/" + path.replace("{pk}", "{id}"))
    return routes


def test_the_schema_generates_without_a_warning(tmp_path: Path):
    out = tmp_path / "schema.yaml"
    # --fail-on-warn raises on any warning or error (an operation without serializers).
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    schema = yaml.safe_load(out.read_text())
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == _api_routes()


@pytest.mark.django_db
@pytest.mark.parametrize("roles", [(), (Role.ANNOTATOR,), (Role.CHECKER,), (Role.ADMIN,)])
def test_any_signed_in_user_gets_the_schema(client, roles):
    client.force_login(user_with_roles("reader", *roles))
    response = client.get(SCHEMA)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    assert yaml.safe_load(response.content)["openapi"].startswith("3.")

    as_json = client.get(SCHEMA, {"format": "json"})
    assert as_json.status_code == 200 and "json" in as_json["Content-Type"]
    schema = json.loads(as_json.content)
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == _api_routes()


@pytest.mark.django_db
def test_the_schema_is_refused_to_anonymous_clients_in_json(client):
    for url in (SCHEMA, f"{SCHEMA}?format=json"):
        for accept in ({}, {"HTTP_ACCEPT": "application/json"}):
            response = client.get(url, **accept)
            assert response.status_code == 401, url
            assert response["WWW-Authenticate"] == "Token", url
            assert response["Content-Type"] == "application/json", url
            assert "credentials" in response.json()["detail"]


@pytest.mark.django_db
def test_an_anonymous_visitor_of_the_docs_page_signs_in_first_and_comes_back(client):
    """The docs page is a page: a browser that is not signed in goes to the login page with
    ``next``, as on every other page, and lands on the docs once signed in. A client whose
    token fails gets the API's 401; a good token gets the page."""
    from rest_framework.authtoken.models import Token

    for url in (f"{DOCS}?script", DOCS):
        response = client.get(url, HTTP_ACCEPT="text/html,application/xhtml+xml")
        assert response.status_code == 302, url
        assert response["Location"] == f"/accounts/login/?next={quote(url)}", url
    login = client.get(response["Location"])
    assert login.status_code == 200 and f'value="{DOCS}"' in login.content.decode()
    reader = user_with_roles("reader", Role.ANNOTATOR)
    reader.set_password("a long passphrase 1")
    reader.save()
    signed_in = client.post(f"/accounts/login/?next={DOCS}", {
        "username": "reader", "password": "a long passphrase 1", "next": DOCS})
    assert signed_in.status_code == 302 and signed_in["Location"] == DOCS
    page = client.get(DOCS)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")

    api = Client()
    refused = api.get(DOCS, HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"
    assert refused["Content-Type"] == "application/json"
    token = Token.objects.create(user=reader)
    assert api.get(DOCS, HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200


@pytest.mark.django_db
def test_an_inactive_account_gets_no_schema(client):
    user = user_with_roles("gone", Role.ADMIN)
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    client.force_login(user)
    response = client.get(SCHEMA)
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


@pytest.mark.django_db
def test_every_operation_documents_its_request_and_responses(client, admin_user):
    client.force_login(admin_user)
    schema = client.get(SCHEMA, {"format": "json"}).json()
    components = schema["components"]["schemas"]
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            codes = set(operation["responses"])
            success = sorted(code for code in codes if code.startswith("2"))
            assert success, where
            assert {"400", "401", "403", "404"} <= codes, where
            challenge = operation["responses"]["401"]["headers"]["WWW-Authenticate"]
            assert challenge["required"] and challenge["schema"]["enum"] == ["Token"], where
            for code in success:
                body = operation["responses"][code].get("content")
                if code == "204":
                    assert body is None, where
                elif path == "/api/v1/releases/{id}/files/{path}":  # a download: the file
                    assert body == {"*/*": {"schema": {"type": "string",
                                                       "format": "binary"}}}, where
                else:
                    ref = body["application/json"]["schema"]
                    ref = ref.get("$ref") or ref.get("items", {}).get("$ref")
                    assert ref and ref.rsplit("/", 1)[1] in components, where
            if method == "post" and path not in ("/api/v1/tasks/{id}/release/",
                                                 "/api/v1/releases/{id}/publish/"):
                content = operation["requestBody"]["content"]
                assert any("$ref" in media["schema"] for media in content.values()), where


@pytest.mark.django_db
def test_the_docs_page_serves_swagger_ui_from_local_files_without_inline_script(
        client, annotator):
    client.force_login(annotator)
    page = client.get(DOCS)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert "<style" not in html
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert len(scripts) == 3
    assert all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert not [url for url in assets if "//" in url], "no asset from another host"
    static = [url for url in assets if url.startswith("/static/")]
    assert {Path(url).name for url in static} >= {
        "swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
        "api-docs.css"}
    for url in static:  # each is a file of an installed package or of static/
        assert finders.find(url.removeprefix("/static/")), url

    (script_url,) = [url for url in assets if "script" in url and not url.startswith("/static")]
    script = client.get(script_url.replace("&amp;", "&"))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert SCHEMA in script.content.decode()


@pytest.mark.django_db
def test_a_submit_payload_is_documented_for_every_kind_annotators_work(client, admin_user):
    """An API client learns from the schema what each task kind's ``payload`` takes (the
    schema said only "an object"): every stage kind people work says it, and the schema's
    ``payload`` lists each kind an annotator claims through the API."""
    from annotation.stages import stage_kinds

    human = {key: kind for key, kind in stage_kinds().items() if not kind.automatic
             and type(kind).__module__.startswith("annotation.stages")}  # not tests' kinds
    assert {"newsqa_answer", "reco_evidence", "marco_distill", "judgment_rate"} <= set(human)
    assert not [key for key, kind in human.items() if not kind.payload_doc.strip()]
    client.force_login(admin_user)
    schema = client.get(SCHEMA, {"format": "json"}).json()
    payload = schema["components"]["schemas"]["TaskSubmitInputRequest"]["properties"]["payload"]
    for key, kind in human.items():
        listed = f"- `{key}`: {kind.payload_doc}" in payload["description"]
        assert listed == (kind.role == Role.ANNOTATOR), key
