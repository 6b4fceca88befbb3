"""Opening input files: size limit, emptiness, strict UTF-8, line numbers, bytes read."""

from __future__ import annotations

import codecs
import csv
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from collector.importers.errors import ImportFailure


class ByteCounter:
    """Bytes read so far across the files of one import (drives the progress bar)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    name: str  # how errors name the file

    @property
    def size(self) -> int:
        return self.path.stat().st_size


@dataclass(frozen=True, slots=True)
class Source:
    files: tuple[SourceFile, ...]
    name: str
    total_bytes: int


def source_open(path: Path, *, max_bytes: int, name: str | None = None,
                folder_suffix: str | None = None) -> Source:
    """Check ``path`` before reading: it exists, is not empty and not over ``max_bytes``.

    A folder is accepted only by formats that read many files (``folder_suffix`` such as
    ``".story"``); its matching files are read in name order.
    """
    display = name or path.name
    if path.is_dir():
        if not folder_suffix:
            raise ImportFailure("is a folder; this format reads a single file", file=display)
        files = tuple(
            SourceFile(child, f"{display}/{child.name}")
            for child in sorted(path.iterdir())
            if child.is_file() and child.name.endswith(folder_suffix)
        )
        if not files:
            raise ImportFailure(f"the folder holds no {folder_suffix} files", file=display)
    elif path.is_file():
        files = (SourceFile(path, display),)
    else:
        raise ImportFailure("no such file or folder", file=display)
    total = 0
    for source_file in files:
        size = source_file.size
        if size == 0:
            raise ImportFailure("is empty (0 bytes)", file=source_file.name)
        total += size
    if total > max_bytes:
        raise ImportFailure(
            f"is {total:,} bytes, over the import limit of {max_bytes:,} bytes "
            "(setting CROWDQA_IMPORT_MAX_BYTES)", file=display,
        )
    return Source(files=files, name=display, total_bytes=total)


def not_utf8(file: str, *, line: int, column: int) -> ImportFailure:
    return ImportFailure(
        f"is not valid UTF-8 (bad byte at column {column}); convert the file to UTF-8",
        file=file, where=f"line {line}",
    )


def iter_lines(source_file: SourceFile, counter: ByteCounter) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line, decoded as strict UTF-8 (a BOM is dropped).

    Lines keep their line ending, as the csv module needs.
    """
    with source_file.path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            counter.add(len(raw))
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(source_file.name, line=number, column=exc.start + 1) from None
            yield number, line


def read_text(source_file: SourceFile, counter: ByteCounter) -> str:
    """A whole (small) file as text, strict UTF-8; errors name the line."""
    raw = source_file.path.read_bytes()
    counter.add(len(raw))
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise not_utf8(source_file.name, line=line, column=column) from None


def iter_csv_rows(source_file: SourceFile, counter: ByteCounter, *, delimiter: str = ",",
                  quoting: int = csv.QUOTE_MINIMAL) -> Iterator[tuple[str, list[str]]]:
    """``("line N", row)`` for each non-blank CSV/TSV record (N is the record's first line;
    a quoted field may span lines). A malformed record raises :class:`ImportFailure`
    naming its line."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader((line for _, line in iter_lines(source_file, counter)),
                        delimiter=delimiter, quoting=quoting, strict=True)
    line_start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ImportFailure(f"bad CSV: {exc}", file=source_file.name,
                                where=f"line {line_start}") from None
        where = f"line {line_start}"
        line_start = reader.line_num + 1
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield where, row
