"""What readers produce: plain records, checked where they are read.

A reader yields :class:`ImportUnit` objects: the documents of one source record and the
questions that point into them (a SQuAD paragraph and its questions, a DuReader record
and its documents, one line of a JSONL file). The importer writes units whole, so a
question always lands in the same batch as the documents it refers to.

Answers are stored as a list of dicts, the same shape for every dataset:

* a span answer: ``{"text": ..., "start": s, "end": e}`` with ``body[s:e] == text``;
* a multi-span answer (NewsQA): ``{"text": "a … b", "spans": [{"text", "start", "end"}, ...]}``;
* a free-text answer (MS MARCO, DuReader, ReCO): ``{"text": ...}``;
* "no answer in the document" (NewsQA): ``{"no_answer": true}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.utils.translation import gettext_noop

from collector.importers.errors import ImportFailure, Where, shorten
from collector.importers.jsonvalues import MAX_DEPTH, join_path, text_problem, value_problem
from collector.stored_text import StoredText

MAX_EXTERNAL_ID = 255

SOURCE_TYPES = ("news", "forum", "vertical", "encyclopedia", "web", "other")
URL_SCHEMES = ("http", "https")


def http_url_problem(url: str) -> StoredText | None:
    """Why ``url`` is not a plain http(s) link (None when it is one).

    Only these are stored and rendered as links: ``javascript:``, ``data:`` and other
    schemes could run code in a reader's browser. Control characters are refused too, as
    browsers drop them (``java\tscript:`` is ``javascript:`` to a browser).
    """
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        return StoredText(gettext_noop("contains a control character (tab, newline, …)"))
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as exc:
        return StoredText(gettext_noop("is not a valid URL (%(error)s)"),
                          error=_url_error(str(exc)))
    if not parts.scheme:
        return StoredText(gettext_noop("%(url)s is not an http(s) URL (it has no scheme such as "
                                       "https://)"), url=shorten(url))
    if parts.scheme.lower() not in URL_SCHEMES:
        return StoredText(gettext_noop("%(url)s is not an http(s) URL (scheme %(scheme)s); only "
                                       "http:// and https:// links are accepted"),
                          url=shorten(url), scheme=repr(parts.scheme))
    if not host:
        return StoredText(gettext_noop("%(url)s has no host name"), url=shorten(url))
    return None


_NOT_AN_ADDRESS = re.compile(r"'(.*)' does not appear to be an IPv4 or IPv6 address",
                             re.DOTALL)


def _url_error(text: str) -> StoredText | str:
    """What Python's URL parser found wrong, in our own words (translatable; its English as
    it is for a complaint not mapped here)."""
    if text == "Invalid IPv6 URL":
        return StoredText(gettext_noop("its host has an unmatched square bracket, or text "
                                       "before '[' or after ']' (an IPv6 address is written "
                                       "as [2001:db8::1])"))
    if found := _NOT_AN_ADDRESS.fullmatch(text):
        return StoredText(gettext_noop("%(host)s in square brackets is not an IPv6 address"),
                          host=shorten(found[1]))
    if text == "IPvFuture address is invalid":
        return StoredText(gettext_noop("the host in square brackets is not a valid IPvFuture "
                                       "address (v<hex digits>.<address>)"))
    if text == "An IPv4 address cannot be in brackets":
        return StoredText(gettext_noop("an IPv4 address is written without square brackets"))
    if text.endswith("contains invalid characters under NFKC normalization"):
        return StoredText(gettext_noop("its host name has characters that become '/', '?', "
                                       "'#', '@' or ':' once normalised (NFKC)"))
    return text


@dataclass(slots=True)
class DocumentRecord:
    external_id: str
    body: str
    where: Where
    title: str = ""
    url: str = ""
    source_type: str = ""
    highlights: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # Exact paragraph spans in ``body`` when the source gives paragraphs (DuReader).
    paragraphs: list[tuple[int, int]] | None = None


@dataclass(slots=True)
class QuestionRecord:
    external_id: str
    text: str
    where: Where
    # External id of the document the answer offsets point into (None: no single one).
    document_id: str | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)
    is_impossible: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ImportUnit:
    documents: list[DocumentRecord]
    questions: list[QuestionRecord] = field(default_factory=list)


@dataclass(slots=True)
class QueryRecord:
    external_id: str
    text: str
    where: Where
    metadata: dict[str, Any] = field(default_factory=dict)


class Checker:
    """Field checks that raise :class:`ImportFailure` naming the file, place and field."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, detail: str | StoredText, *, where: Where | None,
             field: str | None = None) -> ImportFailure:
        return ImportFailure(detail, file=self.file, where=where, field=field)

    def get(self, obj: Any, key: str, *, where: Where, kind: type | tuple[type, ...],
            required: bool = True, default: Any = None, prefix: str = "") -> Any:
        """``obj[key]`` checked for presence and type; ``prefix`` makes the field path."""
        name = f"{prefix}{key}"
        if not isinstance(obj, dict):
            raise self.fail(StoredText(gettext_noop("expected a JSON object, found %(found)s"),
                                       found=_kind(obj)), where=where)
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(StoredText(IS_MISSING), where=where, field=name)
            return default
        value = obj[key]
        if isinstance(value, bool) and bool not in _as_tuple(kind):
            raise self.fail(StoredText(SHOULD_BE, kind=_kind_names(kind),
                                       found=_kind(value)), where=where, field=name)
        if not isinstance(value, kind):
            raise self.fail(StoredText(SHOULD_BE, kind=_kind_names(kind),
                                       found=_kind(value)), where=where, field=name)
        return value

    def text(self, obj: Any, key: str, *, where: Where, required: bool = True,
             prefix: str = "") -> str:
        """A string field; required ones must not be blank."""
        value = self.get(obj, key, where=where, kind=str, required=required, default="",
                         prefix=prefix)
        if required and not value.strip():
            raise self.fail(StoredText(IS_EMPTY), where=where, field=f"{prefix}{key}")
        return value

    def identifier(self, value: Any, *, where: Where, field: str) -> str:
        """An external id: a non-empty string or an integer, at most 255 characters."""
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail(StoredText(gettext_noop("should be a string or an integer, found "
                                                    "%(found)s"), found=_kind(value)),
                            where=where, field=field)
        ident = str(value).strip()
        if not ident:
            raise self.fail(StoredText(IS_EMPTY), where=where, field=field)
        if len(ident) > MAX_EXTERNAL_ID:
            raise self.fail(StoredText(gettext_noop("is %(length)s characters long; ids may have "
                                                    "at most %(most)s"),
                                       length=len(ident), most=MAX_EXTERNAL_ID),
                            where=where, field=field)
        return ident

    def url(self, value: str, *, where: Where, field: str) -> str:
        """A document's link: empty, or an http(s) URL (stripped)."""
        value = value.strip()
        problem = http_url_problem(value) if value else None
        if problem:
            raise self.fail(problem, where=where, field=field)
        return value

    def span(self, body: str, start: Any, end: Any, *, where: Where, field: str,
             expect: str | None = None) -> dict[str, Any]:
        """A character span of ``body``: inside the text, and equal to ``expect`` if given."""
        for name, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(StoredText(gettext_noop("%(name)s offset should be an integer, "
                                                        "found %(found)s"),
                                           name=name, found=_kind(value)),
                                where=where, field=field)
        if not 0 <= start <= end <= len(body):
            raise self.fail(
                StoredText(gettext_noop("offsets %(start)s..%(end)s are outside the text "
                                        "(length %(length)s)"),
                           start=start, end=end, length=len(body)),
                where=where, field=field,
            )
        text = body[start:end]
        if expect is not None and text != expect:
            raise self.fail(
                StoredText(gettext_noop("answer text %(answer)s does not match the text at "
                                        "offset %(start)s (%(text)s)"),
                           answer=shorten(expect), start=start, text=shorten(text)),
                where=where, field=field,
            )
        return {"text": text, "start": start, "end": end}


def unit_check(unit: ImportUnit, *, file: str) -> None:
    """Every string a unit would store (ids, texts, answers, metadata) can be stored: no
    NUL character, no lone surrogate. Readers of JSON check this as they decode, naming
    the source's own fields; this catches the rest (CSV, TSV, story files)."""
    for document in unit.documents:
        _stored_check((("id", document.external_id), ("title", document.title),
                       ("url", document.url), ("source_type", document.source_type),
                       ("body", document.body)),
                      (("highlights", document.highlights), ("metadata", document.metadata)),
                      file=file, where=document.where)
    for question in unit.questions:
        _stored_check((("id", question.external_id), ("text", question.text)),
                      (("answers", question.answers), ("metadata", question.metadata)),
                      file=file, where=question.where)


def query_check(record: QueryRecord, *, file: str) -> None:
    """As :func:`unit_check`, for a query."""
    _stored_check((("id", record.external_id), ("text", record.text)),
                  (("metadata", record.metadata),), file=file, where=record.where)


def _stored_check(texts: tuple[tuple[str, str], ...], nested: tuple[tuple[str, Any], ...], *,
                  file: str, where: Where) -> None:
    for name, text in texts:
        detail = text_problem(text)
        if detail:
            raise ImportFailure(detail, file=file, where=where, field=name)
    for name, value in nested:
        if value:
            # One level above what it was read from (the record's field holds it).
            problem = value_problem(value, max_depth=MAX_DEPTH + 1)
            if problem is not None:
                raise ImportFailure(problem.detail, file=file, where=where,
                                    field=join_path(name, problem.field))


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


IS_EMPTY = gettext_noop("is empty")
IS_MISSING = gettext_noop("is missing (required)")
ONE_OF = gettext_noop("%(value)s is not one of %(choices)s")
SHOULD_BE = gettext_noop("should be %(kind)s, found %(found)s")
_NAMES = {str: gettext_noop("a string"), int: gettext_noop("an integer"),
          float: gettext_noop("a number"), list: gettext_noop("a list"),
          dict: gettext_noop("an object"), bool: gettext_noop("a boolean")}


def _kind_name(kind: type) -> StoredText | str:
    return StoredText(_NAMES[kind]) if kind in _NAMES else kind.__name__


def _kind_names(kind: type | tuple[type, ...]) -> StoredText | str:
    """``a string`` or ``an integer or a number``."""
    first, *rest = _as_tuple(kind)
    names = _kind_name(first)
    for other in rest:
        names = StoredText(gettext_noop("%(one)s or %(other)s"), one=names,
                           other=_kind_name(other))
    return names


def _kind(value: Any) -> StoredText | str:
    if value is None:
        return "null"
    for kind in (bool, str, int, float, list, dict):
        if isinstance(value, kind):
            return StoredText(_NAMES[kind])
    return type(value).__name__
