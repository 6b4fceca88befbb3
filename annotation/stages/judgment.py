"""The human judgment study recipe ``judgment`` (adapted-metrics paper, section 4).

1. ``judgment_sample`` (automatic): the questions imported with their references and every
   system's answer (``annotation.stages.judgment_import``) are sampled per question type
   with a seed (paper: 201 yes-no, 201 entity, 98 description); each sampled question
   emits one rating item per system (a *candidate*), whose slots get seeded random
   positions, one per slot, so raters meet the candidates in different orders.
2. ``judgment_rate`` (human): a rater sees the question, the reference answers and one
   candidate — never the system — and scores it 1-5 with the paper's guideline (keys
   1-5). Each candidate is rated by ``raters_per_candidate`` people (2); raters never see
   each other's scores.
3. ``judgment_study`` (automatic): once every candidate is rated, the study
   (``collector.metrics.judgment``) runs as a job with progress and writes a
   ``JudgmentReport``; each candidate item keeps its metric values and scores. An admin
   can run it again (a new report; the earlier ones are kept).

Item data: sample items hold ``question_id``, ``question``, ``question_type``,
``reference`` {answers, yesno_answers, entity_answers} and ``candidates`` {system:
{answer, yesno_answer}}; rating and study items hold one candidate (``system``,
``answer``, ``yesno_answer``) with the question and reference; study items add
``ratings`` [{rater, score}].
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.http import whole_number
from annotation.stages import Emit, Param, StageKind, register, run_result
from collector.stored_text import StoredText

if TYPE_CHECKING:
    from annotation.models import Item, Stage, Submission
    from collector.jobs import Progress

TYPES = ("YES_NO", "ENTITY", "DESCRIPTION")
# In English in reports and files; the rating page shows them in the rater's language.
TYPE_LABELS = {"YES_NO": gettext_noop("Yes-no"), "ENTITY": gettext_noop("Entity"),
               "DESCRIPTION": gettext_noop("Description")}
# DuReader's opinion labels, shown to raters in their language.
OPINIONS = {"Yes": gettext_noop("Yes"), "No": gettext_noop("No"),
            "Depends": gettext_noop("Depends")}
SCORES = {
    5: gettext_noop("Perfectly answers the question, with little redundant information"),
    4: gettext_noop("Sufficiently answers it; something unvital missing, or some redundancy"),
    3: gettext_noop("A little insufficient (e.g. a yes-no opinion without supporting "
                    "context)"),
    2: gettext_noop("Something vital is missing, or there is an error"),
    1: gettext_noop("Totally irrelevant"),
}


def candidate_key(question_id: Any, system: str) -> str:
    """An item key that does not show the system (raters see nothing of it)."""
    return hashlib.sha256(f"{question_id}\x1f{system}".encode()).hexdigest()[:24]


def token_level(language: str) -> str:
    """Chinese is scored by character (the official DuReader scorer), others by word."""
    return "char" if (language or "").lower().startswith("zh") else "word"


def _han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def text_level(texts: list[str]) -> str | None:
    """``char`` when most letters of ``texts`` are Chinese characters, ``word`` when most
    are not, None without letters: the study scores the answers as they are written,
    whatever corpus (and language) the project was created with."""
    han = letters = 0
    for text in texts:
        for ch in text:
            if ch.isalpha():
                letters += 1
                han += _han(ch)
    if not letters:
        return None
    return "char" if 2 * han >= letters else "word"


# 1. Sampling ----------------------------------------------------------------------------------

@register
class SampleKind(StageKind):
    """Automatic: a seeded sample of the imported questions per type; every system's
    answer to a sampled question becomes a rating item."""

    key = "judgment_sample"
    label = gettext_lazy("Sample questions per type")
    automatic = True
    params = {
        "yes_no": Param(201, gettext_lazy("Yes-no questions to sample (paper: 201; 0 = none; "
                                          "fewer imported: all)."), minimum=0),
        "entity": Param(201, gettext_lazy("Entity questions to sample (paper: 201)."), minimum=0),
        "description": Param(98, gettext_lazy("Description questions to sample (paper: 98)."),
                             minimum=0),
        "seed": Param(0, gettext_lazy("Seed of the sample and of the rating order (recorded).")),
    }

    def start_refusal(self, stage: Stage) -> str | None:
        # The import is refused once the project runs: started empty, it could never rate.
        if not stage.items.exists():
            return _("Import the questions and the systems' answers first (“Import questions "
                     "and system answers” on the project page): they can only be imported "
                     "before the project starts.")
        return None

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from django.db import transaction

        from annotation.engine import item_finish, items_pending
        from annotation.models import Assignment

        with transaction.atomic():
            # Locked: a second run of the stage (a re-delivered job) waits, then finds
            # nothing pending.
            pending = list(items_pending(stage).select_for_update())
            progress.start(total=len(pending), message=gettext_lazy("sampling questions"))
            wanted = {"YES_NO": stage.params["yes_no"], "ENTITY": stage.params["entity"],
                      "DESCRIPTION": stage.params["description"]}
            rng = random.Random(stage.params["seed"])  # noqa: S311 (a sample, not a secret)
            by_type: dict[str, list[Item]] = defaultdict(list)
            for item in sorted(pending, key=lambda i: str(i.data["question_id"])):
                by_type[item.data["question_type"]].append(item)
            chosen = set()
            dropped: dict[str | StoredText, int] = {}
            for qtype, items in sorted(by_type.items()):
                take = min(wanted.get(qtype, 0), len(items))
                chosen.update(i.pk for i in rng.sample(items, take))
                if qtype not in wanted:
                    dropped[StoredText(gettext_noop("question type %(type)s is not sampled"),
                                       type=qtype)] = len(items)
                else:
                    dropped[StoredText(gettext_noop("not sampled: %(type)s beyond the "
                                                    "%(wanted)s asked for (%(key)s)"),
                                       type=qtype, wanted=wanted[qtype],
                                       key=qtype.lower())] = len(items) - take
            sampled: dict[str, int] = defaultdict(int)
            emitted: list[str] = []
            for item in pending:
                if item.pk not in chosen:
                    item_finish(item=item, emits=[], result={"sampled": False})
                    progress.advance()
                    continue
                sampled[item.data["question_type"]] += 1
                emits = []
                for system, cand in sorted(item.data["candidates"].items()):
                    key = candidate_key(item.data["question_id"], system)
                    emitted.append(key)
                    emits.append(Emit(kind="judgment_rate", key=key, data={
                        **{k: item.data[k] for k in ("question_id", "question", "question_type",
                                                    "reference")},
                        "system": system, "answer": cand["answer"],
                        "yesno_answer": cand.get("yesno_answer")}))
                item_finish(item=item, emits=emits, result={"sampled": True})
                progress.advance()
            # Every slot its own seeded place in the queue: raters meet candidates in
            # different orders (the claim takes the lowest priority it may work on).
            slots = list(Assignment.objects.filter(
                item__key__in=emitted, stage__project_id=stage.project_id,
                stage__kind="judgment_rate", status=Assignment.Status.OPEN).order_by("id"))
            order = list(range(len(slots)))
            rng.shuffle(order)
            for slot, position in zip(slots, order, strict=True):
                slot.priority = position
            Assignment.objects.bulk_update(slots, ["priority"], batch_size=1000)
        return run_result(received=len(pending), passed=len(chosen), dropped=dropped,
                          questions=len(pending), sampled=dict(sampled),
                          candidates=len(emitted),
                          notes=[StoredText(gettext_noop("%(count)s system answers to rate"),
                                            count=len(emitted))] if emitted else [])


# 2. Rating ------------------------------------------------------------------------------------

def _opinion(label: str | None) -> str:
    return _(OPINIONS[label]) if label in OPINIONS else (label or "")


def references_shown(data: dict[str, Any]) -> list[dict[str, Any]]:
    ref = data["reference"]
    labels = ref.get("yesno_answers") or []
    groups = ref.get("entity_answers") or []
    out = []
    for n, answer in enumerate(ref["answers"]):
        out.append({"text": answer,
                    "yesno": _opinion(labels[n]) if n < len(labels) else "",
                    "entities": [e for e in (groups[n] if n < len(groups) and groups[n] else [])]})
    return out


@register
class RateKind(StageKind):
    """Human: score one candidate answer 1-5 (the paper's guideline), blind to the
    system and to the other raters' scores."""

    key = "judgment_rate"
    payload_doc = (
        '`{"score": n}`: a whole number from 1 to 5.')
    label = gettext_lazy("Rate answers 1-5")
    template = "annotation/tasks/judgment_rate.html"
    overlap_param = "raters_per_candidate"
    params = {
        "raters_per_candidate": Param(2, gettext_lazy("People rating each candidate (paper: 2; "
                                                      "Table 1 uses every pair of their "
                                                      "ratings)."),
                                      minimum=2, maximum=10),
    }

    def context(self, item: Item) -> dict[str, Any]:
        data = item.data
        return {
            "question": data["question"], "question_type": data["question_type"],
            "type_label": _(TYPE_LABELS.get(data["question_type"], data["question_type"])),
            "references": references_shown(data), "answer": data["answer"],
            "yesno_answer": _opinion(data.get("yesno_answer")),
            "scores": [{"value": v, "label": _(label)} for v, label in SCORES.items()],
        }

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        score = payload.get("score")
        if whole_number(score) is not None:
            score = whole_number(score)
        if isinstance(score, bool) or not isinstance(score, int) or score not in SCORES:
            raise ValidationError(_("score: choose a score from 1 to 5 (got %(score)r)")
                                  % {"score": score})
        return {"score": score}

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        return {"score": data.get("score", "")}

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        return {"score": data.get("score", "")}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        return {"score": str(payload.get("score", ""))}  # as the form posts it

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit]:
        ratings = [{"rater": str(s.worker_id), "score": s.payload["score"]}
                   for s in submissions if not s.set_aside]
        return [Emit(kind="judgment_study", key=item.key,
                     data={**item.data, "ratings": ratings})]


# 3. The study ---------------------------------------------------------------------------------

@register
class StudyKind(StageKind):
    """Automatic: Tables 1-3, the paired bootstrap and the α / β sweeps, once every
    candidate is rated; writes a report and each candidate's values."""

    key = "judgment_study"
    label = gettext_lazy("Study: metrics against human judgment")
    automatic = True
    params = {
        "alpha": Param(2.0, gettext_lazy("Yes-no bonus weight of the adapted metrics (paper: "
                                         "2.0)."), minimum=0),
        "beta": Param(1.0, gettext_lazy("Entity bonus weight (paper: 1.0)."), minimum=0),
        "gamma": Param(1.2, gettext_lazy("ROUGE-L recall weight γ (paper: 1.2)."), minimum=0),
        "resamples": Param(100, gettext_lazy("Bootstrap resamples, and overall-level draws "
                                             "(paper: 100)."), minimum=1, maximum=10000),
        "sample": Param(30, gettext_lazy("Questions per overall-level draw (paper: 30)."),
                        minimum=1),
        "seed": Param(0, gettext_lazy("Seed of the bootstrap and the overall-level draws.")),
    }

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from annotation.stages.judgment_report import study_run

        return study_run(stage=stage, progress=progress)
