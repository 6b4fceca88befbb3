"""Document filter: drop retrieved documents with trivial surface overlap with the query.

ReCO (``reco-opinion-dataset.md``, "Data Collection", Document Filtering): "prevent the
retrieved documents containing some trivial answers that perfectly match the question.
For example, if the question is 'Can pregnant women eat celery?', it would be
meaningless to give the candidate document which contains 'pregnant women can eat
celery'. We use some word-based rules to remove the documents that contain significant
surface overlap with the question."

Text is normalised (:func:`~collector.filters.text.normalize`) and cut into *units*:
words for English, letters/digits one character at a time for Chinese (punctuation and
whitespace dropped). The query is first reduced to its *core*, the statement the
question asks about (``strip_question=True``): English drops a leading auxiliary
(``can``, ``is`` ...) and ``whether``; Chinese drops final particles (吗 呢 嘛 么 吧 啊 呀),
是否, reduces 能否 / 可否 to 能 / 可 and A-not-A forms to A (能不能 -> 能, 有没有 -> 有).
So "Can pregnant women eat celery?" has the core ``pregnant women eat celery``.

Rules (each a parameter; a document is dropped when any enabled rule fires):

- ``contains`` — the whole core occurs in the document (word-aligned for English,
  character-level for Chinese). Score 1.0 or 0.0; fires on 1.0.
- ``ngram`` — the share of the core's distinct n-grams (word n-grams for English,
  character n-grams for Chinese; ``ngram_n``, default 2 words / 3 characters) found
  anywhere in the document; fires when ``share >= ngram_threshold`` (default 0.8). A
  core shorter than n uses its own length.
- ``window`` — the share of the core's distinct content units (English stop words and
  modal verbs, Chinese particles and the modals 能 / 可以 / 会 / 要 left out, since a
  statement rewords them) that occur together inside one window of
  ``ceil(window_factor * len(core))`` consecutive document units (default factor 1.5);
  fires when ``share >= window_threshold`` (default 0.9). This catches the paper's
  example, a reordered statement of the question ("pregnant women can eat celery").

Defaults were set on the real DuReader search documents in ``data/datasets/dureader``:
character bigrams anywhere in a 2,000-character page match almost any short query, so
the Chinese n-gram default is 3; a window threshold of 0.8 dropped related pages that
only share the topic ("真探和冰血暴哪部更好" for "冰血暴好看吗"), 0.9 does not.

Every verdict carries the firing rule, its reason, its score, every enabled rule's score
and the matched text (the core, the n-grams found, or the best window), so a checker can
audit a dropped document.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collector.filters.messages import FilterParamError, Message, gettext_noop
from collector.filters.text import (
    check_language,
    content_chars,
    detect_language,
    en_words,
    normalize,
    word_set,
)

DOCUMENT_RULES: tuple[str, ...] = ("contains", "ngram", "window")
"""The rules, in the order they are reported."""

DEFAULT_NGRAM_N: dict[str, int] = {"en": 2, "zh": 3}
DEFAULT_NGRAM_THRESHOLD = 0.8
DEFAULT_WINDOW_FACTOR = 1.5
DEFAULT_WINDOW_THRESHOLD = 0.9

_EN_LEADING = word_set(
    "is are was were am do does did can could will would shall should may might must "
    "has have had isn't aren't wasn't weren't don't doesn't didn't can't cannot "
    "couldn't won't wouldn't shouldn't hasn't haven't hadn't"
)
_EN_STOP = word_set(
    "a an the of to in on at by for from with and or is are was were be been am do "
    "does did can could will would shall should may might must has have had it its "
    "this that there i you we they he she my your their whether if"
)
_ZH_STOP = frozenset("的了吗呢嘛么吧啊呀是能可以会要")
_ZH_FINAL_RE = re.compile(r"[吗呢嘛么吧啊呀]+$")
_ZH_A_NOT_A_RE = re.compile(r"([\u4e00-\u9fff])[不没]\1")


@dataclass(frozen=True, slots=True)
class DocumentVerdict:
    """Keep or drop one document for one query, with everything a checker needs.

    ``rule`` is the first rule that fired (``None`` when kept); ``score`` is its score
    (when kept: the highest share among the enabled rules); ``scores`` holds every
    enabled rule's score; ``matched`` the text behind the deciding score.
    """

    kept: bool
    rule: str | None
    reason: str
    score: float
    scores: Mapping[str, float]
    matched: tuple[str, ...] = ()
    reason_text: Message | None = None  # ``reason`` as a msgid and parameters

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for storing with the document (``reason`` in English,
        ``reason_text`` the stored text its reader sees in their language)."""
        return {
            "kept": self.kept,
            "rule": self.rule,
            "reason": self.reason,
            "reason_text": self.reason_text.as_json() if self.reason_text else None,
            "score": self.score,
            "scores": dict(self.scores),
            "matched": list(self.matched),
        }


@dataclass(frozen=True, slots=True)
class PreparedQuery:
    """A query cut into units once, reused across its retrieved documents."""

    text: str
    language: str
    core: tuple[str, ...]
    ngrams: tuple[str, ...]
    content: frozenset[str]
    window: int

    @property
    def joiner(self) -> str:
        """How units join back into text: a space for English, nothing for Chinese."""
        return " " if self.language == "en" else ""

    @property
    def core_text(self) -> str:
        """The core as text."""
        return self.joiner.join(self.core)


def _units(text: str, language: str) -> list[str]:
    norm = normalize(text)
    return en_words(norm) if language == "en" else list(content_chars(norm))


def query_core(text: str, language: str, *, strip_question: bool = True) -> tuple[str, ...]:
    """The query's units with its question markers removed (see the module docstring)."""
    check_language(language)
    if language == "en":
        words = en_words(normalize(text))
        if strip_question:
            core = [w for w in words if w != "whether"]
            if core and core[0] in _EN_LEADING:
                core = core[1:]
            words = core or words
        return tuple(words)
    chars = content_chars(normalize(text))
    if strip_question:
        core = _ZH_FINAL_RE.sub("", chars)
        core = core.replace("是否", "").replace("能否", "能").replace("可否", "可")
        core = _ZH_A_NOT_A_RE.sub(r"\1", core)
        chars = core or chars
    return tuple(chars)


def _window_coverage(content: frozenset[str], doc: Sequence[str], size: int) -> tuple[int, int]:
    """Most distinct ``content`` units inside any ``size``-unit window: (count, start)."""
    hits = [(i, u) for i, u in enumerate(doc) if u in content]
    counts: dict[str, int] = {}
    distinct = best = 0
    best_start = -1
    left = 0
    for pos, unit in hits:
        c = counts.get(unit, 0)
        counts[unit] = c + 1
        if c == 0:
            distinct += 1
        while pos - hits[left][0] >= size:
            lu = hits[left][1]
            counts[lu] -= 1
            if counts[lu] == 0:
                distinct -= 1
            left += 1
        if distinct > best:
            best, best_start = distinct, hits[left][0]
    return best, best_start


class DocumentFilter:
    """Surface-overlap document filter, built once from parameters (see module docs)."""

    def __init__(
        self,
        *,
        language: str = "auto",
        rules: Sequence[str] = DOCUMENT_RULES,
        ngram_n: int | Mapping[str, int] | None = None,
        ngram_threshold: float = DEFAULT_NGRAM_THRESHOLD,
        window_factor: float = DEFAULT_WINDOW_FACTOR,
        window_threshold: float = DEFAULT_WINDOW_THRESHOLD,
        strip_question: bool = True,
    ) -> None:
        self.language = check_language(language, allow_auto=True)
        rules = tuple(rules)
        if (
            not rules
            or any(r not in DOCUMENT_RULES for r in rules)
            or len(set(rules)) != len(rules)
        ):
            raise FilterParamError(gettext_noop("rules must be distinct names from %(known)s; "
                                                "got %(value)s"),
                                   known=str(DOCUMENT_RULES), value=repr(rules))
        self.rules = tuple(r for r in DOCUMENT_RULES if r in rules)
        if ngram_n is None:
            ngram_n = DEFAULT_NGRAM_N
        sizes = (
            dict.fromkeys(DEFAULT_NGRAM_N, ngram_n)
            if isinstance(ngram_n, int)
            else {
                **DEFAULT_NGRAM_N,
                **ngram_n,
            }
        )
        for lang, size in sizes.items():
            check_language(lang)
            if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 6:
                raise FilterParamError(gettext_noop("ngram_n[%(language)s] must be an integer "
                                                    "from 1 to 6; got %(value)s"),
                                       language=repr(lang), value=repr(size))
        for name, value in (
            ("ngram_threshold", ngram_threshold),
            ("window_threshold", window_threshold),
        ):
            if not 0.0 < float(value) <= 1.0:
                raise FilterParamError(gettext_noop("%(name)s must be in (0, 1]; got "
                                                    "%(value)s"), name=name, value=repr(value))
        if not float(window_factor) >= 1.0:
            raise FilterParamError(gettext_noop("window_factor must be >= 1; got %(value)s"),
                                   value=repr(window_factor))
        self.ngram_n: dict[str, int] = sizes
        self.ngram_threshold = float(ngram_threshold)
        self.window_factor = float(window_factor)
        self.window_threshold = float(window_threshold)
        self.strip_question = bool(strip_question)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DocumentFilter:
        """Build from JSON stage parameters (keys of :meth:`params`; unknown keys refused)."""
        known = set(cls().params())
        unknown = set(params) - known
        if unknown:
            raise FilterParamError(gettext_noop("unknown document filter parameters: "
                                                "%(unknown)s"), unknown=str(sorted(unknown)))
        kwargs = dict(params)
        if "rules" in kwargs:
            kwargs["rules"] = tuple(kwargs["rules"])
        return cls(**kwargs)

    def params(self) -> dict[str, Any]:
        """The full, JSON-ready parameters, to record with a run."""
        return {
            "language": self.language,
            "rules": list(self.rules),
            "ngram_n": dict(self.ngram_n),
            "ngram_threshold": self.ngram_threshold,
            "window_factor": self.window_factor,
            "window_threshold": self.window_threshold,
            "strip_question": self.strip_question,
        }

    def prepare(self, query: str) -> PreparedQuery:
        """Cut ``query`` once; pass the result to :meth:`check` for each of its documents."""
        lang = detect_language(normalize(query)) if self.language == "auto" else self.language
        core = query_core(query, lang, strip_question=self.strip_question)
        joiner = " " if lang == "en" else ""
        n = min(self.ngram_n[lang], len(core)) or 1
        ngrams = tuple(
            dict.fromkeys(joiner.join(core[i : i + n]) for i in range(len(core) - n + 1))
        )
        stop = _EN_STOP if lang == "en" else _ZH_STOP
        content = frozenset(u for u in core if u not in stop) or frozenset(core)
        window = max(len(core), math.ceil(self.window_factor * len(core)))
        return PreparedQuery(query, lang, core, ngrams, content, window)

    def check(self, query: str | PreparedQuery, document: str) -> DocumentVerdict:
        """Keep or drop ``document`` for ``query`` (a string or a :class:`PreparedQuery`)."""
        q = query if isinstance(query, PreparedQuery) else self.prepare(query)
        if not q.core:
            return DocumentVerdict(True, None, "kept: empty query", 0.0, {})
        doc = _units(document, q.language)
        if q.language == "en":
            haystack = f" {' '.join(doc)} "

            def found(needle: str) -> bool:
                return f" {needle} " in haystack

        else:
            haystack = "".join(doc)

            def found(needle: str) -> bool:
                return needle in haystack

        scores: dict[str, float] = {}
        matched: dict[str, tuple[str, ...]] = {}
        fired: list[str] = []
        if "contains" in self.rules:
            core_text = q.core_text
            hit = found(core_text)
            scores["contains"] = 1.0 if hit else 0.0
            matched["contains"] = (core_text,) if hit else ()
            if hit:
                fired.append("contains")
        if "ngram" in self.rules:
            got = tuple(g for g in q.ngrams if found(g))
            share = len(got) / len(q.ngrams) if q.ngrams else 0.0
            scores["ngram"] = share
            matched["ngram"] = got
            if share >= self.ngram_threshold:
                fired.append("ngram")
        if "window" in self.rules:
            count, start = _window_coverage(q.content, doc, q.window)
            share = count / len(q.content)
            scores["window"] = share
            matched["window"] = (q.joiner.join(doc[start : start + q.window]),) if count else ()
            if share >= self.window_threshold:
                fired.append("window")

        if fired:
            rule = fired[0]
            reason = self._reason(rule, q, scores)
            return DocumentVerdict(
                False, rule, str(reason), scores[rule], scores, matched[rule], reason
            )
        best = max(scores, key=lambda r: scores[r])
        summary: Message | None = None
        for r in self.rules:
            each = self._summary(r, scores[r], q.language)
            summary = each if summary is None else Message(gettext_noop("%(list)s, %(item)s"),
                                                           list=summary, item=each)
        kept = Message(gettext_noop("kept: %(summary)s"), summary=summary)
        return DocumentVerdict(True, None, str(kept), scores[best], scores, matched[best], kept)

    def check_many(
        self, query: str | PreparedQuery, documents: Iterable[str]
    ) -> list[DocumentVerdict]:
        """Verdicts for all retrieved ``documents`` of one query (the query is cut once)."""
        q = query if isinstance(query, PreparedQuery) else self.prepare(query)
        return [self.check(q, d) for d in documents]

    def _summary(self, rule: str, score: float, language: str) -> Message:
        if rule == "contains":
            return Message(gettext_noop("query core not in document") if score < 1.0
                           else gettext_noop("query core in document"))
        threshold = self.ngram_threshold if rule == "ngram" else self.window_threshold
        figures = {"score": f"{score:.2f}", "op": ">=" if score >= threshold else "<",
                   "threshold": f"{threshold:.2f}"}
        if rule == "ngram":
            return Message(gettext_noop("%(n)s-gram share %(score)s %(op)s %(threshold)s"),
                           n=self.ngram_n[language], **figures)
        return Message(gettext_noop("window share %(score)s %(op)s %(threshold)s"), **figures)

    def _reason(self, rule: str, q: PreparedQuery, scores: Mapping[str, float]) -> Message:
        if rule == "contains":
            return Message(gettext_noop("dropped: the whole query '%(query)s' occurs in the "
                                        "document"), query=q.core_text)
        if rule == "ngram":
            return Message(gettext_noop("dropped: %(share)s of the query's %(count)s n-grams "
                                        "occur in the document"),
                           share=self._summary("ngram", scores["ngram"], q.language),
                           count=len(q.ngrams))
        return Message(gettext_noop("dropped: %(share)s of the query's content units occur "
                                    "within %(window)s consecutive document units"),
                       share=self._summary("window", scores["window"], q.language),
                       window=q.window)
