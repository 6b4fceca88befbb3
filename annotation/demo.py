"""Demo projects for ``load_demo``: one finished project per recipe, and fresh work.

Everything here goes through the services a person would use: ``engine.project_create``,
``project_member_add`` and ``project_start``, then ``task_claim`` / ``task_submit`` with
scripted submissions of the demo users, ``batches.inspection_claim`` /
``inspection_submit`` for the checker, and ``releases.release_create`` /
``release_publish`` for the admin. No pipeline row is written directly, so the finished
projects hold exactly what the pipeline makes of those submissions.

With three annotators the engine's rules shape the parameters: a questioner never answers
questions about their own article, validators are not answerers, curators do not distil
the query they curated, and a batch's annotator never inspects it. So the NewsQA
projects ask two answerers (no extra answerers) and one validator, and the MS MARCO
projects two editors per query (flagging from two answers on, where an answer too short
for BLEU weighs 0 and goes to the checker).

Idempotent: a demo project is known by its name. A finished one that exists is left alone
("exists"); a finished one whose build stopped half-way (no published release) is driven
on to the end; an in-progress one that exists is never touched again, since people may be
working in it.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation import batches, engine, releases
from annotation.models import Batch, Inspection, Item, Project, Release
from annotation.roles import Role
from collector.demo import DATASETS_DIR, SQUAD_LICENCE
from collector.models import Corpus

ANNOTATORS = ("annotator1", "annotator2", "annotator3")
CHECKER = "checker"
ADMIN = "admin"
VERSION = "1.0.0"

NEWSQA_DONE = "NewsQA demo (complete)"
RECO_DONE = "ReCO demo (complete)"
MARCO_DONE = "MS MARCO demo (complete)"
NEWSQA_OPEN = "NewsQA demo (in progress)"
RECO_OPEN = "ReCO demo (in progress)"
MARCO_OPEN = "MS MARCO demo (in progress)"

NEWSQA_CORPUS = "newsqa-synthetic"
RECO_CORPUS = "dureader-demo"
MARCO_CORPUS = "marco-demo-squad"

# Three annotators: one questioner, two answerers (no extra answerer could be found). The
# questioner and the answerers may not validate: in the finished project the checker account
# validates, made an annotator of that project; in the open one a crowd worker can (the
# study, the invite link).
NEWSQA_PARAMS: dict[int, dict[str, Any]] = {
    3: {"questioners_per_article": 1},
    4: {"answers_per_question": 2, "max_extra_answers": 0},
    6: {"validators_per_question": 1},
}
# Two editors per query (the third annotator curated it); flag from two answers on.
MARCO_PARAMS: dict[int, dict[str, Any]] = {
    5: {"editors_per_query": 2},
    6: {"min_answers": 2},
}


class DemoError(Exception):
    """The demo could not be built as scripted (the data or the engine changed)."""


# NewsQA ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NewsqaQuestion:
    text: str
    answers: tuple[str | None, ...]  # phrase of the article per answerer; None = no answer
    validated: str | None = None  # the phrase a validator picks when answers disagree


# On the synthetic Portvale story: one question the answerers agree on, one they do not
# (a validator settles it), one that the article does not answer.
NEWSQA_DONE_SCRIPT = (
    NewsqaQuestion("On which day of the week was the decision made?", ("Tuesday", "Tuesday")),
    NewsqaQuestion("What business used to stand on the empty land?",
                   ("the fish market", None), validated="the fish market"),
    NewsqaQuestion("What will the new building be named?", (None, None)),
)
NEWSQA_OPEN_QUESTIONS = (
    "Who leads the city government?",
    "How many members voted against the plan?",
    "When did the site become empty?",
)


def _span(body: str, phrase: str | None) -> dict[str, Any]:
    if phrase is None or phrase not in body:
        return {"no_answer": True}
    start = body.index(phrase)
    return {"spans": [[start, start + len(phrase)]]}


def _newsqa_payload(script: tuple[NewsqaQuestion, ...]) -> Callable[[Item, Any], dict]:
    by_text = {q.text: q for q in script}

    def payload(item: Item, worker: Any) -> dict[str, Any]:
        kind = item.stage.kind
        if kind == "newsqa_question":
            return {"questions": [q.text for q in script]}
        question = by_text[item.data["question"]]
        body = item.document.body
        if kind == "newsqa_answer":
            n = item.submissions.count()  # the n-th answerer of this question
            return _span(body, question.answers[min(n, len(question.answers) - 1)])
        if kind == "newsqa_validate":
            wanted = _span(body, question.validated)
            for index, answer in enumerate(item.data["unique_answers"]):
                if answer.get("spans") == wanted.get("spans") and (
                        bool(answer.get("no_answer")) == bool(wanted.get("no_answer"))):
                    return {"choice": index}
            return {"all_bad": True}
        raise DemoError(f"no scripted NewsQA work for stage {kind}")

    return payload


def build_newsqa_done(people: dict[str, Any]) -> str:
    corpus = _corpus(NEWSQA_CORPUS)
    project = _project(
        NEWSQA_DONE, "newsqa", corpus, people, params=NEWSQA_PARAMS,
        description="A finished NewsQA project on the synthetic Portvale story, built by "
                    "load_demo from scripted submissions: one annotator wrote the questions "
                    "from the highlights, two others marked the answers, and a fourth "
                    "worker validated the question they disagreed on.")
    payload = _newsqa_payload(NEWSQA_DONE_SCRIPT)
    _work(project, people["annotator1"], payload)  # the questions
    for name in ("annotator2", "annotator3"):  # the answers
        _work(project, people[name], payload)
    # Validation: neither the questioner nor the answerers may validate (a third group).
    engine.project_member_add(project=project, user=people[CHECKER], role=Role.ANNOTATOR)
    _work(project, people[CHECKER], payload)
    records = _records(project, expected=len(NEWSQA_DONE_SCRIPT))
    release = _release(project, people[ADMIN],
                       ["squad-v1", "squad-v2", "newsqa-json", "newsqa-csv", "hf"])
    return f"complete, {records} records, {_release_line(release)}"


def build_newsqa_open(people: dict[str, Any]) -> str:
    corpus = _corpus(NEWSQA_CORPUS)
    project = _project(
        NEWSQA_OPEN, "newsqa", corpus, people, params=NEWSQA_PARAMS,
        description="Work in progress: questions about the Portvale story have been "
                    "written; two annotators answer them (\"Next task\"), then a third "
                    "validates the answers they disagree on.")
    script = tuple(NewsqaQuestion(text, ()) for text in NEWSQA_OPEN_QUESTIONS)
    _work(project, people["annotator1"], _newsqa_payload(script), limit=1)
    crowd = _crowd_open(project, people["admin"])
    return f"in progress, {_open_slots(project)} open tasks; {crowd}"


def _crowd_open(project: Project, admin: Any) -> str:
    """The in-progress NewsQA project is open to a crowd: consent text, a Prolific study
    (two tasks per session) and an invite link."""
    from annotation import invites, studies

    project.consent = DEMO_CONSENT
    project.save(update_fields=["consent"])
    study = studies.study_create(project=project, platform="prolific",
                                 completion_code="DEMO2025", quota=2, actor=admin,
                                 name="Prolific demo study")
    invite = invites.invite_create(project=project, role="annotator", actor=admin,
                                   max_uses=20, expires_days=30)
    return (f"Prolific study {studies.study_path(study)}?PROLIFIC_PID=<24 hex digits>"
            f"&STUDY_ID=demo&SESSION_ID=<any>, invite link {invites.invite_path(invite)}")


DEMO_CONSENT = """\
**About this study.** You will read short news stories and answer questions about them by
selecting words in the text. A session takes about five minutes.

Your answers become part of a research dataset. It names no worker: your platform id is kept
only to pay you and is never published. You may stop at any time; work you submitted is paid.
"""


# ReCO --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecoLabel:
    evidence: str  # the evidence, found verbatim in one of the retrieved documents
    alternatives: tuple[str, str, str]  # positive, negative, uncertain
    answer: str  # positive | negative | uncertain


# The first yes/no questions of the DuReader demo sample that pass the query filter, with
# evidence from their DuReader documents and answers in the annotators' words.
RECO_LABELS = {
    "鸟屎掉衣服上吉不吉利": RecoLabel("所以这个需要用卦来占才可以的,不是固定的结果",
                            ("吉利", "不吉利", "说不准"), "uncertain"),
    "比熊跟泰迪能配吗": RecoLabel("相对来说和比熊配还算安全", ("能", "不能", "无法确定"),
                          "positive"),
    "uuid.randomuuid 会重复吗": RecoLabel("用它可以产生一个号称全球唯一的ID",
                                     ("会", "不会", "不确定"), "negative"),
    "孕妇能吃银耳吗": RecoLabel("可以肯定的是孕妇适当吃点白木耳对促进身体健康有很多好处的",
                         ("能", "不能", "无法确定"), "positive"),
    "养猴子犯法吗": RecoLabel("猴子是国家级保护动物,养了会触犯野生动物保护法",
                        ("犯法", "不犯法", "不一定"), "positive"),
    "冰血暴好看吗": RecoLabel("个人感觉都不错,不过第一季更好看", ("好看", "不好看", "因人而异"),
                        "positive"),
}
RECO_ANSWERS = ("positive", "negative", "uncertain")
# The complete project takes the first 20 queries of the sample: the filter keeps the
# three yes/no ones, all in train, labelled in one batch.
RECO_DONE_PARAMS: dict[int, dict[str, Any]] = {
    1: {"max_queries": 20},
    5: {"train": 1.0, "dev": 0.0, "test": 0.0},
    6: {"batch_size": 10, "inspect_fraction": 0.5},
}
# The in-progress project takes the first 100 (the filter keeps eight), in batches of 3.
RECO_OPEN_PARAMS: dict[int, dict[str, Any]] = {
    1: {"max_queries": 100},
    6: {"batch_size": 3, "inspect_fraction": 0.5},
}


def reco_payload(item: Item, worker: Any) -> dict[str, Any]:
    """A label for an evidence item: the scripted one when its evidence is among the kept
    documents; otherwise, as the guidelines say when no document answers, the most
    relevant passage (the top document's opening) with the uncertain answer."""
    documents = item.data["documents"]
    label = RECO_LABELS.get(item.data["query"])
    if label is not None:
        for n, document in enumerate(documents):
            start = document["text"].find(label.evidence)
            if start >= 0:
                return {"doc": n, "evidence": [start, start + len(label.evidence)],
                        "alternatives": dict(zip(RECO_ANSWERS, label.alternatives, strict=True)),
                        "answer": label.answer}
    text = documents[0]["text"]
    end = min(len(text), 60)
    for mark in "。！？\n":
        cut = text.find(mark, 1, end)
        if cut > 0:
            end = cut + 1
    zh = item.data.get("language", "zh") == "zh"
    alternatives = ("能", "不能", "无法确定") if zh else ("yes", "no", "can't tell")
    return {"doc": 0, "evidence": [0, end],
            "alternatives": dict(zip(RECO_ANSWERS, alternatives, strict=True)),
            "answer": "uncertain"}


def build_reco_done(people: dict[str, Any]) -> str:
    corpus = _corpus(RECO_CORPUS)
    project = _project(
        RECO_DONE, "reco", corpus, people, params=RECO_DONE_PARAMS, checker=True,
        language="zh",
        description="A finished ReCO project on the DuReader demo sample: the query filter "
                    "kept the yes/no questions among the first 20 queries, documents were "
                    "retrieved and filtered, an annotator labelled the batch (evidence, three "
                    "alternatives, answer) and a reviewer inspected and accepted it.")
    _work(project, people["annotator1"], reco_payload)
    for inspection in Inspection.objects.filter(batch__project=project,
                                                status=Inspection.Status.OPEN):
        _inspect(inspection, people[CHECKER])
    records = _records(project)
    release = _release(project, people[ADMIN], ["reco", "hf"])
    return f"complete, {records} records, {_release_line(release)}"


def build_reco_open(people: dict[str, Any]) -> str:
    corpus = _corpus(RECO_CORPUS)
    project = _project(
        RECO_OPEN, "reco", corpus, people, params=RECO_OPEN_PARAMS, checker=True,
        language="zh",
        description="Work in progress on the first 100 queries of the DuReader demo sample, "
                    "in batches of three: the first batch is labelled and waits for a "
                    "reviewer's inspection; the other batches (and any test-set queries) wait "
                    "for the annotators.")
    annotator = people["annotator2"]
    for _ in range(50):  # test-set items, if any, come first; stop once a batch is in
        if Batch.objects.filter(project=project, annotator=annotator,
                                status=Batch.Status.INSPECTION).exists():
            break
        if not _work(project, annotator, reco_payload, limit=1):
            break
    waiting = Inspection.objects.filter(batch__project=project,
                                        status=Inspection.Status.OPEN).count()
    return (f"in progress, {_open_slots(project)} open tasks, "
            f"{waiting} batch(es) waiting for inspection")


# MS MARCO ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MarcoQuery:
    squad_id: str  # the question's id in the SQuAD v1.1 dev sample
    text: str
    query_type: str = ""
    question_type: str = ""
    exclude: tuple[str, ...] = ()  # the judge's exclusion reasons (empty: keep)
    passage: str = ""  # a phrase of the passage the curator selects
    answers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (text, entities) per editor
    drop: tuple[str, ...] = ()  # flagged answers the checker drops (others are kept)


# Questions of the SQuAD v1.1 dev sample, asked as search queries of its own paragraphs.
# The first four make the complete project: agreeing editors; a correct answer too short
# for BLEU that the checker keeps; a wrong short one that the checker drops; a query the
# judge excludes. The in-progress project takes all eight.
MARCO_QUERIES = (
    MarcoQuery("56be4db0acb8001400a502ef", "Which NFL team won Super Bowl 50?",
               "ENTITY", "ENTITY", passage="Denver Broncos defeated",
               answers=(("The Denver Broncos won Super Bowl 50, beating the Carolina "
                         "Panthers 24–10.", ("Denver Broncos",)),
                        ("Denver Broncos", ("Denver Broncos",)))),
    MarcoQuery("571a4b0f10f8ca1400304fd5", "Who proved that air is necessary for combustion?",
               "PERSON", "ENTITY", passage="Robert Boyle proved",
               answers=(("Robert Boyle proved in the late 17th century that air is necessary "
                         "for combustion.", ("Robert Boyle",)),
                        ("The English scientist Robert Boyle proved that air is necessary "
                         "for combustion.", ("Robert Boyle",)))),
    MarcoQuery("5726a00d708984140094cc26", "What year did Genghis Khan die?",
               "NUMERIC", "DESCRIPTION", passage="He died in 1227",
               answers=(("Genghis Khan died in 1227, after defeating the Western Xia.", ()),
                        ("In 1162.", ())),
               drop=("In 1162.",)),
    MarcoQuery("571a49de4faf5e1900b8a94c", "_____ Helps the biospher from UV.",
               exclude=("ambiguous",)),
    MarcoQuery("56be4db0acb8001400a502ee", "Where did Super Bowl 50 take place?"),
    MarcoQuery("57337ddc4776f41900660bba", "How many natural reserves are in Warsaw?"),
    MarcoQuery("5726a00d708984140094cc25", "Who did Genghis Khan assign as his successor?"),
    MarcoQuery("57336755d058e614000b5a3c", "What garden was formally only for royalty?"),
)
MARCO_DONE_QUERIES = 4


def marco_corpus() -> tuple[Corpus, list[str]]:
    """The SQuAD v1.1 dev sample as its own corpus, with ``MARCO_QUERIES`` as its queries
    (both imports are idempotent); rebuilds its index when it misses passages."""
    from collector.models import Passage, Query
    from collector.services import corpus_import, index_count, index_rebuild, queries_import

    lines = []
    corpus = Corpus.objects.filter(name=MARCO_CORPUS).first()
    if corpus is None or not corpus.documents.exists():
        report = corpus_import(
            path=DATASETS_DIR / "squad_v1.1_dev" / "dev-v1.1.sample.json", corpus=MARCO_CORPUS,
            language="en", format="squad", source_name="squad_v1.1_dev/dev-v1.1.sample.json",
            description="The SQuAD v1.1 dev sample's paragraphs with some of its questions "
                        "as search queries: the corpus of the MS MARCO demo projects.",
            licence=SQUAD_LICENCE)
        lines.append(report.summary())
        corpus = Corpus.objects.get(name=MARCO_CORPUS)
    known = set(Query.objects.filter(corpus=corpus).values_list("external_id", flat=True))
    if not {q.squad_id for q in MARCO_QUERIES} <= known:
        with tempfile.TemporaryDirectory(prefix="crowdqa-demo-") as tmp:
            path = Path(tmp) / "marco-demo-queries.jsonl"
            path.write_text("".join(
                json.dumps({"question_id": q.squad_id, "question": q.text,
                            "source": "SQuAD v1.1 dev sample"}, ensure_ascii=False) + "\n"
                for q in MARCO_QUERIES), encoding="utf-8")
            report = queries_import(path=path, corpus=MARCO_CORPUS, language="en",
                                    source_name="demo: questions of the SQuAD v1.1 dev sample")
        lines.append(report.summary())
    passages = Passage.objects.filter(document__corpus=corpus).count()
    if index_count(corpus=corpus) != passages:
        lines.append(f"corpus {corpus.name!r}: index rebuilt, "
                     f"{index_rebuild(corpus=corpus)} passages")
    return corpus, lines


def _marco_query(item: Item) -> MarcoQuery:
    by_id = {q.squad_id: q for q in MARCO_QUERIES}
    query = by_id.get(item.data.get("query_id"))
    if query is None:
        raise DemoError(f"no scripted MS MARCO query {item.data.get('query_id')!r}")
    return query


def marco_payload(item: Item, worker: Any) -> dict[str, Any]:
    kind = item.stage.kind
    query = _marco_query(item)
    if kind == "marco_judge":
        if query.exclude:
            return {"intent": "informational", "decision": "exclude",
                    "exclusions": list(query.exclude)}
        return {"intent": "informational", "decision": "keep", "exclusions": [],
                "query_type": query.query_type, "question_type": query.question_type}
    if kind == "marco_curate":
        ranks = [p["rank"] for p in item.data["passages"] if query.passage in p["text"]]
        if not query.passage or not ranks:
            return {"unanswerable": True, "selected": []}
        return {"selected": ranks[:1]}
    if kind == "marco_distill":
        n = item.submissions.count()  # the n-th editor of this query
        text, entities = query.answers[min(n, len(query.answers) - 1)]
        return {"answer": text, "entities": list(entities)}
    raise DemoError(f"no scripted MS MARCO work for stage {kind}")


def marco_review(item: Item, worker: Any) -> dict[str, Any]:
    query = _marco_query(item)
    answers = item.data["answers"]
    return {"decisions": {str(n): "drop" if answers[n]["text"] in query.drop else "keep"
                          for n in item.data["flagged"]},
            "note": "Scripted demo review: short but correct answers stay; wrong ones go."}


def build_marco_done(people: dict[str, Any]) -> str:
    corpus = _corpus(MARCO_CORPUS)
    project = _project(
        MARCO_DONE, "marco", corpus, people, checker=True,
        params={**MARCO_PARAMS, 1: {"max_queries": MARCO_DONE_QUERIES}},
        description="A finished MS MARCO answer-distillation project on SQuAD paragraphs: "
                    "the annotators judged the queries, each kept query was curated by "
                    "one annotator and answered by the two others, the pa-BLEU consensus "
                    "flagged the answers too short or too far from the others, and a "
                    "reviewer kept or dropped them.")
    annotators = [people[name] for name in ANNOTATORS]
    # Judgment, curation and distillation: the annotators take one task each in turn,
    # from a different one each round, so each gets every kind of task.
    for turn in range(50):
        order = annotators[turn % 3:] + annotators[:turn % 3]
        if not sum(_work(project, worker, marco_payload, limit=1) for worker in order):
            break
    _work(project, people[CHECKER], marco_review, role=Role.CHECKER)
    records = _records(project)
    release = _release(project, people[ADMIN], ["msmarco", "dureader", "hf"])
    return f"complete, {records} records, {_release_line(release)}"


def build_marco_open(people: dict[str, Any]) -> str:
    corpus = _corpus(MARCO_CORPUS)
    project = _project(
        MARCO_OPEN, "marco", corpus, people, checker=True, params=MARCO_PARAMS,
        description="Work in progress: eight SQuAD questions as search queries wait for "
                    "the annotators' judgment, then curation, two editors' answers and a "
                    "reviewer's look at flagged answers.")
    return f"in progress, {_open_slots(project)} open tasks"


# Shared steps ----------------------------------------------------------------------------

def _corpus(name: str) -> Corpus:
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None or not corpus.documents.exists():
        raise DemoError(f"corpus {name!r} is missing: load the demo data first "
                        "(collector.demo.demo_data_load)")
    return corpus


def _project(name: str, recipe: str, corpus: Corpus, people: dict[str, Any], *,
             params: dict[int, dict[str, Any]], description: str, checker: bool = False,
             language: str = "en") -> Project:
    """Create, staff and start a project as an admin would (or finish doing so, for a
    finished demo project whose build stopped half-way)."""
    project = Project.objects.filter(name=name).first() or engine.project_create(
        name=name, recipe=recipe, corpus=corpus, language=language, description=description,
        params=params, user=people[ADMIN])
    for username in ANNOTATORS:
        engine.project_member_add(project=project, user=people[username], role=Role.ANNOTATOR)
    if checker:
        engine.project_member_add(project=project, user=people[CHECKER], role=Role.CHECKER)
    if project.status == Project.Status.DRAFT:
        engine.project_start(project=project, actor=people[ADMIN])
        project.refresh_from_db()
    return project


def _work(project: Project, worker: Any, payload_for: Callable[[Item, Any], dict[str, Any]],
          *, role: Role | None = None, limit: int = 200) -> int:
    """The worker takes their next tasks in ``project`` and submits the scripted payload
    for each, up to ``limit`` tasks; returns how many."""
    done = 0
    while done < limit:
        task = engine.task_claim(worker=worker, project=project, role=role)
        if task is None:
            break
        item = Item.objects.select_related("stage", "document").get(pk=task.item_id)
        try:
            engine.task_submit(assignment_id=task.pk, worker=worker,
                               payload=payload_for(item, worker))
        except ValidationError as exc:
            raise DemoError(f"{project.name}: {worker.username}'s scripted submission for "
                            f"{item.stage.kind} item {item.key!r} was refused: "
                            f"{'; '.join(exc.messages)}") from exc
        done += 1
    return done


def _inspect(inspection: Inspection, checker: Any) -> Inspection:
    """The checker inspects the batch's sample and finds nothing to mark."""
    batches.inspection_claim(inspection_id=inspection.pk, checker=checker)
    return batches.inspection_submit(inspection_id=inspection.pk, checker=checker, marks={})


def _records(project: Project, expected: int | None = None) -> int:
    from annotation.selectors import consolidated_items

    open_items = Item.objects.filter(project=project).exclude(
        status__in=[Item.Status.DONE, Item.Status.CANCELLED]).count()
    records = consolidated_items(project=project).count()
    if open_items or not records or (expected is not None and records != expected):
        raise DemoError(f"{project.name}: the scripted work left {open_items} unfinished "
                        f"items and {records} records")
    return records


def _release(project: Project, admin: Any, formats: list[str]) -> Release:
    """Release ``VERSION`` of the project, built inline, then published."""
    release = project.releases.filter(version=VERSION).first()
    if release is None:
        release = releases.release_create(project=project, version=VERSION, formats=formats,
                                          user=admin)
    release.refresh_from_db()
    if release.status == Release.Status.BUILDING:
        # Not built by its job (a job queue elsewhere): build it here.
        releases.release_build(release=release)
        release.refresh_from_db()
    if release.status == Release.Status.READY:
        releases.release_publish(release=release, actor=admin)
    if release.status != Release.Status.PUBLISHED:
        raise DemoError(f"{project.name} {VERSION}: release {release.status}: {release.error}")
    return release


def _release_line(release: Release) -> str:
    return (f"release {release.version} {release.status} "
            f"({', '.join(release.formats)}; {release.files.count()} files)")


def _open_slots(project: Project) -> int:
    from annotation.models import Assignment

    return Assignment.objects.filter(stage__project=project,
                                     status=Assignment.Status.OPEN).count()


def _complete(project: Project) -> bool:
    return project.releases.filter(status=Release.Status.PUBLISHED).exists()


@contextmanager
def jobs_inline() -> Iterator[None]:
    """Run the stage and release jobs in this process, one after another, whatever the
    configuration: the demo script needs each job's result before the next step."""
    names = ("CELERY_TASK_ALWAYS_EAGER", "CROWDQA_JOBS_IN_THREAD")
    missing = object()
    saved = {name: getattr(settings, name, missing) for name in names}
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CROWDQA_JOBS_IN_THREAD = False
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                delattr(settings, name)
            else:
                setattr(settings, name, value)


from annotation.judgment_demo import JUDGMENT_DONE, build_judgment_done  # noqa: E402

# (name, builder, finished project?) in the order they are built: finished ones first.
DEMO_PROJECTS: tuple[tuple[str, Callable[[dict[str, Any]], str], bool], ...] = (
    (NEWSQA_DONE, build_newsqa_done, True),
    (RECO_DONE, build_reco_done, True),
    (MARCO_DONE, build_marco_done, True),
    (JUDGMENT_DONE, build_judgment_done, True),
    (NEWSQA_OPEN, build_newsqa_open, False),
    (RECO_OPEN, build_reco_open, False),
    (MARCO_OPEN, build_marco_open, False),
)


def demo_projects_load() -> Iterator[str]:
    """Build the demo projects that do not exist yet; yields one line per project."""
    User = get_user_model()
    names = (ADMIN, CHECKER, *ANNOTATORS)
    people = {u.username: u for u in User.objects.filter(username__in=names)}
    missing = [name for name in names if name not in people]
    if missing:
        raise DemoError(f"demo users missing: {', '.join(missing)} (load_demo creates them)")
    if not DATASETS_DIR.is_dir():
        yield f"no demo datasets at {DATASETS_DIR}: no demo projects"
        return
    with jobs_inline():
        _, lines = marco_corpus()
        yield from lines
        for name, build, finished in DEMO_PROJECTS:
            project = Project.objects.filter(name=name).first()
            if project is not None and (not finished or _complete(project)):
                yield f"project {name!r}: exists"
                continue
            started = time.perf_counter()
            summary = build(people)
            resumed = " (resumed)" if project is not None else ""
            yield (f"project {name!r}: {summary}{resumed} "
                   f"[{time.perf_counter() - started:.1f} s]")
