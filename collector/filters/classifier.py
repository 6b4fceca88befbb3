"""Optional trained intent classifier: is a query a question at all?

The ReCO paper (``reco-opinion-dataset.md``, "Data Collection", Intent Analysis) runs "the
off-the-shelf intent analysis system to determine whether the query is a valid
question". CrowdQA's default is the rule set in :mod:`collector.filters.query`; when an
admin uploads labelled queries, this small model can be trained from them and used
instead of the rules or together with them (``QueryFilter(intent_mode=...)``).

Model: L2-regularised logistic regression over binary n-gram indicator features of the
normalised query — word uni/bigrams with sentence-boundary tokens for English, character
1-3-grams with boundary marks for Chinese, plus a ``?`` feature. Training minimises the
(class-balanced by default) mean log-loss + ``l2 / 2 * ||w||^2`` with L-BFGS over a
sparse design matrix (numpy + scipy, both already project dependencies). The model is a
plain ``{feature: weight}`` map and a bias, saved and loaded as JSON; prediction is pure
Python (a few dict look-ups per query) and the same after a save/load round trip.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from collector.filters.text import check_language, en_words, normalize

FORMAT = "crowdqa.filters.intent-logreg"
FORMAT_VERSION = 1

DEFAULT_NGRAMS: dict[str, dict[str, tuple[int, int] | None]] = {
    "en": {"word_ngrams": (1, 2), "char_ngrams": None},
    "zh": {"word_ngrams": None, "char_ngrams": (1, 3)},
}

_TRUE_LABELS = frozenset({"1", "true", "yes", "y", "question", "q", "pos", "positive", "accept"})
_FALSE_LABELS = frozenset(
    {"0", "false", "no", "n", "not_question", "non_question", "neg", "negative", "reject"}
)


def parse_label(value: Any) -> bool:
    """A binary label from an uploaded file: bools, 0/1, or words such as yes/no.

    Accepted true values: ``True``, ``1``, ``"1"``, ``"true"``, ``"yes"``, ``"y"``,
    ``"question"``, ``"q"``, ``"pos"``, ``"positive"``, ``"accept"``; false values their
    opposites (``"not_question"``, ``"reject"`` ...). Anything else raises ``ValueError``.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        if key in _TRUE_LABELS:
            return True
        if key in _FALSE_LABELS:
            return False
    raise ValueError(f"unrecognised label {value!r} (use true/false, 1/0 or yes/no)")


def _check_range(name: str, value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    lo, hi = (int(v) for v in value)
    if not 1 <= lo <= hi <= 5:
        raise ValueError(f"{name} must be (lo, hi) with 1 <= lo <= hi <= 5; got {value!r}")
    return lo, hi


def extract_features(
    text: str,
    *,
    word_ngrams: tuple[int, int] | None,
    char_ngrams: tuple[int, int] | None,
) -> set[str]:
    """The binary features of one query (``text`` is normalised here).

    ``w:`` word n-grams over ``<s> words </s>``, ``c:`` character n-grams over
    ``^text$``, and ``p:?`` when the query holds a question mark.
    """
    norm = normalize(text)
    feats: set[str] = set()
    if word_ngrams is not None:
        toks = ["<s>", *en_words(norm), "</s>"]
        lo, hi = word_ngrams
        for n in range(lo, hi + 1):
            for i in range(len(toks) - n + 1):
                feats.add("w:" + " ".join(toks[i : i + n]))
    if char_ngrams is not None:
        chars = f"^{norm}$"
        lo, hi = char_ngrams
        for n in range(lo, hi + 1):
            for i in range(len(chars) - n + 1):
                feats.add("c:" + chars[i : i + n])
    if "?" in norm:
        feats.add("p:?")
    return feats


class IntentClassifier:
    """Logistic regression over n-gram indicators: ``P(query is a question)``."""

    def __init__(
        self,
        *,
        language: str,
        weights: Mapping[str, float],
        bias: float,
        threshold: float = 0.5,
        word_ngrams: tuple[int, int] | None = None,
        char_ngrams: tuple[int, int] | None = None,
        trained: Mapping[str, Any] | None = None,
    ) -> None:
        self.language = check_language(language)
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be in (0, 1); got {threshold!r}")
        self.weights = dict(weights)
        self.bias = float(bias)
        self.threshold = float(threshold)
        self.word_ngrams = _check_range("word_ngrams", word_ngrams)
        self.char_ngrams = _check_range("char_ngrams", char_ngrams)
        if self.word_ngrams is None and self.char_ngrams is None:
            raise ValueError("at least one of word_ngrams and char_ngrams is needed")
        self.trained = dict(trained or {})

    def __repr__(self) -> str:
        return (
            f"IntentClassifier({self.language!r}, {len(self.weights)} features, "
            f"threshold={self.threshold})"
        )

    # ------------------------------------------------------------------ training
    @classmethod
    def train(
        cls,
        samples: Iterable[tuple[str, Any]],
        *,
        language: str,
        l2: float = 1e-3,
        threshold: float = 0.5,
        balanced: bool = True,
        min_count: int = 1,
        max_iter: int = 500,
        word_ngrams: tuple[int, int] | None | str = "default",
        char_ngrams: tuple[int, int] | None | str = "default",
    ) -> IntentClassifier:
        """Fit on labelled queries ``(text, label)`` (labels via :func:`parse_label`).

        Needs both classes. ``balanced`` weights each class by ``n / (2 * n_class)``;
        features seen in fewer than ``min_count`` queries are dropped. Deterministic.
        """
        import numpy as np
        from scipy.optimize import minimize
        from scipy.sparse import csr_matrix
        from scipy.special import expit

        check_language(language)
        defaults = DEFAULT_NGRAMS[language]
        wng = defaults["word_ngrams"] if word_ngrams == "default" else word_ngrams
        cng = defaults["char_ngrams"] if char_ngrams == "default" else char_ngrams
        wng, cng = _check_range("word_ngrams", wng), _check_range("char_ngrams", cng)
        if l2 < 0:
            raise ValueError(f"l2 must be >= 0; got {l2!r}")

        rows: list[set[str]] = []
        labels: list[bool] = []
        for text, label in samples:
            rows.append(extract_features(text, word_ngrams=wng, char_ngrams=cng))
            labels.append(parse_label(label))
        n_pos = sum(labels)
        n_neg = len(labels) - n_pos
        if n_pos == 0 or n_neg == 0:
            raise ValueError(
                f"training needs both classes; got {n_pos} questions, {n_neg} non-questions"
            )

        counts: dict[str, int] = {}
        for feats in rows:
            for f in feats:
                counts[f] = counts.get(f, 0) + 1
        vocab = sorted(f for f, c in counts.items() if c >= min_count)
        index = {f: i for i, f in enumerate(vocab)}
        indptr = [0]
        indices: list[int] = []
        for feats in rows:
            indices.extend(sorted(index[f] for f in feats if f in index))
            indptr.append(len(indices))
        x = csr_matrix(
            (np.ones(len(indices)), np.array(indices, dtype=np.int64), np.array(indptr)),
            shape=(len(rows), len(vocab)),
        )
        y = np.array(labels, dtype=float)
        n = len(labels)
        sw = np.where(y > 0, n / (2.0 * n_pos), n / (2.0 * n_neg)) if balanced else np.ones(n)
        sw = sw / sw.sum()

        def objective(theta: Any) -> tuple[float, Any]:
            w, b = theta[:-1], theta[-1]
            z = x @ w + b
            loss = float(sw @ (np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * (w @ w))
            g = sw * (expit(z) - y)
            grad = np.empty_like(theta)
            grad[:-1] = x.T @ g + l2 * w
            grad[-1] = g.sum()
            return loss, grad

        result = minimize(
            objective,
            np.zeros(len(vocab) + 1),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter},
        )
        theta = result.x
        weights = {f: float(theta[i]) for i, f in enumerate(vocab) if abs(theta[i]) > 1e-9}
        return cls(
            language=language,
            weights=weights,
            bias=float(theta[-1]),
            threshold=threshold,
            word_ngrams=wng,
            char_ngrams=cng,
            trained={
                "samples": n,
                "questions": n_pos,
                "non_questions": n_neg,
                "l2": l2,
                "balanced": balanced,
                "min_count": min_count,
                "iterations": int(result.nit),
                "converged": bool(result.success),
                "final_loss": float(result.fun),
            },
        )

    # ------------------------------------------------------------------ prediction
    def features(self, text: str) -> set[str]:
        """The features of ``text`` under this model's n-gram settings."""
        return extract_features(text, word_ngrams=self.word_ngrams, char_ngrams=self.char_ngrams)

    def decision(self, text: str) -> float:
        """The linear score (log-odds) of ``text`` being a question."""
        get = self.weights.get
        return self.bias + sum(get(f, 0.0) for f in self.features(text))

    def probability(self, text: str) -> float:
        """``P(question | text)`` under the model."""
        z = self.decision(text)
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def predict(self, text: str) -> bool:
        """``probability(text) >= threshold``."""
        return self.probability(text) >= self.threshold

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description (round-trips exactly through :meth:`from_dict`)."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "language": self.language,
            "threshold": self.threshold,
            "word_ngrams": list(self.word_ngrams) if self.word_ngrams else None,
            "char_ngrams": list(self.char_ngrams) if self.char_ngrams else None,
            "bias": self.bias,
            "weights": dict(sorted(self.weights.items())),
            "trained": self.trained,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntentClassifier:
        """Rebuild a model from :meth:`to_dict` output; a wrong format raises ``ValueError``."""
        if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"not a {FORMAT} v{FORMAT_VERSION} model "
                f"(format={data.get('format')!r}, version={data.get('version')!r})"
            )
        return cls(
            language=data["language"],
            weights={str(k): float(v) for k, v in data["weights"].items()},
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            word_ngrams=data.get("word_ngrams"),
            char_ngrams=data.get("char_ngrams"),
            trained=data.get("trained") or {},
        )

    def save(self, path: str | Path) -> None:
        """Write the model as UTF-8 JSON."""
        Path(path).write_text(
            json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )

    @classmethod
    def load(cls, path: str | Path) -> IntentClassifier:
        """Read a model written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
