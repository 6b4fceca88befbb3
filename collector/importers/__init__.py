"""Readers for corpus and query files: plain Python, no Django.

``FORMATS`` maps a format name (the ``--format`` of ``import_corpus``) to its reader. A
reader takes a checked :class:`~collector.importers.source.Source` and yields
:class:`~collector.importers.records.ImportUnit` objects, streaming: it holds one record
(one article, one line) at a time. Bad input raises
:class:`~collector.importers.errors.ImportFailure` naming file, place and field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collector.importers.dureader import read_dureader
from collector.importers.errors import ImportFailure
from collector.importers.generic import (
    MappingError,
    mapping_parse,
    read_csv,
    read_jsonl,
    read_tsv,
)
from collector.importers.msmarco import read_msmarco
from collector.importers.newsqa import read_newsqa_csv, read_newsqa_json, read_story
from collector.importers.queries import read_queries
from collector.importers.reco import read_reco
from collector.importers.records import (
    SOURCE_TYPES,
    DocumentRecord,
    ImportUnit,
    QueryRecord,
    QuestionRecord,
    http_url_problem,
    query_check,
    unit_check,
)
from collector.importers.source import ByteCounter, Source, source_open
from collector.importers.squad import read_squad
from collector.stored_text import StoredText

Reader = Callable[..., Iterator[ImportUnit]]


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    label: Any  # a lazy translation: the import form shows it in the reader's language
    reader: Reader
    takes_mapping: bool = False
    folder_suffix: str | None = None


FORMATS: dict[str, Format] = {
    fmt.name: fmt
    for fmt in (
        Format("jsonl", _("JSON Lines (with a field mapping)"), read_jsonl, takes_mapping=True),
        Format("csv", _("CSV with a header (with a field mapping)"), read_csv, takes_mapping=True),
        Format("tsv", _("TSV (with a field mapping)"), read_tsv, takes_mapping=True),
        Format("squad", _("SQuAD v1.1 / v2.0 JSON"), read_squad),
        Format("newsqa-json", _("NewsQA combined JSON"), read_newsqa_json),
        Format("newsqa-csv", _("NewsQA combined CSV"), read_newsqa_csv),
        Format("story", _("CNN .story file or folder of them"), read_story,
               folder_suffix=".story"),
        Format("msmarco", _("MS MARCO v2.1 (JSONL or column-oriented JSON)"), read_msmarco),
        Format("dureader", _("DuReader JSONL"), read_dureader),
        Format("reco", _("ReCO JSON (or JSONL)"), read_reco),
    )
}


def format_get(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(
            f"unknown format {name!r} (formats: {', '.join(FORMATS)})"
        ) from None


def units_read(fmt: Format, source: Source, *, counter: ByteCounter,
               mapping: dict[str, str] | None = None, **options: Any) -> Iterator[ImportUnit]:
    """The units of ``source`` in format ``fmt``; refuses a file that holds no records."""
    kwargs: dict[str, Any] = {"counter": counter, **options}
    if fmt.takes_mapping:
        kwargs["mapping"] = mapping or {}
    elif mapping:
        raise ImportFailure(StoredText(gettext_noop("format %(format)s takes no --map (only "
                                                    "jsonl, csv and tsv do)"),
                                       format=repr(fmt.name)), file=source.name)
    empty = True
    # Records name no file: a single file (maybe inside a zip) names itself; story folders
    # check their files as they read them.
    file = source.files[0].name if len(source.files) == 1 else source.name
    for unit in fmt.reader(source, **kwargs):
        empty = False
        unit_check(unit, file=file)
        yield unit
    if empty:
        raise ImportFailure(StoredText(gettext_noop("contains no records")), file=source.name)


def queries_read(source: Source, *, counter: ByteCounter) -> Iterator[QueryRecord]:
    empty = True
    for record in read_queries(source, counter=counter):
        empty = False
        query_check(record, file=source.files[0].name)
        yield record
    if empty:
        raise ImportFailure(StoredText(gettext_noop("contains no queries")), file=source.name)


__all__ = [
    "FORMATS", "SOURCE_TYPES", "ByteCounter", "DocumentRecord", "Format", "ImportFailure",
    "ImportUnit", "MappingError", "QueryRecord", "QuestionRecord", "Source", "format_get",
    "http_url_problem", "mapping_parse", "queries_read", "source_open", "units_read",
]
