"""NewsQA consensus in a release, end to end: answerers, validators, consolidation, export.

The release's NewsQA JSON and CSV must carry the consensus Maluuba's own loader computes
from the same answers (``maluuba/newsqa/data_processing.py``, written out below as
:func:`official_consensus`), and a question without agreement after validation must not be
answerable in SQuAD or Hugging Face unless the release says so. The platform's own
agreement (normalised merged spans) stays; where it chooses differently the datasheet
counts it.
"""

from __future__ import annotations

import json
from collections import Counter
from operator import itemgetter

import pytest

from annotation import engine, releases
from annotation.models import Item
from annotation.roles import Role
from tests.annotation.test_newsqa_flow import claim_item
from tests.annotation.test_releases import release_folder
from tests.factories import user_with_roles

FUND = (
    "The Harlow county pension fund published its yearly report on Monday. Chair Mara Lind "
    "told reporters that the trustees had met eleven times and that the auditors found no "
    "irregularities. The report lists the holdings in bonds, shares and property, and the "
    "fees paid to its managers. Equities now make around 34% of the fund, up from 29% a "
    "year ago."
)
PORTVALE = (
    "PORTVALE (CNN) -- The city council of Portvale voted 7-2 on Tuesday to build a public "
    "library on the site of the old harbor warehouse.\n\nMayor Lena Ortiz said construction "
    "would begin in March and cost about $4 million."
)
SHARE = "How much of the fund is in equities?"  # agree by overlap, no span repeats
WHO = "Who spoke for the fund?"  # three validators, three different spans
WHEN = "When will construction begin?"  # validated: two of three validators agree
ENGINEER = "Who is the engineer?"  # everyone: no answer

ANSWERS = {  # question -> the three answerers' phrases (None = no answer)
    SHARE: ["around 34%", "34", "34%"],
    WHO: ["Mara Lind", "the trustees", "the auditors"],
    WHEN: ["in March", "Tuesday", "$4 million"],
    ENGINEER: [None, None, None],
}
VALIDATIONS = {WHO: [0, 1, 2], WHEN: [0, 0, 1]}  # validator -> index among unique answers


def official_consensus(row) -> dict:
    """Maluuba NewsQA's consensus for a CSV row as its loader reads it (``load_combined``
    then ``get_consensus_answer`` and ``to_dict``):

    - validated answers (a JSON object "s:e" / "none" / "bad_question" -> count): the
      answer with the highest count (the first of them) is the consensus when
      ``max_count >= total / 2`` and it is a span; otherwise there is none;
    - no validation: the most common of all sourcer ranges (every comma-separated range
      of every "|"-separated answerer, "None" included) if it is a span;
    - no span consensus: ``badQuestion`` when ``isQuestionBad >= 0.5`` ("?" = absent),
      else ``noAnswer`` (the paper: questions without agreement are specially marked).
    """
    start = end = None
    if row.validated_answers:
        validated = json.loads(row.validated_answers)
        answer, max_count = max(validated.items(), key=itemgetter(1))
        total = sum(validated.values())
        if max_count >= total / 2.0 and answer not in ("none", "bad_question"):
            start, end = map(int, answer.split(":"))
    else:
        ranges = Counter()
        for user_answer in row.answer_char_ranges.split("|"):
            for one in user_answer.split(","):
                ranges[one] += 1
        top = ranges.most_common(1)
        if top and ":" in top[0][0]:
            start, end = map(int, top[0][0].split(":"))
    if start is None:
        bad = float(row.is_question_bad) if row.is_question_bad != "?" else 0
        return {"badQuestion": True} if bad >= 0.5 else {"noAnswer": True}
    return {"s": start, "e": end}


def read_like_the_official_loader(path):
    """``NewsQaDataset.load_combined``: pandas with the loader's exact options."""
    import pandas as pd

    return pd.read_csv(path, encoding="utf-8", dtype={"is_answer_absent": float},
                       na_values={"question": [], "story_text": [], "validated_answers": []},
                       keep_default_na=False)


def _submit(worker, project, item, payload, committed):
    task = claim_item(worker, project, item)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)


@pytest.fixture
def consensus_project(db, admin_user, settings, committed, tmp_path):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = Corpus.objects.create(name="consensus-news", language="en")
    # A SQuAD-style paragraph (not CNN) and a CNN story file.
    Document.objects.create(corpus=corpus, external_id="Harlow_pension_fund#0",
                            title="Harlow pension fund", body=FUND, source_type="encyclopedia",
                            highlights=["Pension fund publishes its report"],
                            metadata={"article": "Harlow_pension_fund", "paragraph": 0})
    Document.objects.create(corpus=corpus, external_id="portvale-library", title="Portvale",
                            body=PORTVALE, source_type="news",
                            highlights=["Portvale votes for a library"],
                            metadata={"story_file": "portvale-library.story"})
    project = engine.project_create(
        name="Consensus", recipe="newsqa", corpus=corpus, user=admin_user,
        params={4: {"answers_per_question": 3, "max_extra_answers": 0},
                6: {"validators_per_question": 3}})
    names = ("questioner", "ann1", "ann2", "ann3", "val1", "val2", "val3")
    people = {name: user_with_roles(name, Role.ANNOTATOR) for name in names}
    for user in people.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)

    questions = {FUND: [SHARE, WHO], PORTVALE: [WHEN, ENGINEER]}
    for _ in range(2):
        task = engine.task_claim(worker=people["questioner"], project=project)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=people["questioner"],
                               payload={"questions": questions[task.item.document.body]})
    for question, phrases in ANSWERS.items():
        item = Item.objects.get(stage__kind="newsqa_answer", data__question=question)
        body = item.document.body
        for name, phrase in zip(("ann1", "ann2", "ann3"), phrases, strict=True):
            payload = {"no_answer": True} if phrase is None else {
                "spans": [[body.index(phrase), body.index(phrase) + len(phrase)]]}
            _submit(people[name], project, item, payload, committed)
    for question, choices in VALIDATIONS.items():
        item = Item.objects.get(stage__kind="newsqa_validate", data__question=question)
        for name, choice in zip(("val1", "val2", "val3"), choices, strict=True):
            _submit(people[name], project, item, {"choice": choice}, committed)
    assert Item.objects.filter(stage__kind="newsqa_validate").count() == 2
    assert Item.objects.filter(stage__kind="newsqa_consolidate", status="done").count() == 4
    return project


def _release(project, admin_user, committed, version, **options):
    with committed():
        release = releases.release_create(
            project=project, version=version, user=admin_user,
            formats=["newsqa-json", "newsqa-csv", "squad-v1", "squad-v2", "hf"], **options)
    release.refresh_from_db()
    assert release.status == "ready", release.error
    return release


def test_release_consensus_is_the_official_loaders(consensus_project, admin_user, committed):
    release = _release(consensus_project, admin_user, committed, "1.0.0")
    root = release_folder(release)
    records = {i.result["q"]: i.result for i in Item.objects.filter(
        stage__kind="newsqa_consolidate")}
    # The platform's own choices stay in the records.
    assert records[SHARE]["consensus"] == {"s": 308, "e": 310} and records[SHARE]["agreed"]
    assert records[WHO]["agreed"] is False and "s" in records[WHO]["consensus"]

    rows = read_like_the_official_loader(root / "combined-newsqa-data-v1.csv")
    official = {row.question: official_consensus(row) for row in rows.itertuples()}
    newsqa = json.loads((root / "combined-newsqa-data-v1.json").read_text())
    released = {q["q"]: q["consensus"] for story in newsqa["data"]
                for q in story["questions"]}
    assert released == official
    assert rows.set_index("question").loc[SHARE, "answer_char_ranges"] == \
        "301:311|308:310|308:311"
    assert official == {
        SHARE: {"s": 301, "e": 311},  # "around 34%": the first of three single ranges
        WHO: {"noAnswer": True},  # 1 of 3 votes < total / 2
        WHEN: {"s": PORTVALE.index("in March"), "e": PORTVALE.index("in March") + 8},
        ENGINEER: {"noAnswer": True},
    }
    # Point 6: the source's own id unless the story is a CNN story file.
    assert {s["storyId"] for s in newsqa["data"]} == {
        "Harlow_pension_fund#0", "./cnn/stories/portvale-library.story"}
    assert set(rows["story_id"]) == {s["storyId"] for s in newsqa["data"]}

    # SQuAD and HF: the question without agreement after validation is not answerable.
    v2 = {qa["question"]: qa for a in json.loads((root / "train-v2.0.json").read_text())[
        "data"] for p in a["paragraphs"] for qa in p["qas"]}
    assert v2[WHO]["is_impossible"] and v2[WHO]["answers"] == []
    assert {p["text"] for p in v2[WHO]["plausible_answers"]} == set(ANSWERS[WHO])
    assert v2[SHARE]["answers"][0] == {"text": "around 34%", "answer_start": 301}
    assert v2[WHEN]["answers"][0]["text"] == "in March"
    assert v2[ENGINEER]["is_impossible"]
    v1 = {qa["question"] for a in json.loads((root / "train-v1.1.json").read_text())["data"]
          for p in a["paragraphs"] for qa in p["qas"]}
    assert v1 == {SHARE, WHEN}
    import datasets

    loaded = datasets.load_dataset(str(root / releases.hf_folder(release)),
                                   cache_dir=str(root.parent / "hf-cache"))
    hf = {row["question"]: row for split in loaded.values() for row in split}
    assert hf[WHO]["answers"]["text"] == [] and hf[SHARE]["answers"]["text"][0] == "around 34%"

    # The datasheet counts where the platform and the official rule differ.
    sheet = release.datasheet
    assert sheet["agreement"]["share_no_agreement"] == 0.25
    assert (sheet["agreement"]["consensus_differs"], sheet["agreement"]["consensus_differs_span"],
            sheet["agreement"]["consensus_differs_answerable"]) == (2, 1, 1)
    text = (root / "DATASHEET.md").read_text()
    assert "max_count >= total / 2" in text and "unagreed_questions=unanswerable" in text
    assert "1 CNN story file(s)" in text and "1 document(s) from other sources" in text


def test_unagreed_questions_option_leaves_them_out(consensus_project, admin_user, committed):
    release = _release(consensus_project, admin_user, committed, "1.1.0",
                       unagreed_questions="omit")
    root = release_folder(release)
    v2 = {qa["question"] for a in json.loads((root / "train-v2.0.json").read_text())["data"]
          for p in a["paragraphs"] for qa in p["qas"]}
    assert v2 == {SHARE, WHEN, ENGINEER}
    newsqa = json.loads((root / "combined-newsqa-data-v1.json").read_text())
    assert WHO in {q["q"] for s in newsqa["data"] for q in s["questions"]}  # NewsQA keeps all
    assert "unagreed_questions=omit" in (root / "DATASHEET.md").read_text()


HALDEN = ("HALDEN (CNN) -- Heavy rain closed the mountain road above Halden on Sunday, "
          "officials said. Crews will clear the mudslides once the rain stops.")
CLOSED = "What closed the road above Halden?"  # both validators: "all answers are bad"
CLEAR = "Who will clear away the mudslides?"  # one "no answer in the article", one all-bad


@pytest.fixture
def rejected_project(db, admin_user, settings, committed, tmp_path):
    """Two questions whose three answerers disagree, so both go to two validators; neither
    gets an answer the validators accept (the QA report's case, and its mixed variant)."""
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.MEDIA_ROOT = tmp_path / "media"
    corpus = Corpus.objects.create(name="rejected-news", language="en")
    Document.objects.create(corpus=corpus, external_id="halden-road", title="Halden road",
                            body=HALDEN, source_type="news",
                            highlights=["Mountain road shut after storms"],
                            metadata={"story_file": "halden-road.story"})
    project = engine.project_create(
        name="Rejected", recipe="newsqa", corpus=corpus, user=admin_user,
        params={4: {"answers_per_question": 3, "max_extra_answers": 0}})
    people = {name: user_with_roles(name, Role.ANNOTATOR)
              for name in ("questioner", "ann1", "ann2", "ann3", "val1", "val2")}
    for user in people.values():
        engine.project_member_add(project=project, user=user, role=Role.ANNOTATOR)
    with committed():
        engine.project_start(project=project, actor=admin_user)
    task = engine.task_claim(worker=people["questioner"], project=project)
    with committed():
        engine.task_submit(assignment_id=task.pk, worker=people["questioner"],
                           payload={"questions": [CLOSED, CLEAR]})

    def span(phrase):
        start = HALDEN.index(phrase)
        return {"spans": [[start, start + len(phrase)]]}

    answers = {CLOSED: [span("Heavy rain"), {"no_answer": True}, span("rain")],
               CLEAR: [span("Crews"), {"no_answer": True}, span("officials")]}
    for question, payloads in answers.items():
        item = Item.objects.get(stage__kind="newsqa_answer", data__question=question)
        for name, payload in zip(("ann1", "ann2", "ann3"), payloads, strict=True):
            _submit(people[name], project, item, payload, committed)
    validations = {CLOSED: [{"all_bad": True}, {"all_bad": True}],
                   CLEAR: [{"choice": 1}, {"all_bad": True}]}  # option 1: "No answer ..."
    for question, payloads in validations.items():
        item = Item.objects.get(stage__kind="newsqa_validate", data__question=question)
        assert item.data["unique_answers"][1] == {"no_answer": True}
        for name, payload in zip(("val1", "val2"), payloads, strict=True):
            _submit(people[name], project, item, payload, committed)
    assert Item.objects.filter(stage__kind="newsqa_consolidate", status="done").count() == 2
    return project


def test_all_answers_bad_is_no_agreed_answer(rejected_project, admin_user, committed):
    """Validators who reject every answer do not agree on "no answer"; a "no answer" and
    an "all answers are bad" vote do not agree either (NewsQA section 3.4-3.5)."""
    records = {i.result["q"]: i.result for i in Item.objects.filter(
        stage__kind="newsqa_consolidate")}
    closed, clear = records[CLOSED], records[CLEAR]
    assert closed["validatedAnswers"] == [{"count": 2, "allBad": True}]
    assert (closed["agreed"], closed["validated"]) == (False, True)
    assert closed["consensus"] == {"noAnswer": True}  # how NewsQA marks no agreement
    assert clear["validatedAnswers"] == [{"count": 1, "noAnswer": True},
                                         {"count": 1, "allBad": True}]
    assert clear["agreed"] is False

    release = _release(rejected_project, admin_user, committed, "1.0.0",
                       unagreed_questions="omit")
    root = release_folder(release)
    # The NewsQA files' format has no "all answers are bad": validated_answers knows
    # "start:end", "none" and "bad_question" only, and Maluuba's loader reads any other key
    # as a span (and fails). So an all-bad vote is counted under "none" ("no valid
    # answer"), which is what that loader makes of it; left out, the loader would take the
    # answerers' "Heavy rain" as the consensus the validators rejected. The record above
    # keeps the votes apart, and SQuAD, Hugging Face and the datasheet follow its "agreed".
    rows = read_like_the_official_loader(root / "combined-newsqa-data-v1.csv")
    by_question = rows.set_index("question")
    assert json.loads(by_question.loc[CLOSED, "validated_answers"]) == {"none": 2}
    assert json.loads(by_question.loc[CLEAR, "validated_answers"]) == {"none": 2}
    official = {row.question: official_consensus(row) for row in rows.itertuples()}
    assert official == {CLOSED: {"noAnswer": True}, CLEAR: {"noAnswer": True}}
    newsqa = json.loads((root / "combined-newsqa-data-v1.json").read_text())
    questions = {q["q"]: q for story in newsqa["data"] for q in story["questions"]}
    assert questions[CLOSED]["validatedAnswers"] == [{"count": 2, "noAnswer": True}]
    assert {q: questions[q]["consensus"] for q in questions} == official

    # Neither question has an agreed answer: with unagreed_questions=omit SQuAD v2 and
    # Hugging Face leave both out (an agreed "no answer" would stay, as unanswerable).
    files = sorted(root.glob("*v2.0.json"))  # one file, or (releases split) one per split
    v2 = [qa for path in files for a in json.loads(path.read_text())["data"]
          for p in a["paragraphs"] for qa in p["qas"]]
    assert v2 == []
    assert release.datasheet["agreement"]["share_no_agreement"] == 1.0
    sheet = (root / "DATASHEET.md").read_text()
    assert ("Validators may vote that all answers are bad. The NewsQA JSON and CSV have no "
            "mark for that vote") in sheet


def test_hugging_face_answer_workers_are_the_answerers_pseudonyms(consensus_project, admin_user,
                                                                  committed):
    """The card promises ``answer_workers``: per-release pseudonyms parallel to the answers,
    the consensus (first) answer's being the first answerer who gave it."""
    from django.contrib.auth import get_user_model

    from collector.exporters import Pseudonymizer

    ids = {u.username: u.pk for u in get_user_model().objects.filter(
        username__in=["ann1", "ann2", "ann3"])}
    records = {i.result["q"]: i.result for i in Item.objects.filter(
        stage__kind="newsqa_consolidate")}
    answerers = [ids["ann1"], ids["ann2"], ids["ann3"]]
    assert records[SHARE]["answerWorkers"] == answerers  # agreed by the answerers
    assert records[WHEN]["answerWorkers"] == answerers  # through validation

    release = _release(consensus_project, admin_user, committed, "2.0.0")
    root = release_folder(release)
    import datasets

    loaded = datasets.load_dataset(str(root / releases.hf_folder(release)),
                                   cache_dir=str(root.parent / "hf-cache"))
    hf = {row["question"]: row for split in loaded.values() for row in split}
    pseudonym = Pseudonymizer(release.pseudonym_salt)
    ann1, ann2, ann3 = (pseudonym(ids[name]) for name in ("ann1", "ann2", "ann3"))
    assert hf[SHARE]["answers"]["text"] == ["around 34%", "34", "34%"]
    assert hf[SHARE]["answer_workers"] == [ann1, ann2, ann3]
    assert hf[WHEN]["answers"]["text"] == ["in March", "Tuesday", "$4 million"]
    assert hf[WHEN]["answer_workers"] == [ann1, ann2, ann3]
    assert hf[WHO]["answer_workers"] == []  # not answerable: no answers
    assert all(w.startswith("w-") for w in (ann1, ann2, ann3)) and len({ann1, ann2, ann3}) == 3
    card = (root / releases.hf_folder(release) / "README.md").read_text()
    assert not any(name in card for name in ids)  # usernames never leave the platform

    # A release that omits workers has no worker column.
    hidden = _release(consensus_project, admin_user, committed, "2.1.0", omit_workers=True)
    folder = release_folder(hidden) / releases.hf_folder(hidden)
    loaded = datasets.load_dataset(str(folder), cache_dir=str(folder.parent / "hf-cache-2"))
    assert all("answer_workers" not in split.column_names for split in loaded.values())


def test_the_consensus_answer_is_its_first_answerers():
    """Without validation the official consensus is the range most answerers gave, which
    may be one part of a multi-span answer: it is the answer of the first answerer whose
    answer holds it."""
    from annotation.release_records import _squad_question
    from collector.consolidation import Answer, newsqa_question_record

    def at(phrase):
        return (FUND.index(phrase), FUND.index(phrase) + len(phrase))

    lind, fees = at("Mara Lind"), at("fees")
    record = newsqa_question_record(
        text=FUND, question=WHO, workers=[7, 8, 9],
        answers=[Answer(spans=(at("trustees"),)), Answer(spans=(lind, fees)),
                 Answer(spans=(lind,))])
    question = _squad_question(FUND, {"key": "k", "result": record}, "ns", "consensus")
    assert [(a.text, a.worker) for a in question.answers] == [
        ("Mara Lind", 8), ("trustees", 7), (FUND[lind[0]:fees[1]], 8)]
