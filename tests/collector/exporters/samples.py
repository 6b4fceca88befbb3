"""Independent readers (``json``, ``csv``) that turn the repository's sample files into
exporter records, and back-comparisons; nothing here uses the writers."""

from __future__ import annotations

import json
from pathlib import Path

from collector.exporters import (
    BAD_QUESTION,
    NO_ANSWER,
    NO_ANSWER_PRESENT,
    CharSpan,
    DureaderDocument,
    DureaderRecord,
    MarcoPassage,
    MarcoRecord,
    NewsqaQuestion,
    NewsqaSourcerAnswer,
    NewsqaStory,
    NewsqaValidatedAnswer,
    RecoRecord,
    SquadAnswer,
    SquadArticle,
    SquadParagraph,
    SquadQuestion,
)

REPO = Path(__file__).resolve().parents[3]
DATASETS = REPO / "data" / "datasets"
SQUAD_V1 = DATASETS / "squad_v1.1_dev" / "dev-v1.1.sample.json"
SQUAD_V2 = DATASETS / "squad_v2.0_dev" / "dev-v2.0.sample.json"
NEWSQA_JSON = DATASETS / "newsqa" / "synthetic" / "combined-newsqa-data-v1.synthetic.json"
NEWSQA_CSV = DATASETS / "newsqa" / "synthetic" / "combined-newsqa-data-v1.synthetic.csv"
MARCO_JSONL = DATASETS / "msmarco_qa_v2.1" / "synthetic" / "msmarco_v2.1.synthetic.jsonl"
MARCO_COLUMNAR = (DATASETS / "msmarco_qa_v2.1" / "synthetic"
                  / "msmarco_v2.1.synthetic.columnar.json")
MARCO_REFS = DATASETS / "msmarco_qa_v2.1" / "synthetic" / "eval_references.synthetic.jsonl"
RECO_JSON = DATASETS / "reco" / "synthetic" / "ReCO.synthetic.json"
DUREADER = {split: DATASETS / "dureader" / f"search.{split}.sample.jsonl"
            for split in ("train", "dev", "test")}


def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- SQuAD


def _squad_answers(items) -> list[SquadAnswer]:
    return [SquadAnswer(a["text"], a["answer_start"]) for a in items]


def squad_articles(path: Path) -> list[SquadArticle]:
    data = load_json(path)
    return [
        SquadArticle(article["title"], [
            SquadParagraph(p["context"], [
                SquadQuestion(
                    id=q["id"], question=q["question"], answers=_squad_answers(q["answers"]),
                    is_impossible=q.get("is_impossible", False),
                    plausible_answers=(_squad_answers(q["plausible_answers"])
                                       if "plausible_answers" in q else None))
                for q in p["qas"]])
            for p in article["paragraphs"]])
        for article in data["data"]]


def squad_questions(dataset: dict):
    """(context, question object) for every question of a SQuAD file."""
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield paragraph["context"], qa


# --------------------------------------------------------------------------- NewsQA


def _choice(obj: dict):
    if obj.get("noAnswer"):
        return NO_ANSWER
    if obj.get("badQuestion"):
        return BAD_QUESTION
    return CharSpan(obj["s"], obj["e"])


def newsqa_stories(path: Path = NEWSQA_JSON) -> list[NewsqaStory]:
    stories = []
    for story in load_json(path)["data"]:
        questions = []
        for q in story["questions"]:
            answers = [NewsqaSourcerAnswer([CharSpan(s["s"], s["e"])
                                            for s in a["sourcerAnswers"] if "s" in s])
                       for a in q["answers"]]
            validated = q.get("validatedAnswers")
            questions.append(NewsqaQuestion(
                q=q["q"], answers=answers, is_answer_absent=q["isAnswerAbsent"],
                is_question_bad=q.get("isQuestionBad"),
                validated_answers=(None if validated is None else [
                    NewsqaValidatedAnswer(_choice(v), v["count"]) for v in validated]),
                consensus=_choice(q["consensus"]) if "consensus" in q else None))
        stories.append(NewsqaStory(story["storyId"], story["text"], story["type"],
                                   questions))
    return stories


# --------------------------------------------------------------------------- MS MARCO


def marco_records(path: Path = MARCO_JSONL) -> list[MarcoRecord]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        answers = row.get("answers")
        if answers == [NO_ANSWER_PRESENT]:
            answers = []
        wfa = row.get("wellFormedAnswers")
        records.append(MarcoRecord(
            query_id=row["query_id"], query=row["query"], query_type=row["query_type"],
            passages=[MarcoPassage(p["passage_text"], p["url"], bool(p["is_selected"]))
                      for p in row["passages"]],
            answers=answers, well_formed_answers=None if wfa == "[]" else wfa))
    return records


# --------------------------------------------------------------------------- ReCO


def reco_records(path: Path = RECO_JSON) -> list[RecoRecord]:
    return [RecoRecord(query_id=r["query_id"], query=r["query"], doc=r["doc"],
                       passage=r["passage"], alternatives=r["alternatives"].split("|"),
                       answer=r.get("answer"), url=r.get("url"))
            for r in load_json(path)]


# --------------------------------------------------------------------------- DuReader

_DOC_FIELDS = ("title", "paragraphs", "bs_rank_pos", "is_selected", "segmented_title",
               "segmented_paragraphs", "most_related_para")
_RECORD_FIELDS = ("answers", "yesno_answers", "entity_answers", "yesno_type",
                  "segmented_question", "segmented_answers", "answer_docs", "answer_spans",
                  "fake_answers", "match_scores")


def dureader_records(path: Path) -> list[DureaderRecord]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        documents = [DureaderDocument(**{k: d[k] for k in _DOC_FIELDS if k in d})
                     for d in row["documents"]]
        records.append(DureaderRecord(
            question_id=row["question_id"], question=row["question"],
            question_type=row["question_type"], fact_or_opinion=row["fact_or_opinion"],
            documents=documents, **{k: row[k] for k in _RECORD_FIELDS if k in row}))
    return records
