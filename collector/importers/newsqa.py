"""NewsQA (combined JSON and combined CSV) and CNN ``.story`` files.

All three name a story by its file stem (the SHA-1 of the article URL), so a story
imported from its ``.story`` file and the same story from NewsQA JSON are one document.
The story body is the NewsQA text: the body paragraphs joined by single newlines, the
``@highlight`` summary points kept apart as highlights. Story files have no headline;
the document title stays empty until someone supplies one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from django.utils.translation import gettext_noop

from collector.importers.errors import (
    COLUMNS_DIFFER,
    FILE_NAME,
    SHOULD_BE_OBJECT,
    TOP_LEVEL,
    WHOLE_FILE,
    Where,
    at_line,
    at_path,
    shorten,
)
from collector.importers.jsonstream import JsonStream
from collector.importers.jsonvalues import json_record
from collector.importers.records import (
    IS_EMPTY,
    Checker,
    DocumentRecord,
    ImportUnit,
    QuestionRecord,
)
from collector.importers.source import ByteCounter, Source, iter_csv_rows, read_text
from collector.stored_text import StoredText

CSV_COLUMNS = ("story_id", "question", "answer_char_ranges", "story_text")
#: A question of a NewsQA story: its path, and the line the story starts on.
IN_STORY = gettext_noop("%(path)s (story at line %(line)s)")


def story_key(story_id: str) -> str:
    """``./cnn/stories/<sha1>.story`` -> ``<sha1>``."""
    name = PurePosixPath(story_id.strip()).name
    return name[: -len(".story")] if name.endswith(".story") else name


# -- .story files ------------------------------------------------------------------------
def story_parse(text: str) -> tuple[str, list[str]]:
    """Body (paragraphs joined by newlines) and highlights of a CNN story file."""
    paragraphs: list[str] = []
    highlights: list[str] = []
    in_highlight = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "@highlight":
            in_highlight = True
            continue
        if in_highlight:
            highlights.append(line)
            in_highlight = False
        elif not highlights:
            paragraphs.append(line)
        else:
            # Text after the highlights started, not introduced by @highlight: a
            # continuation of the last highlight.
            highlights[-1] = f"{highlights[-1]} {line}"
    return "\n".join(paragraphs), highlights


def read_story(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    for source_file in source.files:
        check = Checker(source_file.name)
        body, highlights = story_parse(read_text(source_file, counter))
        if not body:
            raise check.fail(StoredText(gettext_noop("has no story text before the first "
                                                     "@highlight")), where=at_line(1),
                             field="body")
        # The story's own file name (<sha1>.story), also inside a zip or gzipped: NewsQA's
        # story ids name it, and importing it again in another packing skips it.
        file_name = source_file.inner_name
        key = check.identifier(story_key(file_name), where=StoredText(FILE_NAME),
                               field="id")
        yield ImportUnit([DocumentRecord(
            external_id=key, body=body, where=StoredText(WHOLE_FILE),
            highlights=highlights,
            source_type="news", metadata={"story_file": file_name},
        )])


# -- NewsQA combined JSON --------------------------------------------------------------
def read_newsqa_json(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    source_file = source.files[0]
    check = Checker(source_file.name)
    with JsonStream(source_file, counter) as stream:
        if stream.peek() != "{":
            raise stream.error(StoredText(gettext_noop("a NewsQA file is one JSON object with a "
                                                       "'data' list")))
        found = False
        for key in stream.iter_object():
            if key != "data":
                continue
            found = True
            if stream.peek() != "[":
                raise check.fail(StoredText(gettext_noop("should be a list of stories")),
                                 where=StoredText(TOP_LEVEL), field="data")
            for s in stream.iter_array():
                line = stream.line()
                path = f"data[{s}]"
                yield _json_story(stream.read_value(path=path), path=path, line=line,
                                  check=check)
        stream.finish()
    if not found:
        raise check.fail(StoredText(gettext_noop("is missing: this is not a NewsQA file")),
                         where=StoredText(TOP_LEVEL), field="data")


def _json_story(story: Any, *, path: str, line: int, check: Checker) -> ImportUnit:
    where = at_path(path, line)
    story_id = check.text(story, "storyId", where=where)
    key = check.identifier(story_key(story_id), where=where, field="storyId")
    text = check.text(story, "text", where=where)
    split = check.get(story, "type", where=where, kind=str, required=False, default="")
    document = DocumentRecord(external_id=key, body=text, where=where, source_type="news",
                              metadata={"story_id": story_id, **({"split": split} if split
                                                                 else {})})
    questions = []
    for q, item in enumerate(check.get(story, "questions", where=where, kind=list,
                                       required=False, default=[])):
        q_where = StoredText(IN_STORY, path=f"{path}.questions[{q}]", line=line)
        question = check.text(item, "q", where=q_where)
        answers = []
        for w, worker in enumerate(check.get(item, "answers", where=q_where, kind=list,
                                             required=False, default=[])):
            selections = check.get(worker, "sourcerAnswers", where=q_where, kind=list,
                                   prefix=f"answers[{w}].")
            answers.append(_selections(selections, body=text, where=q_where,
                                       field=f"answers[{w}].sourcerAnswers", check=check))
        metadata: dict[str, Any] = {}
        for name in ("isAnswerAbsent", "isQuestionBad"):
            if item.get(name) is not None:
                metadata[name] = check.get(item, name, where=q_where, kind=(int, float))
        if "validatedAnswers" in item:
            metadata["validatedAnswers"] = [
                _choice(choice, body=text, where=q_where, field=f"validatedAnswers[{v}]",
                        check=check, counted=True)
                for v, choice in enumerate(check.get(item, "validatedAnswers", where=q_where,
                                                     kind=list))
            ]
        consensus = None
        if "consensus" in item:
            consensus = _choice(item["consensus"], body=text, where=q_where, field="consensus",
                                check=check, counted=False)
            metadata["consensus"] = consensus
        questions.append(QuestionRecord(
            external_id=f"{key}#q{q}", text=question, where=q_where, document_id=key,
            answers=answers, is_impossible=bool(consensus and consensus.get("noAnswer")),
            metadata=metadata,
        ))
    return ImportUnit([document], questions)


def _selections(selections: list[Any], *, body: str, where: Where, field: str,
                check: Checker) -> dict[str, Any]:
    spans = []
    for i, selection in enumerate(selections):
        if not isinstance(selection, dict):
            raise check.fail(StoredText(SHOULD_BE_OBJECT), where=where, field=f"{field}[{i}]")
        if selection.get("noAnswer"):
            return {"no_answer": True}
        if selection.get("badQuestion"):
            return {"bad_question": True}
        spans.append(check.span(body, selection.get("s"), selection.get("e"), where=where,
                                field=f"{field}[{i}]"))
    return _answer_from_spans(spans)


def _answer_from_spans(spans: list[dict[str, Any]]) -> dict[str, Any]:
    if not spans:
        return {"no_answer": True}
    if len(spans) == 1:
        return spans[0]
    return {"text": " … ".join(span["text"] for span in spans), "spans": spans}


def _choice(choice: Any, *, body: str, where: Where, field: str, check: Checker,
            counted: bool) -> dict[str, Any]:
    if not isinstance(choice, dict):
        raise check.fail(StoredText(SHOULD_BE_OBJECT), where=where, field=field)
    result: dict[str, Any] = {}
    if counted:
        result["count"] = check.get(choice, "count", where=where, kind=int, prefix=f"{field}.")
    if choice.get("noAnswer"):
        result["noAnswer"] = True
    elif choice.get("badQuestion"):
        result["badQuestion"] = True
    else:
        span = check.span(body, choice.get("s"), choice.get("e"), where=where, field=field)
        result.update(s=span["start"], e=span["end"], text=span["text"])
    return result


# -- NewsQA combined CSV (one row per question) ----------------------------------------
def read_newsqa_csv(source: Source, *, counter: ByteCounter, **_: Any) -> Iterator[ImportUnit]:
    source_file = source.files[0]
    check = Checker(source_file.name)
    header: dict[str, int] | None = None
    current: tuple[str, DocumentRecord, list[QuestionRecord]] | None = None
    finished: set[str] = set()
    for where, row in iter_csv_rows(source_file, counter):
        if header is None:
            header = {name.strip(): i for i, name in enumerate(row)}
            for column in CSV_COLUMNS:
                if column not in header:
                    detail = (gettext_noop("column %(column)s is missing from the header (the "
                                           "story-less question file cannot be imported: use "
                                           "the combined CSV with story_text)")
                              if column == "story_text"
                              else gettext_noop("column %(column)s is missing from the header"))
                    raise check.fail(StoredText(detail, column=repr(column)), where=where,
                                     field=column)
            continue
        if len(row) != len(header):
            raise check.fail(StoredText(COLUMNS_DIFFER, columns=len(row), header=len(header)),
                             where=where)
        values = {name: row[i] for name, i in header.items()}
        story_id = values["story_id"].strip()
        if not story_id:
            raise check.fail(StoredText(IS_EMPTY), where=where, field="story_id")
        key = check.identifier(story_key(story_id), where=where, field="story_id")
        text = values["story_text"]
        if current is None or current[0] != key:
            if current is not None:
                yield ImportUnit([current[1]], current[2])
                finished.add(current[0])
            if key in finished:
                raise check.fail(
                    StoredText(gettext_noop("story %(story)s appears again after other "
                                            "stories; the rows of one story must be "
                                            "consecutive"), story=shorten(key)),
                    where=where, field="story_id",
                )
            if not text.strip():
                raise check.fail(StoredText(IS_EMPTY), where=where, field="story_text")
            current = (key, DocumentRecord(external_id=key, body=text, where=where,
                                           source_type="news",
                                           metadata={"story_id": story_id}), [])
        elif text != current[1].body:
            raise check.fail(StoredText(gettext_noop("differs from the story text of the "
                                                     "story's earlier rows")),
                             where=where, field="story_text")
        current[2].append(_csv_question(values, key=key, index=len(current[2]), body=text,
                                        where=where, check=check))
    if current is not None:
        yield ImportUnit([current[1]], current[2])


def _csv_question(values: dict[str, str], *, key: str, index: int, body: str, where: Where,
                  check: Checker) -> QuestionRecord:
    question = values["question"].strip()
    if not question:
        raise check.fail(StoredText(IS_EMPTY), where=where, field="question")
    answers = []
    ranges = values["answer_char_ranges"].strip()
    for worker in ranges.split("|") if ranges else []:
        if worker.strip() == "None":
            answers.append({"no_answer": True})
            continue
        spans = []
        for part in worker.split(","):
            start, end = _range(part, where=where, field="answer_char_ranges", check=check)
            spans.append(check.span(body, start, end, where=where, field="answer_char_ranges"))
        answers.append(_answer_from_spans(spans))
    metadata: dict[str, Any] = {}
    for column, name in (("is_answer_absent", "isAnswerAbsent"),
                         ("is_question_bad", "isQuestionBad")):
        raw = values.get(column, "").strip()
        if raw and raw != "?":
            try:
                metadata[name] = float(raw)
            except ValueError:
                raise check.fail(StoredText(gettext_noop("%(value)s is not a number or '?'"),
                                            value=shorten(raw)), where=where,
                                 field=column) from None
    validated = values.get("validated_answers", "").strip()
    if validated:
        metadata["validatedAnswers"] = _csv_validated(validated, body=body, where=where,
                                                      check=check)
    return QuestionRecord(external_id=f"{key}#q{index}", text=question, where=where,
                          document_id=key, answers=answers,
                          is_impossible=metadata.get("isAnswerAbsent", 0.0) >= 0.5,
                          metadata=metadata)


def _range(part: str, *, where: Where, field: str, check: Checker) -> tuple[int, int]:
    start, sep, end = part.strip().partition(":")
    try:
        if not sep:
            raise ValueError
        return int(start), int(end)
    except ValueError:
        raise check.fail(StoredText(gettext_noop("%(value)s is not start:end"),
                                    value=shorten(part)), where=where, field=field) from None


def _csv_validated(raw: str, *, body: str, where: Where, check: Checker) -> list[dict[str, Any]]:
    field = "validated_answers"
    choices = json_record(raw, file=check.file, where=where, field=field,
                          invalid=gettext_noop("is not JSON"))
    if not isinstance(choices, dict):
        raise check.fail(StoredText(gettext_noop("should be a JSON object")), where=where,
                         field=field)
    result = []
    for choice, count in choices.items():
        if not isinstance(count, int) or isinstance(count, bool):
            raise check.fail(StoredText(gettext_noop("count for %(choice)s should be an "
                                                     "integer"), choice=repr(choice)),
                             where=where, field=field)
        if choice == "none":
            result.append({"count": count, "noAnswer": True})
        elif choice == "bad_question":
            result.append({"count": count, "badQuestion": True})
        else:
            start, end = _range(choice, where=where, field=field, check=check)
            span = check.span(body, start, end, where=where, field=field)
            result.append({"count": count, "s": start, "e": end, "text": span["text"]})
    return result
