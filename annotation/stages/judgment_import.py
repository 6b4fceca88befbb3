"""Import of a judgment study's questions: references and the systems' predictions.

References: a DuReader JSON-lines file (``question_id``, ``question``, ``question_type``,
``answers``, ``yesno_answers``, ``entity_answers``), an MS MARCO JSON-lines file
(``query_id``, ``query``, ``query_type``, ``answers``; DESCRIPTION queries are
description questions, the other query types entity questions without gold entities),
a SQuAD JSON dataset (every question an entity question without gold entities), or the
DuReader file of a release of this platform (its evaluation split: dev, else test).

Predictions, one file per system: DuReader JSON lines (``question_id``, ``answers``,
``yesno_answers``), MS MARCO JSON lines (``query_id``, ``answers``) or a SQuAD prediction
JSON object (question id -> answer text).

Everything is read and checked before anything is written: an error names the file, the
line and the field, and nothing is imported. Every system must answer every question and
no prediction may name a question the references do not have. Errors are stored texts
(``collector.stored_text``) framed as the corpus import's are (``file: line 3: field 'x':
problem``), so a page shows them in its reader's language.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_noop

from annotation.models import Item, Project, Release
from collector.importers.errors import ImportFailure, at_line
from collector.importers.jsonvalues import json_problem, json_record, too_deep
from collector.importers.records import IS_MISSING, ONE_OF
from collector.metrics.dureader import OPINION_LABELS
from collector.stored_text import StoredText, stored_label

TYPES = ("YES_NO", "ENTITY", "DESCRIPTION")
MAX_SYSTEM_NAME = 80


@dataclass(frozen=True)
class Upload:
    name: str
    text: str


def refusal(failure: ImportFailure) -> ValidationError:
    """An import failure (file, place, field, problem) as a form's error, kept a stored text:
    ``exc.messages`` renders it in the language active then."""
    return ValidationError(failure.text)


class _Where:
    def __init__(self, name: str) -> None:
        self.name = name

    def error(self, message: StoredText, line: int | None = None, field: str | None = None
              ) -> ValidationError:
        return refusal(ImportFailure(message, file=self.name,
                                     where=None if line is None else at_line(line),
                                     field=field))


def _json_lines(upload: Upload) -> list[tuple[int, dict[str, Any]]]:
    where = _Where(upload.name)
    rows = []
    for number, line in enumerate(upload.text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json_record(line, file=upload.name, where=at_line(number))
        except ImportFailure as exc:
            raise refusal(exc) from None
        if not isinstance(obj, dict):
            raise where.error(StoredText(gettext_noop("expected a JSON object on each line")),
                              number)
        rows.append((number, obj))
    if not rows:
        raise where.error(StoredText(gettext_noop("the file is empty")))
    return rows


def _whole_json(upload: Upload) -> Any:
    try:
        return json.loads(upload.text)
    except json.JSONDecodeError as exc:
        raise refusal(ImportFailure(
            StoredText(gettext_noop("invalid JSON: %(error)s"), error=json_problem(exc)),
            file=upload.name, where=at_line(exc.lineno, exc.colno))) from None
    except RecursionError:
        raise _Where(upload.name).error(too_deep()) from None


def _strings(value: Any, where: _Where, line: int, field: str, *, allow_none: bool = True
             ) -> list[str]:
    if value is None and allow_none:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.error(StoredText(gettext_noop("should be a list of strings")), line, field)
    return value


def _qid(value: Any, where: _Where, line: int, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise where.error(StoredText(gettext_noop("a number or a non-empty string is required")),
                          line, field)
    return str(value)


class References(dict):
    """Question id (as a string) -> {question_id, question, question_type, reference};
    ``skipped``: the ids of questions without an answer to compare with (MS MARCO "No
    Answer Present.", SQuAD 2.0 unanswerable), whose predictions are ignored."""

    skipped: set[str]

    def __init__(self) -> None:
        super().__init__()
        self.skipped = set()


def read_references(upload: Upload) -> References:
    """The reference file in any of the three layouts (see the module docstring)."""
    where = _Where(upload.name)
    stripped = upload.text.lstrip()
    if stripped.startswith("{") and '"data"' in stripped[:2000] and "\n{" not in stripped:
        return _squad_references(_whole_json(upload), where)
    out = References()
    for line, obj in _json_lines(upload):
        marco = "query_id" in obj and "question_id" not in obj
        field = "query_id" if marco else "question_id"
        qid = _qid(obj.get(field), where, line, field)
        if qid in out or qid in out.skipped:
            raise where.error(StoredText(APPEARS_TWICE, id=qid), line, field)
        record = _marco_reference(obj, where, line) if marco else _dureader_reference(
            obj, where, line)
        if record is None:
            out.skipped.add(qid)
        else:
            out[qid] = record
    if not out:
        raise where.error(StoredText(gettext_noop("no question with a reference answer")))
    return out


def _dureader_reference(obj: dict[str, Any], where: _Where, line: int) -> dict[str, Any]:
    for field in ("question", "question_type", "answers"):
        if field not in obj:
            raise where.error(StoredText(IS_MISSING), line, field)
    if not isinstance(obj["question"], str) or not obj["question"].strip():
        raise where.error(StoredText(gettext_noop("the question text is required")), line,
                          "question")
    qtype = obj["question_type"]
    if qtype not in TYPES:
        raise where.error(StoredText(ONE_OF, value=repr(qtype), choices=", ".join(TYPES)),
                          line, "question_type")
    answers = _strings(obj["answers"], where, line, "answers")
    if not answers:
        raise where.error(StoredText(gettext_noop("no reference answer (a question needs at "
                                                  "least one)")), line, "answers")
    labels = _strings(obj.get("yesno_answers"), where, line, "yesno_answers")
    if qtype == "YES_NO" and labels:
        if len(labels) != len(answers):
            raise where.error(StoredText(gettext_noop("%(labels)s labels for %(answers)s "
                                                      "answers"),
                                         labels=len(labels), answers=len(answers)),
                              line, "yesno_answers")
        bad = [v for v in labels if v not in OPINION_LABELS]
        if bad:
            raise where.error(_not_an_opinion(bad[0]), line, "yesno_answers")
    groups = obj.get("entity_answers") or []
    if not isinstance(groups, list) or not all(
            g is None or (isinstance(g, list) and all(isinstance(e, str) for e in g))
            for g in groups):
        raise where.error(StoredText(gettext_noop("a list of lists of strings is required")),
                          line, "entity_answers")
    return {"question_id": obj["question_id"], "question": obj["question"].strip(),
            "question_type": qtype,
            "reference": {"answers": answers,
                          "yesno_answers": labels if qtype == "YES_NO" else [],
                          "entity_answers": [g or [] for g in groups]
                          if qtype == "ENTITY" else []}}


def _marco_reference(obj: dict[str, Any], where: _Where, line: int) -> dict[str, Any] | None:
    """None for a query without an answer ("No Answer Present.")."""
    for field in ("query", "answers"):
        if field not in obj:
            raise where.error(StoredText(IS_MISSING), line, field)
    answers = [a for a in _strings(obj["answers"], where, line, "answers")
               if a.strip() and a != "No Answer Present."]
    if not answers:
        return None
    qtype = "DESCRIPTION" if str(obj.get("query_type", "")).upper() == "DESCRIPTION" \
        else "ENTITY"
    return {"question_id": obj["query_id"], "question": str(obj["query"]).strip(),
            "question_type": qtype,
            "reference": {"answers": answers, "yesno_answers": [], "entity_answers": []}}


def _squad_references(data: Any, where: _Where) -> References:
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise where.error(StoredText(gettext_noop("a SQuAD dataset needs a 'data' list")),
                          None, "data")
    out = References()
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(article.get("paragraphs", [])):
            for q, qa in enumerate(paragraph.get("qas", [])):
                path = f"data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, dict) or "id" not in qa or "question" not in qa:
                    raise where.error(StoredText(gettext_noop("needs 'id' and 'question'")),
                                      None, path)
                answers = [x.get("text", "") for x in qa.get("answers", [])
                           if isinstance(x, dict) and x.get("text", "").strip()]
                if not answers:  # unanswerable (SQuAD 2.0): nothing to compare with
                    out.skipped.add(str(qa["id"]))
                    continue
                out[str(qa["id"])] = {
                    "question_id": qa["id"], "question": qa["question"].strip(),
                    "question_type": "ENTITY",
                    "reference": {"answers": list(dict.fromkeys(answers)),
                                  "yesno_answers": [], "entity_answers": []}}
    if not out:
        raise where.error(StoredText(gettext_noop("no answerable question")), None, "data")
    return out


def read_predictions(upload: Upload, references: References) -> dict[str, dict[str, Any]]:
    """Question id -> {answer, yesno_answer}; ids must be in ``references`` (predictions
    for its skipped questions are ignored)."""
    where = _Where(upload.name)
    out: dict[str, dict[str, Any]] = {}
    if upload.text.lstrip().startswith("{") and "\n{" not in upload.text.strip():
        data = _whole_json(upload)
        if isinstance(data, dict) and not {"question_id", "query_id"} & set(data):
            for qid, answer in data.items():  # SQuAD predictions
                if qid in references.skipped:
                    continue
                if not isinstance(answer, str):
                    raise where.error(StoredText(gettext_noop("the answer must be a string")),
                                      None, str(qid))
                if qid not in references:
                    raise where.error(StoredText(NOT_IN_REFERENCES, id=qid), None, qid)
                out[qid] = {"answer": answer, "yesno_answer": None}
            return out
    for line, obj in _json_lines(upload):
        field = "question_id" if "question_id" in obj or "query_id" not in obj else "query_id"
        qid = _qid(obj.get(field), where, line, field)
        if qid in references.skipped:
            continue
        if qid not in references:
            raise where.error(StoredText(NOT_IN_REFERENCES, id=qid), line, field)
        if qid in out:
            raise where.error(StoredText(APPEARS_TWICE, id=qid), line, field)
        if "answers" not in obj:
            raise where.error(StoredText(IS_MISSING), line, "answers")
        answers = _strings(obj["answers"], where, line, "answers")
        labels = _strings(obj.get("yesno_answers"), where, line, "yesno_answers")
        if labels and labels[0] not in OPINION_LABELS:
            raise where.error(_not_an_opinion(labels[0]), line, "yesno_answers")
        out[qid] = {"answer": answers[0] if answers else "",
                    "yesno_answer": labels[0] if labels else None}
    return out


APPEARS_TWICE = gettext_noop("question %(id)s appears twice")
NOT_IN_REFERENCES = gettext_noop("question %(id)s is not in the references")


def _not_an_opinion(label: str) -> StoredText:
    return StoredText(ONE_OF, value=repr(label), choices=", ".join(OPINION_LABELS))


def release_references(release: Release) -> Upload:
    """The DuReader file of a ready or published release of this platform: that of its
    evaluation split (``releases.release_split_file``: dev, else test, else its only
    split), named in the upload's name."""
    from annotation.releases import release_open, release_split_file

    if release.status not in (Release.Status.READY, Release.Status.PUBLISHED):
        raise ValidationError(StoredText(
            gettext_noop("release: %(release)s is not ready (status: %(status)s)"),
            release=str(release),
            status=stored_label(Release.Status(release.status).label)))
    if not release.files.filter(format="dureader").exists():
        raise ValidationError(StoredText(
            gettext_noop("release: %(release)s has no dureader file; build one with the "
                         "dureader format"), release=str(release)))
    entry = release_split_file(release, "dureader")
    try:
        with release_open(release, entry.path) as file:
            text = file.read().decode("utf-8")
    except FileNotFoundError:
        raise ValidationError(StoredText(
            gettext_noop("release: %(release)s: its file %(path)s is missing from the "
                         "storage"), release=str(release), path=entry.path)) from None
    return Upload(f"{release} {entry.path}", text)


@transaction.atomic
def judgment_import(*, project: Project, references: Upload,
                    predictions: list[tuple[str, Upload]]) -> dict[str, Any]:
    """Check everything, then create one pending item per question in the sampling stage
    (all or nothing). Only before the project starts, and once."""
    if project.recipe != "judgment":
        raise ValidationError(StoredText(gettext_noop("project %(project)s: not a judgment "
                                                      "project"), project=str(project)))
    if project.status != Project.Status.DRAFT:
        raise ValidationError(StoredText(gettext_noop("import: only before the project "
                                                      "starts")))
    stage = project.stages.filter(kind="judgment_sample").order_by("order").first()
    if stage is None:
        raise ValidationError(StoredText(gettext_noop("project %(project)s: no sampling stage"),
                                         project=str(project)))
    if Item.objects.filter(stage=stage).exists():
        raise ValidationError(StoredText(gettext_noop(
            "import: this project has its questions already; create a new project for another "
            "set")))
    if not predictions:
        raise ValidationError(StoredText(gettext_noop("predictions: add at least one system's "
                                                      "prediction file")))
    names = [name.strip() for name, _ in predictions]
    for name, (_, upload) in zip(names, predictions, strict=True):
        if not name:
            raise refusal(ImportFailure(StoredText(gettext_noop("give the system a name")),
                                        file=upload.name))
        if len(name) > MAX_SYSTEM_NAME:
            raise refusal(ImportFailure(
                StoredText(gettext_noop("the system name is longer than %(most)s characters"),
                           most=MAX_SYSTEM_NAME), file=upload.name))
        if names.count(name) > 1:
            raise ValidationError(StoredText(gettext_noop("system name %(name)s is given twice"),
                                             name=repr(name)))
    refs = read_references(references)
    answers = {name: read_predictions(upload, refs)
               for name, (_, upload) in zip(names, predictions, strict=True)}
    for name, (_, upload) in zip(names, predictions, strict=True):
        missing = [qid for qid in refs if qid not in answers[name]]
        if missing:
            raise refusal(ImportFailure(
                StoredText(gettext_noop("system %(name)s has no prediction for %(count)s "
                                        "question(s), e.g. %(example)s"),
                           name=repr(name), count=len(missing), example=missing[0]),
                file=upload.name))
    Item.objects.bulk_create([
        Item(project=project, stage=stage, key=qid, status=Item.Status.PENDING,
             data={**record, "candidates": {name: answers[name][qid] for name in names}})
        for qid, record in refs.items()
    ], batch_size=500)
    by_type = {t: sum(1 for r in refs.values() if r["question_type"] == t) for t in TYPES}
    return {"questions": len(refs), "systems": names, "by_type": by_type,
            "skipped": len(refs.skipped)}
