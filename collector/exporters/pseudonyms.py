"""Worker pseudonyms for a release: ``w-`` + the first hex digits of
HMAC-SHA256(salt, worker id).

- Stable within a release (same salt, same worker -> same pseudonym, in every file).
- Unlinkable across releases: each release draws its own salt
  (:func:`new_release_salt`), so a worker's pseudonyms in two releases differ.
- The salt is a secret of the release: store it with the release in the database, never
  in a released file. Worker ids are small integers, so anyone holding the salt could
  recompute every pseudonym.
- ``omit=True`` drops worker identities entirely (every pseudonym is None; writers then
  leave worker columns out).

Two workers with the same prefix would merge into one pseudonym: an instance refuses that
(``PseudonymCollisionError``). :meth:`Pseudonymizer.fitted` picks, from the release's
worker ids, the shortest length (at least ``min_length``) with no collision, so
pseudonyms stay short and the choice is reproducible from the same salt and workers.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

from collector.exporters.errors import ExportError
from collector.exporters.records import WorkerRef

__all__ = ["PseudonymCollisionError", "Pseudonymizer", "new_release_salt"]

_MIN_SALT_BYTES = 16


class PseudonymCollisionError(ExportError):
    """Two workers would get the same pseudonym at the chosen length."""


def new_release_salt() -> str:
    """A fresh random salt (64 hex digits) for one release."""
    return secrets.token_hex(32)


def _canonical(worker: WorkerRef) -> str:
    if isinstance(worker, bool) or not isinstance(worker, int | str):
        raise TypeError(f"worker reference must be an int or str id, got {worker!r}")
    text = str(worker)
    if not text:
        raise ValueError("empty worker reference")
    return text


class Pseudonymizer:
    """Maps worker ids to per-release pseudonyms; call it with a worker id."""

    def __init__(self, salt: str | bytes, *, length: int = 8, prefix: str = "w-",
                 omit: bool = False):
        key = salt.encode() if isinstance(salt, str) else bytes(salt)
        if len(key) < _MIN_SALT_BYTES:
            raise ValueError(f"the salt must have at least {_MIN_SALT_BYTES} bytes")
        if not 4 <= length <= 64:
            raise ValueError("length must be between 4 and 64 hex digits")
        self._key = key
        self.length = length
        self.prefix = prefix
        self.omit = omit
        self._issued: dict[str, str] = {}  # pseudonym -> worker
        self._cache: dict[str, str] = {}  # worker -> pseudonym

    @classmethod
    def fitted(cls, salt: str | bytes, workers: Iterable[WorkerRef], *, min_length: int = 6,
               prefix: str = "w-", omit: bool = False) -> Pseudonymizer:
        """The shortest collision-free pseudonymizer (length >= ``min_length``) for the
        given workers; pass every worker whose id may appear in the release."""
        ids = {_canonical(w) for w in workers}
        probe = cls(salt, length=64, prefix=prefix, omit=omit)
        digests = [probe._digest(w) for w in ids]
        length = min_length
        while length < 64 and len({d[:length] for d in digests}) < len(digests):
            length += 1
        fitted = cls(salt, length=length, prefix=prefix, omit=omit)
        for worker in ids:
            fitted._issue(worker)
        return fitted

    def _digest(self, worker: str) -> str:
        return hmac.new(self._key, worker.encode(), hashlib.sha256).hexdigest()

    def _issue(self, worker: str) -> str:
        cached = self._cache.get(worker)
        if cached is not None:
            return cached
        pseudonym = self.prefix + self._digest(worker)[: self.length]
        owner = self._issued.setdefault(pseudonym, worker)
        if owner != worker:
            raise PseudonymCollisionError(
                f"two workers share the pseudonym {pseudonym}; use a longer length or "
                "Pseudonymizer.fitted()")
        self._cache[worker] = pseudonym
        return pseudonym

    def __call__(self, worker: WorkerRef | None) -> str | None:
        """The worker's pseudonym; None when omitting workers or when ``worker`` is None."""
        if self.omit or worker is None:
            return None
        return self._issue(_canonical(worker))

    def many(self, workers: Iterable[WorkerRef | None]) -> list[str | None]:
        return [self(w) for w in workers]

    def __repr__(self) -> str:  # never show the salt
        return (f"Pseudonymizer(length={self.length}, prefix={self.prefix!r}, "
                f"omit={self.omit})")
