"""The OpenAPI schema's shared parts: the error body every operation may answer with."""

from __future__ import annotations

from typing import Any

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
    "403": "Not signed in, or the account lacks the role this operation needs.",
    "404": "No such object, or none visible to this account.",
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
                responses.setdefault(code, {
                    "description": description,
                    "content": {"application/json": {"schema": _ERROR_REF}},
                })
    return result
