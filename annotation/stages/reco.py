"""The ReCO recipe's stage kinds (ReCO paper, "Data Collection"), in Chinese and English.

Queries are filtered (intent, inappropriate content, yes/no features: ``QueryFilter``), the
top-10 documents of each kept query are retrieved and those with trivial surface overlap
with it are dropped (``DocumentFilter``); every verdict is stored with its item so it can
be audited. Queries get a seeded split. Train and dev queries are labelled in batches, one
annotator per batch, in one form: an evidence span of one document (exact offsets), three
alternatives in the annotator's own words (positive, negative, uncertain) and the correct
one, or a rejection; a checker inspects a sample of every finished batch
(``annotation.batches``). Test queries (stage option) are labelled by two annotators
independently; when their answers agree a third annotator picks the better evidence,
otherwise a checker adjudicates. The last stage holds the final records.

Items carry what later stages need in ``Item.data``: ``query``, ``query_id`` (the corpus
query's primary key, when it came from one), ``external_id``, ``language``, then the
retrieved ``documents`` ({document_id, external_id, title, url, source_type, text}), and
the chosen ``label``.
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.http import whole_number
from annotation.payload_display import Block, generic_blocks, highlighted
from annotation.roles import Role
from annotation.stages import (
    BATCH_PARAMS,
    CorpusQueriesKind,
    Emit,
    Param,
    StageKind,
    register,
    run_result,
    split_shares_clean,
)
from collector.filters import DocumentFilter, QueryFilter, Violation, evaluate_filter
from collector.filters.messages import FilterParamError
from collector.filters.text import LANGUAGES
from collector.importers.errors import (
    SHOULD_BE_STRING,
    ImportFailure,
    at_line,
    shorten,
)
from collector.importers.jsonvalues import json_record
from collector.importers.records import IS_EMPTY, IS_MISSING
from collector.stored_text import StoredText, stored_text_render

if TYPE_CHECKING:
    from annotation.models import Item, Project, Stage, Submission
    from collector.jobs import Progress

ANSWERS: dict[str, str] = {
    "positive": gettext_lazy("Positive (yes)"),
    "negative": gettext_lazy("Negative (no)"),
    "uncertain": gettext_lazy("Uncertain"),
}
PLACEHOLDERS = {
    "zh": {"positive": "能", "negative": "不能", "uncertain": "无法确定"},
    "en": {"positive": "yes, it can", "negative": "no, it cannot", "uncertain": "can't tell"},
}
REJECTED = gettext_noop("not answerable by yes / no / uncertain")
TEST_ANNOTATORS = 2  # the paper's test-set protocol: two annotators, independently
_CARRY = ("query", "query_id", "external_id", "language")


def _rejected(expected: dict[str, Any]) -> str:
    """A gold check's "reject the query", with its reason (the default one translated)."""
    reason = expected.get("reason") or REJECTED
    return _("Reject the query: %(reason)s.") % {
        "reason": _(REJECTED) if reason == REJECTED else reason}


def _carry(data: dict[str, Any], **more: Any) -> dict[str, Any]:
    """What every later stage of a query carries forward."""
    return {**{k: data[k] for k in _CARRY if k in data}, **more}


def _save_result(item: Item, result: dict[str, Any]) -> None:
    """A human item's outcome, recorded before it finishes (the item row is locked)."""
    item.result = result
    item.save(update_fields=["result"])


# Document text on the page ------------------------------------------------------------------

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]", re.UNICODE)


def document_tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of each selectable unit of ``text``: one Chinese character, one run of
    other letters or digits, or one punctuation mark. Offsets are exact (in characters),
    so a selection from token i to token j is ``text[start_i:end_j]``.

    The evidence form gets the documents as plain text and cuts them into the same units
    in the browser (``static/js/reco.js``, ``TOKEN``: the same classes), so a page weighs
    about its text, not an element per character."""
    return [m.span() for m in _TOKEN.finditer(text)]


def evidence_view(document: dict[str, Any], span: list[int], *,
                  context: int = 160) -> dict[str, Any]:
    """The evidence inside a window of its document, for checkers and choosers."""
    text = document["text"]
    start, end = span
    lo, hi = max(0, start - context), min(len(text), end + context)
    return {
        "title": document.get("title", ""), "url": document.get("url", ""),
        "external_id": document.get("external_id", ""),
        "source_type": document.get("source_type", ""),
        "before": ("…" if lo else "") + text[lo:start], "evidence": text[start:end],
        "after": text[end:hi] + ("…" if hi < len(text) else ""),
    }


# Evidence and answers: the payload -------------------------------------------------------------

def clean_evidence_payload(documents: list[dict[str, Any]], payload: dict[str, Any], *,
                           max_alternative_chars: int) -> dict[str, Any]:
    """One evidence span of one document (exact character offsets), three alternatives in
    the annotator's words and the correct one; or a rejection of the query."""
    if payload.get("reject") is True:
        return {"reject": True, "reason": REJECTED}
    doc = payload.get("doc")
    if not isinstance(doc, int) or isinstance(doc, bool) or not 0 <= doc < len(documents):
        raise ValidationError(_("doc: choose one of the %(count)d documents and select the "
                                "evidence in it, or reject the query")
                              % {"count": len(documents)})
    text = documents[doc]["text"]
    span = payload.get("evidence")
    if (not isinstance(span, list | tuple) or len(span) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
        raise ValidationError(_("evidence: select the evidence span in the document"))
    start, end = span
    if not 0 <= start < end <= len(text):
        raise ValidationError(
            _("evidence: [%(start)d, %(end)d] is outside document %(number)d (0..%(length)d)")
            % {"start": start, "end": end, "number": doc + 1, "length": len(text)})
    # Exact offsets, trimmed of surrounding white space.
    start += len(text[start:end]) - len(text[start:end].lstrip())
    end -= len(text[start:end]) - len(text[start:end].rstrip())
    if start >= end:
        raise ValidationError(_("evidence: the selection holds only white space"))
    raw = payload.get("alternatives")
    if not isinstance(raw, dict):
        raise ValidationError(
            _("alternatives: write a positive, a negative and an uncertain one"))
    alternatives = {}
    for kind in ANSWERS:
        value = raw.get(kind)
        # One line of visible words: white space runs (tabs, line breaks) become one space,
        # and a text of only invisible characters (zero-width spaces, joiners) is empty.
        value = " ".join(value.split()) if isinstance(value, str) else ""
        if not any(unicodedata.category(ch)[0] not in "CZ" for ch in value):
            raise ValidationError(_("alternatives: the %(kind)s alternative is empty")
                                  % {"kind": ANSWERS[kind]})
        if "|" in value:
            raise ValidationError(_("alternatives: the %(kind)s alternative may not contain '|'")
                                  % {"kind": ANSWERS[kind]})
        if len(value) > max_alternative_chars:
            raise ValidationError(_("alternatives: the %(kind)s alternative is longer than "
                                    "%(limit)d characters; keep it short")
                                  % {"kind": ANSWERS[kind], "limit": max_alternative_chars})
        alternatives[kind] = value
    if len({v.casefold() for v in alternatives.values()}) != len(ANSWERS):
        raise ValidationError(_("alternatives: the three alternatives must differ"))
    answer = payload.get("answer")
    if not isinstance(answer, str) or answer not in ANSWERS:
        by_text = {v: k for k, v in alternatives.items()}
        if not isinstance(answer, str) or answer.strip() not in by_text:
            raise ValidationError(_("answer: mark which alternative is correct"))
        answer = by_text[answer.strip()]
    document = documents[doc]
    return {
        "doc": doc, "document_id": document.get("document_id"),
        "external_id": document.get("external_id", ""),
        "evidence": [start, end], "evidence_text": text[start:end],
        "alternatives": alternatives, "answer": answer,
    }


def label_view(data: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """One label (an evidence payload) as checkers and choosers see it."""
    if payload.get("reject"):
        return {"rejected": True, "reason": payload.get("reason", REJECTED)}
    document = data["documents"][payload["doc"]]
    return {
        "rejected": False, "doc_number": payload["doc"] + 1,
        **evidence_view(document, payload["evidence"]),
        "alternatives": [{"key": k, "label": str(ANSWERS[k]), "text": payload["alternatives"][k],
                          "correct": k == payload["answer"]} for k in ANSWERS],
        "answer": payload["answer"], "answer_text": payload["alternatives"][payload["answer"]],
    }


def label_blocks(data: dict[str, Any], payload: dict[str, Any]) -> list[Block]:
    """One label (an evidence payload) for the item page: the evidence highlighted in its
    document, the three alternatives with the correct one named."""
    if payload.get("reject"):
        return [Block(_("Marked"), "labels", [_("Rejected")]),
                Block(_("Reason"), "text", payload.get("reason") or _(REJECTED))]
    document = data["documents"][payload["doc"]]
    title = document.get("title") or document.get("external_id", "")
    return [
        Block(_("Document"), "labels", [f"{payload['doc'] + 1}. {title}".strip()]),
        Block(_("Evidence"), "spans", segments=highlighted(document["text"],
                                                            [payload["evidence"]])),
        Block(_("Alternatives"), "list", [
            f"{ANSWERS[k]}: {payload['alternatives'][k]}" for k in ANSWERS]),
        Block(_("Correct answer"), "labels", [str(ANSWERS[payload["answer"]])]),
    ]


def _int_or_none(value: Any) -> int | None:
    return whole_number(value)


# 1. Queries ----------------------------------------------------------------------------------

@register
class QueriesKind(CorpusQueriesKind):
    """Automatic: the project corpus's queries become the items to filter."""

    key = "reco_queries"
    next_kind = "reco_query_filter"

    def item_for(self, pk: int, external_id: str, text: str,
                 language: str) -> tuple[str, dict[str, Any]]:
        return f"q{pk}", {"query": text, "query_id": pk, "external_id": external_id,
                          "language": language}


# 2. Query filter --------------------------------------------------------------------------------

FILTER_PARAMS = ("language", "steps", "intent_mode", "intent_models", "blocklists",
                 "yesno_features", "yesno_threshold", "all_steps")


def filter_error_text(exc: Exception) -> str:
    """A filter's refusal of a parameter in the reader's language (a ``FilterParamError``
    carries its msgid and parameters; anything else is shown as it is)."""
    if isinstance(exc, FilterParamError):
        return stored_text_render(exc.message.as_json(), str(exc))
    return str(exc)


def verdict_reason(verdict: dict[str, Any]) -> str:
    """A stored verdict's (or step's) reason in the reader's language: its ``reason_text``
    rendered; a verdict stored before it had one shows its English ``reason``."""
    return stored_text_render(verdict.get("reason_text"), verdict.get("reason") or "")


def query_filter(params: dict[str, Any]) -> QueryFilter:
    """The stage's ``QueryFilter`` from its parameters."""
    return QueryFilter.from_params({k: params[k] for k in FILTER_PARAMS})


def _query_verdicts_record(query_id: Any, verdict: dict[str, Any], project_id: int) -> bool:
    """Write the verdict of each step, and the filter's, into ``Query.verdicts`` through
    ``collector.services.corpora.query_verdict_record`` (when the item came from a stored
    query); the item's result holds the full verdict in any case."""
    from collector.models import Query
    from collector.services.corpora import query_verdict_record

    query = Query.objects.filter(pk=query_id).first() if isinstance(query_id, int) else None
    if query is None:
        return False
    for step in verdict["steps"]:
        matched = f" [{', '.join(map(str, step['matched']))}]" if step["matched"] else ""
        query = query_verdict_record(query=query, filter_name=step["step"],
                                     verdict="keep" if step["passed"] else "drop",
                                     reason=f"{step['reason']}{matched}")
    query_verdict_record(query=query, filter_name="reco_query_filter",
                         verdict="keep" if verdict["accepted"] else "drop",
                         reason=f"project {project_id}: {verdict['reason']}")
    return True


def query_drop_reason(verdict: dict[str, Any]) -> StoredText | str:
    """A query filter refusal (a stored ``QueryVerdict``), grouped: the step and its
    deciding cue (a stored text, its English as it was; an old verdict's other reason as
    it is)."""
    step, matched = verdict.get("failed_step"), verdict.get("matched") or []
    if step == "blocklist" and matched:
        return StoredText(gettext_noop("inappropriate content: '%(term)s'"), term=matched[0])
    if step == "yesno":
        features = sorted({m.split(":", 1)[0] for m in matched})
        return StoredText(gettext_noop("not yes/no: %(features)s"),
                          features=", ".join(features) if features
                          else StoredText(gettext_noop("no yes/no feature")))
    if step == "intent":
        return StoredText(gettext_noop("not a question"))
    if isinstance(verdict.get("reason_text"), dict):
        return StoredText.from_json(verdict["reason_text"])
    return verdict.get("reason", "") or StoredText(gettext_noop("refused"))


@register
class QueryFilterKind(StageKind):
    """Automatic: intent, inappropriate content and yes/no features (``QueryFilter``).

    Every query keeps its verdict (each step's reason, matched term or features, score) in
    its result; refused queries finish here, kept ones go on to retrieval. An admin may
    label a seeded sample keep / drop (``admin_label`` in the item data) to measure the
    filter's precision and recall on the project page.
    """

    key = "reco_query_filter"
    label = gettext_lazy("Query filter")
    automatic = True
    params = {
        "language": Param("auto", gettext_lazy("en, zh, or auto (per query: Chinese when it "
                                               "holds a CJK character).")),
        "steps": Param(["intent", "blocklist", "yesno"],
                       gettext_lazy("Steps to run, in the paper's order.")),
        "intent_mode": Param("rules", gettext_lazy("rules, model, rules_or_model or "
                                                   "rules_and_model (the model modes need "
                                                   "intent_models).")),
        "intent_models": Param({}, gettext_lazy("Trained intent classifiers by language (model "
                                                "dicts).")),
        "blocklists": Param({}, gettext_lazy("Blocklist terms by language; a language left out "
                                             "uses the shipped list.")),
        "yesno_features": Param({}, gettext_lazy("Yes/no features by language ([{name, pattern, "
                                                 "weight}]); a language left out uses the "
                                                 "paper's features.")),
        "yesno_threshold": Param(0.5, gettext_lazy("A query is yes/no when its feature score "
                                                   "reaches this.")),
        "all_steps": Param(False, gettext_lazy("Run every step even after one refused the query.")),
        "label_sample": Param(40, gettext_lazy("Queries in the admin's labelling sample."),
                              minimum=1, maximum=5000),
        "label_seed": Param(17, gettext_lazy("Seed of the labelling sample.")),
    }

    def clean_params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        cleaned = copy.deepcopy(super().clean_params(params))  # defaults are lists and dicts
        try:
            query_filter(cleaned)
        except (ValueError, TypeError, KeyError) as exc:
            raise ValidationError(_("stage %(stage)s: %(detail)s")
                                  % {"stage": self.key, "detail": filter_error_text(exc)}) from exc
        return cleaned

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        qf = query_filter(stage.params)
        kept = refused = 0
        reasons: dict[str | StoredText, int] = {}
        for item in items_pending_locked(stage, progress, "filtering queries"):
            verdict = qf.check(item.data["query"]).to_dict()
            _query_verdicts_record(item.data.get("query_id"), verdict, stage.project_id)
            emits = []
            if verdict["accepted"]:
                kept += 1
                emits = [Emit(kind="reco_retrieve", key=item.key,
                              data=_carry(item.data, language=verdict["language"]))]
            else:
                refused += 1
                reason = query_drop_reason(verdict)
                reasons[reason] = reasons.get(reason, 0) + 1
            item_finish(item=item, result=verdict, emits=emits)
        return run_result(received=kept + refused, passed=kept, dropped=reasons, kept=kept,
                          refused=refused)


def query_label_sample(*, stage: Stage) -> list[Item]:
    """The seeded sample of filtered queries an admin labels (labelled ones included)."""
    ids = sorted(stage.items.filter(status="done").values_list("pk", flat=True))
    size = min(stage.params["label_sample"], len(ids))
    chosen = random.Random(stage.params["label_seed"]).sample(ids, size)  # noqa: S311
    return list(stage.items.filter(pk__in=chosen).order_by("pk"))


def query_labels_save(*, stage: Stage, labels: dict[int, bool | None], user: Any) -> int:
    """Record an admin's keep / drop labels (None clears one) on the stage's items."""
    from annotation.models import Item

    changed = 0
    with transaction.atomic():
        for item in (Item.objects.select_for_update().filter(stage=stage, pk__in=list(labels))
                     .order_by("pk")):
            keep = labels[item.pk]
            if keep is None:
                if item.data.pop("admin_label", None) is None:
                    continue
            else:
                item.data["admin_label"] = {"keep": keep, "by": user.get_username(),
                                            "at": timezone.now().isoformat()}
            item.save(update_fields=["data"])
            changed += 1
    return changed


def query_filter_evaluation(*, stage: Stage) -> dict[str, Any] | None:
    """Precision / recall of the stage's filter on the admin's labels (None without any)."""
    labelled = [(d["query"], d["admin_label"]["keep"]) for d in
                stage.items.filter(data__has_key="admin_label").values_list("data", flat=True)]
    if not labelled:
        return None
    return evaluate_filter(query_filter(stage.params), labelled, examples=10).to_dict()


# 3. Retrieval ----------------------------------------------------------------------------------

def _retrieve_documents(project: Project, text: str, k: int,
                        max_chars: int = 0) -> list[dict[str, Any]]:
    """The top-k distinct documents of the project corpus's index for ``text``, ranked by
    their best passage."""
    from collector.models import Document
    from collector.services.retrieval import DOCUMENT, retrieve

    ranked = retrieve(corpus=project.corpus, text=text, k=k, unit=DOCUMENT)
    found = Document.objects.only("id", "external_id", "title", "url", "source_type",
                                  "body").in_bulk([d.document_id for d in ranked])
    return [{
        "document_id": doc.pk, "external_id": doc.external_id, "title": doc.title,
        "url": doc.url, "source_type": doc.source_type,
        "text": doc.body[:max_chars] if max_chars else doc.body,
    } for doc in (found.get(d.document_id) for d in ranked) if doc is not None]


@register
class RetrieveKind(StageKind):
    """Automatic: the top-10 documents of the corpus index for each kept query."""

    key = "reco_retrieve"
    label = gettext_lazy("Retrieve documents")
    automatic = True
    params = {
        "k": Param(10, gettext_lazy("Documents retrieved per query (paper: 10)."),
                   minimum=1, maximum=50),
        "max_doc_chars": Param(0, gettext_lazy("Keep at most this many characters of each "
                                               "document from its start (0 = all); offsets stay "
                                               "offsets into the body."), minimum=0),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        p = stage.params
        retrieved = empty = 0
        for item in items_pending_locked(stage, progress, "retrieving documents"):
            documents = _retrieve_documents(stage.project, item.data["query"], p["k"],
                                            p["max_doc_chars"])
            if not documents:
                empty += 1
                item_finish(item=item, emits=[], result={"documents": 0,
                                                         "outcome": "no documents retrieved"})
                continue
            retrieved += 1
            item_finish(item=item, result={"documents": len(documents)}, emits=[Emit(
                kind="reco_doc_filter", key=item.key,
                data=_carry(item.data, documents=documents),
            )])
        return run_result(received=retrieved + empty, passed=retrieved,
                          dropped={"no document retrieved from the corpus index": empty},
                          retrieved=retrieved, without_documents=empty)


# 4. Document filter -----------------------------------------------------------------------------

DOC_FILTER_PARAMS = ("language", "rules", "ngram_threshold", "window_factor",
                     "window_threshold", "strip_question")


def document_filter(params: dict[str, Any]) -> DocumentFilter:
    """The stage's ``DocumentFilter`` from its parameters."""
    return DocumentFilter.from_params({
        **{k: params[k] for k in DOC_FILTER_PARAMS},
        "ngram_n": {"en": params["ngram_n_en"], "zh": params["ngram_n_zh"]},
    })


@register
class DocumentFilterKind(StageKind):
    """Automatic: drop documents with significant surface overlap with the query
    (``DocumentFilter``); every dropped document keeps its rule, reason and score."""

    key = "reco_doc_filter"
    label = gettext_lazy("Document filter")
    automatic = True
    params = {
        "language": Param("auto", gettext_lazy("en, zh, or auto (per query).")),
        "rules": Param(["contains", "ngram", "window"],
                       gettext_lazy("Rules that drop a document: contains, ngram, window.")),
        "ngram_n_en": Param(2, gettext_lazy("Word n-gram size for English."), minimum=1, maximum=6),
        "ngram_n_zh": Param(3, gettext_lazy("Character n-gram size for Chinese."),
                            minimum=1, maximum=6),
        "ngram_threshold": Param(0.8, gettext_lazy("Drop when this share of the query's n-grams "
                                                   "occurs in the document."),
                                 minimum=0.01, maximum=1),
        "window_factor": Param(1.5, gettext_lazy("Window length, in multiples of the query's "
                                                 "length."), minimum=1),
        "window_threshold": Param(0.9, gettext_lazy("Drop when this share of the query's content "
                                                    "words occurs within one window."),
                                  minimum=0.01, maximum=1),
        "strip_question": Param(True, gettext_lazy("Compare the statement the question asks "
                                                   "about (drop 'can', 吗, A-not-A forms ...).")),
    }

    def clean_params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        cleaned = copy.deepcopy(super().clean_params(params))  # defaults are lists
        try:
            document_filter(cleaned)
        except (ValueError, TypeError) as exc:
            raise ValidationError(_("stage %(stage)s: %(detail)s")
                                  % {"stage": self.key, "detail": filter_error_text(exc)}) from exc
        return cleaned

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        df = document_filter(stage.params)
        kept_total = dropped_total = without = queries = 0
        rules: dict[str, int] = {}
        for item in items_pending_locked(stage, progress, "filtering documents"):
            queries += 1
            query = df.prepare(item.data["query"])
            kept, audit = [], []
            for doc in item.data["documents"]:
                verdict = df.check(query, doc["text"])
                audit.append({"external_id": doc.get("external_id", ""),
                              "document_id": doc.get("document_id"),
                              "title": doc.get("title", ""), **verdict.to_dict()})
                if verdict.kept:
                    kept.append(doc)
            dropped = [a for a in audit if not a["kept"]]
            for a in dropped:
                rules[a["rule"] or "?"] = rules.get(a["rule"] or "?", 0) + 1
            kept_total += len(kept)
            dropped_total += len(dropped)
            result = {"kept": len(kept), "dropped": len(dropped), "documents": audit}
            if not kept:
                without += 1
                item_finish(item=item, emits=[], result={**result, "outcome": "no documents"})
                continue
            item_finish(item=item, result=result, emits=[Emit(
                kind="reco_split", key=item.key,
                data=_carry(item.data, documents=kept, dropped_documents=[
                    {k: a[k] for k in ("external_id", "title", "rule", "reason", "reason_text",
                                       "score")}
                    for a in dropped]),
            )])
        documents = StoredText(gettext_noop("documents: %(kept)s kept, %(dropped)s dropped for "
                                            "trivial overlap"),
                               kept=kept_total, dropped=dropped_total)
        if rules:
            listed: StoredText | None = None
            for rule, n in sorted(rules.items(), key=lambda kv: -kv[1]):
                each = StoredText(gettext_noop("rule %(rule)s: %(count)s"), rule=rule, count=n)
                listed = each if listed is None else StoredText(
                    gettext_noop("%(list)s, %(item)s"), list=listed, item=each)
            documents = StoredText(gettext_noop("%(documents)s (%(rules)s)"),
                                   documents=documents, rules=listed)
        return run_result(
            received=queries, passed=queries - without,
            dropped={StoredText(gettext_noop("every retrieved document overlapped the query "
                                             "trivially")): without},
            notes=[documents] if queries else [], documents_kept=kept_total,
            documents_dropped=dropped_total, queries_without=without)


# 5. Split ----------------------------------------------------------------------------------------

def split_of(key: str, *, seed: int, shares: list[tuple[str, float]]) -> tuple[str, float]:
    """A query's split from a seeded hash of its key: the same key and seed always give the
    same split, whatever order queries arrive in. Returns (split, the draw in [0, 1))."""
    digest = hashlib.sha256(f"crowdqa-reco-split:{seed}:{key}".encode()).digest()
    draw = int.from_bytes(digest[:8], "big") / 2**64
    total = sum(share for _, share in shares)
    edge = 0.0
    for name, share in shares:
        edge += share / total
        if share and draw < edge:
            return name, draw
    return next(name for name, share in reversed(shares) if share), draw


@register
class SplitKind(StageKind):
    """Automatic: a seeded, recorded split per query; test queries follow the test-set
    protocol (two annotators, then a third or a checker) when it is on."""

    key = "reco_split"
    label = gettext_lazy("Split")
    automatic = True
    params = {
        "seed": Param(20200207, gettext_lazy("Seed of the split (recorded, reproducible).")),
        "train": Param(0.834, gettext_lazy("Share of queries in train (ReCO: 250k of 300k)."),
                       minimum=0, maximum=1),
        "dev": Param(0.1, gettext_lazy("Share in dev (ReCO: 30k)."), minimum=0, maximum=1),
        "test": Param(0.066, gettext_lazy("Share in test (ReCO: 20k, test a + b)."),
                      minimum=0, maximum=1),
        "test_double_annotation": Param(True, gettext_lazy(
            "Test queries: two annotators label them independently; agreeing answers go to a "
            "third annotator who picks the better evidence, disagreeing ones to a checker.")),
    }

    def clean_params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        return split_shares_clean(self.key, super().clean_params(params))

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        p = stage.params
        shares = [("train", p["train"]), ("dev", p["dev"]), ("test", p["test"])]
        counts = dict.fromkeys(("train", "dev", "test"), 0)
        for item in items_pending_locked(stage, progress, "assigning splits"):
            split, draw = split_of(item.key, seed=p["seed"], shares=shares)
            counts[split] += 1
            item.split = split
            item.save(update_fields=["split"])
            double = split == "test" and p["test_double_annotation"]
            item_finish(item=item, result={"split": split, "seed": p["seed"], "draw": draw},
                        emits=[Emit(kind="reco_test_evidence" if double else "reco_evidence",
                                    key=item.key, data=_carry(item.data, **{
                                        k: item.data[k] for k in ("documents",
                                                                  "dropped_documents")
                                        if k in item.data}), split=split)])
        done = sum(counts.values())
        return run_result(received=done, passed=done, **counts, notes=[
            ", ".join(f"{name} {n}" for name, n in counts.items())] if done else [])


# 6. Evidence and answers (batched) ----------------------------------------------------------------

@register
class EvidenceKind(StageKind):
    """Human, batched: the annotator selects the evidence in one retrieved document, writes
    three alternatives (positive, negative, uncertain) and marks the correct one, or rejects
    the query. A checker inspects a sample of each finished batch."""

    key = "reco_evidence"
    payload_doc = (
        '`{"doc": n, "evidence": [start, end], "alternatives": {"positive": "…", "negative": '
        '"…", "uncertain": "…"}, "answer": "positive"|"negative"|"uncertain"}`: the index of '
        'the document in `task.documents`, a character range of its text (Unicode code '
        'points, end exclusive), three different short alternatives without `|`, and which is'
        ' correct; or `{"reject": true}` (not a yes / no / uncertain question).')
    label = gettext_lazy("Evidence and answers")
    template = "annotation/tasks/reco_evidence.html"
    batched = True
    scores_gold = True
    inspection_rules = tuple(v.value for v in Violation)
    inspection_template = "annotation/inspection/reco_item.html"
    params = {
        **BATCH_PARAMS,
        "max_alternative_chars": Param(40, gettext_lazy("Longest alternative allowed (ReCO's "
                                                        "are a few words: 能 / 不能 / 无法确定)."),
                                       minimum=1, maximum=500),
    }

    def context(self, item: Item) -> dict[str, Any]:
        language = item.data.get("language") or item.project.language
        return {
            "query": item.data["query"],
            "documents": [{
                "n": n, "title": d.get("title") or _("Document %(number)d") % {"number": n + 1},
                "url": d.get("url", ""),
                "source_type": d.get("source_type", ""), "text": d["text"],
            } for n, d in enumerate(item.data["documents"])],
            "answers": [{"key": k, "label": str(label),
                         "placeholder": PLACEHOLDERS.get(language, PLACEHOLDERS["en"])[k]}
                        for k, label in ANSWERS.items()],
            "max_alternative_chars": item.stage.params["max_alternative_chars"],
        }

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return clean_evidence_payload(
            item.data["documents"], payload,
            max_alternative_chars=item.stage.params["max_alternative_chars"])

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        if data.get("reject"):
            return {"reject": True}
        start, end = _int_or_none(data.get("start")), _int_or_none(data.get("end"))
        return {
            "doc": _int_or_none(data.get("doc")),
            "evidence": [start, end] if start is not None and end is not None else None,
            "alternatives": {k: data.get(f"alt_{k}", "") for k in ANSWERS},
            "answer": data.get("answer", ""),
        }

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        if not data:
            return {}
        return {"alternatives": {k: data.get(f"alt_{k}", "") for k in ANSWERS},
                "answer": data.get("answer", ""), "doc": data.get("doc", ""),
                "start": data.get("start", ""), "end": data.get("end", "")}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("reject"):
            return {"rejected": True}
        start, end = payload.get("evidence") or ("", "")
        return {"alternatives": dict(payload.get("alternatives", {})),
                "answer": payload.get("answer", ""), "doc": payload.get("doc", ""),
                "start": start, "end": end}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """The mean of the exact answer label (positive / negative / uncertain) and the
        token overlap F1 of the evidence texts (one token per Chinese character, per run of
        other letters or digits; punctuation left out); a rejection scores 1 only against
        a rejection."""
        from collections import Counter

        if expected.get("reject") or payload.get("reject"):
            return float(bool(expected.get("reject")) == bool(payload.get("reject")))

        def tokens(text: str) -> Counter:
            return Counter(text[s:e].casefold() for s, e in document_tokens(text)
                           if any(ch.isalnum() for ch in text[s:e]))

        mine, gold = tokens(payload["evidence_text"]), tokens(expected["evidence_text"])
        same = sum((mine & gold).values())
        overlap = (2 * same / (sum(mine.values()) + sum(gold.values()))) if same else 0.0
        return (float(payload["answer"] == expected["answer"]) + overlap) / 2

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        if expected.get("reject"):
            return _rejected(expected)
        answer = expected["answer"]
        return _("Document %(number)d, evidence: “%(evidence)s” · answer: %(answer)s "
                 "(“%(text)s”)") % {"number": expected["doc"] + 1,
                                    "evidence": expected["evidence_text"],
                                    "answer": ANSWERS[answer],
                                    "text": expected["alternatives"][answer]}

    def payload_display(self, item: Item, payload: dict[str, Any]) -> list[Block]:
        return label_blocks(item.data, payload)

    def inspection_view(self, item: Item, submission: Submission) -> dict[str, Any]:
        return {"query": item.data["query"], "label": label_view(item.data, submission.payload),
                "documents": len(item.data["documents"]),
                "dropped_documents": [{**d, "reason": verdict_reason(d)}
                                      for d in item.data.get("dropped_documents", [])]}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        submission = submissions[-1]
        payload = submission.payload
        batch = item.batch
        if payload.get("reject"):
            _save_result(item, {"outcome": "rejected", "reason": payload.get("reason", REJECTED),
                                "submission": submission.pk})
            return []
        _save_result(item, {"outcome": "answered", "answer": payload["answer"],
                            "submission": submission.pk})
        return [_final_emit(item, payload, source="batch", annotators=[submission.worker_id],
                            extra={"batch": batch.number if batch else None,
                                   "round": submission.assignment.round})]


def _final_emit(item: Item, payload: dict[str, Any], *, source: str, annotators: list[int],
                extra: dict[str, Any] | None = None) -> Emit:
    document = item.data["documents"][payload["doc"]]
    return Emit(kind="reco_final", key=item.key, split=item.split, data=_carry(
        item.data, document=document, label=payload, source=source, annotators=annotators,
        **(extra or {}),
    ))


# 7. Test set: two annotators, independently ----------------------------------------------------

def _candidates(item: Item, submissions: list[Submission]) -> list[dict[str, Any]]:
    return [{"submission": s.pk, "worker": s.worker_id, "payload": s.payload}
            for s in submissions]


@register
class DoubleEvidenceKind(EvidenceKind):
    """Human: test queries get the same form from two annotators, independently. Agreeing
    answers go to a third annotator to choose the evidence, disagreeing ones to a checker."""

    key = "reco_test_evidence"
    payload_doc = (
        'As `reco_evidence`: `{"doc": n, "evidence": [start, end], "alternatives": {…}, '
        '"answer": …}` or `{"reject": true}`.')
    label = gettext_lazy("Test set: evidence and answers (two annotators)")
    batched = False
    inspection_rules = ()
    params = {"max_alternative_chars": EvidenceKind.params["max_alternative_chars"]}

    def fixed_overlap(self) -> int | None:
        return TEST_ANNOTATORS

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        first, second = (s.payload for s in submissions[:TEST_ANNOTATORS])
        answers = ["rejected" if p.get("reject") else p["answer"] for p in (first, second)]
        agreed = answers[0] == answers[1]
        _save_result(item, {"answers": answers, "agreed": agreed,
                            "submissions": [s.pk for s in submissions]})
        if agreed and answers[0] == "rejected":
            return []  # both say it is not a yes / no / uncertain question
        data = _carry(item.data, documents=item.data["documents"],
                      candidates=_candidates(item, submissions[:TEST_ANNOTATORS]))
        workers = tuple(s.worker_id for s in submissions)
        reason = gettext_noop("labelled this query")
        if agreed:
            return [Emit(kind="reco_evidence_choice", key=item.key, data=data, split=item.split,
                         exclude_user_ids=workers, exclusion_reason=reason)]
        return [Emit(kind="reco_adjudicate", key=item.key, data=data, split=item.split,
                     exclude_user_ids=workers, exclusion_reason=reason)]


class _CandidatesKind(StageKind):
    """Shared by the two stages that choose between the two test labels."""

    scores_gold = True

    def context(self, item: Item) -> dict[str, Any]:
        return {"query": item.data["query"], "candidates": [
            {"index": n, "letter": "AB"[n], **label_view(item.data, c["payload"])}
            for n, c in enumerate(item.data["candidates"])]}

    def payload_display(self, item: Item, payload: dict[str, Any]) -> list[Block]:
        """The chosen label shown in full (or the rejection)."""
        if "choice" not in payload:
            return generic_blocks(payload)
        chosen = item.data["candidates"][payload["choice"]]["payload"]
        return [Block(_("Chose"), "labels", [_("label %(n)s") % {"n": payload["choice"] + 1}]),
                *label_blocks(item.data, chosen)]

    def _chosen(self, item: Item, payload: dict[str, Any]) -> int:
        choice = payload.get("choice")
        count = len(item.data["candidates"])
        if not isinstance(choice, int) or isinstance(choice, bool) or not 0 <= choice < count:
            raise ValidationError(_("choice: choose one of the %(count)d labels")
                                  % {"count": count})
        if item.data["candidates"][choice]["payload"].get("reject"):
            raise ValidationError(_("choice: that label rejects the query; to reject it, "
                                    "choose 'reject the query'"))
        return choice

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        choice = data.get("choice", "")
        if choice == "reject":
            return {"reject": True}
        number = whole_number(choice)
        return {"choice": number} if number is not None else {}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """Exact label: the same label chosen, or the query rejected by both."""
        return float(payload == expected)

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        if expected.get("reject"):
            return _rejected(expected)
        choice = expected["choice"]
        label = label_view(item.data, item.data["candidates"][choice]["payload"])
        return _("Label %(label)s: evidence “%(evidence)s” · answer: %(answer)s (“%(text)s”)") % {
            "label": "AB"[choice], "evidence": label["evidence"],
            "answer": ANSWERS[label["answer"]], "text": label["answer_text"]}


@register
class EvidenceChoiceKind(_CandidatesKind):
    """Human: a third annotator (never one of the two) picks the better of two evidences
    whose answers agree."""

    key = "reco_evidence_choice"
    payload_doc = (
        '`{"choice": n}`: the index of the label in `task.candidates` whose evidence is best.')
    label = gettext_lazy("Test set: choose the evidence")
    template = "annotation/tasks/reco_evidence_choice.html"
    shows_others_work = True

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return {"choice": self._chosen(item, payload)}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        choice = submissions[-1].payload["choice"]
        candidate = item.data["candidates"][choice]
        _save_result(item, {"choice": choice, "submission": candidate["submission"]})
        workers = [c["worker"] for c in item.data["candidates"]] + [submissions[-1].worker_id]
        return [_final_emit(item, candidate["payload"], source="test: evidence chosen by a "
                            "third annotator", annotators=workers, extra={"choice": choice})]


@register
class AdjudicateKind(_CandidatesKind):
    """Human, checkers: the two test labels disagree; the checker keeps one or rejects the
    query."""

    key = "reco_adjudicate"
    payload_doc = (
        '`{"choice": n}`: the index of the correct label in `task.candidates`; or `{"reject":'
        ' true}`.')
    label = gettext_lazy("Test set: adjudication")
    role = Role.CHECKER
    template = "annotation/tasks/reco_adjudicate.html"

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("reject") is True:
            return {"reject": True, "reason": REJECTED}
        return {"choice": self._chosen(item, payload)}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        decision = submissions[-1].payload
        if decision.get("reject"):
            _save_result(item, {"outcome": "rejected", "checker": submissions[-1].worker_id})
            return []
        candidate = item.data["candidates"][decision["choice"]]
        _save_result(item, {"outcome": "answered", "choice": decision["choice"],
                            "submission": candidate["submission"]})
        workers = [c["worker"] for c in item.data["candidates"]] + [submissions[-1].worker_id]
        return [_final_emit(item, candidate["payload"], source="test: adjudicated by a checker",
                            annotators=workers, extra={"choice": decision["choice"]})]


# 8. Final records -------------------------------------------------------------------------------

def final_record(data: dict[str, Any], split: str) -> dict[str, Any]:
    """The ReCO record (query, doc, passage = evidence, alternatives joined by '|', answer)
    with its split and provenance."""
    document, label = data["document"], data["label"]
    alternatives = label["alternatives"]
    return {
        "query_id": data.get("query_id"), "query": data["query"],
        "url": document.get("url") or None, "doc": document["text"],
        "passage": label["evidence_text"],
        "alternatives": "|".join(alternatives[k] for k in ANSWERS),
        "answer": alternatives[label["answer"]], "answer_type": label["answer"],
        "split": split,
        "provenance": {
            "external_id": data.get("external_id"), "document_id": document.get("document_id"),
            "document_external_id": document.get("external_id", ""),
            "title": document.get("title", ""), "source_type": document.get("source_type", ""),
            "evidence": label["evidence"], "source": data["source"],
            "annotators": data["annotators"],
            **{k: data[k] for k in ("batch", "round", "choice") if k in data},
        },
    }


@register
class FinalKind(StageKind):
    """Automatic: one final record per answered query."""

    key = "reco_final"
    label = gettext_lazy("Final set")
    automatic = True

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        done = 0
        for item in items_pending_locked(stage, progress, "writing final records"):
            item_finish(item=item, emits=[], result=final_record(item.data, item.split))
            done += 1
        return run_result(received=done, passed=done, records=done)


def final_records(*, project: Project) -> Iterator[dict[str, Any]]:
    """The project's final records, in order."""
    from annotation.models import Item

    yield from (Item.objects.filter(project=project, stage__kind="reco_final", status="done")
                .order_by("id").values_list("result", flat=True).iterator())


# Training the optional intent classifier ---------------------------------------------------------

def labelled_queries_read(text: str, *, name: str) -> list[tuple[str, bool]]:
    """Labelled queries from an uploaded file: JSON lines ``{"text": ..., "label": ...}`` or
    tab-separated ``label<TAB>text`` lines (labels: question / not_question, yes / no, 1 / 0).
    Errors name the file, line and field, framed as the import's (shown in the reader's
    language)."""
    from collector.filters.classifier import parse_label

    samples: list[tuple[str, bool]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = at_line(number)
        if line.lstrip().startswith("{"):
            try:
                row = json_record(line, file=name, where=where)
            except ImportFailure as exc:
                raise ValidationError(exc.text) from None
            query, label = row.get("text"), row.get("label")
            if query is None:
                raise _label_refusal(StoredText(IS_MISSING), name, where, "text")
            if not isinstance(query, str):
                raise _label_refusal(StoredText(SHOULD_BE_STRING), name, where, "text")
            if not query.strip():
                raise _label_refusal(StoredText(IS_EMPTY), name, where, "text")
        else:
            if "\t" not in line:
                raise _label_refusal(StoredText(gettext_noop(
                    "expected 'label<TAB>text' or a JSON object")), name, where)
            label, query = line.split("\t", 1)
        try:
            samples.append((query.strip(), parse_label(label)))
        except ValueError:
            raise _label_refusal(StoredText(gettext_noop(
                "%(value)s is not a label (use true/false, 1/0 or yes/no)"),
                value=shorten(label)), name, where, "label") from None
    if not samples:
        raise _label_refusal(StoredText(gettext_noop("the file holds no labelled query")), name)
    return samples


def _label_refusal(detail: StoredText, file: str, where: StoredText | None = None,
                   field: str | None = None) -> ValidationError:
    return ValidationError(ImportFailure(detail, file=file, where=where, field=field).text)


def intent_model_train(*, stage: Stage, samples: list[tuple[str, bool]],
                       language: str) -> dict[str, Any]:
    """Train the intent classifier for ``language`` on the admin's labelled queries and
    put it in the query-filter stage's parameters (before the project starts); the filter
    then accepts a query the rules or the model take for a question."""
    from annotation.engine import stage_params_update
    from collector.filters.classifier import IntentClassifier

    if language not in LANGUAGES:
        raise ValidationError(_("language: %(value)s is not one of %(choices)s")
                              % {"value": repr(language), "choices": ", ".join(LANGUAGES)})
    questions = sum(1 for _query, label in samples if label)
    if questions in (0, len(samples)):
        raise ValidationError(_("training needs questions and non-questions; the file has "
                                "%(questions)s question(s) and %(others)s non-question(s)")
                              % {"questions": questions, "others": len(samples) - questions})
    try:
        model = IntentClassifier.train(samples, language=language)
    except ValueError as exc:
        raise ValidationError(_("training: %(error)s") % {"error": exc}) from exc
    models = {**stage.params.get("intent_models", {}), language: model.to_dict()}
    mode = stage.params.get("intent_mode", "rules")
    # The filter uses models for every language it handles: with language "auto" both
    # need one; until then the model waits in the parameters and the rules decide.
    needed = {"en", "zh"} if stage.params.get("language", "auto") == "auto" else {
        stage.params["language"]}
    ready = needed <= set(models)
    params: dict[str, Any] = {"intent_models": models}
    if ready and mode == "rules":
        params["intent_mode"] = mode = "rules_or_model"
    stage_params_update(stage=stage, params=params)
    return {"language": language, "samples": len(samples), "questions": questions,
            "mode": mode, "missing": sorted(needed - set(models))}
