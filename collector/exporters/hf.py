"""Hugging Face ready releases: one Parquet (or JSONL) file per split under ``data/``
and a dataset card ``README.md`` whose YAML front matter lists the files per split, so
``datasets.load_dataset("<release folder>")`` loads every split.

Row layouts (one row per question; the columns are documented in the card):

- ``squad_v1`` / ``squad_v2``: the Hub's SQuAD layout ``id, title, context, question,
  answers{text[], answer_start[]}``; v2 adds ``is_impossible`` and
  ``plausible_answers{text[], answer_start[]}``. Records: :class:`SquadArticle`.
- ``newsqa``: ``story_id, story_text, type, question, sourcer_answers`` (per worker, a
  list of ``{s, e}`` spans, empty = no answer), ``is_answer_absent, is_question_bad,
  validated_answers[{s, e, no_answer, bad_question, count}], consensus{s, e, no_answer,
  bad_question}, consensus_text``. Records: :class:`NewsqaStory`.
- ``msmarco``: the official fields, with ``wellFormedAnswers`` a real (possibly empty)
  list. Records: :class:`MarcoRecord`.
- ``reco``: the official fields. Records: :class:`RecoRecord`.
- ``dureader``: the raw-form fields (documents without the segmented copies).
  Records: :class:`DureaderRecord`.

With a :class:`Pseudonymizer` that does not omit workers, an extra column carries worker
pseudonyms (``answer_workers`` parallel to the answers; ``annotator`` for ReCO); without
one, no worker column exists. Every record passes the same validation as the official
writers. Parquet needs ``pyarrow``; rows are converted and written in batches of
``batch_rows`` (one row group each), so memory stays bounded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from collector.exporters.datasheet import render_datasheet
from collector.exporters.dureader import dureader_row
from collector.exporters.errors import ExportError, InvalidRecordError
from collector.exporters.msmarco import msmarco_row
from collector.exporters.newsqa import check_newsqa_story, newsqa_question_object
from collector.exporters.pseudonyms import Pseudonymizer
from collector.exporters.reco import reco_row
from collector.exporters.records import (
    DureaderRecord,
    MarcoRecord,
    NewsqaStory,
    RecoRecord,
    SquadArticle,
)
from collector.exporters.squad import squad_question_object
from collector.exporters.stream import (
    DEFAULT_PROGRESS_EVERY,
    AtomicOutput,
    ManifestEntry,
    Progress,
    ProgressCallback,
    encode_utf8_json,
)

__all__ = [
    "HF_KINDS",
    "HfFormat",
    "HfKind",
    "hf_columns",
    "hf_rows",
    "hf_schema",
    "hf_split_path",
    "parquet_available",
    "render_dataset_card",
    "write_dataset_card",
    "write_hf_split",
]

HfKind = Literal["squad_v1", "squad_v2", "newsqa", "msmarco", "reco", "dureader"]
HfFormat = Literal["parquet", "jsonl"]
HF_KINDS: tuple[str, ...] = ("squad_v1", "squad_v2", "newsqa", "msmarco", "reco", "dureader")

_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$", re.ASCII)


def parquet_available() -> bool:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def _active(pseudonyms: Pseudonymizer | None) -> Pseudonymizer | None:
    """The pseudonymizer when worker columns are wanted, else None."""
    return pseudonyms if pseudonyms is not None and not pseudonyms.omit else None


def _workers(pseudonyms: Pseudonymizer | None) -> bool:
    return _active(pseudonyms) is not None


# --------------------------------------------------------------------------- rows


def _squad_rows(articles: Iterable[SquadArticle], v2: bool,
                pseudonyms: Pseudonymizer | None) -> Iterator[dict]:
    active = _active(pseudonyms)
    for article in articles:
        for paragraph in article.paragraphs:
            context = paragraph.context
            for q in paragraph.qas:
                # The official writers' checks: offsets, answerability, ids.
                if squad_question_object(context, q, v2=v2) is None:
                    raise InvalidRecordError(
                        f"question {q.id}: unanswerable questions have no place in SQuAD v1.1")
                row: dict[str, Any] = {
                    "id": q.id, "title": article.title, "context": context,
                    "question": q.question,
                    "answers": {"text": [a.text for a in q.answers],
                                "answer_start": [a.answer_start for a in q.answers]},
                }
                if v2:
                    plausible = list(q.plausible_answers or ())
                    row["is_impossible"] = bool(q.is_impossible)
                    row["plausible_answers"] = {
                        "text": [a.text for a in plausible],
                        "answer_start": [a.answer_start for a in plausible]}
                if active is not None:
                    row["answer_workers"] = [active(a.worker) for a in q.answers]
                yield row


def _choice_row(obj: Mapping[str, Any] | None) -> dict | None:
    if obj is None:
        return None
    return {"s": obj.get("s"), "e": obj.get("e"), "no_answer": bool(obj.get("noAnswer")),
            "bad_question": bool(obj.get("badQuestion"))}


def _newsqa_rows(stories: Iterable[NewsqaStory],
                 pseudonyms: Pseudonymizer | None) -> Iterator[dict]:
    active = _active(pseudonyms)
    for story in stories:
        check_newsqa_story(story)
        for index, q in enumerate(story.questions):
            obj = newsqa_question_object(story, index, q)
            consensus = obj.get("consensus")
            validated = obj.get("validatedAnswers")
            row: dict[str, Any] = {
                "story_id": story.story_id, "story_text": story.text, "type": story.type,
                "question": q.q,
                "sourcer_answers": [
                    [{"s": sp["s"], "e": sp["e"]} for sp in a["sourcerAnswers"] if "s" in sp]
                    for a in obj["answers"]],
                "is_answer_absent": obj["isAnswerAbsent"],
                "is_question_bad": obj.get("isQuestionBad"),
                "validated_answers": (None if validated is None else [
                    {**_choice_row(v), "count": v["count"]} for v in validated]),
                "consensus": _choice_row(consensus),
                "consensus_text": (story.text[consensus["s"]:consensus["e"]]
                                   if consensus and "s" in consensus else None),
            }
            if active is not None:
                row["answer_workers"] = [active(a.worker) for a in q.answers]
            yield row


def _msmarco_rows(records: Iterable[MarcoRecord],
                  pseudonyms: Pseudonymizer | None) -> Iterator[dict]:
    active = _active(pseudonyms)
    for record in records:
        official = msmarco_row(record)
        wfa = official.get("wellFormedAnswers")
        row: dict[str, Any] = {
            "answers": official.get("answers"),
            "passages": official["passages"],
            "query": official["query"],
            "query_id": official["query_id"],
            "query_type": official["query_type"],
            "wellFormedAnswers": None if wfa is None else ([] if wfa == "[]" else wfa),
        }
        if active is not None:
            workers = list(record.workers or ())
            answers = record.answers or ()
            row["answer_workers"] = [active(workers[i] if i < len(workers) else None)
                                     for i in range(len(answers))]
        yield row


def _reco_rows(records: Iterable[RecoRecord],
               pseudonyms: Pseudonymizer | None) -> Iterator[dict]:
    active = _active(pseudonyms)
    for record in records:
        official = reco_row(record)
        row: dict[str, Any] = {key: official.get(key) for key in
                               ("query_id", "query", "url", "doc", "passage", "alternatives",
                                "answer")}
        if active is not None:
            row["annotator"] = active(record.annotator)
        yield row


def _dureader_rows(records: Iterable[DureaderRecord],
                   pseudonyms: Pseudonymizer | None) -> Iterator[dict]:
    active = _active(pseudonyms)
    for record in records:
        official = dureader_row(record)
        row: dict[str, Any] = {
            "question_id": official["question_id"],
            "question": official["question"],
            "question_type": official["question_type"],
            "fact_or_opinion": official["fact_or_opinion"],
            "yesno_type": official.get("yesno_type"),
            "documents": [{"title": d["title"], "paragraphs": d["paragraphs"],
                           "bs_rank_pos": d["bs_rank_pos"],
                           "is_selected": d.get("is_selected")}
                          for d in official["documents"]],
            "answers": official.get("answers"),
            "yesno_answers": official.get("yesno_answers"),
            "entity_answers": official.get("entity_answers"),
        }
        if active is not None:
            workers = list(record.workers or ())
            answers = record.answers or ()
            row["answer_workers"] = [active(workers[i] if i < len(workers) else None)
                                     for i in range(len(answers))]
        yield row


def hf_rows(kind: HfKind, records: Iterable[Any], *,
            pseudonyms: Pseudonymizer | None = None) -> Iterator[dict]:
    """Rows of ``kind`` from the records (lazily, one record at a time)."""
    if kind in ("squad_v1", "squad_v2"):
        return _squad_rows(records, kind == "squad_v2", pseudonyms)
    makers: dict[str, Callable[..., Iterator[dict]]] = {
        "newsqa": _newsqa_rows, "msmarco": _msmarco_rows, "reco": _reco_rows,
        "dureader": _dureader_rows}
    if kind not in makers:
        raise ValueError(f"unknown kind {kind!r}; one of {', '.join(HF_KINDS)}")
    return makers[kind](records, pseudonyms)


# --------------------------------------------------------------------------- schema

_COLUMN_DOCS: dict[str, list[tuple[str, str]]] = {
    "squad_v1": [
        ("id", "question id"), ("title", "document title"),
        ("context", "the paragraph the answers are taken from"), ("question", "question"),
        ("answers", "crowd answers: `text[]` and `answer_start[]` (character offsets)"),
    ],
    "newsqa": [
        ("story_id", "story id"), ("story_text", "story body the offsets index"),
        ("type", "story-level split"), ("question", "question"),
        ("sourcer_answers", "per answering worker, the `{s, e}` spans chosen (end "
         "exclusive); empty = no answer in the story"),
        ("is_answer_absent", "share of answerers who found no answer"),
        ("is_question_bad", "share who flagged the question as nonsensical (null = unknown)"),
        ("validated_answers", "validators' choices with counts (null = not validated)"),
        ("consensus", "the majority answer: a span, `no_answer` or `bad_question`"),
        ("consensus_text", "text of the consensus span"),
    ],
    "msmarco": [
        ("answers", "distilled answers (`No Answer Present.` when none)"),
        ("passages", "`is_selected`, `passage_text`, `url` per retrieved passage"),
        ("query", "query"), ("query_id", "query id"), ("query_type", "query class"),
        ("wellFormedAnswers", "rewritten self-contained answers (empty list when absent)"),
    ],
    "reco": [
        ("query_id", "query id"), ("query", "query"), ("url", "source page of `doc`"),
        ("doc", "the full document"), ("passage", "the evidence extracted from `doc`"),
        ("alternatives", "three candidates joined by `|`, gold first"),
        ("answer", "the gold candidate"),
    ],
    "dureader": [
        ("question_id", "question id"), ("question", "question"),
        ("question_type", "`YES_NO`, `ENTITY` or `DESCRIPTION`"),
        ("fact_or_opinion", "`FACT` or `OPINION`"), ("yesno_type", "for YES_NO questions"),
        ("documents", "`title`, `paragraphs[]`, `bs_rank_pos`, `is_selected`"),
        ("answers", "free-text answers"),
        ("yesno_answers", "`Yes` / `No` / `Depends`, parallel to `answers`"),
        ("entity_answers", "entity lists, parallel to `answers`"),
    ],
}
_COLUMN_DOCS["squad_v2"] = _COLUMN_DOCS["squad_v1"] + [
    ("is_impossible", "true when the paragraph holds no answer (then `answers` is empty)"),
    ("plausible_answers", "for unanswerable questions, the distractor span(s)"),
]


def hf_columns(kind: HfKind, *, with_workers: bool = False) -> list[tuple[str, str]]:
    """(column, description) pairs of ``kind``, in order."""
    columns = list(_COLUMN_DOCS[kind])
    if with_workers:
        columns.append(("annotator", "worker pseudonym (per release)") if kind == "reco"
                       else ("answer_workers", "worker pseudonyms (per release), parallel "
                             "to the answers"))
    return columns


def hf_schema(kind: HfKind, *, with_workers: bool = False) -> Any:
    """The ``pyarrow.Schema`` of ``kind`` (needs pyarrow)."""
    import pyarrow as pa

    string, int32, int64 = pa.string(), pa.int32(), pa.int64()
    text_spans = pa.struct([("text", pa.list_(string)), ("answer_start", pa.list_(int32))])
    choice_fields = [("s", int32), ("e", int32), ("no_answer", pa.bool_()),
                     ("bad_question", pa.bool_())]
    fields: list[tuple[str, Any]]
    if kind in ("squad_v1", "squad_v2"):
        fields = [("id", string), ("title", string), ("context", string),
                  ("question", string), ("answers", text_spans)]
        if kind == "squad_v2":
            fields += [("is_impossible", pa.bool_()), ("plausible_answers", text_spans)]
    elif kind == "newsqa":
        span = pa.struct([("s", int32), ("e", int32)])
        fields = [("story_id", string), ("story_text", string), ("type", string),
                  ("question", string), ("sourcer_answers", pa.list_(pa.list_(span))),
                  ("is_answer_absent", pa.float64()), ("is_question_bad", pa.float64()),
                  ("validated_answers",
                   pa.list_(pa.struct([*choice_fields, ("count", int32)]))),
                  ("consensus", pa.struct(choice_fields)), ("consensus_text", string)]
    elif kind == "msmarco":
        passage = pa.struct([("is_selected", int32), ("passage_text", string),
                             ("url", string)])
        fields = [("answers", pa.list_(string)), ("passages", pa.list_(passage)),
                  ("query", string), ("query_id", int64), ("query_type", string),
                  ("wellFormedAnswers", pa.list_(string))]
    elif kind == "reco":
        fields = [("query_id", int64), ("query", string), ("url", string), ("doc", string),
                  ("passage", string), ("alternatives", string), ("answer", string)]
    elif kind == "dureader":
        document = pa.struct([("title", string), ("paragraphs", pa.list_(string)),
                              ("bs_rank_pos", int32), ("is_selected", pa.bool_())])
        fields = [("question_id", int64), ("question", string), ("question_type", string),
                  ("fact_or_opinion", string), ("yesno_type", string),
                  ("documents", pa.list_(document)), ("answers", pa.list_(string)),
                  ("yesno_answers", pa.list_(string)),
                  ("entity_answers", pa.list_(pa.list_(string)))]
    else:
        raise ValueError(f"unknown kind {kind!r}; one of {', '.join(HF_KINDS)}")
    if with_workers:
        fields.append(("annotator", string) if kind == "reco"
                      else ("answer_workers", pa.list_(string)))
    return pa.schema(fields)


# --------------------------------------------------------------------------- files


def hf_split_path(split: str, fmt: HfFormat) -> str:
    """The split's file, relative to the release folder."""
    if not _SPLIT_NAME.match(split):
        raise ValueError(f"split name {split!r}: use letters, digits and underscores")
    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"format {fmt!r}: parquet or jsonl")
    return f"data/{split}.{fmt}"


def write_hf_split(folder: str | os.PathLike[str], split: str, records: Iterable[Any], *,
                   kind: HfKind, fmt: HfFormat = "parquet",
                   pseudonyms: Pseudonymizer | None = None,
                   progress: ProgressCallback | None = None,
                   progress_every: int = DEFAULT_PROGRESS_EVERY, batch_rows: int = 1000,
                   overwrite: bool = False) -> ManifestEntry:
    """Write ``<folder>/data/<split>.parquet`` (or ``.jsonl``); ``records`` counts rows."""
    relative = hf_split_path(split, fmt)
    if kind not in HF_KINDS:
        raise ValueError(f"unknown kind {kind!r}; one of {', '.join(HF_KINDS)}")
    if fmt == "parquet" and not parquet_available():
        raise ExportError("Parquet needs pyarrow (pip install pyarrow); or use fmt='jsonl'")
    path = Path(folder, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = hf_rows(kind, records, pseudonyms=pseudonyms)
    counter = Progress(progress, progress_every)
    with AtomicOutput(path, overwrite=overwrite) as out:
        if fmt == "jsonl":
            for row in rows:
                out.write(encode_utf8_json(row) + "\n")
                counter.tick()
        else:
            _write_parquet(out, rows, hf_schema(kind, with_workers=_workers(pseudonyms)),
                           counter, batch_rows)
    counter.finish()
    return out.entry(counter.count)


def _write_parquet(out: AtomicOutput, rows: Iterator[dict], schema: Any, counter: Progress,
                   batch_rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    sink = out.binary_sink()
    writer = pq.ParquetWriter(sink, schema)
    try:
        batch: list[dict] = []
        for row in rows:
            batch.append(row)
            counter.tick()
            if len(batch) >= batch_rows:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch.clear()
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    finally:
        writer.close()


# --------------------------------------------------------------------------- card


def _yaml_str(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar.
    return encode_utf8_json(str(value))


def render_dataset_card(*, kind: HfKind, splits: Mapping[str, ManifestEntry | str],
                        datasheet: Mapping[str, Any], fmt: HfFormat = "parquet",
                        pseudonyms: Pseudonymizer | None = None,
                        folder: str | os.PathLike[str] | None = None,
                        pretty_name: str | None = None, license_id: str | None = None,
                        language: Iterable[str] = ("en",),
                        tags: Iterable[str] = ("crowdqa",), config_name: str = "default") -> str:
    """The card's Markdown. ``splits`` maps split name to its manifest entry (as
    returned by :func:`write_hf_split`) or to a path relative to the folder.
    ``config_name`` names the one (default) configuration; ``datasets`` keys its cache by
    folder name and configuration, so a release names both after itself."""
    title = pretty_name or datasheet.get("title") or "CrowdQA dataset"
    licence = datasheet.get("licence")
    if license_id is None:
        license_id = licence.get("spdx") if isinstance(licence, Mapping) else None
    front = ["---", f"pretty_name: {_yaml_str(title)}",
             f"license: {_yaml_str(license_id or 'other')}"]
    languages = list(language)
    if languages:
        front.append("language:")
        front += [f"- {_yaml_str(lang)}" for lang in languages]
    front += ["task_categories:", "- question-answering"]
    tag_list = list(tags)
    if tag_list:
        front.append("tags:")
        front += [f"- {_yaml_str(tag)}" for tag in tag_list]
    front += ["configs:", f"- config_name: {_yaml_str(config_name)}", "  default: true",
              "  data_files:"]
    rows = []
    for split, entry in splits.items():
        if isinstance(entry, ManifestEntry):
            rel = (entry.relative_to(folder).path if folder is not None
                   else hf_split_path(split, fmt))
        else:
            rel, entry = str(entry), None
        hf_split_path(split, fmt)  # validates the name
        front += [f"  - split: {_yaml_str(split)}", f"    path: {_yaml_str(rel)}"]
        rows.append((split, rel, entry))
    front.append("---")

    body = ["", f"# {title}", ""]
    if datasheet.get("description"):
        body += [str(datasheet["description"]).strip(), ""]
    body += ["## Files", "", "| split | file | rows | bytes | SHA-256 |", "|---|---|---|---|---|"]
    for split, rel, entry in rows:
        if entry is None:
            body.append(f"| {split} | `{rel}` | | | |")
        else:
            body.append(f"| {split} | `{rel}` | {entry.records:,} | {entry.bytes:,} | "
                        f"`{entry.sha256}` |")
    body += ["", "## Loading", "", "```python", "from datasets import load_dataset", "",
             'dataset = load_dataset("path/to/this/folder")', "```", "",
             "## Columns", "", "| column | meaning |", "|---|---|"]
    body += [f"| `{name}` | {text} |"
             for name, text in hf_columns(kind, with_workers=_workers(pseudonyms))]
    body += [""]
    # The description already opens the card.
    sheet = {key: value for key, value in datasheet.items() if key != "description"}
    body.append(render_datasheet(sheet, pseudonyms=pseudonyms, heading_level=2))
    return "\n".join(front + body).rstrip("\n") + "\n"


def write_dataset_card(folder: str | os.PathLike[str], *, kind: HfKind,
                       splits: Mapping[str, ManifestEntry | str],
                       datasheet: Mapping[str, Any], fmt: HfFormat = "parquet",
                       pseudonyms: Pseudonymizer | None = None,
                       pretty_name: str | None = None, license_id: str | None = None,
                       language: Iterable[str] = ("en",), tags: Iterable[str] = ("crowdqa",),
                       config_name: str = "default", overwrite: bool = False) -> ManifestEntry:
    """Write ``<folder>/README.md``: YAML front matter (``configs`` -> ``data_files`` per
    split, licence, language), files with checksums, columns, and the datasheet."""
    text = render_dataset_card(kind=kind, splits=splits, datasheet=datasheet, fmt=fmt,
                               pseudonyms=pseudonyms, folder=folder, pretty_name=pretty_name,
                               license_id=license_id, language=language, tags=tags,
                               config_name=config_name)
    with AtomicOutput(Path(folder, "README.md"), overwrite=overwrite) as out:
        out.write(text)
    return out.entry(1)
