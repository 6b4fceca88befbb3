"""The MS MARCO answer-distillation recipe's stage kinds (answer-distillation paper,
sections 3 and 4).

Queries are judged by an editor (unambiguous intent, answerable definitively by a short
passage; navigational, transactional and some informational queries excluded), passages
are retrieved and curated by another editor, a new group of editors distil answers in
their own words, and the pa-metric importance of every answer (Eq. 2, BLEU, j = i
included) is stored. Answers far below the consensus go to a checker, who keeps or drops
each one; the decision is recorded. Every query that reaches the end gets one final record
in the last stage, shaped for the MS MARCO v2.1 and DuReader exports.

Items carry what they need in ``Item.data``: ``query``, ``query_id``, then the judged
``query_type`` / ``question_type``, the ranked ``passages`` ({rank, passage_id, document,
url, text}), the curator's ``selected`` ranks, the ``answers`` and their weights.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict
from functools import lru_cache
from statistics import median
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.http import whole_number
from annotation.payload_display import Block, generic_blocks
from annotation.plots import NARROW, WIDTH, Plot, hbar
from annotation.roles import Role
from annotation.stages import (
    CorpusQueriesKind,
    Emit,
    Param,
    StageKind,
    register,
    run_result,
)
from collector.metrics import PaScorer, flag_outliers, pa_tokens
from collector.stored_text import StoredText

if TYPE_CHECKING:
    from annotation.models import Item, Project, Stage, Submission
    from collector.jobs import Progress

QUERY_TYPE_LABELS = {"DESCRIPTION": gettext_noop("Description"),
                     "NUMERIC": gettext_noop("Numeric"), "ENTITY": gettext_noop("Entity"),
                     "LOCATION": gettext_noop("Location"), "PERSON": gettext_noop("Person")}
QUESTION_TYPE_LABELS = {"YES_NO": gettext_noop("Yes / no"), "ENTITY": gettext_noop("Entity"),
                        "DESCRIPTION": gettext_noop("Description")}
INTENTS = {
    "informational": gettext_lazy("Informational"),
    "navigational": gettext_lazy("Navigational (a site to go to)"),
    "transactional": gettext_lazy("Transactional (wants to do something)"),
}
EXCLUSIONS = {
    "ambiguous": gettext_lazy("No unambiguous intent, or no short passage could answer it "
                              "definitively and completely"),
    "geo_local": gettext_lazy("Seeks geo-local directions"),
    "open_list": gettext_lazy("Asks for a list that cannot reasonably be exhaustive"),
    "general_topic": gettext_lazy("Seeks general information about a topic"),
    "sensitive": gettext_lazy("Potentially sensitive information"),
    "adult": gettext_lazy("Adult content"),
}
QUERY_TYPES = ("DESCRIPTION", "NUMERIC", "ENTITY", "LOCATION", "PERSON")  # MS MARCO
QUESTION_TYPES = ("YES_NO", "ENTITY", "DESCRIPTION")  # DuReader
YESNO_LABELS = ("Yes", "No", "Depends")
#: A query judgment's decisions, as the judge's form names them.
DECISIONS = {"keep": gettext_noop("Keep"), "exclude": gettext_noop("Exclude")}
UNANSWERABLE = "not answerable by the retrieved passages"


def _text(payload: dict[str, Any], name: str, *, limit: int = 2000) -> str:
    value = payload.get(name, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ValidationError(_("%(name)s: text expected") % {"name": name})
    value = value.strip()
    if len(value) > limit:
        raise ValidationError(_("%(name)s: at most %(limit)d characters (%(given)d given)")
                              % {"name": name, "limit": limit, "given": len(value)})
    return value


def _choice(payload: dict[str, Any], name: str, allowed: tuple[str, ...] | dict,
            *, required: bool) -> str:
    value = payload.get(name) or ""
    if not isinstance(value, str) or (value and value not in allowed):
        raise ValidationError(_("%(name)s: %(value)s is not one of %(choices)s")
                              % {"name": name, "value": repr(value),
                                 "choices": ", ".join(allowed)})
    if required and not value:
        raise ValidationError(_("%(name)s: choose one of %(choices)s")
                              % {"name": name, "choices": ", ".join(allowed)})
    return value


def _flag(payload: dict[str, Any], name: str) -> bool:
    value = payload.get(name, False)
    if not isinstance(value, bool):
        raise ValidationError(_("%(name)s: true or false expected") % {"name": name})
    return value


def _most_common(values: list[str]) -> str:
    values = [v for v in values if v]
    return Counter(values).most_common(1)[0][0] if values else ""


def _save_result(item: Item, result: dict[str, Any]) -> None:
    """A human item's outcome, recorded before it finishes (the item row is locked)."""
    item.result = result
    item.save(update_fields=["result"])


def _base(data: dict[str, Any]) -> dict[str, Any]:
    """What every later stage of a query carries forward."""
    keys = ("query", "query_id", "query_type", "question_type", "intent")
    return {k: data[k] for k in keys if k in data}


# 1. Queries ------------------------------------------------------------------------------

@register
class QueriesKind(CorpusQueriesKind):
    """Automatic: the project corpus's queries become the items to judge."""

    key = "marco_queries"
    next_kind = "marco_judge"

    def item_for(self, pk: int, external_id: str, text: str,
                 language: str) -> tuple[str, dict[str, Any]]:
        return external_id, {"query": text, "query_id": external_id}


# 2. Query judgment -------------------------------------------------------------------------

def clean_judgment(payload: dict[str, Any]) -> dict[str, Any]:
    """Keep or exclude one query, with the reasons of an exclusion."""
    intent = _choice(payload, "intent", INTENTS, required=True)
    decision = _choice(payload, "decision", ("keep", "exclude"), required=True)
    exclusions = payload.get("exclusions", [])
    if not isinstance(exclusions, list) or not all(isinstance(e, str) for e in exclusions):
        raise ValidationError(_("exclusions: a list of reasons expected"))
    unknown = sorted(set(exclusions) - set(EXCLUSIONS))
    if unknown:
        raise ValidationError(_("exclusions: unknown reason(s) %(unknown)s; known: %(known)s")
                              % {"unknown": ", ".join(unknown), "known": ", ".join(EXCLUSIONS)})
    exclusions = [e for e in EXCLUSIONS if e in exclusions]
    query_type = _choice(payload, "query_type", QUERY_TYPES, required=False)
    question_type = _choice(payload, "question_type", QUESTION_TYPES, required=False)
    if decision == "keep":
        if intent != "informational":
            raise ValidationError(_("decision: %(intent)s queries are excluded; choose exclude")
                                  % {"intent": intent})
        if exclusions:
            raise ValidationError(_("decision: an exclusion reason is ticked; choose exclude "
                                    "or untick it"))
    elif intent == "informational" and not exclusions:
        raise ValidationError(_("exclusions: tick why this informational query is excluded"))
    return {"intent": intent, "decision": decision, "exclusions": exclusions,
            "query_type": query_type, "question_type": question_type}


@register
class JudgeKind(StageKind):
    """Human: an editor decides whether the query can be answered definitively and
    completely by a short passage, and classifies it."""

    payload_labels = ("intent", "decision", "exclusions", "query_type", "question_type")
    key = "marco_judge"
    payload_doc = (
        '`{"intent": "informational"|"navigational"|"transactional", "decision": '
        '"keep"|"exclude", "exclusions": [reason, …], "query_type": "", "question_type": '
        '""}`: `exclusions` from `task.exclusions` (values), required with `exclude` for an '
        'informational query and empty with `keep` (only informational queries are kept); '
        '`query_type` (DESCRIPTION, NUMERIC, ENTITY, LOCATION, PERSON) and `question_type` '
        '(YES_NO, ENTITY, DESCRIPTION) optional.')
    label = gettext_lazy("Query judgment")
    template = "annotation/tasks/marco_judge.html"
    overlap_param = "judges_per_query"
    scores_gold = True
    params = {
        "judges_per_query": Param(1, gettext_lazy("Editors judging each query; a query is kept "
                                                  "only when every one keeps it."),
                                  minimum=1, maximum=5),
    }

    def context(self, item: Item) -> dict[str, Any]:
        def options(pairs: Any, keys: str) -> list[dict[str, str]]:
            return [{"value": v, "label": label, "key": key}
                    for (v, label), key in zip(pairs, keys, strict=True)]

        return {
            "query": item.data["query"], "query_id": item.data["query_id"],
            "intents": options(INTENTS.items(), "123"),
            "exclusions": options(EXCLUSIONS.items(), "adltsx"),
            "query_types": options([(t, _(QUERY_TYPE_LABELS[t])) for t in QUERY_TYPES],
                                   "45678"),
            "question_types": options([(t, _(QUESTION_TYPE_LABELS[t])) for t in QUESTION_TYPES],
                                      "ywh"),
        }

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return clean_judgment(payload)

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        return {"intent": data.get("intent", ""), "decision": data.get("decision", ""),
                "exclusions": data.getlist("exclusion"),
                "query_type": data.get("query_type", ""),
                "question_type": data.get("question_type", "")}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """The share of the judgment's labels equal to the gold ones: decision, intent and
        exclusion reasons (as a set), and the query and question types where the gold
        answer gives them."""
        names = ["decision", "intent", "exclusions",
                 *(n for n in ("query_type", "question_type") if expected.get(n))]

        def label(judgment: dict[str, Any], name: str) -> Any:
            value = judgment.get(name)
            return frozenset(value or ()) if name == "exclusions" else value or ""

        return sum(label(payload, n) == label(expected, n) for n in names) / len(names)

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        decision = expected.get("decision", "")
        parts = [_("%(decision)s: %(intent)s") % {
            "decision": _(DECISIONS[decision]) if decision in DECISIONS else decision,
            "intent": INTENTS.get(expected.get("intent", ""), expected.get("intent", ""))}]
        reasons = [str(EXCLUSIONS.get(e, e)) for e in expected.get("exclusions", [])]
        if reasons:
            parts.append(_("excluded because: %(reasons)s") % {"reasons": "; ".join(reasons)})
        if expected.get("query_type"):
            parts.append(_("query type %(type)s") % {"type": expected["query_type"]})
        if expected.get("question_type"):
            parts.append(_("question type %(type)s") % {"type": expected["question_type"]})
        return " · ".join(parts)

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        if not data:
            return {"exclusions": []}
        return {**self.payload_from_form(item, data), "exclusions": data.getlist("exclusion")}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return {name: payload.get(name) or ("" if name != "exclusions" else [])
                for name in ("intent", "decision", "exclusions", "query_type", "question_type")}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        judgments = [s.payload for s in submissions]
        reasons: list[str] = []
        for j in judgments:
            if j["intent"] != "informational" and j["intent"] not in reasons:
                reasons.append(j["intent"])
            reasons += [e for e in j["exclusions"] if e not in reasons]
        kept = all(j["decision"] == "keep" for j in judgments)
        result = {
            "kept": kept, "reasons": [] if kept else reasons or ["excluded"],
            "intent": _most_common([j["intent"] for j in judgments]),
            "query_type": _most_common([j["query_type"] for j in judgments]),
            "question_type": _most_common([j["question_type"] for j in judgments]),
            "judge_ids": [s.worker_id for s in submissions],
        }
        _save_result(item, result)
        if not kept:
            return []
        return [Emit(kind="marco_retrieve", key=item.key, data={
            **_base(item.data), "query_type": result["query_type"],
            "question_type": result["question_type"], "intent": result["intent"],
        })]


# 3. Passage retrieval ---------------------------------------------------------------------

def _retrieve_passages(project: Project, text: str, k: int) -> list[dict[str, Any]]:
    """The top-k passages of the project corpus's index for ``text``, in ranked order."""
    from collector.models import Document
    from collector.services.retrieval import retrieve

    hits = retrieve(corpus=project.corpus, text=text, k=k)
    urls = dict(Document.objects.filter(pk__in={h.document_id for h in hits})
                .values_list("id", "url"))
    return [{"rank": rank, "passage_id": hit.passage_id, "document": hit.external_id,
             "url": urls.get(hit.document_id) or "", "text": hit.text}
            for rank, hit in enumerate(hits, start=1)]


@register
class RetrieveKind(StageKind):
    """Automatic: the top-k passages of the corpus index for each kept query."""

    key = "marco_retrieve"
    label = gettext_lazy("Retrieve passages")
    automatic = True
    params = {"k": Param(10, gettext_lazy("Passages retrieved per query, in ranked order."),
                         minimum=1, maximum=50)}

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        retrieved = empty = 0
        for item in items_pending_locked(stage, progress, "retrieving passages"):
            passages = _retrieve_passages(stage.project, item.data["query"], stage.params["k"])
            if not passages:
                empty += 1
                item_finish(item=item, emits=[], result={"passages": 0,
                                                         "excluded": "no passages retrieved"})
                continue
            retrieved += 1
            item_finish(item=item, result={"passages": len(passages)}, emits=[Emit(
                kind="marco_curate", key=item.key, data={**_base(item.data),
                                                         "passages": passages},
            )])
        return run_result(received=retrieved + empty, passed=retrieved,
                          dropped={"no passage retrieved from the corpus index": empty},
                          retrieved=retrieved, without_passages=empty)


# 4. Passage curation ----------------------------------------------------------------------

def clean_curation(item: Item, payload: dict[str, Any], *, max_selected: int) -> dict[str, Any]:
    """One or a few non-conflicting passages (by rank), or the query marked unanswerable."""
    ranks = {p["rank"] for p in item.data["passages"]}
    unanswerable = _flag(payload, "unanswerable")
    conflict = _flag(payload, "conflict")
    selected = payload.get("selected", [])
    if not isinstance(selected, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) for r in selected):
        raise ValidationError(_("selected: a list of passage ranks expected"))
    if len(set(selected)) != len(selected):
        raise ValidationError(_("selected: a passage is selected twice"))
    outside = sorted(set(selected) - ranks)
    if outside:
        raise ValidationError(_("selected: no passage has rank %(rank)s") % {"rank": outside[0]})
    reason = _text(payload, "conflict_reason", limit=1000)
    note = _text(payload, "note", limit=1000)
    if unanswerable:
        if selected:
            raise ValidationError(_("selected: a query marked not answerable has no "
                                    "selected passages; untick them or untick 'not "
                                    "answerable'"))
        return {"unanswerable": True, "selected": [], "conflict": False, "conflict_reason": "",
                "note": note}
    if not selected:
        raise ValidationError(_("selected: select the passage(s) that answer the query, or "
                                "mark it not answerable by these passages"))
    if len(selected) > max_selected:
        raise ValidationError(_("selected: at most %(limit)d passages; choose the few that "
                                "together answer the query") % {"limit": max_selected})
    if conflict and not reason:
        raise ValidationError(_("conflict_reason: the passages conflict: say why the "
                                "selected one is the most trustworthy"))
    return {"unanswerable": False, "selected": sorted(selected), "conflict": conflict,
            "conflict_reason": reason if conflict else "", "note": note}


@register
class CurateKind(StageKind):
    """Human: the editor sees the query and the ranked passages and selects one or a few
    that together answer it, or marks the query not answerable by them."""

    key = "marco_curate"
    payload_doc = (
        '`{"selected": [rank, …], "conflict": false, "conflict_reason": "", "note": ""}`: the'
        " ranks of one to the stage's `max_selected` passages of `task.passages` that answer "
        'the query (`conflict_reason` required when `conflict` is true); or `{"unanswerable":'
        ' true}`. `note` optional.')
    label = gettext_lazy("Passage curation")
    template = "annotation/tasks/marco_curate.html"
    scores_gold = True
    params = {
        "max_selected": Param(3, gettext_lazy("Passages an editor may select for one query."),
                              minimum=1, maximum=10),
    }

    def context(self, item: Item) -> dict[str, Any]:
        return {"query": item.data["query"], "passages": item.data["passages"],
                "max_selected": item.stage.params["max_selected"]}

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return clean_curation(item, payload, max_selected=item.stage.params["max_selected"])

    def payload_display(self, item: Item, payload: dict[str, Any]) -> list[Block]:
        """The selected passages by their text, in rank order."""
        texts = {p["rank"]: p["text"] for p in item.data["passages"]}
        rest = {k: v for k, v in payload.items() if k != "selected"}
        missing = _("(no such passage)")
        selected = [f"#{rank}: {texts.get(rank, missing)}" for rank in payload.get("selected", [])]
        return ([Block(_("Selected passages"), "list", selected)] if selected else []) + \
            generic_blocks(rest)

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        selected = [whole_number(s) for s in data.getlist("selected")]
        if None in selected:
            raise ValidationError(_("selected: passage ranks expected"))
        return {"selected": selected,
                "unanswerable": data.get("unanswerable") == "on",
                "conflict": data.get("conflict") == "on",
                "conflict_reason": data.get("conflict_reason", ""),
                "note": data.get("note", "")}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        if not data:
            return {"selected": []}
        return {"selected": [n for s in data.getlist("selected")
                             if (n := whole_number(s)) is not None],
                "unanswerable": data.get("unanswerable") == "on",
                "conflict": data.get("conflict") == "on",
                "conflict_reason": data.get("conflict_reason", ""),
                "note": data.get("note", "")}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return {"selected": list(payload.get("selected") or []),
                "unanswerable": bool(payload.get("unanswerable")),
                "conflict": bool(payload.get("conflict")),
                "conflict_reason": payload.get("conflict_reason") or "",
                "note": payload.get("note") or ""}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """F1 of the selected passages against the gold selection; "not answerable by
        these passages" scores 1 only against the same."""
        if expected.get("unanswerable") or payload.get("unanswerable"):
            return float(bool(expected.get("unanswerable")) == bool(payload.get("unanswerable")))
        chosen, gold = set(payload.get("selected", [])), set(expected.get("selected", []))
        same = len(chosen & gold)
        return 2 * same / (len(chosen) + len(gold)) if same else 0.0

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        if expected.get("unanswerable"):
            return _("Not answerable by the retrieved passages.")
        texts = {p["rank"]: p["text"] for p in item.data["passages"]}
        return " · ".join(_("Passage %(rank)s: %(text)s") % {"rank": rank,
                                                             "text": texts.get(rank, "")[:160]}
                          for rank in expected.get("selected", []))

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        curation = submissions[-1].payload
        curators = tuple(s.worker_id for s in submissions)
        _save_result(item, {**curation, "curator_ids": list(curators)})
        selected = set(curation["selected"])
        passages = [{**p, "is_selected": p["rank"] in selected} for p in item.data["passages"]]
        data = {**_base(item.data), "passages": passages}
        if curation["unanswerable"]:
            return [Emit(kind="marco_record", key=item.key,
                         data={**data, "unanswerable": True, "answers": []})]
        return [Emit(kind="marco_distill", key=item.key, data=data,
                     exclude_user_ids=curators,
                     exclusion_reason=gettext_noop("curated the passages of this query"))]


# 5. Answer distillation -------------------------------------------------------------------

_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)


@lru_cache(maxsize=1)
def _spell_checker() -> Any:
    try:
        from spellchecker import SpellChecker
    except ImportError:
        return None
    return SpellChecker(language="en", distance=1)


def spelling_report(text: str, *, known: str = "", limit: int = 10) -> dict[str, Any] | None:
    """Words of ``text`` the English dictionary does not know (words of ``known``, the
    query and passages, count as known), each with a suggestion. Only words in ASCII
    letters are checked: a run of Chinese characters is no English word to correct. None
    when no checker is installed. A warning for the editor, never a refusal."""
    checker = _spell_checker()
    if checker is None:
        return None
    familiar = {w.lower().replace("’", "'") for w in _WORD.findall(known)}
    suspects: list[dict[str, str]] = []
    seen: set[str] = set()
    for word in _WORD.findall(text):
        low = word.lower().replace("’", "'")
        letters = low.replace("'", "")
        if (len(low) < 2 or not letters.isascii() or not letters.isalpha() or low in seen
                or low in familiar or word.isupper() or not checker.unknown([low])):
            continue
        seen.add(low)
        suggestion = checker.correction(low)
        suspects.append({"word": word, "suggestion": suggestion if suggestion != low else ""})
        if len(suspects) >= limit:
            break
    return {"words": suspects, "checked": bool(text.strip())}


def _curated(item: Item) -> list[dict[str, Any]]:
    return [p for p in item.data["passages"] if p.get("is_selected")]


#: The most entities one answer may list.
MAX_ENTITIES = 50


def clean_distillation(item: Item, payload: dict[str, Any], *, limit: int) -> dict[str, Any]:
    """An answer in the editor's own words; the Yes / No / Depends opinion for YES_NO
    questions and the named entities for ENTITY questions."""
    answer = _text(payload, "answer", limit=limit)
    if not answer:
        raise ValidationError(_("answer: write the answer in your own words"))
    question_type = item.data.get("question_type", "")
    yesno = payload.get("yesno") or ""
    if not isinstance(yesno, str) or (yesno and yesno not in YESNO_LABELS):
        raise ValidationError(_("yesno: %(value)s is not one of %(choices)s")
                              % {"value": repr(yesno), "choices": ", ".join(YESNO_LABELS)})
    if question_type == "YES_NO" and not yesno:
        raise ValidationError(_("yesno: label the answer's opinion: Yes, No or Depends"))
    if yesno and question_type != "YES_NO":
        raise ValidationError(_("yesno: only YES_NO questions take an opinion label"))
    raw = payload.get("entities") or []
    if not isinstance(raw, list) or not all(isinstance(e, str) for e in raw):
        raise ValidationError(_("entities: a list of entity names expected"))
    entities = list(dict.fromkeys(e.strip() for e in raw if e.strip()))
    if question_type == "ENTITY" and not entities:
        raise ValidationError(
            _("entities: list the entities your answer names (one at least)"))
    if entities and question_type != "ENTITY":
        raise ValidationError(_("entities: only ENTITY questions take a list of entities"))
    # Bounded as the answer is: an entity no longer than an answer may be, and a list a
    # person writes (DuReader's entity_answers carry them into the release).
    if len(entities) > MAX_ENTITIES:
        raise ValidationError(_("entities: at most %(most)s entities (%(given)s given)")
                              % {"most": MAX_ENTITIES, "given": len(entities)})
    long = next((e for e in entities if len(e) > limit), None)
    if long is not None:
        raise ValidationError(_("entities: %(entity)s… is longer than an answer may be "
                                "(%(limit)s characters)") % {"entity": long[:40],
                                                             "limit": limit})
    return {"answer": answer, "yesno": yesno or None, "entities": entities}


@register
class DistillKind(StageKind):
    """Human, many editors: each writes the answer the curated passages give, in their own
    words. Never the curator of the query; never another editor's answer in sight."""

    payload_labels = ("yesno",)
    key = "marco_distill"
    payload_doc = (
        '`{"answer": "…", "yesno": "Yes"|"No"|"Depends", "entities": ["…", …]}`: the answer '
        "in the editor's own words (at most the stage's `max_answer_chars`); `yesno` required"
        ' for, and only for, YES_NO questions; `entities` (at least one) for, and only for, '
        'ENTITY questions.')
    label = gettext_lazy("Answer distillation")
    template = "annotation/tasks/marco_distill.html"
    overlap_param = "editors_per_query"
    params = {
        "editors_per_query": Param(5, gettext_lazy("Editors writing an answer for each query "
                                                   "(the paper's example has 20)."),
                                   minimum=1, maximum=50),
        "max_answer_chars": Param(2000, gettext_lazy("Longest answer accepted."), minimum=20),
    }

    def context(self, item: Item) -> dict[str, Any]:
        return {"query": item.data["query"], "passages": _curated(item),
                "question_type": item.data.get("question_type", ""),
                "yesno_labels": list(YESNO_LABELS)}

    def spelling(self, item: Item, text: str) -> dict[str, Any] | None:
        known = " ".join([item.data["query"], *(p["text"] for p in _curated(item))])
        return spelling_report(text, known=known)

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return clean_distillation(item, payload, limit=item.stage.params["max_answer_chars"])

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        return {"answer": data.get("answer", ""), "yesno": data.get("yesno", ""),
                "entities": data.get("entities", "").splitlines()}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        if not data:
            return {}
        return {"answer": data.get("answer", ""), "yesno": data.get("yesno", ""),
                "entities": data.get("entities", "")}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return {"answer": payload.get("answer") or "", "yesno": payload.get("yesno") or "",
                "entities": "\n".join(payload.get("entities") or [])}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        answers = [{
            "text": s.payload["answer"], "yesno": s.payload["yesno"],
            "entities": s.payload["entities"], "worker_id": s.worker_id, "submission": s.pk,
            "time_s": round(s.time_on_task_s, 1),
            "active_time_s": s.active_time_s,
        } for s in submissions]
        return [Emit(kind="marco_consensus", key=item.key,
                     data={**_base(item.data), "passages": item.data["passages"],
                           "answers": answers})]


# 6. Consensus weighting -------------------------------------------------------------------

def pa_level(language: str) -> str:
    """Chinese answers are compared by character (no spaces between words), others by
    word."""
    return "char" if (language or "").lower().startswith("zh") else "word"


def consensus_weights(texts: list[str], *, ratio: float, min_answers: int,
                      level: str = "word") -> dict[str, Any]:
    """Imp(Ref_i) = Σ_j BLEU(Ref_i, Ref_j), j = i included (pa-metrics Eq. 2), their
    shares, and the answers whose weight is below ``ratio`` x the median weight; tokens at
    ``level`` (``pa_level`` of the project's language)."""
    scorer = PaScorer(texts, metric="bleu", include_self=True, level=level)
    weights = [float(w) for w in scorer.weights]
    total = sum(weights)
    flagged = flag_outliers(weights, ratio=ratio) if len(texts) >= min_answers else []
    return {
        "weights": weights,
        "shares": [w / total if total else 0.0 for w in weights],
        "flagged": flagged, "ratio": ratio, "median": median(weights),
        "tokens": [len(pa_tokens(t, level=level)) for t in texts],
    }


@register
class ConsensusKind(StageKind):
    """Automatic: the pa-BLEU importance of every answer; answers far below the consensus
    go to a checker, the others straight to the final record."""

    key = "marco_consensus"
    label = gettext_lazy("Consensus weighting (pa-BLEU)")
    automatic = True
    params = {
        "outlier_ratio": Param(0.7, gettext_lazy("Flag an answer whose importance is below this "
                                                 "share of the median importance (each "
                                                 "importance counts the answer's own BLEU of 1, "
                                                 "so with few answers the weights sit close)."),
                               minimum=0.01, maximum=1.0),
        "min_answers": Param(3, gettext_lazy("Flag nothing for queries with fewer answers."),
                             minimum=2),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        weighed = flagged_queries = 0
        for item in items_pending_locked(stage, progress, "weighing answers"):
            answers = item.data["answers"]
            result = consensus_weights([a["text"] for a in answers],
                                       ratio=stage.params["outlier_ratio"],
                                       min_answers=stage.params["min_answers"],
                                       level=pa_level(stage.project.language))
            weighed += 1
            data = {**_base(item.data), "passages": item.data["passages"], "answers": answers,
                    "weights": result["weights"], "shares": result["shares"],
                    "flagged": result["flagged"]}
            if result["flagged"]:
                flagged_queries += 1
                emit = Emit(kind="marco_review", key=item.key, data=data,
                            exclude_user_ids=tuple(a["worker_id"] for a in answers
                                                   if a.get("worker_id")),
                            exclusion_reason=gettext_noop("wrote an answer for this query"))
            else:
                emit = Emit(kind="marco_record", key=item.key, data=data)
            item_finish(item=item, result=result, emits=[emit])
        return run_result(
            received=weighed, passed=weighed, weighed=weighed, to_review=flagged_queries,
            notes=[StoredText(gettext_noop("%(flagged)s with an outlier answer: to a checker's "
                                           "review; %(other)s straight to the final records"),
                              flagged=flagged_queries, other=weighed - flagged_queries)]
            if weighed else [])


# 7. Checker review of flagged answers -----------------------------------------------------

def answer_rows(data: dict[str, Any], decisions: dict[str, str] | None = None
                ) -> list[dict[str, Any]]:
    """The answers of a query with their weights, flags and (after review) decisions."""
    flagged = set(data.get("flagged", []))
    weights = data.get("weights") or [None] * len(data["answers"])
    shares = data.get("shares") or [None] * len(data["answers"])
    rows = []
    for n, (answer, weight, share) in enumerate(zip(data["answers"], weights, shares,
                                                    strict=True)):
        rows.append({"index": n, "number": n + 1, "text": answer["text"],
                     "yesno": answer.get("yesno"), "entities": answer.get("entities", []),
                     "weight": weight, "share": share, "flagged": n in flagged,
                     "decision": (decisions or {}).get(str(n), "")})
    return rows


def weights_plot(rows: list[dict[str, Any]], *, label: str = "Answers by importance weight",
                 narrow: bool = False) -> Plot:
    """One bar per answer, its pa-BLEU importance; flagged answers in the warning colour.
    ``narrow``: drawn to be read on a phone (the review task's), each answer's label above
    its bar; otherwise full-card wide, the labels a column."""
    return hbar([
        (f"{row['number']}. {row['text']}", [(
            row["weight"] or 0.0, "bar-pending" if row["flagged"] else "bar",
            f"answer {row['number']}: weight {row['weight'] or 0:.3f}"
            + (" (flagged)" if row["flagged"] else ""),
        )]) for row in rows
    ], label=label, width=NARROW if narrow else WIDTH, labels_above=narrow)


_DROP_KEYS = "qwertyuio"


@register
class ReviewKind(StageKind):
    """Human, checker: keep or drop each answer the consensus weighting flagged."""

    payload_labels = ("keep", "drop", "checked")
    key = "marco_review"
    payload_doc = (
        '`{"decisions": {"n": "keep"|"drop", …}, "note": ""}`: keep or drop for each flagged '
        'answer, keyed by its index.')
    label = gettext_lazy("Outlier review")
    role = Role.CHECKER
    template = "annotation/tasks/marco_review.html"
    scores_gold = True

    def context(self, item: Item) -> dict[str, Any]:
        rows = answer_rows(item.data)
        for n, row in enumerate(r for r in rows if r["flagged"]):
            row["keep_key"] = str(n + 1) if n < 9 else ""
            row["drop_key"] = _DROP_KEYS[n] if n < len(_DROP_KEYS) else ""
        return {"query": item.data["query"], "passages": _curated(item), "answers": rows,
                "question_type": item.data.get("question_type", ""),
                "plot": asdict(weights_plot(rows, narrow=True))}

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        raw = payload.get("decisions")
        if not isinstance(raw, dict):
            raise ValidationError(_("decisions: keep or drop for each flagged answer expected"))
        decisions = {str(k): v for k, v in raw.items()}
        flagged = [str(n) for n in item.data["flagged"]]
        extra = sorted(set(decisions) - set(flagged))
        if extra:
            raise ValidationError(_("decisions: answer %(n)d is not flagged")
                                  % {"n": int(extra[0]) + 1}
                                  if whole_number(extra[0]) is not None else
                                  _("decisions: unknown answer %(answer)s")
                                  % {"answer": repr(extra[0])})
        for n in flagged:
            if decisions.get(n) not in ("keep", "drop"):
                raise ValidationError(_("decisions: answer %(n)d: choose keep or drop")
                                      % {"n": int(n) + 1})
        return {"decisions": {n: decisions[n] for n in flagged},
                "note": _text(payload, "note", limit=1000)}

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        return {"decisions": {str(n): data.get(f"decision-{n}", "")
                              for n in item.data["flagged"]},
                "note": data.get("note", "")}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        if not data:
            return {"checked": []}
        return {"checked": [f"{n}:{data[f'decision-{n}']}" for n in item.data["flagged"]
                            if data.get(f"decision-{n}")],
                "note": data.get("note", "")}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """The share of flagged answers kept or dropped as in the gold decisions."""
        gold = expected.get("decisions", {})
        if not gold:
            return float(payload.get("decisions", {}) == gold)
        mine = payload.get("decisions", {})
        return sum(mine.get(n) == decision for n, decision in gold.items()) / len(gold)

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        answers = item.data["answers"]
        return " · ".join(_("Answer %(n)d (%(text)s): %(decision)s") % {
            "n": int(n) + 1, "text": answers[int(n)]["text"][:80],
            "decision": _(decision) if decision in ("keep", "drop") else decision}
            for n, decision in expected.get("decisions", {}).items())

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        review = submissions[-1]
        decisions = review.payload["decisions"]
        _save_result(item, {"decisions": decisions, "note": review.payload["note"],
                            "checker_id": review.worker_id})
        return [Emit(kind="marco_record", key=item.key, data={
            **item.data,
            "review": {"decisions": decisions, "note": review.payload["note"],
                       "checker_id": review.worker_id, "submission": review.pk},
        })]


# 8. Final records ----------------------------------------------------------------------------

def marco_record(data: dict[str, Any]) -> dict[str, Any]:
    """The final record of one query: what the MS MARCO v2.1 and DuReader exports need.

    ``answers`` are the kept answers; ``yesno_answers`` (YES_NO questions) and
    ``entity_answers`` (ENTITY questions) run parallel to them, as do their weights and
    times. A query marked not answerable by its passages has ``no_answer`` true, no answers
    and no selected passage (MS MARCO writes it ``No Answer Present.``).

    Export mapping (for the releases issue; the records are the done items of this last
    stage, ``selectors.consolidated_items``): MS MARCO v2.1 takes ``query_id`` (the
    official files want an integer), ``query``, ``query_type``, ``passages`` as
    (``passage_text``, ``url``, ``is_selected``) and ``answers`` (``no_answer`` records,
    when the admin includes them, as ``["No Answer Present."]``). DuReader takes
    ``question_type``, ``answers``, ``yesno_answers`` and ``entity_answers`` as they are,
    and documents from ``passages`` (``document`` as title, ``passage_text`` as the
    paragraph, ``rank - 1`` as ``bs_rank_pos``, ``is_selected``); its ``fact_or_opinion``
    is not collected here.
    """
    decisions = (data.get("review") or {}).get("decisions", {})
    weights = data.get("weights") or [None] * len(data.get("answers", []))
    kept, dropped = [], []
    for n, answer in enumerate(data.get("answers", [])):
        row = {**answer, "weight": weights[n], "flagged": n in data.get("flagged", [])}
        (dropped if decisions.get(str(n)) == "drop" else kept).append(row)
    question_type = data.get("question_type", "")
    return {
        "query_id": data["query_id"],
        "query": data["query"],
        "query_type": data.get("query_type", ""),
        "question_type": question_type,
        "passages": [{"rank": p["rank"], "passage_id": p.get("passage_id"),
                      "document": p.get("document", ""), "url": p.get("url", ""),
                      "passage_text": p["text"], "is_selected": 1 if p.get("is_selected") else 0}
                     for p in data.get("passages", [])],
        "answers": [a["text"] for a in kept],
        "yesno_answers": [a["yesno"] for a in kept] if question_type == "YES_NO" else None,
        "entity_answers": [a["entities"] for a in kept] if question_type == "ENTITY" else None,
        "answer_weights": [a["weight"] for a in kept],
        "answer_times_s": [a.get("time_s") for a in kept],
        "answer_workers": [a.get("worker_id") for a in kept],
        "dropped_answers": [{"text": a["text"], "weight": a["weight"],
                             "worker_id": a.get("worker_id")} for a in dropped],
        "review": data.get("review"),
        "no_answer": bool(data.get("unanswerable")),
    }


@register
class RecordKind(StageKind):
    """Automatic: one final record per query that reached the end (answers kept after the
    review, or the query marked not answerable by its passages)."""

    key = "marco_record"
    label = gettext_lazy("Final records")
    automatic = True

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        done = 0
        for item in items_pending_locked(stage, progress, "writing records"):
            item_finish(item=item, emits=[], result=marco_record(item.data))
            done += 1
        return run_result(received=done, passed=done, records=done)
