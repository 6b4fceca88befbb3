"""Finds the user-visible text of the templates that is not marked for translation, and can
mark it: text between tags becomes ``{% translate "…" %}``, text with variables
``{% blocktranslate with a=x.y %}… {{ a }} …{% endblocktranslate %}``, and the
``aria-label``, ``title``, ``placeholder`` and ``data-missing`` attributes are wrapped too.
Text inside ``<script>``, ``<style>``, ``<pre>``, ``<code>``, ``<kbd>``, ``<textarea>``,
``{% verbatim %}``, ``{% comment %}`` and ``{% blocktranslate %}`` is left alone, and so is
text without a word (numbers, punctuation, entities).

    .venv/bin/python scripts/i18n_templates.py          # lists what is not marked (exit 1)
    .venv/bin/python scripts/i18n_templates.py --fix    # marks it; then `make messages`

Plurals written with ``|pluralize`` inside a sentence need ``{% blocktranslate count %}``:
write those by hand. tests/test_i18n.py runs the check on every template.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_DIRS = ("templates", "annotation/templates", "collector/templates")
TOKEN = re.compile(r"(\{%.*?%\}|\{#.*?#\}|\{\{.*?\}\}|<!--.*?-->|<[^>]*>)", re.S)
ATTR = re.compile(
    r'(\s(?:aria-label|title|placeholder|data-missing)=")([^"{}]*[A-Za-z][^"{}]*)(")')
SKIP_TAGS = {"script", "style", "pre", "textarea", "code", "kbd"}
WORD = re.compile(r"[A-Za-z]{2,}|^[A-Za-z]$")
ENTITY = re.compile(r"&[a-z#0-9]+;")


def _variable(expr: str, used: dict[str, str]) -> str:
    base = re.sub(r"\W", "_", expr.split("|")[0].strip().split(".")[-1]) or "value"
    base = f"v{base}" if base[0].isdigit() else base
    name, n = base, 2
    while name in used and used[name] != expr:
        name, n = f"{base}{n}", n + 1
    used[name] = expr
    return name


def _wrap(run: list[tuple[str, str]]) -> str:
    """A run of text and ``{{ variables }}`` between tags, marked for translation."""
    source = "".join(text for _, text in run)
    stripped = source.strip()
    words = ENTITY.sub(" ", "".join(text for kind, text in run if kind == "text"))
    if not stripped or not WORD.search(words):
        return source
    lead = source[: len(source) - len(source.lstrip())]
    trail = source[len(source.rstrip()):]
    multiline = "\n" in stripped
    if all(kind == "text" for kind, _ in run):
        body = re.sub(r"\s+", " ", stripped)
        for quote in ('"', "'"):
            if quote not in body:
                return f"{lead}{{% translate {quote}{body}{quote} %}}{trail}"
    used: dict[str, str] = {}
    body = "".join("{{ " + _variable(text[2:-2].strip(), used) + " }}" if kind == "var"
                   else text for kind, text in run).strip()
    options = (" trimmed" if multiline else "") + (
        " with " + " ".join(f"{n}={e}" for n, e in used.items()) if used else "")
    return f"{lead}{{% blocktranslate{options} %}}{body}{{% endblocktranslate %}}{trail}"


def mark(source: str) -> str:
    """The template with its unmarked user-visible text marked for translation."""
    out: list[str] = []
    run: list[tuple[str, str]] = []
    skipping: list[str] = []
    quiet = {"verbatim": False, "comment": False, "blocktranslate": False, "blocktrans": False}

    def flush() -> None:
        if run:
            text = "".join(t for _, t in run)
            out.append(text if skipping or any(quiet.values()) else _wrap(run))
            run.clear()

    for token in TOKEN.split(source):
        if not token:
            continue
        if token.startswith("{{"):
            run.append(("var", token))
            continue
        if not token.startswith(("{%", "{#", "<")):
            run.append(("text", token))
            continue
        flush()
        if token.startswith("{%"):
            inner = token[2:-2].strip()
            for block in quiet:
                if inner == block or inner.startswith(block + " "):
                    quiet[block] = True
                elif inner.startswith("end" + block):
                    quiet[block] = False
        elif not token.startswith("<!--"):
            tag = re.match(r"<(/?)([a-zA-Z0-9]+)", token)
            if tag and tag.group(2).lower() in SKIP_TAGS:
                if tag.group(1):
                    if skipping:
                        skipping.pop()
                elif not token.endswith("/>"):
                    skipping.append(tag.group(2).lower())
            if not skipping and not any(quiet.values()):
                token = ATTR.sub(lambda a: f'{a.group(1)}{{% translate "{a.group(2)}" %}}'
                                 f"{a.group(3)}" if '"' not in a.group(2) else a.group(0), token)
        out.append(token)
    flush()
    result = "".join(out)
    if result == source:
        return source
    if re.search(r"\{% load [^%]*\bi18n\b", result):
        return result
    if "{% load" in result:
        return re.sub(r"\{% load ([^%]*?)\s*%\}", r"{% load \1 i18n %}", result, count=1)
    if result.startswith("{% extends"):
        end = result.index("%}") + 2
        return result[:end] + "\n{% load i18n %}" + result[end:]
    return "{% load i18n %}" + result


def templates(root: Path = ROOT) -> list[Path]:
    return sorted(p for d in TEMPLATE_DIRS for p in (root / d).rglob("*.html"))


#: ``{{ x|default:"Some words" }}``: a literal the catalogue never sees (write it
#: ``{% if x %}{{ x }}{% else %}{% translate "Some words" %}{% endif %}``).
DEFAULT_TEXT = re.compile(r"""\|default:(["'])([^"']*[A-Za-z]{2,}[^"']*)\1""")


def unmarked(source: str) -> list[str]:
    """The pieces of ``source`` that ``mark`` would mark (its added lines), and the text of
    ``|default:"…"`` filters (which ``mark`` leaves alone: marked by hand)."""
    import difflib

    return [line[1:].strip() for line in difflib.unified_diff(
        source.splitlines(), mark(source).splitlines(), lineterm="", n=0)
        if line.startswith("+") and not line.startswith("+++")] + [
        f"default:{match.group(1)}{match.group(2)}{match.group(1)}"
        for match in DEFAULT_TEXT.finditer(source)
        if " " in match.group(2)]  # words, not an id such as 'list-filters'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true", help="mark the text in place")
    args = parser.parse_args()
    missing = 0
    for path in templates():
        source = path.read_text(encoding="utf-8")
        if args.fix:
            marked = mark(source)
            if marked != source:
                path.write_text(marked, encoding="utf-8")
                print(f"marked {path.relative_to(ROOT)}")
            continue
        for line in unmarked(source):
            missing += 1
            print(f"{path.relative_to(ROOT)}: {line}")
    if missing:
        sys.exit(f"{missing} lines hold text not marked for translation: run with --fix")


if __name__ == "__main__":
    main()
