"""The common layer of every writer: atomic, hashed, incremental output and progress.

``AtomicOutput`` writes to a hidden temporary file in the destination's directory,
computes SHA-256 and the byte size of exactly the bytes written, and moves the file into
place only when the ``with`` block ends without an error; on any error (including a
failing progress callback or ``KeyboardInterrupt``) the temporary file is removed and the
destination is untouched. Text is buffered and encoded as UTF-8 in large chunks, so the
per-record cost is one ``list.append``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

ProgressCallback = Callable[[int], None]
"""``callback(done)``: called with the running record count while a writer works."""

DEFAULT_PROGRESS_EVERY = 1000

_TEXT_FLUSH_CHARS = 1 << 18
_COPY_CHUNK = 1 << 20

# json.dumps' own separators (the official SQuAD / MS MARCO / DuReader files use them);
# one encoder object each, so no encoder is built per record. NaN and infinities are
# refused: they are not JSON.
encode_ascii_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=True, allow_nan=False, separators=(", ", ": ")).encode
encode_utf8_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One file of a release: where it is, how many records it holds, its checksum."""

    path: str
    records: int
    sha256: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def relative_to(self, root: str | os.PathLike[str]) -> ManifestEntry:
        """The same entry with ``path`` relative to ``root`` (POSIX separators)."""
        rel = Path(self.path).resolve().relative_to(Path(root).resolve())
        return ManifestEntry(rel.as_posix(), self.records, self.sha256, self.bytes)


class Progress:
    """Counts records and calls ``callback(count)`` every ``every`` records and at the end."""

    __slots__ = ("callback", "count", "every", "_next")

    def __init__(self, callback: ProgressCallback | None, every: int = DEFAULT_PROGRESS_EVERY):
        if every < 1:
            raise ValueError("progress_every must be at least 1")
        self.callback = callback
        self.every = every
        self.count = 0
        self._next = every

    def tick(self) -> None:
        self.count += 1
        if self.count == self._next:
            self._next += self.every
            if self.callback is not None:
                self.callback(self.count)

    def finish(self) -> None:
        if self.callback is not None:
            self.callback(self.count)


class AtomicOutput:
    """A file that appears at ``path`` complete, or not at all.

    Use as a context manager; ``write`` takes text (UTF-8 encoded here), ``write_bytes``
    raw bytes. After the block, ``sha256`` and ``size`` describe the file and
    ``entry(records)`` makes its manifest entry. With ``overwrite=False`` (default) an
    existing destination is never replaced (checked before writing and again, atomically,
    when the file is moved into place).
    """

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = False):
        self.path = Path(path)
        self.overwrite = overwrite
        if not overwrite and self.path.exists():
            raise FileExistsError(f"{self.path} already exists (releases are immutable)")
        if not self.path.parent.is_dir():
            raise FileNotFoundError(f"directory {self.path.parent} does not exist")
        self._tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        self._file: BinaryIO | None = None
        self._hash = hashlib.sha256()
        self._parts: list[str] = []
        self._pending = 0
        self.size = 0
        self.sha256: str | None = None

    # -- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> AtomicOutput:
        # O_EXCL: the random name is ours alone; 0o666 lets the umask decide, like open().
        fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self._file = os.fdopen(fd, "wb", buffering=_COPY_CHUNK)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self._commit()
            except BaseException:
                self._abort()
                raise
        else:
            self._abort()

    def _commit(self) -> None:
        self._flush_text()
        file = self._file
        if file is None:
            raise RuntimeError("AtomicOutput committed before it was opened")
        file.flush()
        os.fsync(file.fileno())
        file.close()
        if self.overwrite:
            os.replace(self._tmp, self.path)
        else:
            try:
                os.link(self._tmp, self.path)  # fails if the destination appeared meanwhile
            except FileExistsError:
                raise FileExistsError(
                    f"{self.path} already exists (releases are immutable)") from None
            except OSError:
                # A filesystem without hard links: check, then rename.
                if self.path.exists():
                    raise FileExistsError(
                        f"{self.path} already exists (releases are immutable)") from None
                os.replace(self._tmp, self.path)
            else:
                os.unlink(self._tmp)
        self.sha256 = self._hash.hexdigest()
        _fsync_dir(self.path.parent)

    def _abort(self) -> None:
        if self._file is not None and not self._file.closed:
            with contextlib.suppress(OSError):
                self._file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)
        self._parts.clear()

    # -- writing ---------------------------------------------------------------------
    def write(self, text: str) -> None:
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= _TEXT_FLUSH_CHARS:
            self._flush_text()

    def write_bytes(self, data: bytes) -> None:
        self._flush_text()
        self._emit(data)

    def copy_from(self, source: BinaryIO) -> None:
        """Append the rest of an open binary file (used to join spooled parts)."""
        self._flush_text()
        while chunk := source.read(_COPY_CHUNK):
            self._emit(chunk)

    def _flush_text(self) -> None:
        if self._parts:
            data = "".join(self._parts).encode("utf-8")
            self._parts.clear()
            self._pending = 0
            self._emit(data)

    def _emit(self, data: bytes) -> None:
        if self._file is None:
            raise RuntimeError("AtomicOutput used outside its with block")
        self._hash.update(data)
        self._file.write(data)
        self.size += len(data)

    def binary_sink(self) -> _BinarySink:
        """A minimal binary file object over this output (for pyarrow's writers)."""
        self._flush_text()
        return _BinarySink(self)

    def entry(self, records: int) -> ManifestEntry:
        if self.sha256 is None:
            raise RuntimeError("the file is not complete yet")
        return ManifestEntry(str(self.path), records, self.sha256, self.size)


class JsonArrayFile:
    """A JSON file whose one top-level array (SQuAD's articles, NewsQA's stories) is
    written an item at a time between ``head`` and ``tail``, atomically (the file appears
    when the ``with`` block ends without an error; ``entry`` is then its manifest entry).
    A ``fragment`` holds only items, for another writer's ``add_fragment`` (a file written
    in parts by several processes). Subclasses set ``head`` and ``tail`` and write each
    item after ``_next_item()``'s separator."""

    head = ""
    tail = ""

    def __init__(self, path: str | os.PathLike[str], *, progress: ProgressCallback | None,
                 progress_every: int, overwrite: bool, fragment: bool):
        self.fragment = fragment
        self._counter = Progress(progress, progress_every)
        self._output = AtomicOutput(path, overwrite=overwrite)
        self._item_sep = ""
        self._entry: ManifestEntry | None = None

    @property
    def path(self) -> Path:
        """Where the file appears."""
        return self._output.path

    @property
    def entry(self) -> ManifestEntry:
        if self._entry is None:
            raise RuntimeError("the file is not complete yet")
        return self._entry

    @property
    def empty(self) -> bool:
        """No item written yet."""
        return not self._item_sep

    def _next_item(self) -> str:
        """The separator before the next item ("" before the first)."""
        sep, self._item_sep = self._item_sep, ", "
        return sep

    def add_fragment(self, path: str | os.PathLike[str], records: int, empty: bool) -> None:
        """Append a fragment another writer (``fragment=True``) wrote with the records
        after this one's: its bytes (``empty``: it has none), after a separator, and its
        ``records`` to the count."""
        if not empty:
            self._output.write(self._next_item())
            with open(path, "rb") as source:
                self._output.copy_from(source)
        self._counter.count += records

    def __enter__(self):
        self._output.__enter__()
        if not self.fragment:
            self._output.write(self.head)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and not self.fragment:
            try:
                self._output.write(self.tail)
            except BaseException as error:
                self._output.__exit__(type(error), error, error.__traceback__)
                raise
        self._output.__exit__(exc_type, exc, tb)
        if exc_type is None:
            self._counter.finish()
            self._entry = self._output.entry(self._counter.count)


class _BinarySink:
    """File-like view for libraries that want ``write``/``tell``/``flush``/``closed``."""

    def __init__(self, output: AtomicOutput):
        self._output = output
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> int:
        data = bytes(data)
        self._output._emit(data)
        return len(data)

    def tell(self) -> int:
        return self._output.size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False


def _fsync_dir(directory: Path) -> None:
    # Make the rename durable; not every platform lets a directory be opened.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sha256_file(path: str | os.PathLike[str]) -> tuple[str, int]:
    """SHA-256 hex digest and byte size of a file, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_COPY_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def verify_entry(entry: ManifestEntry, root: str | os.PathLike[str] | None = None) -> bool:
    """True when the file still has the checksum and size its manifest entry records."""
    path = Path(root, entry.path) if root is not None else Path(entry.path)
    digest, size = sha256_file(path)
    return digest == entry.sha256 and size == entry.bytes


def write_checksums(path: str | os.PathLike[str], entries: Iterable[ManifestEntry], *,
                    root: str | os.PathLike[str] | None = None,
                    overwrite: bool = False) -> ManifestEntry:
    """Write a ``SHA256SUMS`` file (``sha256sum -c`` format) for ``entries``.

    Paths are written relative to ``root`` (default: the checksum file's directory).
    """
    base = Path(root) if root is not None else Path(path).parent
    count = 0
    with AtomicOutput(path, overwrite=overwrite) as out:
        for entry in entries:
            rel = entry.relative_to(base).path
            if "\n" in rel or "\\" in rel:
                raise ValueError(f"cannot list {rel!r} in a checksum file")
            out.write(f"{entry.sha256}  {rel}\n")
            count += 1
    return out.entry(count)
