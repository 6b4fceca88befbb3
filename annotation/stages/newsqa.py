"""The NewsQA recipe's stage kinds (NewsQA paper, section 3)."""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

import orjson
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.http import whole_number
from annotation.payload_display import Block, generic_blocks
from annotation.stages import (
    TAKEN_BEFORE,
    Emit,
    Param,
    StageKind,
    register,
    run_result,
    split_shares_clean,
)
from collector.consolidation import Answer, agreement, newsqa_question_record
from collector.metrics.squad import f1_v2
from collector.question_rules import check_question
from collector.splits import split_assign
from collector.stored_text import StoredText

if TYPE_CHECKING:
    from annotation.models import Item, Stage, Submission
    from collector.jobs import Progress


_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def token_spans_html(tokens: Iterable[dict[str, Any]]) -> str:
    """The page's spans of ``tokens`` (index, start and end offsets), each followed by the
    text after it, escaped as the template would."""
    return "".join(
        f'<span class="tok" data-i="{t["i"]}" data-s="{t["s"]}" data-e="{t["e"]}">'
        f'{escape(t["t"])}</span>{escape(t["after"])}' for t in tokens)


class ArticleTokens(Sequence):
    """``article_tokens``' sequence: token ``n`` is ``{"i": n, "s": start, "e": end,
    "t": text, "after": the text up to the next token}``. Kept compact (the body and the
    tokens' offsets; a dict is made when one is read) with the two forms the hot path sends,
    each made once per article: the JSON of the list (``json_fragment``, the API's claim)
    and the page's spans (``spans_html``). Shared between requests: read only."""

    def __init__(self, body: str) -> None:
        self.body = body
        bounds = array("l")
        for m in _TOKEN.finditer(body):
            bounds.extend(m.span())
        self._bounds = bounds

    def __len__(self) -> int:
        return len(self._bounds) // 2

    def _token(self, n: int) -> dict[str, Any]:
        bounds, body = self._bounds, self.body
        start, end = bounds[2 * n], bounds[2 * n + 1]
        gap_end = bounds[2 * n + 2] if 2 * n + 2 < len(bounds) else len(body)
        return {"i": n, "s": start, "e": end, "t": body[start:end],
                "after": body[end:gap_end]}

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._token(n) for n in range(*index.indices(len(self)))]
        n = index + len(self) if index < 0 else index
        if not 0 <= n < len(self):
            raise IndexError("token index out of range")
        return self._token(n)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._token(n) for n in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ArticleTokens):
            return self.body == other.body
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<ArticleTokens: {len(self)} tokens>"

    def tolist(self) -> list[dict[str, Any]]:
        """The tokens as a list (what JSON encoders that know ``tolist`` call)."""
        return list(self)

    @functools.cached_property
    def json(self) -> bytes:
        return orjson.dumps(self.tolist())

    def json_fragment(self) -> orjson.Fragment:
        """The list as already-serialized JSON, for the API's renderer."""
        return orjson.Fragment(self.json)

    @functools.cached_property
    def spans_html(self) -> str:
        return token_spans_html(self)


@functools.lru_cache(maxsize=256)
def article_tokens(body: str) -> ArticleTokens:
    """Words and punctuation of the article with exact offsets and the text that follows,
    so the page can render it verbatim and map any selection back to character offsets.
    Kept for the articles read last: a claim, its page and its submit read one article
    three times, and annotators work on a project's articles side by side. An article of
    650 words (~700 tokens) holds 0.1 MB here once its JSON and its page's spans are made
    (~26 MB at most per process); making them again costs a few milliseconds."""
    return ArticleTokens(body)


def _document_view(item: Item) -> dict[str, Any]:
    doc = item.document
    return {"headline": doc.title, "highlights": list(doc.highlights or []), "body": doc.body,
            "external_id": doc.external_id}


@register
class ArticlesKind(StageKind):
    """Automatic: take the project corpus's articles as the pipeline's first items."""

    key = "newsqa_articles"
    label = gettext_lazy("Import articles")
    automatic = True
    params = {
        "max_articles": Param(0, gettext_lazy("Take at most this many articles (0 = all)."),
                              minimum=0),
        "require_highlights": Param(True, gettext_lazy("Skip articles without summary points.")),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish
        from annotation.models import Item
        from collector.models import Document

        corpus_docs = Document.objects.filter(corpus_id=stage.project.corpus_id)
        received = corpus_docs.count()
        docs = corpus_docs.order_by("id")
        dropped: dict[str | StoredText, int] = {}
        if stage.params["require_highlights"]:
            docs = docs.exclude(highlights=[])
            without = received - docs.count()
            if without:
                dropped[StoredText(gettext_noop("no highlights (require_highlights is "
                                                "on)"))] = without
        if stage.params["max_articles"]:
            beyond = max(docs.count() - stage.params["max_articles"], 0)
            if beyond:
                dropped[StoredText(gettext_noop("beyond max_articles (%(limit)s)"),
                                   limit=stage.params["max_articles"])] = beyond
            docs = docs[: stage.params["max_articles"]]
        rows = list(docs.values_list("id", "external_id"))
        progress.start(total=len(rows), message=gettext_lazy("taking articles"))
        taken = 0
        # One transaction: the split stage then sees every article at once, so its 90/5/5
        # cut is over the whole set.
        with transaction.atomic():
            for doc_id, external_id in rows:
                item, _ = Item.objects.get_or_create(
                    stage=stage, key=external_id,
                    defaults={"project_id": stage.project_id, "document_id": doc_id},
                )
                if item.status == Item.Status.PENDING:
                    item_finish(item=item, emits=[Emit(
                        kind="newsqa_split", key=external_id, data={}, document_id=doc_id,
                    )])
                    taken += 1
                progress.advance()
        dropped[StoredText(TAKEN_BEFORE)] = len(rows) - taken
        return run_result(received=received, passed=taken, dropped=dropped,
                          articles=len(rows), new=taken)


@register
class SplitKind(StageKind):
    """Automatic: split articles into train/dev/test with a recorded seed."""

    key = "newsqa_split"
    label = gettext_lazy("Split by article")
    automatic = True
    params = {
        "seed": Param(20161107, gettext_lazy("Random seed of the split (recorded, reproducible).")),
        "train": Param(0.90, gettext_lazy("Share of articles in train."), minimum=0, maximum=1),
        "dev": Param(0.05, gettext_lazy("Share of articles in dev."), minimum=0, maximum=1),
        "test": Param(0.05, gettext_lazy("Share of articles in test."), minimum=0, maximum=1),
    }

    def clean_params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        return split_shares_clean(self.key, super().clean_params(params))

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        p = stage.params
        # The cut is over every article of the stage (they arrive in one transaction); an
        # article keeps the split it was first given (stored on the item), so articles
        # added later never move earlier ones.
        keys = list(stage.items.values_list("key", flat=True))
        splits = split_assign(keys, seed=p["seed"],
                              ratios=(("train", p["train"]), ("dev", p["dev"]),
                                      ("test", p["test"])))
        done = 0
        for item in items_pending_locked(stage, progress, "assigning splits"):
            split = item.split or splits[item.key]
            item.split = split
            item.save(update_fields=["split"])
            item_finish(item=item, result={"split": split}, emits=[Emit(
                kind="newsqa_question", key=item.key, data={}, document_id=item.document_id,
                split=split,
            )])
            done += 1
        return run_result(received=done, passed=done, split=done)


@register
class QuestionKind(StageKind):
    """Human: the questioner sees only headline and highlights and writes questions."""

    key = "newsqa_question"
    payload_doc = (
        '`{"questions": ["…", …]}`: one to the stage\'s `max_questions` questions about the '
        'article, none repeated; a question too close to the highlights is refused.')
    label = gettext_lazy("Question sourcing")
    template = "annotation/tasks/newsqa_question.html"
    overlap_param = "questioners_per_article"
    params = {
        "questioners_per_article": Param(1, gettext_lazy("Questioners per article."),
                                         minimum=1, maximum=10),
        "max_questions": Param(3, gettext_lazy("Questions one questioner may write."),
                               minimum=1, maximum=10),
        "max_overlap": Param(0.6, gettext_lazy("Refuse a question when more than this share of "
                                               "its content words occurs in the highlights."),
                             minimum=0, maximum=1),
        "forbid_how_why": Param(True, gettext_lazy('Refuse "how" / "why" questions.')),
    }

    def context(self, item: Item) -> dict[str, Any]:
        view = _document_view(item)
        return {"headline": view["headline"], "highlights": view["highlights"],
                "max_questions": item.stage.params["max_questions"]}

    def check(self, item: Item, question: str):
        p = item.stage.params
        return check_question(question, list(item.document.highlights or []),
                              max_overlap=p["max_overlap"], forbid_how_why=p["forbid_how_why"])

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        raw = payload.get("questions")
        if not isinstance(raw, list):
            raise ValidationError(_("questions: a list of question texts is required"))
        questions = [q.strip() for q in raw if isinstance(q, str) and q.strip()]
        if not questions:
            raise ValidationError(_("questions: write at least one question"))
        limit = item.stage.params["max_questions"]
        if len(questions) > limit:
            raise ValidationError(_("questions: at most %(limit)d questions per article")
                                  % {"limit": limit})
        if len({q.lower() for q in questions}) != len(questions):
            raise ValidationError(_("questions: do not repeat the same question"))
        for n, question in enumerate(questions, start=1):
            verdict = self.check(item, question)
            if not verdict.ok:
                raise ValidationError(_("question %(n)d: %(reason)s")
                                      % {"n": n, "reason": verdict.reason})
        return {"questions": questions}

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        return {"questions": [q for q in data.getlist("question") if q.strip()]}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        posted = data.getlist("question") if data else []
        slots = item.stage.params["max_questions"]
        return {"questions": [(n, posted[n - 1] if n <= len(posted) else "")
                              for n in range(1, slots + 1)]}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        posted = payload.get("questions", [])
        slots = max(item.stage.params["max_questions"], len(posted))
        return {"questions": [(n, posted[n - 1] if n <= len(posted) else "")
                              for n in range(1, slots + 1)]}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        questioners = tuple(s.worker_id for s in submissions)
        return [
            Emit(kind="newsqa_answer", key=f"{item.key}/s{s.pk}/q{n}",
                 data={"question": q}, document_id=item.document_id, split=item.split,
                 exclude_user_ids=questioners,
                 exclusion_reason=gettext_noop("wrote questions on this article"))
            for s in submissions for n, q in enumerate(s.payload["questions"], start=1)
        ]


def _spans_text(item: Item, payload: dict[str, Any]) -> str:
    return " ".join(item.document.body[s:e] for s, e in payload["spans"])


def clean_answer_payload(item: Item, payload: dict[str, Any]) -> dict[str, Any]:
    """One or more spans (exact offsets into the body), or no answer, or a bad question."""
    body = item.document.body
    if payload.get("no_answer") is True:
        return {"no_answer": True}
    if payload.get("bad_question") is True:
        return {"bad_question": True}
    spans = payload.get("spans")
    if not isinstance(spans, list) or not spans:
        raise ValidationError(
            _("spans: select at least one span, or choose 'no answer' or 'question makes no "
              "sense'")
        )
    cleaned = []
    for n, span in enumerate(spans, start=1):
        if (not isinstance(span, list | tuple) or len(span) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
            raise ValidationError(_("spans[%(n)d]: expected [start, end] character offsets")
                                  % {"n": n})
        start, end = span
        if not 0 <= start < end <= len(body):
            raise ValidationError(
                _("spans[%(n)d]: [%(start)d, %(end)d] is outside the article (0..%(length)d)")
                % {"n": n, "start": start, "end": end, "length": len(body)})
        if not body[start:end].strip():
            raise ValidationError(_("spans[%(n)d]: the selection holds only white space")
                                  % {"n": n})
        cleaned.append([start, end])
    cleaned.sort()
    for before, after in zip(cleaned, cleaned[1:], strict=False):
        if after[0] < before[1]:  # stored as sent, a validator was shown the text twice
            raise ValidationError(_("spans: %(first)s and %(second)s overlap; select each part "
                                    "of the answer once")
                                  % {"first": before, "second": after})
    return {"spans": cleaned}


@register
class AnswerKind(StageKind):
    """Human: the answerer sees the full article and one question, and marks spans."""

    key = "newsqa_answer"
    payload_doc = (
        '`{"spans": [[start, end], …]}`: one or more non-overlapping character ranges of the '
        'article, as the `s` and `e` of `task.tokens` give them (Unicode code points, end '
        'exclusive); or `{"no_answer": true}` (no answer in the article) or '
        '`{"bad_question": true}` (the question makes no sense).')
    label = gettext_lazy("Answer sourcing")
    template = "annotation/tasks/newsqa_answer.html"
    overlap_param = "answers_per_question"
    scores_gold = True
    params = {
        "answers_per_question": Param(2, gettext_lazy("Answerers asked first."),
                                      minimum=1, maximum=10),
        "max_extra_answers": Param(3, gettext_lazy("More answerers asked, one at a time, while "
                                                   "the answers do not agree."),
                                   minimum=0, maximum=10),
        "min_agree": Param(2, gettext_lazy("Answerers who must agree."), minimum=1, maximum=10),
        "max_gap_words": Param(3, gettext_lazy("Merge spans fewer than this many words apart."),
                               minimum=0),
    }

    def context(self, item: Item) -> dict[str, Any]:
        view = _document_view(item)
        body = view["body"]
        lead = body[: len(body) - len(body.lstrip())]
        return {"question": item.data["question"], "headline": view["headline"],
                "lead": lead, "tokens": article_tokens(body)}

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return clean_answer_payload(item, payload)

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """Token F1 (SQuAD normalisation) of the answer's text against the gold spans'; a
        flag (no answer, bad question) scores 1 only against the same flag."""
        if "spans" not in expected or "spans" not in payload:
            return float(payload == expected)
        return f1_v2(_spans_text(item, payload), _spans_text(item, expected))

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        if expected.get("no_answer"):
            return _("No answer in the article.")
        if expected.get("bad_question"):
            return _("The question makes no sense.")
        return " … ".join(item.document.body[s:e] for s, e in expected.get("spans", []))

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        return {"payload": data.get("payload", "")} if data else {}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        import json

        return {"payload": json.dumps(payload) if "spans" in payload else "",
                "flag": next((f for f in ("no_answer", "bad_question") if payload.get(f)), "")}

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        flag = data.get("flag")
        if flag in ("no_answer", "bad_question"):
            return {flag: True}
        return super().payload_from_form(item, data)

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit] | None:
        from annotation.engine import slots_add

        p = item.stage.params
        answers = [Answer.from_record(s.payload) for s in submissions]
        result = agreement(item.document.body, answers, min_agree=p["min_agree"],
                           max_gap_words=p["max_gap_words"])
        extra = len(submissions) - p["answers_per_question"]
        if not result.agreed and extra < p["max_extra_answers"]:
            item.overlap += 1
            item.save(update_fields=["overlap"])
            slots_add(item=item, n=1)
            return None
        return [Emit(
            kind="newsqa_agreement", key=item.key, document_id=item.document_id, split=item.split,
            data={"question": item.data["question"],
                  "answers": [s.payload for s in submissions],
                  "answerer_ids": [s.worker_id for s in submissions]},
        )]


@register
class AgreementKind(StageKind):
    """Automatic: agreed questions go to consolidation, the others to validation."""

    key = "newsqa_agreement"
    label = gettext_lazy("Agreement")
    automatic = True
    params = {
        "min_agree": Param(2, gettext_lazy("Answerers who must agree."), minimum=1, maximum=10),
        "max_gap_words": Param(3, gettext_lazy("Merge spans fewer than this many words apart."),
                               minimum=0),
        "weight_by_competence": Param(False, gettext_lazy(
            "Not in the paper: among agreeing answers, take the one whose answerers have the "
            "highest total competence (leave-one-out span F1) as the consensus; the agreement "
            "test stays the paper's.")),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        """Check each pending question's agreement (``collector.consolidation.agreement``).

        With ``weight_by_competence``, each answerer's competence is estimated once per run
        (``spans_competence`` over the project's answer-stage submissions that are neither
        set aside nor of gold items; an answer's text is its spans' text joined by a space,
        "" for no answer or a bad question), and each answer weighs its answerer's ``f1``;
        an answerer without an estimate weighs the mean of the estimated answerers (1.0
        when there are none).

        A question without agreement goes to validators other than its answerers (one whose
        answer was set aside or corrected too) and the workers its answer item excluded
        (the questioners of its article, its author among them): validation is a third
        group of workers (section 3.4).
        """
        from annotation.engine import item_finish, items_pending_locked
        from annotation.models import ItemExclusion, Submission

        competence: dict[int, float] | None = None
        if stage.params.get("weight_by_competence"):
            from collector.metrics.competence import spans_competence
            from collector.models import Document

            latest = {(item_id, worker_id): (payload, document_id)
                      for item_id, worker_id, payload, document_id in Submission.objects.filter(
                          stage__project_id=stage.project_id, stage__kind="newsqa_answer",
                          set_aside=False, superseded_by__isnull=True, item__gold="",
                      ).order_by("id").values_list("item_id", "worker_id", "payload",
                                                   "item__document_id")}
            bodies = dict(Document.objects.filter(pk__in={d for _, d in latest.values()})
                          .values_list("pk", "body"))
            rows = [{"item": str(item_id), "worker": str(worker_id),
                     "answer": " ".join(bodies[document_id][s:e]
                                        for s, e in payload.get("spans", ()))}
                    for (item_id, worker_id), (payload, document_id) in latest.items()]
            # Only the mean F1 is used: one bootstrap draw keeps the estimate cheap.
            estimates = spans_competence(rows, resamples=1)["workers"] if rows else {}
            competence = {int(w): e["f1"] for w, e in estimates.items()}
        fallback = sum(competence.values()) / len(competence) if competence else 1.0

        agreed = checked = 0
        for item in items_pending_locked(stage, progress, "checking agreement"):
            checked += 1
            answers = [Answer.from_record(a) for a in item.data["answers"]]
            weights = None if competence is None else [
                competence.get(w, fallback)
                for w in item.data.get("answerer_ids", [None] * len(answers))]
            result = agreement(item.document.body, answers, min_agree=stage.params["min_agree"],
                               max_gap_words=stage.params["max_gap_words"], weights=weights)
            base = {"question": item.data["question"], "answers": item.data["answers"]}
            if "answerer_ids" in item.data:  # the record's answerWorkers
                base["answerer_ids"] = item.data["answerer_ids"]
            if weights is not None:  # consolidation picks the same weighted consensus
                base["weights"] = weights
            if result.agreed:
                agreed += 1
                emit = Emit(kind="newsqa_consolidate", key=item.key, data=base,
                            document_id=item.document_id, split=item.split)
            else:
                questioners = (ItemExclusion.objects.filter(item_id=item.parent_id)
                               .values_list("user_id", flat=True)) if item.parent_id else ()
                # Everyone who answered it, an answer set aside (its worker paused by the
                # gold checks) or corrected included: validators are a third group.
                answerers = (Submission.objects.filter(item_id=item.parent_id)
                             .values_list("worker_id", flat=True)) if item.parent_id else ()
                emit = Emit(
                    kind="newsqa_validate", key=item.key, document_id=item.document_id,
                    split=item.split,
                    data={**base, "unique_answers": [a.to_record() for a in result.unique_answers
                                                     if not a.bad_question]},
                    exclude_user_ids=(*item.data.get("answerer_ids", ()), *answerers,
                                      *questioners),
                    exclusion_reason=gettext_noop("wrote questions on this article or "
                                                  "answered this question"),
                )
            outcome = {
                "agreed": result.agreed, "support": result.support,
                "consensus": result.consensus.to_record() if result.consensus else None,
            }
            if weights is not None:
                outcome |= {"weighted": True, "weights": weights,
                            "weighted_support": result.weighted_support}
            item_finish(item=item, emits=[emit], result=outcome)
        return run_result(
            received=checked, passed=checked, checked=checked, agreed=agreed,
            to_validation=checked - agreed,
            notes=[StoredText(gettext_noop("%(agreed)s agreed: to consolidation; %(other)s "
                                           "without agreement: to validation"),
                              agreed=agreed, other=checked - agreed)] if checked else [])


@register
class ValidateKind(StageKind):
    """Human: a validator sees article, question and the unique answers, picks the best."""

    key = "newsqa_validate"
    payload_doc = (
        '`{"choice": n}`: the index of the best answer in `task.options`; or `{"all_bad": '
        'true}` or `{"bad_question": true}`.')
    label = gettext_lazy("Validation")
    template = "annotation/tasks/newsqa_validate.html"
    overlap_param = "validators_per_question"
    scores_gold = True
    shows_others_work = True
    params = {
        "validators_per_question": Param(2, gettext_lazy("Validators per question (paper: "
                                                         "2.48 on average)."),
                                         minimum=1, maximum=10),
    }

    def context(self, item: Item) -> dict[str, Any]:
        body = item.document.body
        options = []
        for n, answer in enumerate(item.data["unique_answers"]):
            if answer.get("no_answer"):
                text = _("No answer in the article")
            else:
                text = " … ".join(body[s:e] for s, e in answer["spans"])
            options.append({"index": n, "text": text})
        return {"question": item.data["question"], "body": body, "options": options,
                "headline": item.document.title}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        return {"choice": data.get("choice", "")} if data else {}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        if "choice" in payload:
            return {"choice": str(payload["choice"])}
        return {"choice": next((f for f in ("all_bad", "bad_question") if payload.get(f)), "")}

    def payload_display(self, item: Item, payload: dict[str, Any]) -> list[Block]:
        """The chosen answer by its text, as the options showed it."""
        if "choice" not in payload:
            return generic_blocks(payload)
        options = self.context(item)["options"]
        choice = payload["choice"]
        text = (options[choice]["text"] if 0 <= choice < len(options)
                else _("option %(n)s") % {"n": choice})
        return [Block(_("Chose"), "labels", [_("answer %(n)s") % {"n": choice + 1}]),
                Block(_("Answer"), "text", text)]

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        choice = data.get("choice", "")
        if choice in ("all_bad", "bad_question"):
            return {choice: True}
        number = whole_number(choice)
        return {"choice": number} if number is not None else {}

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        if payload.get("all_bad") is True:
            return {"all_bad": True}
        if payload.get("bad_question") is True:
            return {"bad_question": True}
        choice = payload.get("choice")
        count = len(item.data["unique_answers"])
        if not isinstance(choice, int) or isinstance(choice, bool) or not 0 <= choice < count:
            raise ValidationError(
                _("choice: pick one of the %(count)d answers, 'all answers are bad' or "
                  "'the question makes no sense'") % {"count": count})
        return {"choice": choice}

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """Exact label: the same answer chosen, or the same "all answers are bad" / "the
        question makes no sense"."""
        return float(payload == expected)

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        if expected.get("all_bad"):
            return _("All answers are very bad.")
        if expected.get("bad_question"):
            return _("The question doesn't make sense.")
        choice = expected.get("choice", 0)
        answer = item.data["unique_answers"][choice]
        text = (_("No answer in the article") if answer.get("no_answer") else
                " … ".join(item.document.body[s:e] for s, e in answer.get("spans", [])))
        return _("Answer %(n)d: %(text)s") % {"n": choice + 1, "text": text}

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        return [Emit(
            kind="newsqa_consolidate", key=item.key, document_id=item.document_id,
            split=item.split,
            data={"question": item.data["question"], "answers": item.data["answers"],
                  "unique_answers": item.data["unique_answers"],
                  "validations": [s.payload for s in submissions],
                  **{key: item.data[key] for key in ("answerer_ids",) if key in item.data}},
        )]


@register
class ConsolidateKind(StageKind):
    """Automatic: merge spans, keep every answer and validator choice, mark the consensus."""

    key = "newsqa_consolidate"
    label = gettext_lazy("Cleanup and consolidation")
    automatic = True
    params = {
        "min_agree": Param(2, gettext_lazy("Agreeing workers needed for an agreed answer."),
                           minimum=1),
        "max_gap_words": Param(3, gettext_lazy("Merge spans fewer than this many words apart."),
                               minimum=0),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.engine import item_finish, items_pending_locked

        consolidated = 0
        for item in items_pending_locked(stage, progress, "consolidating"):
            consolidated += 1
            unique = [Answer.from_record(a) for a in item.data.get("unique_answers", [])]
            choices = None
            if "validations" in item.data:
                choices = [
                    unique[v["choice"]] if "choice" in v else
                    Answer(bad_question=True) if v.get("bad_question") else
                    # "All answers are bad": a vote of its own, never "no answer".
                    Answer(all_bad=True)
                    for v in item.data["validations"]
                ]
            record = newsqa_question_record(
                text=item.document.body, question=item.data["question"],
                answers=[Answer.from_record(a) for a in item.data["answers"]],
                validator_choices=choices, min_agree=stage.params["min_agree"],
                max_gap_words=stage.params["max_gap_words"], weights=item.data.get("weights"),
                workers=item.data.get("answerer_ids"),
            )
            item_finish(item=item, emits=[], result=record)
        return run_result(received=consolidated, passed=consolidated, consolidated=consolidated)
