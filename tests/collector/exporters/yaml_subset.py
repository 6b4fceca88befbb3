"""A reader for the YAML subset the dataset card uses (block mappings and sequences,
plain or JSON-quoted scalars), so the card can be checked without PyYAML."""

from __future__ import annotations

import json


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _scalar(text: str):
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    return text


def _block(lines: list[str], i: int, indent: int):
    if lines[i][indent:].startswith("- "):
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent)


def _sequence(lines: list[str], i: int, indent: int):
    items = []
    while i < len(lines) and _indent(lines[i]) == indent and lines[i][indent:].startswith("- "):
        content = lines[i][indent + 2:]
        if ": " in content or content.endswith(":"):
            lines[i] = " " * (indent + 2) + content
            value, i = _mapping(lines, i, indent + 2)
        else:
            value, i = _scalar(content), i + 1
        items.append(value)
    return items, i


def _mapping(lines: list[str], i: int, indent: int):
    result = {}
    while i < len(lines) and _indent(lines[i]) == indent and not lines[i][indent:].startswith(
            "- "):
        key, _, rest = lines[i].strip().partition(":")
        if rest.strip():
            result[key] = _scalar(rest)
            i += 1
            continue
        i += 1
        child = _indent(lines[i])
        if child < indent or (child == indent and not lines[i][indent:].startswith("- ")):
            raise ValueError(f"empty value for {key!r}")
        result[key], i = _block(lines, i, child)
    return result, i


def front_matter(text: str) -> dict:
    lines = text.split("\n")
    if lines[0] != "---":
        raise ValueError("no front matter")
    end = lines.index("---", 1)
    body = [line for line in lines[1:end] if line.strip()]
    value, i = _mapping(body, 0, 0)
    if i != len(body):
        raise ValueError(f"could not read line {body[i]!r}")
    return value
