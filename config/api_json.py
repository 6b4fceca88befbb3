"""The API's JSON: rendered by orjson (drf-orjson-renderer), which writes a claim's ~900
article tokens several times faster than the standard library, and sends what a value
already holds as JSON (``json_fragment()``, an article's tokens made once per article)
without encoding it again."""

from __future__ import annotations

from typing import Any

import orjson
from drf_orjson_renderer.renderers import ORJSONRenderer
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

_DRF = JSONEncoder()
_DRF_RENDERER = renderers.JSONRenderer()


class JSONRenderer(ORJSONRenderer):
    """The JSON DRF's own renderer writes (compact; dates, times, decimals and lazy text as
    DRF encodes them; U+2028 and U+2029 escaped; what it cannot encode refused), through
    orjson."""

    options = ORJSONRenderer.options | orjson.OPT_PASSTHROUGH_DATETIME

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
