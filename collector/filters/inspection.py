"""Batch quality inspection arithmetic (ReCO checkers).

ReCO (``reco-opinion-dataset.md``, "Data Collection", Quality Inspection): "For each
batch, we randomly sample a fraction of instances and send it to the expert checker.
[...] If the accuracy of a batch is higher than 0.95, it is passed and accepted to the
final set. Otherwise, this batch is rejected and pushed back to the [...] annotator and
relabeled again." The four rules:

- strict (the instance "is absolute false", 1.0 error): the answer is incorrect
  (:attr:`Violation.ANSWER_INCORRECT`); the question is blurred or cannot be answered by
  yes / no / uncertain (:attr:`Violation.QUESTION_INVALID`);
- loose ("only half wrong and only account 0.5 in the final error summation"): the
  evidence has much irrelevant information (:attr:`Violation.EVIDENCE_IRRELEVANT`); the
  question is too easy given the evidence (:attr:`Violation.QUESTION_TOO_EASY`).

Several violations on one item (the paper leaves this open): each distinct rule counts
once, their weights add up, and an item counts **at most 1.0** — a sampled item is at
worst entirely wrong. So strict + anything = 1.0, two loose = 1.0, one loose = 0.5.

``accuracy = 1 - errors / sampled``. A batch passes only when ``accuracy > threshold``
(default 0.95): exactly 0.95 fails. The comparison is exact: weights and threshold are
taken as decimals (``Fraction(str(x))``), so 1 error in 20 items is exactly 0.95, not a
binary float a hair above or below it.

Sampling (:func:`sample_batch`) is seeded and reproducible: the same item ids (in any
order), fraction and seed give the same sample. ``ceil(fraction * size)`` items, at
least ``minimum`` (default 1), never more than the batch. A batch returned for
relabelling is sampled afresh each round: :func:`round_seed` derives a per-round seed
from the batch's base seed.
"""

from __future__ import annotations

import hashlib
import math
import random
import secrets
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

DEFAULT_THRESHOLD = 0.95
DEFAULT_STRICT_WEIGHT = 1.0
DEFAULT_LOOSE_WEIGHT = 0.5
ITEM_ERROR_CAP = 1.0


class Violation(StrEnum):
    """The checker's four rules (values are stable identifiers for storage)."""

    ANSWER_INCORRECT = "answer_incorrect"
    QUESTION_INVALID = "question_invalid"
    EVIDENCE_IRRELEVANT = "evidence_irrelevant"
    QUESTION_TOO_EASY = "question_too_easy"

    @property
    def strict(self) -> bool:
        """True for the two strict rules (1.0 error), False for the loose ones (0.5)."""
        return self in STRICT_VIOLATIONS

    @property
    def label(self) -> str:
        """A short human description."""
        return _LABELS[self]


STRICT_VIOLATIONS = frozenset({Violation.ANSWER_INCORRECT, Violation.QUESTION_INVALID})
LOOSE_VIOLATIONS = frozenset({Violation.EVIDENCE_IRRELEVANT, Violation.QUESTION_TOO_EASY})
_LABELS = {
    Violation.ANSWER_INCORRECT: "the answer is incorrect",
    Violation.QUESTION_INVALID: "the question is blurred or not answerable by yes/no/uncertain",
    Violation.EVIDENCE_IRRELEVANT: "the evidence has much irrelevant information",
    Violation.QUESTION_TOO_EASY: "the question is too easy given the evidence",
}


def _fraction(name: str, value: float | int | str | Fraction) -> Fraction:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number; got {value!r}")
    try:
        return value if isinstance(value, Fraction) else Fraction(str(value))
    except (ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"{name} must be a number; got {value!r}") from exc


def _sort_key(item_id: Hashable) -> tuple[int, Any]:
    if isinstance(item_id, bool) or not isinstance(item_id, int | str):
        raise TypeError(f"item ids must be int or str; got {item_id!r}")
    return (0, item_id) if isinstance(item_id, int) else (1, item_id)


# ====================================================================== sampling
@dataclass(frozen=True)
class InspectionSample:
    """Which items of a batch a checker inspects, and how they were chosen."""

    item_ids: tuple[Hashable, ...]
    batch_size: int
    fraction: float
    seed: int
    minimum: int

    def __len__(self) -> int:
        return len(self.item_ids)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record of the sample (ids, size, fraction, seed, minimum)."""
        return {
            "item_ids": list(self.item_ids),
            "batch_size": self.batch_size,
            "fraction": self.fraction,
            "seed": self.seed,
            "minimum": self.minimum,
        }


def sample_size(batch_size: int, fraction: float, *, minimum: int = 1) -> int:
    """``ceil(fraction * batch_size)``, at least ``minimum``, at most ``batch_size``."""
    if batch_size < 0:
        raise ValueError(f"batch_size must be >= 0; got {batch_size}")
    exact = _fraction("fraction", fraction)
    if not 0 < exact <= 1:
        raise ValueError(f"fraction must be in (0, 1]; got {fraction!r}")
    if minimum < 1:
        raise ValueError(f"minimum must be >= 1; got {minimum}")
    return min(batch_size, max(minimum, math.ceil(exact * batch_size)))


def sample_batch(
    item_ids: Iterable[Hashable],
    *,
    fraction: float,
    seed: int | None = None,
    minimum: int = 1,
) -> InspectionSample:
    """A seeded random sample of a batch's item ids for inspection.

    Ids (int or str, unique) are sorted first, so the input order does not matter; the
    returned ids are in that sorted order. ``seed=None`` draws a fresh seed (recorded in
    the result, so the sample can be reproduced). An empty batch raises ``ValueError``.
    """
    ids = sorted(item_ids, key=_sort_key)
    if not ids:
        raise ValueError("cannot sample an empty batch")
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")
    k = sample_size(len(ids), fraction, minimum=minimum)
    if seed is None:
        seed = secrets.randbits(63)
    # Deterministic for a given seed: random.Random(int) seeds the Mersenne Twister from
    # the integer itself, independent of PYTHONHASHSEED and of the platform.
    chosen = sorted(random.Random(seed).sample(range(len(ids)), k))  # noqa: S311 - not crypto
    return InspectionSample(tuple(ids[i] for i in chosen), len(ids), float(fraction), seed, minimum)


def round_seed(base_seed: int, round_number: int) -> int:
    """The sampling seed of inspection round ``round_number`` (1, 2, ...) of a batch.

    Round 1 uses ``base_seed`` itself; later rounds a SHA-256 derivation of both, so a
    relabelled batch gets a fresh, still reproducible, sample.
    """
    if round_number < 1:
        raise ValueError(f"round_number must be >= 1; got {round_number}")
    if round_number == 1:
        return base_seed
    digest = hashlib.sha256(f"crowdqa-inspection:{base_seed}:{round_number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# ====================================================================== scoring
def parse_violations(values: Iterable[Violation | str]) -> frozenset[Violation]:
    """Distinct :class:`Violation` values from enum members or their string values."""
    out = set()
    for value in values:
        try:
            out.add(Violation(value))
        except ValueError:
            choices = ", ".join(v.value for v in Violation)
            raise ValueError(f"unknown violation {value!r}; use one of {choices}") from None
    return frozenset(out)


def item_error(
    violations: Iterable[Violation | str],
    *,
    strict_weight: float = DEFAULT_STRICT_WEIGHT,
    loose_weight: float = DEFAULT_LOOSE_WEIGHT,
) -> Fraction:
    """The error one sampled item counts: distinct rules' weights added, capped at 1.0."""
    strict = _fraction("strict_weight", strict_weight)
    loose = _fraction("loose_weight", loose_weight)
    total = sum((strict if v.strict else loose for v in parse_violations(violations)), Fraction(0))
    return min(total, Fraction(ITEM_ERROR_CAP))


@dataclass(frozen=True)
class InspectionResult:
    """The arithmetic of one inspection round of one batch.

    ``errors`` and ``accuracy`` are floats for display; ``errors_exact`` and
    ``accuracy_exact`` are the exact fractions the decision used.
    """

    sampled: int
    errors: float
    accuracy: float
    threshold: float
    passed: bool
    errors_exact: Fraction
    accuracy_exact: Fraction
    item_errors: Mapping[Hashable, float]
    violation_counts: Mapping[str, int]
    strict_items: int
    loose_only_items: int

    @property
    def reason(self) -> str:
        """One line for the batch history."""
        op = ">" if self.passed else "<="
        verdict = "passed" if self.passed else "failed: back to the annotator"
        return (
            f"accuracy {self.accuracy:.4f} {op} {self.threshold} "
            f"({self.errors:g} errors in {self.sampled} sampled items): {verdict}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record of the round."""
        return {
            "sampled": self.sampled,
            "errors": self.errors,
            "accuracy": self.accuracy,
            "threshold": self.threshold,
            "passed": self.passed,
            "item_errors": {str(k): v for k, v in self.item_errors.items()},
            "violation_counts": dict(self.violation_counts),
            "strict_items": self.strict_items,
            "loose_only_items": self.loose_only_items,
            "reason": self.reason,
        }


def inspect_batch(
    sampled_ids: Sequence[Hashable] | InspectionSample,
    marks: Mapping[Hashable, Iterable[Violation | str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    strict_weight: float = DEFAULT_STRICT_WEIGHT,
    loose_weight: float = DEFAULT_LOOSE_WEIGHT,
) -> InspectionResult:
    """Score a checked sample: ``marks`` maps item id -> violations (absent = clean).

    Marks on items outside the sample raise ``ValueError`` (a checker only judges what
    was sampled). ``accuracy = 1 - errors / sampled``; ``passed = accuracy > threshold``.
    """
    ids = tuple(sampled_ids.item_ids if isinstance(sampled_ids, InspectionSample) else sampled_ids)
    if not ids:
        raise ValueError("an inspection needs at least one sampled item")
    if len(set(ids)) != len(ids):
        raise ValueError("sampled item ids must be unique")
    members = set(ids)
    outside = [k for k in marks if k not in members]
    if outside:
        raise ValueError(f"marks for items that were not sampled: {outside[:5]}")
    limit = _fraction("threshold", threshold)
    if not 0 <= limit <= 1:
        raise ValueError(f"threshold must be in [0, 1]; got {threshold!r}")

    errors = Fraction(0)
    per_item: dict[Hashable, float] = {}
    counts = {v.value: 0 for v in Violation}
    strict_items = loose_only = 0
    for item in ids:
        found = parse_violations(marks.get(item, ()))
        err = item_error(found, strict_weight=strict_weight, loose_weight=loose_weight)
        errors += err
        per_item[item] = float(err)
        for v in found:
            counts[v.value] += 1
        if any(v.strict for v in found):
            strict_items += 1
        elif found:
            loose_only += 1
    accuracy = 1 - errors / len(ids)
    return InspectionResult(
        sampled=len(ids),
        errors=float(errors),
        accuracy=float(accuracy),
        threshold=float(threshold),
        passed=accuracy > limit,
        errors_exact=errors,
        accuracy_exact=accuracy,
        item_errors=per_item,
        violation_counts=counts,
        strict_items=strict_items,
        loose_only_items=loose_only,
    )
