"""The OpenAPI schema: its views, and the error body every operation may answer with."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponseBase
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

ERROR_COMPONENT = {
    "type": "object",
    "description": (
        "An error. `detail` for authentication, permission, not-found and malformed-request "
        "errors; `errors` for refused actions; a field name mapped to its messages for "
        "invalid input."
    ),
    "properties": {
        "detail": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": True,
}

_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_ERRORS = {
    "400": "Invalid input: the body names each field that is wrong.",
    "401": "Who is asking is not known: no session or token, a malformed `Authorization` "
           "header, an unknown or deleted token, or a deactivated account. Sign in, or send "
           "`Authorization: Token <key>`.",
    "403": "The account is known but lacks the role this operation needs, or a request "
           "signed in by session failed its CSRF check.",
    "404": "No such object, or none visible to this account.",
}
#: What a 401 carries besides its body: the scheme to answer with (RFC 9110, 11.6.1).
_HEADERS = {
    "401": {"WWW-Authenticate": {
        "description": "`Token`: send `Authorization: Token <key>`.",
        "required": True,
        "schema": {"type": "string", "enum": ["Token"]},
    }},
}


def document_error_responses(result: dict[str, Any], generator: Any, request: Any,
                             public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every operation documents its error answers."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_COMPONENT
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            for code, description in _ERRORS.items():
                response = responses.setdefault(code, {
                    "description": description,
                    "content": {"application/json": {"schema": _ERROR_REF}},
                })
                if code in _HEADERS:
                    response.setdefault("headers", _HEADERS[code])
    return result


def document_task_payloads(result: dict[str, Any], generator: Any, request: Any,
                           public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: a submit's ``payload`` says, for each stage kind
    people work (the task's ``kind``), what it takes, from the kind's ``payload_doc``."""
    from annotation.roles import Role
    from annotation.stages import stage_kinds

    lines = [f"- `{key}`: {kind.payload_doc}" for key, kind in sorted(stage_kinds().items())
             if kind.payload_doc and kind.role == Role.ANNOTATOR]  # the tasks API's role
    payload = (result.get("components", {}).get("schemas", {})
               .get("TaskSubmitInputRequest", {}).get("properties", {}).get("payload"))
    if payload is not None:
        payload["description"] = (
            "The answer, validated by the task's stage kind (`kind` of the task); a refused "
            "one is a 400 with `errors`. In a form, the JSON text of the object. By kind:"
            "\n\n" + "\n".join(lines))
    return result


class ReleaseScoresSchema(OpenApiSerializerExtension):
    """The scores' keys depend on the format's scorer: an object of any metric names."""

    target_class = "annotation.api.serializers.ReleaseScoreOutputSerializer"

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": True,
                "required": ["split", "file"],
                "properties": {
                    "split": {"type": "string", "description": "The split scored (train, "
                                                               "dev or test)."},
                    "file": {"type": "string", "description": "The release file whose "
                                                              "records were the gold data."},
                },
                "description": "Metric names to values, as the format's official scorer "
                               "reports them (keys differ by format), with the split and "
                               "file scored."}


class JsonOutsideSuccessMixin:
    """Errors and OPTIONS answers in JSON, like the rest of the API (the schema and docs
    views otherwise render them as YAML or try to render them as an HTML template)."""

    def finalize_response(self, request: Request, response: Response, *args: Any,
                          **kwargs: Any) -> Response:
        if request.method not in ("GET", "HEAD") or response.status_code >= 400:
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class SchemaApi(JsonOutsideSuccessMixin, SpectacularAPIView):
    """The OpenAPI 3 schema: YAML, or JSON with ``?format=json``; for any signed-in user."""

    permission_classes = (IsAuthenticated,)


class SignInPageMixin:
    """An HTML page served by an API view: a visitor who is not signed in is sent to the
    login page with ``next``, as every other page does (the API's 401 body is no page).
    A token that fails (unknown, or a deactivated account's) is an API client's, and still
    gets the 401 with ``WWW-Authenticate``."""

    #: Read by the URLconf sweep: anonymous visitors go to the login page, not a 401.
    sign_in_page = True

    def handle_exception(self, exc: Exception) -> HttpResponseBase:
        if isinstance(exc, NotAuthenticated):
            return redirect_to_login(self.request.get_full_path())  # type: ignore[attr-defined]
        return super().handle_exception(exc)  # type: ignore[misc]


class SchemaDocsView(SignInPageMixin, JsonOutsideSuccessMixin, SpectacularSwaggerSplitView):
    """Swagger UI over the schema; its assets come from drf-spectacular-sidecar and its
    start-up script is a separate file (``?script``), so the page needs no inline script.
    A page: an anonymous visitor signs in first (the schema itself stays API: a 401)."""

    permission_classes = (IsAuthenticated,)
    url_name = "api_schema"
    template_name = "api/swagger_ui.html"
