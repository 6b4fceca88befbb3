"""Streaming reads of one big JSON document, holding one element in memory at a time.

SQuAD, NewsQA, ReCO and the column-oriented MS MARCO file are single JSON documents that
can be far larger than memory should hold. :class:`JsonStream` walks such a document:
``iter_object()`` yields the keys of an object, ``iter_array()`` the indexes of an array,
and the caller either decodes the element in full (``read_value()``) or steps over it
without building it (``skip_value()``). The buffer holds roughly one element, and line
numbers are tracked for error messages.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import THE_END_OF_THE_FILE, ImportFailure, at_line
from collector.importers.jsonvalues import (
    UNTERMINATED_STRING,
    join_path,
    json_problem,
    needs_check,
    nesting_problem,
    too_deep,
    value_problem,
)
from collector.importers.source import ByteCounter, SourceFile, not_utf8, record_too_big
from collector.stored_text import StoredText

_WS = re.compile(r"[ \t\r\n]*")
_STRUCT = re.compile(r'[\[\]{}"]')
_SCALAR_END = re.compile(r"[,\]}\s]")
_DECODER = json.JSONDecoder()
ENDS_BEFORE_VALUE = gettext_noop("the file ends where a value was expected")


class JsonStream:
    def __init__(self, source_file: SourceFile, counter: ByteCounter, *,
                 chunk_size: int = 1 << 16) -> None:
        self.name = source_file.name
        self._file = source_file
        self._fh = source_file.open(counter)
        self._chunk = chunk_size
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._first_read = True
        self._lines_dropped = 0  # newlines in text already dropped from the buffer
        self._column_base = 0  # column of buf[0] within its line
        self._lc_pos = 0  # newline count cache: self._lc_count newlines in buf[:_lc_pos]
        self._lc_count = 0
        self._record_start: int | None = None  # buffer position of the value being read

    def __enter__(self) -> JsonStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()

    # -- positions and errors -------------------------------------------------------
    def line(self) -> int:
        """Line number (1-based) of the next value."""
        self._skip_ws()
        return self._line_at(self._pos)

    def _line_at(self, pos: int) -> int:
        if pos >= self._lc_pos:
            self._lc_count += self._buf.count("\n", self._lc_pos, pos)
        else:
            self._lc_count = self._buf.count("\n", 0, pos)
        self._lc_pos = pos
        return self._lines_dropped + self._lc_count + 1

    def error(self, detail: str | StoredText, *, pos: int | None = None) -> ImportFailure:
        pos = self._pos if pos is None else pos
        line = self._line_at(pos)
        newline = self._buf.rfind("\n", 0, pos)
        column = pos - newline if newline >= 0 else self._column_base + pos + 1
        return ImportFailure(StoredText(gettext_noop("invalid JSON: %(error)s"), error=detail),
                             file=self.name,
                             where=at_line(line, column))

    # -- buffer ---------------------------------------------------------------------
    def _read_more(self) -> bool:
        """Append more decoded text to the buffer; False at the end of the file."""
        while not self._eof:
            # Grow reads with the element being scanned, so long elements cost linear time.
            if (self._record_start is not None
                    and len(self._buf) - self._record_start > self._file.max_record_bytes):
                raise record_too_big(self._file,
                                     where=at_line(self._line_at(self._record_start)))
            raw = self._fh.read(max(self._chunk, len(self._buf) - self._pos))
            if self._first_read:
                self._first_read = False
                if raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8):]
            try:
                text = self._decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as exc:
                line = self._line_at(len(self._buf)) + raw.count(b"\n", 0, max(exc.start, 0))
                column = max(exc.start, 0) - (raw.rfind(b"\n", 0, max(exc.start, 0)) + 1) + 1
                raise not_utf8(self.name, line=line, column=column) from None
            if not raw:
                self._eof = True
            if text:
                self._buf += text
                return True
        return False

    def _compact(self) -> None:
        if self._pos > self._chunk:
            self._lines_dropped = self._line_at(self._pos) - 1
            newline = self._buf.rfind("\n", 0, self._pos)
            self._column_base = (self._pos - newline - 1 if newline >= 0
                                 else self._column_base + self._pos)
            self._buf = self._buf[self._pos:]
            self._pos = 0
            self._lc_pos = self._lc_count = 0

    def _skip_ws(self) -> None:
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()
            if self._pos < len(self._buf) or not self._read_more():
                return

    def peek(self) -> str:
        """The next non-blank character, or "" at the end of the file."""
        self._skip_ws()
        return self._buf[self._pos] if self._pos < len(self._buf) else ""

    def _expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise self.error(StoredText(gettext_noop("expected %(expected)s, found %(found)s"),
                                        expected=f"'{char}'", found=_describe(found)))
        self._pos += 1

    # -- scanning -------------------------------------------------------------------
    def _string_end(self, quote: int) -> int:
        i = quote + 1
        while True:
            found = self._buf.find('"', i)
            if found < 0:
                i = len(self._buf)
                if not self._read_more():
                    raise self.error(StoredText(UNTERMINATED_STRING), pos=quote)
                continue
            backslashes = 0
            j = found - 1
            while self._buf[j] == "\\":
                backslashes += 1
                j -= 1
            if backslashes % 2 == 0:
                return found + 1
            i = found + 1

    def _value_end(self) -> int:
        start = self._pos
        first = self._buf[start]
        if first == '"':
            return self._string_end(start)
        if first in "[{":
            depth = 0
            i = start
            while True:
                match = _STRUCT.search(self._buf, i)
                if match is None:
                    i = len(self._buf)
                    if not self._read_more():
                        raise self.error(StoredText(gettext_noop("the file ends inside this "
                                                                 "value")), pos=start)
                    continue
                k = match.start()
                char = self._buf[k]
                if char == '"':
                    i = self._string_end(k)
                    continue
                depth += 1 if char in "[{" else -1
                i = k + 1
                if depth == 0:
                    return i
        i = start
        while True:
            match = _SCALAR_END.search(self._buf, i)
            if match is not None:
                return match.start()
            i = len(self._buf)
            if not self._read_more():
                return len(self._buf)

    # -- public reading -------------------------------------------------------------
    def read_value(self, *, path: str | None = None) -> Any:
        """Decode the next value in full: one record, at most the per-record limit.

        With ``path`` (the value's place in the document, such as ``data[3]``) the value
        is also checked: a string that cannot be stored (NUL, lone surrogate) or nesting
        deeper than the limit raises :class:`ImportFailure` naming the field below
        ``path``. Nesting too deep for Python's decoder is refused in any case.
        """
        if not self.peek():
            raise self.error(StoredText(ENDS_BEFORE_VALUE))
        start = self._pos
        self._record_start = start
        try:
            end = self._value_end()  # make sure the whole value is in the buffer
        finally:
            self._record_start = None
        limit = self._file.max_record_bytes
        if (end - start) * 4 > limit and len(self._buf[start:end].encode()) > limit:
            raise record_too_big(self._file, where=at_line(self._line_at(start)))
        try:
            value, stop = _DECODER.raw_decode(self._buf, self._pos)
        except json.JSONDecodeError as exc:
            raise self.error(json_problem(exc), pos=exc.pos) from None
        except RecursionError:
            found = nesting_problem(self._buf, start)
            pos, field = (found[0], found[1].field) if found else (start, "")
            raise ImportFailure(too_deep(), file=self.name,
                                where=at_line(self._line_at(pos)),
                                field=join_path(path or "", field) or None) from None
        if path is not None and needs_check(self._buf, start, stop):
            problem = value_problem(value)
            if problem is not None:
                raise ImportFailure(problem.detail, file=self.name,
                                    where=at_line(self._line_at(start)),
                                    field=join_path(path, problem.field) or None)
        self._pos = stop
        return value

    def skip_value(self) -> None:
        """Step over the next value without building it."""
        if not self.peek():
            raise self.error(StoredText(ENDS_BEFORE_VALUE))
        self._pos = self._value_end()

    def iter_object(self) -> Iterator[str]:
        """At an object: yield its keys; a value the caller did not read is skipped."""
        self._expect("{")
        first = True
        while True:
            self._compact()
            char = self.peek()
            if char == "}":
                self._pos += 1
                return
            if not first:
                if char != ",":
                    raise self.error(StoredText(gettext_noop("expected %(expected)s, found "
                                                             "%(found)s"),
                                                expected="',' or '}'", found=_describe(char)))
                self._pos += 1
                char = self.peek()
            if char != '"':
                raise self.error(StoredText(gettext_noop("expected a key in double quotes, "
                                                         "found %(found)s"),
                                            found=_describe(char)))
            key = self.read_value()
            self._expect(":")
            self._skip_ws()
            mark = self._pos
            yield key
            if self._pos == mark:
                self.skip_value()
            first = False

    def iter_array(self) -> Iterator[int]:
        """At an array: yield each element's index; an element not read is skipped."""
        self._expect("[")
        index = 0
        while True:
            self._compact()
            char = self.peek()
            if char == "]":
                self._pos += 1
                return
            if index:
                if char != ",":
                    raise self.error(StoredText(gettext_noop("expected %(expected)s, found "
                                                             "%(found)s"),
                                                expected="',' or ']'", found=_describe(char)))
                self._pos += 1
            self._skip_ws()
            mark = self._pos
            yield index
            if self._pos == mark:
                self.skip_value()
            index += 1

    def finish(self) -> None:
        """Check nothing but blanks follows the top-level value."""
        char = self.peek()
        if char:
            raise self.error(StoredText(gettext_noop("unexpected %(found)s after the end of the "
                                                     "JSON value"), found=_describe(char)))


def _describe(char: str) -> StoredText | str:
    return StoredText(THE_END_OF_THE_FILE) if not char else repr(char)
