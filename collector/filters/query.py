"""The ReCO query filter: intent, inappropriate content, yes/no features.

ReCO (``reco-opinion-dataset.md``, "Data Collection", Question Curation) keeps a raw
search query only when

1. **intent** — "the off-the-shelf intent analysis system" says it is a valid question
   (here: rules per language, :class:`IntentRules`, and optionally a classifier trained
   from admin-labelled queries, :class:`~collector.filters.classifier.IntentClassifier`);
2. **blocklist** — it does not "contain sex, violence and other inappropriate content"
   (a shipped, editable token-matched list per language,
   :class:`~collector.filters.blocklist.Blocklist`);
3. **yes/no** — "a simple symbolic feature based machine learning system" says it can be
   answered by yes or no, with features "whether it contains 'Could I', 'whether', 'Is
   there any', etc." (:class:`YesNoClassifier`: a weighted sum of regular-expression
   features against a threshold, both parameters).

:class:`QueryFilter` chains the steps in the paper's order. Each step returns a
:class:`StepVerdict` (passed, reason, matched term or features, score); the query's
:class:`QueryVerdict` names the step that rejected it. By default a rejected query is not
run through the later steps (the paper's funnel); ``all_steps=True`` records all three.
:func:`evaluate_filter` measures precision / recall / F1 against an admin's labels.

All text is normalised first (:func:`~collector.filters.text.normalize`); patterns and
terms are written in lower case.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from collector.filters.blocklist import Blocklist
from collector.filters.classifier import IntentClassifier, parse_label
from collector.filters.messages import FilterParamError, Message, gettext_noop, short_repr
from collector.filters.text import (
    LANGUAGES,
    check_language,
    detect_language,
    en_words,
    normalize,
    word_set,
)

STEPS: tuple[str, ...] = ("intent", "blocklist", "yesno")
"""The three steps, in the paper's order."""

INTENT_MODES: tuple[str, ...] = ("rules", "model", "rules_or_model", "rules_and_model")
"""How the intent step decides: rules only, the trained model only, either, or both."""

DEFAULT_YESNO_THRESHOLD = 0.5


# ====================================================================== verdicts
@dataclass(frozen=True, slots=True)
class StepVerdict:
    """The outcome of one filter step for one query."""

    step: str
    passed: bool
    reason: str
    matched: tuple[str, ...] = ()
    score: float | None = None
    reason_text: Message | None = None  # ``reason`` as a msgid and parameters

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for storing with the item (``reason`` in English,
        ``reason_text`` the stored text its reader sees in their language)."""
        return {
            "step": self.step,
            "passed": self.passed,
            "reason": self.reason,
            "reason_text": self.reason_text.as_json() if self.reason_text else None,
            "matched": list(self.matched),
            "score": self.score,
        }


def _verdict(step: str, passed: bool, reason: Message, matched: Sequence[str] = (),
             score: float | None = None) -> StepVerdict:
    return StepVerdict(step, passed, str(reason), tuple(matched), score, reason)


@dataclass(frozen=True, slots=True)
class QueryVerdict:
    """The filter's decision for one query.

    ``failed_step`` is ``None`` when accepted; ``reason`` and ``matched`` are those of the
    rejecting step (or of the last step when accepted); ``score`` is the yes/no score
    when that step ran; ``steps`` lists every step that ran, in order.
    """

    text: str
    language: str
    accepted: bool
    failed_step: str | None
    reason: str
    matched: tuple[str, ...]
    score: float | None
    steps: tuple[StepVerdict, ...] = field(default=())
    reason_text: Message | None = None

    def step(self, name: str) -> StepVerdict | None:
        """The verdict of step ``name``, or ``None`` when it did not run."""
        return next((s for s in self.steps if s.step == name), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, for storing with the item."""
        return {
            "text": self.text,
            "language": self.language,
            "accepted": self.accepted,
            "failed_step": self.failed_step,
            "reason": self.reason,
            "reason_text": self.reason_text.as_json() if self.reason_text else None,
            "matched": list(self.matched),
            "score": self.score,
            "steps": [s.to_dict() for s in self.steps],
        }


# ====================================================================== step 1: intent
_EN_WH = word_set(
    "who whom whose what when where which why how what's who's where's when's how's "
    "why's whats whos wheres hows"
)
_EN_WH_BARE = word_set("who whom whose what when where which why how")
_EN_AUX = word_set(
    "is are was were am do does did can could will would shall should may might must "
    "has have had isn't aren't wasn't weren't don't doesn't didn't can't cannot "
    "couldn't won't wouldn't shouldn't hasn't haven't hadn't mustn't"
)
_EN_PREP = word_set("in on at by for from to of with about under during since")
_EN_HOW_QUANTITY = word_set("many much long old far often tall big large high deep fast heavy")
_EN_IMPERATIVE_RE = re.compile(
    r"^(?:describe|explain|define|compare|identify|tell me|"
    r"give (?:me |an? )?examples?|name (?:the|a|an|all|one|two|three|four|five|\d+)|"
    r"list (?:the|all|\d+))\b"
)

_ZH_CLAUSE_END = r"(?=$|[\s?!。,.~、;；:：…])"
_ZH_INTENT_RE = re.compile(
    r"(?P<question_mark>\?)"
    rf"|(?P<final_particle>(?:[吗呢嘛]|(?<![什怎这那多要])么){_ZH_CLAUSE_END})"
    r"|(?P<question_word>为什么|为何|为啥|什么|怎么|怎样|如何|哪(?!怕)|谁|几(?![乎率])"
    r"|多少|多久|多长|多大|多高|多远|多重|啥|咋)"
    r"|(?P<yes_no_form>是否|能否|可否|有无|(?P<a>[\u4e00-\u9fff])[不没](?P=a))"
    r"|(?P<alternative>还是)"
)
_ZH_INTENT_NAMES = {
    "question_mark": gettext_noop("question mark"),
    "final_particle": gettext_noop("final question particle"),
    "question_word": gettext_noop("question word"),
    "yes_no_form": gettext_noop("yes/no form"),
    "alternative": gettext_noop("alternative question"),
}


class IntentRules:
    """Rule-based intent analysis: is the query a question at all?

    English (queries are often lower-cased with no ``?``, as in Natural Questions): a
    question mark; a question word first (``who``, ``what's`` ...); auxiliary-verb
    inversion (``is``, ``does``, ``can`` ... first, with more words after it); a
    preposition then a question word (``in which ...``); an imperative request
    (``describe``, ``explain``, ``name the`` ...); ``whether`` anywhere; a question word
    followed by an auxiliary anywhere (``under article 1 what is ...``); ``how`` + a
    quantity word anywhere (``how many``); a question word at the end (``... is about
    who``). A question word inside a statement (a relative ``who died``) is not enough.

    Chinese: a question mark; a clause-final particle 吗 / 呢 / 嘛 / 么 (not 什么, 怎么 ...);
    a question word (什么, 怎么, 如何, 为什么, 哪, 谁, 几, 多少, 多久 ...); a yes/no form
    (是否, 能否, 可否, 有无, and A-not-A: 能不能, 有没有, 会不会, 可不可以, 吉不吉利 ...);
    the alternative-question 还是.
    """

    def __init__(self, language: str) -> None:
        self.language = check_language(language)

    def find(self, text: str, words: Sequence[str] | None = None) -> tuple[str, str] | None:
        """``(rule, matched text)`` of the first rule that fires on normalised ``text``."""
        if self.language == "zh":
            m = _ZH_INTENT_RE.search(text)
            if m is None:
                return None
            return _ZH_INTENT_NAMES[m.lastgroup or ""], m.group(0)
        return _en_intent(text, en_words(text) if words is None else words)

    def check(self, text: str, words: Sequence[str] | None = None) -> StepVerdict:
        """The intent verdict for normalised ``text`` (``words``: its English tokens)."""
        hit = self.find(text, words)
        if hit is None:
            return _verdict("intent", False, Message(_NO_INTENT[self.language]))
        rule, matched = hit
        return _verdict("intent", True, Message(gettext_noop("question: %(rule)s '%(matched)s'"),
                                                rule=Message(rule), matched=matched), (matched,))


_NO_INTENT = {
    "en": gettext_noop("not a question: no question word, auxiliary inversion, request or "
                       "question mark"),
    "zh": gettext_noop("not a question: no question particle, question word, yes/no form or "
                       "question mark"),
}


def _en_intent(text: str, words: Sequence[str]) -> tuple[str, str] | None:
    if text.endswith("?"):
        return gettext_noop("question mark"), "?"
    if not words:
        return None
    first = words[0]
    n = len(words)
    if first in _EN_WH:
        return gettext_noop("question word first"), first
    if first in _EN_AUX and n > 1:
        return gettext_noop("auxiliary-verb inversion"), first
    if first in _EN_PREP and n > 1 and words[1] in _EN_WH_BARE:
        return gettext_noop("preposition + question word"), f"{first} {words[1]}"
    m = _EN_IMPERATIVE_RE.match(text)
    if m is not None:
        return gettext_noop("imperative request"), m.group(0)
    for i in range(n):
        word = words[i]
        if word == "whether":
            return gettext_noop("embedded question"), word
        if word in _EN_WH_BARE and i + 1 < n:
            nxt = words[i + 1]
            if nxt in _EN_AUX:
                return gettext_noop("question word + auxiliary"), f"{word} {nxt}"
            if word == "how" and nxt in _EN_HOW_QUANTITY:
                return gettext_noop("how + quantity"), f"{word} {nxt}"
    if words[-1] in _EN_WH_BARE:
        return gettext_noop("question word last"), words[-1]
    return None


# ====================================================================== step 3: yes/no
@dataclass(frozen=True, slots=True)
class YesNoFeature:
    """One symbolic feature: a regular expression (on normalised text) and its weight."""

    name: str
    pattern: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (a stage parameter entry)."""
        return {"name": self.name, "pattern": self.pattern, "weight": self.weight}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> YesNoFeature:
        """From ``{"name", "pattern", "weight"}``; missing or bad fields raise ``ValueError``."""
        try:
            name, pattern, weight = str(data["name"]), str(data["pattern"]), data["weight"]
        except (KeyError, TypeError) as exc:
            raise FilterParamError(
                gettext_noop("a yes/no feature needs name, pattern and weight: %(feature)s"),
                feature=short_repr(data)) from exc
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise FilterParamError(gettext_noop("yes/no feature %(name)s: weight must be a "
                                                "number"), name=repr(name))
        return cls(name, pattern, float(weight))


_EN_AUX_FIRST = (
    r"^(?:is|are|was|were|am|do|does|did|can|could|will|would|shall|should|may|might|must"
    r"|has|have|had|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|can't|cannot|couldn't"
    r"|won't|wouldn't|shouldn't|hasn't|haven't|hadn't|mustn't)\b"
)

DEFAULT_YESNO_FEATURES: dict[str, tuple[YesNoFeature, ...]] = {
    "en": (
        YesNoFeature("aux_inversion", _EN_AUX_FIRST, 1.0),
        YesNoFeature("could_i", r"\b(?:could|can|should|may|must|shall) (?:i|we)\b", 1.0),
        YesNoFeature("whether", r"\bwhether\b", 1.0),
        YesNoFeature("is_there_any", r"\b(?:is|are|was|were) there (?:any|an?)\b", 1.0),
        YesNoFeature(
            "is_it_adjective",
            r"\b(?:is|was) (?:it|this|that) (?:true|safe|ok|okay|possible|legal|illegal|normal"
            r"|bad|good|worth|necessary|healthy|dangerous|wrong|right|real)\b",
            1.0,
        ),
        YesNoFeature("yes_or_no", r"\b(?:yes or no|true or false)\b", 1.0),
        YesNoFeature(
            "wh_question", r"^(?:who|whom|whose|what|when|where|which|why|how)(?:'s)?\b", -1.0
        ),
        YesNoFeature(
            "how_quantity",
            r"\bhow (?:many|much|long|old|far|often|tall|big|large|high|deep|fast|heavy)\b",
            -1.0,
        ),
        YesNoFeature("wh_last", r"\b(?:who|whom|what|when|where|which|why|how)\W*$", -1.0),
        YesNoFeature("alternative_or", r"\bor\b(?! (?:not|no|false)\b)", -0.6),
    ),
    "zh": (
        YesNoFeature("ma_particle", rf"(?:[吗嘛]|(?<![什怎这那多要])么){_ZH_CLAUSE_END}", 1.0),
        YesNoFeature("a_not_a", r"([\u4e00-\u9fff])[不没]\1", 1.0),
        YesNoFeature("shifou", r"是否", 1.0),
        YesNoFeature("nengfou", r"[能可]否", 1.0),
        YesNoFeature("youwu", r"有无", 0.5),
        YesNoFeature(
            "wh_word",
            r"为什么|为何|为啥|什么|怎么|怎样|如何|哪(?!怕)|谁|几(?![乎率])|多少|多久|多长|多大"
            r"|多高|多远|多重|啥|咋",
            -1.0,
        ),
        YesNoFeature("alternative", r"还是", -0.6),
    ),
}
"""The paper's features ("Could I", "whether", "Is there any", auxiliary inversions; 吗,
A-not-A forms such as 能不能 / 有没有 / 会不会 / 可不可以 / 是不是 / 好不好, 是否 ...) with
positive weights, and question words / alternative questions (not answerable by yes or
no) with negative weights."""


class YesNoClassifier:
    """Feature-based yes/no classifier: ``score = sum(weight of each firing feature)``.

    A query passes when ``score >= threshold``. Features fire at most once each; the
    verdict lists them as ``name:matched text`` so a checker sees why.
    """

    def __init__(
        self,
        language: str,
        features: Iterable[YesNoFeature | Mapping[str, Any]] | None = None,
        threshold: float = DEFAULT_YESNO_THRESHOLD,
    ) -> None:
        self.language = check_language(language)
        feats = DEFAULT_YESNO_FEATURES[language] if features is None else features
        self.features: tuple[YesNoFeature, ...] = tuple(
            f if isinstance(f, YesNoFeature) else YesNoFeature.from_dict(f) for f in feats
        )
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            raise FilterParamError(gettext_noop("yes/no feature names must be unique: "
                                                "%(names)s"), names=str(names))
        self.threshold = float(threshold)
        self._compiled = []
        for f in self.features:
            try:
                self._compiled.append((f.name, re.compile(f.pattern).search, f.weight))
            except re.error as exc:
                raise FilterParamError(gettext_noop("yes/no feature %(name)s: bad pattern: "
                                                    "%(error)s"),
                                       name=repr(f.name), error=str(exc)) from exc

    def score(self, text: str) -> tuple[float, tuple[str, ...]]:
        """``(score, fired features as "name:match")`` for normalised ``text``."""
        total = 0.0
        fired = []
        for name, search, weight in self._compiled:
            m = search(text)
            if m is not None:
                total += weight
                fired.append(f"{name}:{m.group(0)}")
        return total, tuple(fired)

    def check(self, text: str) -> StepVerdict:
        """The yes/no verdict for normalised ``text``."""
        total, fired = self.score(text)
        shown = ", ".join(fired) if fired else Message(gettext_noop("no yes/no feature"))
        figures = {"score": f"{total:.2f}", "threshold": f"{self.threshold:.2f}",
                   "features": shown}
        if total >= self.threshold:
            reason = Message(gettext_noop("yes/no question: score %(score)s >= %(threshold)s "
                                          "(%(features)s)"), **figures)
            return _verdict("yesno", True, reason, fired, total)
        reason = Message(gettext_noop("not a yes/no question: score %(score)s < %(threshold)s "
                                      "(%(features)s)"), **figures)
        return _verdict("yesno", False, reason, fired, total)


# ====================================================================== the filter
class _Pipeline:
    """Everything one language needs, built once."""

    __slots__ = ("language", "rules", "model", "blocklist", "yesno")

    def __init__(
        self,
        language: str,
        model: IntentClassifier | None,
        blocklist: Blocklist,
        yesno: YesNoClassifier,
    ) -> None:
        self.language = language
        self.rules = IntentRules(language)
        self.model = model
        self.blocklist = blocklist
        self.yesno = yesno


def _by_language(name: str, value: Any) -> Mapping[str, Any]:
    """A parameter that maps a language to its setting (None: none given)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FilterParamError(gettext_noop("%(name)s must map a language (en, zh) to its "
                                            "setting; got %(type)s %(value)s"),
                               name=name, type=type(value).__name__,
                               value=short_repr(value, 60))
    return value


class QueryFilter:
    """The three-step ReCO query filter, built once from parameters.

    ``language``: ``"en"``, ``"zh"`` or ``"auto"`` (per query: Chinese when it holds a CJK
    ideograph). ``steps``: which steps run, a subsequence of :data:`STEPS`.
    ``intent_mode``: one of :data:`INTENT_MODES`; the model modes need an
    ``intent_models[language]`` for every language the filter serves. ``blocklists``:
    per language a :class:`Blocklist` or a list of terms (default: the shipped lists).
    ``yesno_features``: per language a list of :class:`YesNoFeature` or dicts (default
    :data:`DEFAULT_YESNO_FEATURES`); ``yesno_threshold`` applies to every language.
    ``all_steps``: run every step even after one has rejected the query.
    """

    def __init__(
        self,
        *,
        language: str = "auto",
        steps: Sequence[str] = STEPS,
        intent_mode: str = "rules",
        intent_models: Mapping[str, IntentClassifier] | None = None,
        blocklists: Mapping[str, Blocklist | Iterable[str]] | None = None,
        yesno_features: Mapping[str, Iterable[YesNoFeature | Mapping[str, Any]]] | None = None,
        yesno_threshold: float = DEFAULT_YESNO_THRESHOLD,
        all_steps: bool = False,
    ) -> None:
        self.language = check_language(language, allow_auto=True)
        steps = tuple(steps)
        if not steps or any(s not in STEPS for s in steps) or len(set(steps)) != len(steps):
            raise FilterParamError(gettext_noop("steps must be distinct names from %(known)s; "
                                                "got %(value)s"),
                                   known=str(STEPS), value=repr(steps))
        self.steps = tuple(s for s in STEPS if s in steps)
        if intent_mode not in INTENT_MODES:
            raise FilterParamError(gettext_noop("intent_mode must be one of %(known)s; got "
                                                "%(value)s"),
                                   known=str(INTENT_MODES), value=repr(intent_mode))
        self.intent_mode = intent_mode
        self.yesno_threshold = float(yesno_threshold)
        if not math.isfinite(self.yesno_threshold) or self.yesno_threshold <= 0:
            raise FilterParamError(gettext_noop("yesno_threshold must be a number above 0 (a "
                                                "query is yes/no when its features' weights "
                                                "reach it); got %(value)s"),
                                   value=repr(yesno_threshold))
        self.all_steps = bool(all_steps)
        languages = LANGUAGES if self.language == "auto" else (self.language,)
        models = dict(_by_language("intent_models", intent_models))
        blocklists = _by_language("blocklists", blocklists)
        yesno_features = _by_language("yesno_features", yesno_features)
        for lang, model in models.items():
            if model.language != lang:
                raise FilterParamError(gettext_noop("intent_models[%(language)s] is a "
                                                    "%(model)s model"),
                                       language=repr(lang), model=repr(model.language))
        self._pipelines: dict[str, _Pipeline] = {}
        for lang in languages:
            model = models.get(lang)
            if intent_mode != "rules" and model is None and "intent" in self.steps:
                raise FilterParamError(gettext_noop("intent_mode %(mode)s needs "
                                                    "intent_models[%(language)s]"),
                                       mode=repr(intent_mode), language=repr(lang))
            given = blocklists.get(lang)
            if given is None:
                blocklist = Blocklist.default(lang)
            elif isinstance(given, Blocklist):
                blocklist = given
            elif isinstance(given, list | tuple | set | frozenset) and all(
                    isinstance(term, str) for term in given):
                blocklist = Blocklist(lang, given)
            else:  # a string would be cut into its characters
                raise FilterParamError(gettext_noop("blocklists[%(language)s] must be a list "
                                                    "of terms; got %(value)s"),
                                       language=repr(lang), value=short_repr(given))
            if blocklist.language != lang:
                raise FilterParamError(gettext_noop("blocklists[%(language)s] is a %(list)s "
                                                    "list"),
                                       language=repr(lang), list=repr(blocklist.language))
            feats = yesno_features.get(lang)
            yesno = YesNoClassifier(lang, feats, self.yesno_threshold)
            self._pipelines[lang] = _Pipeline(lang, model, blocklist, yesno)

    # ------------------------------------------------------------------ parameters
    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> QueryFilter:
        """Build from JSON stage parameters (the keys of :meth:`params`, all optional).

        ``intent_models`` maps a language to a model dict
        (:meth:`IntentClassifier.to_dict`); ``blocklists`` to a list of terms;
        ``yesno_features`` to a list of ``{"name", "pattern", "weight"}``. Unknown keys
        raise ``ValueError``.
        """
        known = {
            "language",
            "steps",
            "intent_mode",
            "intent_models",
            "blocklists",
            "yesno_features",
            "yesno_threshold",
            "all_steps",
        }
        unknown = set(params) - known
        if unknown:
            raise FilterParamError(gettext_noop("unknown query filter parameters: %(unknown)s"),
                                   unknown=str(sorted(unknown)))
        models = {
            lang: IntentClassifier.from_dict(data)
            for lang, data in _by_language("intent_models", params.get("intent_models")).items()
        }
        return cls(
            language=params.get("language", "auto"),
            steps=params.get("steps", STEPS),
            intent_mode=params.get("intent_mode", "rules"),
            intent_models=models,
            blocklists=params.get("blocklists"),
            yesno_features=params.get("yesno_features"),
            yesno_threshold=params.get("yesno_threshold", DEFAULT_YESNO_THRESHOLD),
            all_steps=params.get("all_steps", False),
        )

    def params(self) -> dict[str, Any]:
        """The full, JSON-ready parameters (defaults spelt out) to record with a run."""
        return {
            "language": self.language,
            "steps": list(self.steps),
            "intent_mode": self.intent_mode,
            "intent_models": {
                lang: p.model.to_dict() for lang, p in self._pipelines.items() if p.model
            },
            "blocklists": {lang: list(p.blocklist.terms) for lang, p in self._pipelines.items()},
            "yesno_features": {
                lang: [f.to_dict() for f in p.yesno.features] for lang, p in self._pipelines.items()
            },
            "yesno_threshold": self.yesno_threshold,
            "all_steps": self.all_steps,
        }

    def blocklist(self, language: str) -> Blocklist:
        """The blocklist used for ``language``."""
        return self._pipeline(language).blocklist

    def yesno_classifier(self, language: str) -> YesNoClassifier:
        """The yes/no classifier used for ``language``."""
        return self._pipeline(language).yesno

    def _pipeline(self, language: str) -> _Pipeline:
        try:
            return self._pipelines[language]
        except KeyError:
            raise ValueError(
                f"this filter serves {sorted(self._pipelines)}, not {language!r}"
            ) from None

    # ------------------------------------------------------------------ checking
    def check(self, text: str, *, all_steps: bool | None = None) -> QueryVerdict:
        """Run the steps on one raw query and return its :class:`QueryVerdict`."""
        norm = normalize(text)
        lang = detect_language(norm) if self.language == "auto" else self.language
        pipeline = self._pipelines[lang]
        run_all = self.all_steps if all_steps is None else all_steps
        if not norm:
            empty = _verdict(self.steps[0], False, Message(gettext_noop("empty query")))
            return QueryVerdict(text, lang, False, empty.step, empty.reason, (), None, (empty,),
                                empty.reason_text)
        words = en_words(norm) if lang == "en" else None
        done: list[StepVerdict] = []
        failed: StepVerdict | None = None
        for step in self.steps:
            if step == "intent":
                verdict = self._intent(pipeline, norm, words)
            elif step == "blocklist":
                term = pipeline.blocklist.match(norm, words)
                if term is None:
                    verdict = _verdict("blocklist", True,
                                       Message(gettext_noop("no blocklisted term")))
                else:
                    reason = Message(gettext_noop("inappropriate content: blocklisted term "
                                                  "'%(term)s'"), term=term)
                    verdict = _verdict("blocklist", False, reason, (term,))
            else:
                verdict = pipeline.yesno.check(norm)
            done.append(verdict)
            if not verdict.passed and failed is None:
                failed = verdict
                if not run_all:
                    break
        yesno = done[-1] if done[-1].step == "yesno" else None
        score = yesno.score if yesno is not None else None
        decisive = failed if failed is not None else done[-1]
        return QueryVerdict(
            text,
            lang,
            failed is None,
            None if failed is None else failed.step,
            decisive.reason,
            decisive.matched,
            score,
            tuple(done),
            decisive.reason_text,
        )

    def check_many(self, texts: Iterable[str]) -> Iterator[QueryVerdict]:
        """Stream verdicts for an iterable of raw queries, in order (constant memory)."""
        check = self.check
        for text in texts:
            yield check(text)

    def _intent(self, pipeline: _Pipeline, norm: str, words: Sequence[str] | None) -> StepVerdict:
        mode = self.intent_mode
        if mode == "rules":
            return pipeline.rules.check(norm, words)
        model = pipeline.model
        if model is None:  # pragma: no cover - __init__ refuses a model mode without one
            raise ValueError(f"intent_mode {mode!r} needs an intent model")
        p = model.probability(norm)
        model_ok = p >= model.threshold
        model_reason = Message(gettext_noop("classifier p=%(p)s %(op)s %(threshold)s"),
                               p=f"{p:.2f}", op=">=" if model_ok else "<",
                               threshold=f"{model.threshold:.2f}")
        if mode == "model":
            label = (gettext_noop("question: %(model)s") if model_ok
                     else gettext_noop("not a question: %(model)s"))
            return _verdict("intent", model_ok, Message(label, model=model_reason), (), p)
        rules = pipeline.rules.check(norm, words)
        passed = (
            (rules.passed or model_ok) if mode == "rules_or_model" else (rules.passed and model_ok)
        )
        rules_reason = rules.reason_text or Message(rules.reason)
        return _verdict("intent", passed, Message(gettext_noop("%(rules)s; %(model)s"),
                                                  rules=rules_reason, model=model_reason),
                        rules.matched, p)


# ====================================================================== evaluation
def precision_recall_f1(
    tp: int, fp: int, fn: int
) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1; ``None`` where the ratio is undefined (0 / 0)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    elif precision + recall == 0:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return precision, recall, f1


@dataclass(frozen=True)
class FilterEvaluation:
    """The filter against an admin's labels; positive = "keep this query".

    ``false_positives`` / ``false_negatives`` keep up to ``examples`` texts of each kind,
    with their verdict reasons, for the project page.
    """

    step: str | None
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    false_positives: tuple[tuple[str, str], ...]
    false_negatives: tuple[tuple[str, str], ...]

    @property
    def total(self) -> int:
        """Number of labelled queries."""
        return self.tp + self.fp + self.fn + self.tn

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "step": self.step,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "total": self.total,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "accuracy": self.accuracy,
            "false_positives": [list(x) for x in self.false_positives],
            "false_negatives": [list(x) for x in self.false_negatives],
        }


def evaluate_filter(
    query_filter: QueryFilter,
    labelled: Iterable[tuple[str, Any]],
    *,
    step: str | None = None,
    examples: int = 20,
) -> FilterEvaluation:
    """Precision / recall / F1 of the filter on labelled queries ``(text, keep?)``.

    With ``step=None`` the prediction is "accepted by the whole filter" and the label
    means "a usable yes/no question". With ``step="intent"`` (or another step) the
    prediction is that step's own verdict (every step is run), and the label is that
    step's question (is it a question? is it clean? is it yes/no?). Labels go through
    :func:`~collector.filters.classifier.parse_label`.
    """
    if step is not None and step not in query_filter.steps:
        raise ValueError(f"step must be one of {query_filter.steps}; got {step!r}")
    tp = fp = fn = tn = 0
    fps: list[tuple[str, str]] = []
    fns: list[tuple[str, str]] = []
    for text, label in labelled:
        gold = parse_label(label)
        if step is None:
            verdict = query_filter.check(text)
            predicted, reason = verdict.accepted, verdict.reason
        else:
            sv = query_filter.check(text, all_steps=True).step(step)
            predicted = sv is not None and sv.passed
            reason = sv.reason if sv is not None else "step did not run"
        if predicted and gold:
            tp += 1
        elif predicted:
            fp += 1
            if len(fps) < examples:
                fps.append((text, reason))
        elif gold:
            fn += 1
            if len(fns) < examples:
                fns.append((text, reason))
        else:
            tn += 1
    precision, recall, f1 = precision_recall_f1(tp, fp, fn)
    total = tp + fp + fn + tn
    return FilterEvaluation(
        step,
        tp,
        fp,
        fn,
        tn,
        precision,
        recall,
        f1,
        (tp + tn) / total if total else None,
        tuple(fps),
        tuple(fns),
    )
