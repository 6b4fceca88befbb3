"""The API's JSON: rendered by orjson (drf-orjson-renderer), which writes a claim's ~900
article tokens several times faster than the standard library, and sends what a value
already holds as JSON (``json_fragment()``, an article's tokens made once per article)
without encoding it again; request bodies read by orjson too, which refuses what could
be stored but never written back; and errors the framework leaves to Django answered in
JSON."""

from __future__ import annotations

from typing import Any

import orjson
from django.core.exceptions import RequestDataTooBig
from django.db.models import Model, QuerySet
from django.http import Http404
from django.utils.translation import gettext, gettext_lazy
from drf_orjson_renderer.renderers import ORJSONRenderer
from rest_framework import exceptions, parsers, renderers, status
from rest_framework.utils.encoders import JSONEncoder

from config.request_guards import nul_path

_DRF = JSONEncoder()
_DRF_RENDERER = renderers.JSONRenderer()


class JSONRenderer(ORJSONRenderer):
    """The JSON DRF's own renderer writes (compact; dates, times, decimals and lazy text as
    DRF encodes them; U+2028 and U+2029 escaped; what it cannot encode refused), through
    orjson."""

    # Non-string keys: DRF reports the errors of a list's items by their index (0, 1...).
    options = ORJSONRenderer.options | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS

    @staticmethod
    def default(obj: Any) -> Any:
        fragment = getattr(obj, "json_fragment", None)
        if fragment is not None:
            return fragment()
        return _DRF.default(obj)  # TypeError for what DRF would not encode either

    def render(self, data: Any, media_type: str | None = None,
               renderer_context: Any = None) -> bytes:
        if _DRF_RENDERER.get_indent(media_type or "", renderer_context or {}):
            # Indented for a person (the browsable API, ``; indent=4``): as DRF writes it.
            return _DRF_RENDERER.render(data, media_type, renderer_context)
        rendered = super().render(data, media_type, renderer_context)
        # As DRF's renderer: these two are valid JSON but end a line in JavaScript.
        if b"\xe2\x80\xa8" in rendered or b"\xe2\x80\xa9" in rendered:
            rendered = rendered.replace(b"\xe2\x80\xa8", b"\\u2028").replace(
                b"\xe2\x80\xa9", b"\\u2029")
        return rendered


class JSONParser(parsers.JSONParser):
    """A JSON request body, read by orjson. Malformed JSON is a 400 as with DRF's parser,
    and so is JSON that Python's parser takes but nothing can write back or store: a lone
    surrogate (``"\\ud800"``, which no UTF-8 encoder writes, so a stored answer would
    break every page that shows it), a number beyond a float (``1e400``), ``NaN``, and
    nesting deeper than 1,024 (Python's parser recursed until it failed)."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Any = None) -> Any:
        body = stream.read()
        encoding = parsers.get_encoding(parser_context or {})
        try:
            if encoding.lower().replace("-", "") != "utf8":
                body = body.decode(encoding)
            data = orjson.loads(body)
        except (orjson.JSONDecodeError, UnicodeDecodeError, LookupError) as exc:
            raise exceptions.ParseError(gettext("JSON parse error - %(error)s")
                                        % {"error": exc}) from None
        if (b"\\u0000" if isinstance(body, bytes) else "\\u0000") in body:  # then look
            where = nul_path(data, "body")
            if where:  # not a text: PostgreSQL's text and jsonb refuse it
                raise exceptions.ParseError(
                    gettext("JSON parse error - %(where)s contains a NUL character (\\u0000), "
                            "which no field accepts") % {"where": where})
        return data


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = gettext_lazy("The request body is larger than this server accepts.")
    default_code = "too_large"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Any:
    """DRF's handler, and a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` as a JSON 413 (Django
    would answer it with a page of text)."""
    from rest_framework import views  # it reads the settings that name this module

    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge()
    return views.exception_handler(exc, context)


#: What the API's 404 calls an object of each model (a model left out: its verbose name).
OBJECT_KINDS = {
    "Project": gettext_lazy("project"),
    "Corpus": gettext_lazy("corpus"),
    "Release": gettext_lazy("release"),
}


_FIELD_NAMES = {"pk": "id"}


def object_or_404(queryset: type[Model] | QuerySet, **lookup: Any) -> Any:
    """The one object of ``queryset`` (or a model) matching ``lookup``, else a 404 naming
    the kind of object and what was looked for in the reader's language ("No project
    with id 7."; Django's ``get_object_or_404`` says "No Project matches the given query."
    in English only). One where the reader may not see it is not found either. An
    ``Http404``: a page answers its 404 page, the API (DRF) this message in JSON."""
    if not isinstance(queryset, QuerySet):
        queryset = queryset._default_manager.all()
    model = queryset.model
    try:
        return queryset.get(**lookup)
    except model.DoesNotExist:
        kind = OBJECT_KINDS.get(model._meta.object_name) or model._meta.verbose_name
        asked = ", ".join(f"{_FIELD_NAMES.get(field, field)} {value!r}"
                          if isinstance(value, str) else f"{_FIELD_NAMES.get(field, field)} {value}"
                          for field, value in lookup.items())
        raise Http404(gettext("No %(kind)s with %(lookup)s.")
                      % {"kind": kind, "lookup": asked}) from None
