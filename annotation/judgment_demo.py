"""Demo data of the judgment recipe, from the real DuReader sample in ``data/datasets``.

References: the sample's dev and train records that have answers (their own lines, as
uploaded). Two simulated systems answer every question from the record's own documents:

- ``extractive``: the preprocessing's extracted span (``fake_answers``), with the
  reference's opinion on yes-no questions;
- ``lead-sentence``: the first sentence of the most related paragraph of the first
  document, with the opposite opinion on yes-no questions.

Raters are scripted: a score from the answer's LCS recall against the best reference,
raised when the yes-no opinion is right or a gold entity is named and lowered when the
opinion is wrong; the second rater differs by one point on some candidates.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from annotation.stages.judgment_import import Upload
from collector.metrics.lcs import lcs_length
from collector.metrics.tokenize import char_tokens

DUREADER = Path(__file__).resolve().parent.parent / "data" / "datasets" / "dureader"
FILES = ("search.dev.sample.jsonl", "search.train.sample.jsonl")


def dureader_records() -> list[dict[str, Any]]:
    rows = []
    for name in FILES:
        for line in (DUREADER / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("answers"):
                rows.append(record)
    return rows


def references_upload() -> Upload:
    lines = [json.dumps(r, ensure_ascii=False) for r in dureader_records()]
    return Upload("dureader-sample-references.jsonl", "\n".join(lines) + "\n")


def _lead_sentence(record: dict[str, Any]) -> str:
    doc = record["documents"][0]
    para = doc["paragraphs"][doc.get("most_related_para", 0)] if doc.get("paragraphs") else ""
    for stop in "。！？!?":
        if stop in para[:120]:
            para = para[: para.index(stop) + 1]
            break
    return para[:80]


def _flip(label: str) -> str:
    return "No" if label == "Yes" else "Yes"


def system_uploads() -> list[tuple[str, Upload]]:
    extractive, lead = [], []
    for r in dureader_records():
        labels = r.get("yesno_answers") or []
        yes_no = r["question_type"] == "YES_NO" and labels
        span = (r.get("fake_answers") or [""])[0] or _lead_sentence(r)
        extractive.append({"question_id": r["question_id"], "question_type": r["question_type"],
                           "answers": [span], "yesno_answers": [labels[0]] if yes_no else []})
        lead.append({"question_id": r["question_id"], "question_type": r["question_type"],
                     "answers": [_lead_sentence(r)],
                     "yesno_answers": [_flip(labels[0])] if yes_no else []})

    def upload(name: str, rows: list[dict]) -> Upload:
        return Upload(f"{name}.jsonl",
                      "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))

    return [("extractive", upload("extractive", extractive)),
            ("lead-sentence", upload("lead-sentence", lead))]


def scripted_score(data: dict[str, Any], rater: str) -> int:
    """A rater's 1-5 score of a rating item's candidate (see the module docstring)."""
    answer = char_tokens(data["answer"])
    refs = [char_tokens(a) for a in data["reference"]["answers"]]
    recall = max((lcs_length(answer, r) / len(r) for r in refs if r), default=0.0)
    score = 1 + round(3 * recall)
    labels = data["reference"].get("yesno_answers") or []
    if data["question_type"] == "YES_NO" and labels and data.get("yesno_answer"):
        score += 1 if data["yesno_answer"] in labels else -1
    entities = [e for g in data["reference"].get("entity_answers") or [] for e in g]
    if data["question_type"] == "ENTITY" and any(e and e in data["answer"] for e in entities):
        score += 1
    if zlib.crc32(f"{data['question_id']}|{data['system']}|{rater}".encode()) % 4 == 0:
        score += 1 if score < 3 else -1
    return max(1, min(5, score))


def build_judgment_done(people: dict[str, Any]) -> str:
    """The finished judgment demo: imported, sampled (every question), rated by two demo
    annotators through the task services, studied, released and published."""
    from annotation import demo, engine
    from annotation.judgment_models import JudgmentReport
    from annotation.models import Item, Project
    from annotation.roles import Role
    from annotation.stages.judgment_import import judgment_import

    raters = demo.ANNOTATORS[:2]
    project = Project.objects.filter(name=JUDGMENT_DONE).first() or engine.project_create(
        name=JUDGMENT_DONE, recipe="judgment", language="zh", user=people[demo.ADMIN],
        description="Two simulated systems' answers to the DuReader sample, rated 1-5 by two "
                    "raters; adapted and original ROUGE-L / BLEU-4 against the ratings.")
    if project.status == Project.Status.DRAFT:
        if not Item.objects.filter(stage__project=project, stage__kind="judgment_sample").exists():
            judgment_import(project=project, references=references_upload(),
                            predictions=system_uploads())
        for username in raters:
            engine.project_member_add(project=project, user=people[username],
                                      role=Role.ANNOTATOR)
        engine.project_start(project=project, actor=people[demo.ADMIN])
        project.refresh_from_db()
    for username in raters:
        demo._work(project, people[username],
                   lambda item, worker: {"score": scripted_score(item.data, worker.username)})
    saved = JudgmentReport.objects.filter(project=project).first()
    if saved is None:
        raise demo.DemoError(f"{project.name}: the study wrote no report")
    release = demo._release(project, people[demo.ADMIN], ["judgment"])
    t2 = saved.report["table2"]
    return (f"complete, {saved.report['counts']['candidates']} candidates rated by {len(raters)}; "
            f"Table 2 overall ROUGE-L {t2['rouge_l']['overall']} -> adapted "
            f"{t2['adapted_rouge_l']['overall']}; {demo._release_line(release)}")


JUDGMENT_DONE = "Judgment study demo (complete)"
