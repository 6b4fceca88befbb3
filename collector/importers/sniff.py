"""Which format a corpus or query file is in, from its first bytes (plain Python, no Django).

The import page detects the format and says why (``Detection.reason``, a stored text: the
page shows it in its reader's language); the admin can still choose another before
importing. Only the head of the (decompressed) first file is read:
the tell-tale fields of each dataset's records appear in its first record.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from collector.importers.errors import ImportFailure
from collector.importers.queries import TEXT_KEYS
from collector.importers.source import ByteCounter, Source
from collector.stored_text import StoredText

HEAD_BYTES = 256 * 1024
#: The query-list format of the upload form (not a corpus reader in ``FORMATS``).
QUERIES = "queries"


@dataclass(frozen=True, slots=True)
class Detection:
    format: str
    reason: StoredText  # ``str()`` is the evidence in the active language


def _has(head: str, *keys: str) -> bool:
    return all(re.search(rf'"{re.escape(key)}"\s*:', head) for key in keys)


def _head(source: Source) -> str:
    with source.files[0].open(ByteCounter()) as handle:
        raw = handle.read(HEAD_BYTES)
    text = raw.decode("utf-8", errors="ignore")  # a cut multi-byte character at the end
    return text.lstrip("\ufeff")


def _first_record(head: str) -> dict | None:
    """The first line as a JSON object, when the file is JSON Lines."""
    line = head.split("\n", 1)[0].strip()
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _table(head: str) -> tuple[str, list[str]] | None:
    """(delimiter, header) when the first lines are a table of two or more columns with
    the same count on every line."""
    lines = [line for line in head.splitlines()[:6] if line.strip()]
    if len(head) >= HEAD_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    for delimiter in ("\t", ","):
        rows = list(csv.reader(lines, delimiter=delimiter))
        widths = {len(row) for row in rows}
        if rows and len(widths) == 1 and widths.pop() >= 2:
            return delimiter, rows[0]
    return None


def format_detect(source: Source) -> Detection:
    """The format of ``source``, with the evidence; :class:`ImportFailure` when nothing
    fits (naming the file)."""
    first = source.files[0]
    if all(f.name.endswith(".story") for f in source.files):
        return Detection("story", StoredText(gettext_noop("the file name ends in .story")))
    head = _head(source)
    start = head.lstrip()[:1]
    if start in ("{", "["):
        if _has(head, "paragraphs", "qas"):
            return Detection("squad", StoredText(gettext_noop(
                "JSON with 'data' articles whose 'paragraphs' hold 'qas'")))
        if _has(head, "storyId"):
            return Detection("newsqa-json", StoredText(gettext_noop(
                "JSON with 'storyId' records (NewsQA combined)")))
        if _has(head, "documents", "question"):
            return Detection("dureader", StoredText(gettext_noop(
                "JSON Lines with 'question' and retrieved 'documents' (DuReader)")))
        if _has(head, "passages", "query"):
            return Detection("msmarco", StoredText(gettext_noop(
                "JSON with 'query' and 'passages' (MS MARCO)")))
        if _has(head, "doc", "query", "alternatives"):
            return Detection("reco", StoredText(gettext_noop(
                "JSON with 'query', 'doc' and 'alternatives' (ReCO)")))
        record = _first_record(head)
        if record is not None:
            if "body" not in record and any(k in record for k in TEXT_KEYS):
                key = next(k for k in TEXT_KEYS if k in record)
                return Detection(QUERIES, StoredText(gettext_noop(
                    "JSON Lines with a '%(key)s' and no 'body': a query list"), key=key))
            return Detection("jsonl", StoredText(gettext_noop(
                "JSON Lines of other records (fields: %(fields)s); map them to id and body"),
                fields=", ".join(list(record)[:8])))
        raise ImportFailure(StoredText(gettext_noop("is JSON, but not one of the known datasets "
                                                    "(SQuAD, NewsQA, MS MARCO, DuReader, ReCO) "
                                                    "nor JSON Lines")), file=first.name)
    if "\n@highlight" in head:
        return Detection("story", StoredText(gettext_noop(
            "text with '@highlight' lines (a CNN story)")))
    table = _table(head)
    if table is not None:
        delimiter, header = table
        if {"story_id", "story_text"} <= set(header):
            return Detection("newsqa-csv", StoredText(gettext_noop(
                "CSV with 'story_id' and 'story_text' columns (NewsQA combined)")))
        name = "tsv" if delimiter == "\t" else "csv"
        return Detection(name, StoredText(gettext_noop("%(format)s with columns %(columns)s"),
                                          format=name.upper(), columns=", ".join(header[:8])))
    return Detection(QUERIES, StoredText(gettext_noop("plain text lines: one query a line")))
