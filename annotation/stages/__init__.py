"""Stage kinds, registered in code.

A kind declares its parameters with defaults, whether it is automatic, the role that works
it, its payload validation, what the worker sees, and what a finished item emits. Recipes
(``annotation.recipes``) are presets of stage lists built from these kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from annotation.roles import Role
from collector.stored_text import (
    StoredText,
    stored_text_english,
    stored_text_json,
    stored_text_render,
)
from config.request_guards import nul_path

#: What a text of a payload or of a parameter holding a NUL character is refused with (the
#: msgids that frame it name where).
NUL_REFUSED = gettext_noop("holds a NUL character (U+0000), which is not text")

if TYPE_CHECKING:
    from annotation.models import Item, Stage, Submission
    from annotation.payload_display import Block
    from collector.jobs import Progress

_KINDS: dict[str, StageKind] = {}


@dataclass(frozen=True)
class Param:
    """One stage parameter: its default, type and bounds, and what it means (``help``, a
    ``gettext_lazy`` string: the parameter form shows it in the interface language)."""

    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] = ()

    def clean(self, name: str, value: Any) -> Any:
        kind = type(self.default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is bool and not isinstance(value, bool) or not isinstance(value, kind):
            raise ValidationError(
                gettext("parameter %(name)s: expected %(type)s, got %(value)s")
                % {"name": repr(name), "type": kind.__name__, "value": repr(value)})
        if self.minimum is not None and value < self.minimum:
            raise ValidationError(gettext("parameter %(name)s: %(value)s is below %(minimum)s")
                                  % {"name": repr(name), "value": value,
                                     "minimum": self.minimum})
        if self.maximum is not None and value > self.maximum:
            raise ValidationError(gettext("parameter %(name)s: %(value)s is above %(maximum)s")
                                  % {"name": repr(name), "value": value,
                                     "maximum": self.maximum})
        if self.choices and value not in self.choices:
            raise ValidationError(gettext("parameter %(name)s: %(value)s is not one of "
                                          "%(choices)s")
                                  % {"name": repr(name), "value": repr(value),
                                     "choices": ", ".join(map(str, self.choices))})
        return value


#: Parameters of every stage worked by people: how much one worker may do, and pay.
WORK_PARAMS: dict[str, Param] = {
    "max_items_per_worker": Param(0, gettext_lazy("Most items of this stage one worker may take "
                                                  "(0 = no limit); enforced by the claim."),
                                  minimum=0),
    "pay_model": Param("submission", gettext_lazy("How work here is paid: per submission, or "
                                                  "hourly on the active time measured in the "
                                                  "page."), choices=("submission", "hourly")),
    "pay_rate": Param(0.0, gettext_lazy("Amount per submission, or per active hour, in the "
                                        "project's currency."), minimum=0),
    "qualification_items": Param(0, gettext_lazy("Gold items a worker answers (seeing the "
                                                 "expected answer after each) before real work; "
                                                 "0 = no qualification."), minimum=0),
    "qualification_threshold": Param(0.8, gettext_lazy("Mean score a qualification try must "
                                                       "reach."), minimum=0, maximum=1),
    "qualification_tries": Param(2, gettext_lazy("Tries a worker has to qualify."), minimum=1),
    "gold_rate": Param(0.0, gettext_lazy("Share of claims that get a gold check item (looks like "
                                         "any task); 0 = none."), minimum=0, maximum=1),
    "gold_min_items": Param(5, gettext_lazy("Gold checks answered before a worker can be paused."),
                            minimum=1),
    "gold_min_accuracy": Param(0.7, gettext_lazy("A worker whose mean gold score falls below "
                                                 "this is paused on the stage."),
                               minimum=0, maximum=1),
    "gold_set_aside": Param(False, gettext_lazy("When a worker is paused, set aside their "
                                                "answers to items still open and give those "
                                                "items a replacement worker.")),
}
#: Parameters that need a gold measure (``StageKind.gold_score``); batched kinds hand out
#: whole batches, so gold checks are not mixed into them (qualification still applies).
GOLD_PARAMS = ("qualification_items", "qualification_threshold", "qualification_tries",
               "gold_rate", "gold_min_items", "gold_min_accuracy", "gold_set_aside")
POOL_ONLY_PARAMS = ("max_items_per_worker", "gold_rate", "gold_min_items",
                    "gold_min_accuracy", "gold_set_aside")


@dataclass(frozen=True)
class Emit:
    """An item to create in a later stage (the first following stage of ``kind``)."""

    kind: str
    key: str
    data: dict
    document_id: int | None = None
    overlap: int | None = None
    split: str = ""
    exclude_user_ids: tuple[int, ...] = ()
    exclusion_reason: str = ""  # stored in English (gettext_noop), shown translated


class StageKind:
    key: ClassVar[str]
    label: ClassVar[str]  # gettext_lazy: the kind's name in the interface language
    automatic: ClassVar[bool] = False
    role: ClassVar[Role] = Role.ANNOTATOR
    template: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    #: The parameter that sets how many workers each item needs (human kinds).
    overlap_param: ClassVar[str | None] = None
    #: Batched kinds: items go to annotators in batches that checkers inspect. The stage
    #: parameters ``batch_size``, ``inspect_fraction``, ``pass_threshold`` and
    #: ``inspect_seed`` apply; ``inspection_rules`` are the rules a checker may mark
    #: (``collector.filters.inspection.Violation``: strict ones count 1.0, loose 0.5).
    batched: ClassVar[bool] = False
    inspection_rules: ClassVar[tuple[str, ...]] = ()
    inspection_template: ClassVar[str] = "annotation/inspection/_item.html"
    #: Kinds that score an answer against a gold answer (``gold_score``) take the
    #: qualification and gold-check parameters.
    scores_gold: ClassVar[bool] = False
    #: Kinds whose task shows other workers' answers (as the protocol lets that stage's
    #: workers see them): never shown to someone who has not joined (MTurk's preview).
    shows_others_work: ClassVar[bool] = False
    #: Kinds worked by people: the submission's ``payload`` for an API client (Markdown,
    #: in English like the rest of the API's schema), listed under ``payload`` in it.
    payload_doc: ClassVar[str] = ""

    def all_params(self) -> dict[str, Param]:
        """The kind's own parameters, and for kinds worked by people ``WORK_PARAMS``
        (batched kinds hand out whole batches: ``batch_size`` is their per-worker limit)."""
        if self.automatic:
            return self.params
        work = {name: p for name, p in WORK_PARAMS.items()
                if not (self.batched and name in POOL_ONLY_PARAMS)
                and (self.scores_gold or name not in GOLD_PARAMS)}
        return {**self.params, **work}

    def clean_params(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """Defaults filled in; unknown names and bad values refused, naming the field."""
        params = dict(params or {})
        known = self.all_params()
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValidationError(
                gettext("stage %(stage)s: unknown parameter(s) %(unknown)s; known: %(known)s")
                % {"stage": self.key, "unknown": ", ".join(unknown),
                   "known": ", ".join(sorted(known)) or gettext("none")})
        cleaned = {
            name: spec.clean(name, params[name]) if name in params else spec.default
            for name, spec in known.items()
        }
        where = nul_path(cleaned)
        if where:
            raise ValidationError(gettext("stage %(stage)s: the parameter at %(where)s "
                                          "%(detail)s")
                                  % {"stage": self.key, "where": where,
                                     "detail": gettext(NUL_REFUSED)})
        return cleaned

    def overlap(self, stage: Stage) -> int:
        """How many workers each item of ``stage`` needs."""
        fixed = self.fixed_overlap()
        return fixed if fixed is not None else int(stage.params.get(self.overlap_param, 1))

    def fixed_overlap(self) -> int | None:
        """The overlap when no stage parameter sets it; None when ``overlap_param`` does
        (then the stage must be read)."""
        return None if self.overlap_param else 1

    def start_refusal(self, stage: Stage) -> str | None:
        """Why the project may not start with ``stage`` first (a message for the admin),
        or None. The first stage's kind is asked."""
        return None

    # Human kinds -------------------------------------------------------------------
    def context(self, item: Item) -> dict[str, Any]:
        """What the worker sees for ``item`` (never other workers' answers by default)."""
        return {}

    def clean_payload(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError(f"{self.key} takes no submissions")

    def payload_checked(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        """``clean_payload``, then nothing in what would be stored that PostgreSQL's jsonb
        refuses (a NUL character in any text): what the engine and the qualification
        store."""
        cleaned = self.clean_payload(item, payload)
        where = nul_path(cleaned, "payload")
        if where:
            raise ValidationError(gettext("%(where)s: %(detail)s")
                                  % {"where": where, "detail": gettext(NUL_REFUSED)})
        return cleaned

    def form_values(self, item: Item, data: Any) -> dict[str, Any]:
        """Values to show in the form again (after a refused submission)."""
        return {}

    def payload_form_values(self, item: Item, payload: dict[str, Any]) -> dict[str, Any]:
        """``form_values`` that show a cleaned ``payload`` in the form again: the worker's
        previous answer, pre-filled, when a returned batch comes back or they correct their
        last submission. Kinds that cannot pre-fill return {} (the page shows the previous
        answer beside the empty form)."""
        return {}

    def payload_from_form(self, item: Item, data: Any) -> dict[str, Any]:
        """The payload a web form posted (``data`` is the POST QueryDict)."""
        import json

        try:
            payload = json.loads(data.get("payload") or "{}")
        except ValueError as exc:
            raise ValidationError(gettext("payload: not valid JSON (%(error)s)")
                                  % {"error": exc}) from exc
        if not isinstance(payload, dict):
            raise ValidationError(gettext("payload: a JSON object is required"))
        return payload

    def on_items_complete(self, item: Item, submissions: list[Submission]) -> list[Emit] | None:
        """All slots of ``item`` are submitted: return what to emit, or None to keep the
        item open (after adding slots)."""
        return []

    def gold_score(self, item: Item, payload: dict[str, Any], expected: dict[str, Any]
                   ) -> float:
        """How well a cleaned ``payload`` matches the ``expected`` one (a cleaned payload
        too), from 0 to 1, with the stage's own measure (kinds with ``scores_gold``)."""
        raise NotImplementedError(f"{self.key} has no gold measure")

    def gold_explain(self, item: Item, expected: dict[str, Any]) -> str:
        """The expected answer in words, shown after a training item."""
        return str(expected)

    #: Payload fields shown as labels on the item page (``payload_display``).
    payload_labels: ClassVar[tuple[str, ...]] = ()

    def payload_display(self, item: Item, payload: dict[str, Any]) -> list[Block]:
        """A submitted payload as the form showed it (``annotation.payload_display``):
        spans highlighted in the item's document, labels, free text."""
        from annotation.payload_display import generic_blocks

        return generic_blocks(payload, labels=self.payload_labels,
                              text=item.document.body if item.document_id else None)

    def inspection_view(self, item: Item, submission: Submission) -> dict[str, Any]:
        """What a checker sees of one sampled item (batched kinds)."""
        return {"payload": submission.payload}

    # Automatic kinds ---------------------------------------------------------------
    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        """Process the stage's pending items; idempotent (safe to run again). The result
        says what the run received, passed on and dropped (``run_result``): the project
        page shows it."""
        raise NotImplementedError(f"{self.key} is not automatic")


TAKEN_BEFORE = gettext_noop("taken by an earlier run")


def run_result(*, received: int, passed: int,
               dropped: dict[str | StoredText, int] | None = None,
               notes: list[str | StoredText] | None = None, **figures: Any) -> dict[str, Any]:
    """An automatic stage run's result as the project page reads it: the items (or, for a
    first stage, the corpus records) the run ``received``, those it ``passed`` on to the
    next stage (a last stage: the final records it wrote), those it ``dropped`` by reason
    (reason -> count; zero counts left out), ``notes`` in words, and the kind's own
    ``figures``.

    Reasons and notes are kept in English; those given as a
    :class:`~collector.stored_text.StoredText` are kept as such too (``texts``), so that
    :func:`run_texts` shows them in the reader's language."""
    kept = {reason: n for reason, n in (dropped or {}).items() if n}
    notes = list(notes or [])
    result = {**figures, "received": received, "passed": passed,
              "dropped": {stored_text_english(reason): n for reason, n in kept.items()},
              "notes": [stored_text_english(note) for note in notes]}
    texts = {"dropped": {stored_text_english(reason): stored_text_json(reason)
                         for reason in kept if isinstance(reason, StoredText)},
             "notes": [stored_text_json(note) for note in notes]}
    if texts["dropped"] or any(texts["notes"]):
        result["texts"] = texts
    return result


def run_texts(result: dict[str, Any]) -> tuple[list[tuple[str, int]], list[str]]:
    """A run result's dropped reasons (with their counts, in the result's order) and notes,
    in the active language; reasons and notes kept in words only (older runs) as they
    are. A bare count of dropped items (older ReCO runs) is left to the caller."""
    texts = result.get("texts") if isinstance(result.get("texts"), dict) else {}
    dropped = result.get("dropped")
    reasons = texts.get("dropped") or {}
    shown = ([(stored_text_render(reasons.get(reason), reason), n)
              for reason, n in dropped.items()] if isinstance(dropped, dict) else [])
    stored = texts.get("notes") or []
    notes = [stored_text_render(stored[i] if i < len(stored) else None, note)
             for i, note in enumerate(result.get("notes") or [])]
    return shown, notes


SPLIT_SHARES = ("train", "dev", "test")


def split_shares_clean(key: str, cleaned: dict[str, Any]) -> dict[str, Any]:
    """A split stage's cleaned parameters, its shares of train, dev and test checked: each
    is 0-1 (their ``Param``), and together they are the whole, 1 (to a thousandth, as in
    ReCO's 0.834 + 0.1 + 0.066); shares that add up to more or less are refused rather than
    scaled behind the admin's back."""
    total = sum(cleaned[name] for name in SPLIT_SHARES)
    if abs(total - 1) > 0.001:
        given = ", ".join(f"{name} {cleaned[name]:g}" for name in SPLIT_SHARES)
        raise ValidationError(gettext("stage %(stage)s: the split shares (%(shares)s) add up "
                                      "to %(total)s, not 1")
                              % {"stage": key, "shares": given, "total": f"{total:g}"})
    return cleaned


def register(kind: type[StageKind]) -> type[StageKind]:
    _KINDS[kind.key] = kind()
    return kind


def stage_kind(key: str) -> StageKind:
    _load()
    try:
        return _KINDS[key]
    except KeyError:
        raise ValidationError(
            gettext("unknown stage kind %(kind)s; known: %(known)s")
            % {"kind": repr(key), "known": ", ".join(sorted(_KINDS))}
        ) from None


def stage_kinds() -> dict[str, StageKind]:
    _load()
    return dict(_KINDS)


def corpus_queries(project: Any) -> list[tuple[int, str, str, str]]:
    """(id, external id, text, language) of the project corpus's queries, in import order."""
    from collector.models import Query

    return list(Query.objects.filter(corpus_id=project.corpus_id).order_by("id")
                .values_list("id", "external_id", "text", "language"))


class CorpusQueriesKind(StageKind):
    """Automatic: the project corpus's queries become the pipeline's first items, each
    emitted to ``next_kind``; idempotent (an item per query, keyed by ``item_for``)."""

    label = gettext_lazy("Import queries")
    automatic = True
    params = {
        "max_queries": Param(0, gettext_lazy("Take at most this many queries (0 = all)."),
                             minimum=0),
    }
    next_kind: ClassVar[str] = ""

    def queries(self, project: Any) -> list[tuple[int, str, str, str]]:
        return corpus_queries(project)

    def item_for(self, pk: int, external_id: str, text: str,
                 language: str) -> tuple[str, dict[str, Any]]:
        """The item key and data of one query."""
        raise NotImplementedError

    def run(self, stage: Stage, progress: Progress) -> dict[str, Any]:
        from django.db import transaction

        from annotation.engine import item_finish
        from annotation.models import Item

        rows = list(self.queries(stage.project))
        received, dropped = len(rows), {}
        if stage.params["max_queries"]:
            limit = stage.params["max_queries"]
            dropped[StoredText(gettext_noop("beyond max_queries (%(limit)s)"),
                               limit=limit)] = max(received - limit, 0)
            rows = rows[:limit]
        progress.start(total=len(rows), message=gettext_lazy("taking queries"))
        taken = 0
        with transaction.atomic():
            for row in rows:
                key, data = self.item_for(*row)
                item, _ = Item.objects.get_or_create(
                    stage=stage, key=key, defaults={"project_id": stage.project_id, "data": data},
                )
                if item.status == Item.Status.PENDING:
                    item_finish(item=item, emits=[Emit(kind=self.next_kind, key=key, data=data)])
                    taken += 1
                progress.advance()
        dropped[StoredText(TAKEN_BEFORE)] = len(rows) - taken
        return run_result(received=received, passed=taken, dropped=dropped,
                          queries=len(rows), new=taken)


BATCH_PARAMS: dict[str, Param] = {
    "batch_size": Param(5000, gettext_lazy("Items per batch; one annotator labels a whole batch "
                                           "(paper: 5,000)."), minimum=1),
    "inspect_fraction": Param(0.1, gettext_lazy("Share of a finished batch a checker inspects."),
                              minimum=0.0001, maximum=1),
    "pass_threshold": Param(0.95, gettext_lazy("A batch passes when its accuracy is above this."),
                            minimum=0, maximum=1),
    "inspect_seed": Param(7, gettext_lazy("Seed of the inspection samples (recorded with each "
                                          "sample).")),
}


def _load() -> None:
    from annotation.stages import judgment, marco, newsqa, reco  # noqa: F401
