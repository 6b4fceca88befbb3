"""Opening input files: size limits, emptiness, compression, strict UTF-8, line numbers, bytes
read.

Files compressed with gzip, and zip archives that hold one file, are read transparently
(recognised by their first bytes, whatever their name): errors name the file inside
(``books.zip/books.jsonl``) and the import limit applies to the decompressed bytes too.
Other compressed formats and tar archives are refused with a message saying so.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import re
import sys
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from django.utils.translation import gettext_noop

from collector.importers.errors import WHOLE_FILE, ImportFailure, at_line
from collector.stored_text import StoredText

DEFAULT_MAX_RECORD_BYTES = 32 * 1024**2

GZIP, ZIP = "gzip", "zip"
_MAGIC = ((b"\x1f\x8b", GZIP), (b"PK\x03\x04", ZIP), (b"PK\x05\x06", ZIP))
_UNSUPPORTED = ((b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"),
                (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"Rar!\x1a\x07", "RAR"))
_TAR_MAGIC_AT = 257  # "ustar" in a tar header


class ByteCounter:
    """Bytes read so far across the files of one import (drives the progress bar).

    For a compressed file these are bytes of the file on disk, as the total is."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    name: str  # how errors name the file (for an archive: the file inside it)
    compression: str = ""  # "", GZIP or ZIP
    member: str = ""  # the zip member read
    max_bytes: int = sys.maxsize  # decompressed bytes allowed
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    @property
    def inner_name(self) -> str:
        """The name of the file whose content is read, without folders: a zip member's own
        name, a gzipped file's name without ``.gz``, else the file's name as the import
        names it (an upload's original name, not the name it is stored under)."""
        name = PurePosixPath(self.name).name
        if self.compression == GZIP and name.lower().endswith(".gz"):
            name = name[: -len(".gz")]
        return name

    def open(self, counter: ByteCounter) -> BinaryIO:
        """The file's content as a binary stream; its bytes on disk go to ``counter``.

        Compressed content is decompressed on the fly; a corrupt archive, or one that
        decompresses to more than ``max_bytes``, raises :class:`ImportFailure`."""
        raw = io.BufferedReader(_Counted(self.path.open("rb", buffering=0), counter))
        if not self.compression:
            return raw
        try:
            if self.compression == GZIP:
                inner: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb")
            else:
                archive = zipfile.ZipFile(raw)
                inner = archive.open(self.member)
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            raw.close()
            raise _corrupt(self, exc) from None
        return io.BufferedReader(_Decompressed(inner, raw, self))


class _Counted(io.RawIOBase):
    """A raw file whose reads are added to a :class:`ByteCounter`."""

    def __init__(self, raw: BinaryIO, counter: ByteCounter) -> None:
        self._raw = raw
        self._counter = counter

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = self._raw.readinto(buffer) or 0
        self._counter.add(n)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Decompressed(io.RawIOBase):
    """Decompressed bytes, at most ``max_bytes`` of them; archive errors become
    :class:`ImportFailure`."""

    def __init__(self, inner: BinaryIO, raw: BinaryIO, source_file: SourceFile) -> None:
        self._inner = inner
        self._raw = raw
        self._file = source_file
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        try:
            n = self._inner.readinto(buffer) or 0
        except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            raise _corrupt(self._file, exc) from None
        self._total += n
        if self._total > self._file.max_bytes:
            raise ImportFailure(
                StoredText(gettext_noop("decompresses to more than %(limit)s bytes, over the "
                                        "import limit (setting CROWDQA_IMPORT_MAX_BYTES)"),
                           limit=f"{self._file.max_bytes:,}"), file=self._file.name,
            )
        return n

    def close(self) -> None:
        self._inner.close()
        self._raw.close()
        super().close()


def _corrupt(source_file: SourceFile, exc: BaseException) -> ImportFailure:
    detail = (gettext_noop("is a damaged gzip file: cannot decompress it (%(error)s)")
              if source_file.compression == GZIP
              else gettext_noop("is a damaged zip archive: cannot decompress it (%(error)s)"))
    return ImportFailure(StoredText(detail, error=str(exc)), file=source_file.name)


@dataclass(frozen=True, slots=True)
class Source:
    files: tuple[SourceFile, ...]
    name: str
    total_bytes: int


def _os_metadata(member: str) -> bool:
    """A zip member that the archiver's system added, not the user: macOS Finder's
    ``__MACOSX/`` resource forks and ``.DS_Store``, Windows' ``Thumbs.db``."""
    path = PurePosixPath(member)
    return (path.parts[:1] == ("__MACOSX",)
            or path.name in (".DS_Store", "Thumbs.db", "desktop.ini"))


def _examine(source_file: SourceFile) -> SourceFile:
    """``source_file`` with its compression (and zip member) found from its first bytes;
    refuses formats that cannot be read."""
    with source_file.path.open("rb") as handle:
        head = handle.read(_TAR_MAGIC_AT + 8)
    compression = next((kind for magic, kind in _MAGIC if head.startswith(magic)), "")
    unsupported = next((kind for magic, kind in _UNSUPPORTED if head.startswith(magic)), None)
    name = source_file.name
    if unsupported:
        raise ImportFailure(StoredText(gettext_noop("is a %(compression)s-compressed file, "
                                                    "which cannot be read: decompress it, or "
                                                    "compress it with gzip (.gz) or zip"),
                                       compression=unsupported), file=name)
    if compression == ZIP:
        try:
            with zipfile.ZipFile(source_file.path) as archive:
                members = [info for info in archive.infolist()
                           if not info.is_dir() and not _os_metadata(info.filename)]
        except (OSError, zipfile.BadZipFile) as exc:
            raise ImportFailure(StoredText(gettext_noop("is a damaged zip archive (%(error)s)"),
                                           error=str(exc)), file=name) from None
        if len(members) != 1:
            listed = ", ".join(info.filename for info in members[:5])
            more = ", …" if len(members) > 5 else ""
            raise ImportFailure(
                StoredText(gettext_noop("is a zip archive of %(count)s files (%(listed)s); an "
                                        "import reads one file: unzip it and import its files "
                                        "one by one"),
                           count=len(members), listed=f"{listed}{more}"), file=name,
            )
        member = members[0]
        if member.flag_bits & 0x1:
            raise ImportFailure(StoredText(gettext_noop("is an encrypted zip archive, which "
                                                        "cannot be read")), file=name)
        if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                        zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
            raise ImportFailure(StoredText(gettext_noop("is a zip archive compressed with "
                                                        "method %(method)s, which cannot be "
                                                        "read: re-create it with the usual "
                                                        "(deflate) compression"),
                                           method=member.compress_type), file=name)
        source_file = SourceFile(source_file.path, f"{name}/{member.filename}", ZIP,
                                 member.filename, source_file.max_bytes,
                                 source_file.max_record_bytes)
    elif compression:
        source_file = SourceFile(source_file.path, name, compression, "",
                                 source_file.max_bytes, source_file.max_record_bytes)
    if compression:
        with source_file.open(ByteCounter()) as stream:
            head = stream.read(_TAR_MAGIC_AT + 8)
    if head[_TAR_MAGIC_AT:_TAR_MAGIC_AT + 5] == b"ustar":
        raise ImportFailure(StoredText(gettext_noop("is a tar archive, which cannot be read: "
                                                    "extract it and import its files one by "
                                                    "one")), file=name)
    return source_file


def source_open(path: Path, *, max_bytes: int, name: str | None = None,
                folder_suffix: str | None = None,
                max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> Source:
    """Check ``path`` before reading: it exists, is not empty and not over ``max_bytes``,
    and is plain text or a readable compressed file (see the module's docstring).

    A folder is accepted only by formats that read many files (``folder_suffix`` such as
    ``".story"``); its matching files are read in name order. ``max_record_bytes`` bounds
    one record (a line, a CSV record, an element of a JSON document's list, a file of a
    folder).
    """
    display = name or path.name
    if path.is_dir():
        if not folder_suffix:
            raise ImportFailure(StoredText(gettext_noop("is a folder; this format reads a single "
                                                        "file")), file=display)
        files = tuple(
            SourceFile(child, f"{display}/{child.name}", max_bytes=max_bytes,
                       max_record_bytes=max_record_bytes)
            for child in sorted(path.iterdir())
            if child.is_file() and child.name.endswith(folder_suffix)
        )
        if not files:
            raise ImportFailure(StoredText(gettext_noop("the folder holds no %(suffix)s files"),
                                           suffix=folder_suffix), file=display)
    elif path.is_file():
        files = (SourceFile(path, display, max_bytes=max_bytes,
                            max_record_bytes=max_record_bytes),)
    else:
        raise ImportFailure(StoredText(gettext_noop("no such file or folder")), file=display)
    total = 0
    for source_file in files:
        size = source_file.size
        if size == 0:
            raise ImportFailure(StoredText(gettext_noop("is empty (0 bytes)")),
                                file=source_file.name)
        total += size
    if total > max_bytes:
        raise ImportFailure(
            StoredText(gettext_noop("is %(size)s bytes, over the import limit of %(limit)s bytes "
                                    "(setting CROWDQA_IMPORT_MAX_BYTES)"),
                       size=f"{total:,}", limit=f"{max_bytes:,}"), file=display,
        )
    files = tuple(_examine(source_file) for source_file in files)
    if not path.is_dir():
        display = files[0].name  # a zip archive's file is named inside it
    return Source(files=files, name=display, total_bytes=total)


def not_utf8(file: str, *, line: int, column: int) -> ImportFailure:
    return ImportFailure(
        StoredText(gettext_noop("is not valid UTF-8 (bad byte at column %(column)s); convert "
                                "the file to UTF-8"), column=column),
        file=file, where=at_line(line),
    )


def record_too_big(source_file: SourceFile, *, where: str | StoredText) -> ImportFailure:
    return ImportFailure(
        StoredText(gettext_noop("this record is over %(limit)s bytes, the limit for one record "
                                "(setting CROWDQA_IMPORT_MAX_RECORD_BYTES)"),
                   limit=f"{source_file.max_record_bytes:,}"),
        file=source_file.name, where=where,
    )


def iter_lines(source_file: SourceFile, counter: ByteCounter) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line, decoded as strict UTF-8 (a BOM is dropped).

    Lines keep their line ending, as the csv module needs. A line over the per-record
    limit is refused without being read in full.
    """
    limit = source_file.max_record_bytes
    with source_file.open(counter) as handle:
        number = 0
        while raw := handle.readline(limit + 1):
            number += 1
            if len(raw) > limit:
                raise record_too_big(source_file, where=at_line(number))
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(source_file.name, line=number, column=exc.start + 1) from None
            yield number, line


def read_text(source_file: SourceFile, counter: ByteCounter) -> str:
    """A whole (small) file as text, strict UTF-8; errors name the line. The file is one
    record: over the per-record limit it is refused without being read in full."""
    limit = source_file.max_record_bytes
    with source_file.open(counter) as handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise record_too_big(source_file, where=StoredText(WHOLE_FILE))
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    text = text_decode(raw, file=source_file.name)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, column = _line_column(raw, nul)
        raise ImportFailure(StoredText(gettext_noop("contains a NUL character (at column "
                                                    "%(column)s), which cannot be stored"),
                                       column=column),
                            file=source_file.name, where=at_line(line))
    return text


def text_decode(raw: bytes, *, file: str) -> str:
    """``raw`` as strict UTF-8 text (a BOM dropped); a bad byte raises :class:`ImportFailure`
    naming its line and column (what ``UnicodeDecodeError`` says only as a byte offset)."""
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(raw, exc.start)
        raise not_utf8(file, line=line, column=column) from None


def _line_column(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    return line, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1


BAD_CSV = gettext_noop("bad CSV: %(error)s")
_QUOTE_NOT_CLOSING = re.compile(r"'(.)' expected after '(.)'", re.DOTALL)


def csv_problem(exc: csv.Error) -> tuple[StoredText | str, bool]:
    """What Python's CSV reader found wrong, in our own words (translatable; its English as
    it is for a complaint not mapped here), and whether the record's first line is the
    place to name (else the line the reader stopped on)."""
    text = str(exc)
    if found := _QUOTE_NOT_CLOSING.fullmatch(text):
        return StoredText(gettext_noop("a quote %(quote)s ends a field but is followed by more "
                                       "text, not by %(delimiter)s or the end of the line "
                                       "(write a quote inside a quoted field as two quotes)"),
                          quote=repr(found[2]), delimiter=repr(found[1])), False
    if text == "unexpected end of data":
        return StoredText(gettext_noop("the file ends inside a quoted field that starts in this "
                                       "record (its closing quote is missing)")), True
    if text.startswith("new-line character seen in unquoted field"):
        return StoredText(gettext_noop("a carriage return (\\r) inside a field that is not "
                                       "quoted: quote the field or remove the character")), False
    return text, True


def iter_csv_rows(source_file: SourceFile, counter: ByteCounter, *, delimiter: str = ",",
                  quoting: int = csv.QUOTE_MINIMAL) -> Iterator[tuple[str, list[str]]]:
    """``("line N", row)`` for each non-blank CSV/TSV record (N is the record's first line;
    a quoted field may span lines). A malformed record, or one over the per-record limit,
    raises :class:`ImportFailure` naming its line."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    limit = source_file.max_record_bytes
    pending = [0]  # characters of the record being read

    def lines() -> Iterator[str]:
        for _, line in iter_lines(source_file, counter):
            pending[0] += len(line)
            if pending[0] > limit:
                raise record_too_big(source_file, where=at_line(line_start))
            yield line

    reader = csv.reader(lines(), delimiter=delimiter, quoting=quoting, strict=True)
    line_start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            # The record's first line, or the line the reader stopped on when the problem
            # is there (a quote closed too early).
            error, at_record = csv_problem(exc)
            raise ImportFailure(StoredText(BAD_CSV, error=error),
                                file=source_file.name,
                                where=at_line(line_start if at_record else reader.line_num)
                                ) from None
        pending[0] = 0
        where = at_line(line_start)
        line_start = reader.line_num + 1
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield where, row
