"""NewsQA combined JSON and CSV from the synthetic fixture: round trips and encodings."""

from __future__ import annotations

import csv
import io

import pytest

from collector.exporters import (
    BAD_QUESTION,
    NO_ANSWER,
    CharSpan,
    InvalidRecordError,
    NewsqaQuestion,
    NewsqaSourcerAnswer,
    NewsqaStory,
    NewsqaValidatedAnswer,
    verify_entry,
    write_newsqa_csv,
    write_newsqa_json,
    write_newsqa_story_ids,
)
from collector.exporters.newsqa import csv_field
from tests.collector.exporters.samples import (
    NEWSQA_CSV,
    NEWSQA_JSON,
    load_json,
    newsqa_stories,
)


def _lazy(stories):
    for story in stories:
        yield NewsqaStory(story.story_id, story.text, story.type, iter(story.questions))


def test_json_round_trip_field_by_field(tmp_path):
    out = tmp_path / "combined-newsqa-data-v1.json"
    entry = write_newsqa_json(out, _lazy(newsqa_stories()))
    original = load_json(NEWSQA_JSON)
    written = load_json(out)
    assert written == original  # every field, key sets and the omitted isQuestionBad
    for q_w, q_o in zip(written["data"][0]["questions"], original["data"][0]["questions"],
                        strict=True):
        assert list(q_w) == list(q_o)  # the official key order
    assert entry.records == 4
    assert verify_entry(entry)


def test_csv_reproduces_the_official_file_byte_for_byte(tmp_path):
    out = tmp_path / "combined-newsqa-data-v1.csv"
    entry = write_newsqa_csv(out, _lazy(newsqa_stories()))
    assert out.read_bytes() == NEWSQA_CSV.read_bytes()
    assert entry.records == 4


def test_csv_read_back_with_csv_module_matches_the_json(tmp_path):
    out = tmp_path / "combined.csv"
    write_newsqa_csv(out, newsqa_stories())
    with out.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    story = load_json(NEWSQA_JSON)["data"][0]
    assert len(rows) == len(story["questions"])
    for row, q in zip(rows, story["questions"], strict=True):
        assert row["story_id"] == story["storyId"]
        assert row["story_text"] == story["text"]
        assert row["question"] == q["q"]
        workers = row["answer_char_ranges"].split("|")
        assert len(workers) == len(q["answers"])
        for worker, answer in zip(workers, q["answers"], strict=True):
            if worker == "None":
                assert answer["sourcerAnswers"] == [{"noAnswer": True}]
            else:
                spans = [tuple(map(int, span.split(":"))) for span in worker.split(",")]
                assert spans == [(s["s"], s["e"]) for s in answer["sourcerAnswers"]]
        assert float(row["is_answer_absent"]) == q["isAnswerAbsent"]
        if "isQuestionBad" in q:
            assert float(row["is_question_bad"]) == q["isQuestionBad"]
        else:
            assert row["is_question_bad"] == "?"


def test_story_less_csv(tmp_path):
    out = tmp_path / "newsqa-data-v1.csv"
    write_newsqa_csv(out, newsqa_stories(), include_story_text=False)
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0] == ["story_id", "question", "answer_char_ranges", "is_answer_absent",
                       "is_question_bad", "validated_answers"]
    assert len(rows) == 5


def test_every_span_lies_in_the_story(tmp_path):
    out = tmp_path / "x.json"
    write_newsqa_json(out, newsqa_stories())
    for story in load_json(out)["data"]:
        n = len(story["text"])
        for q in story["questions"]:
            spans = [s for a in q["answers"] for s in a["sourcerAnswers"] if "s" in s]
            spans += [v for v in q.get("validatedAnswers", []) if "s" in v]
            spans += [q["consensus"]] if "s" in q.get("consensus", {}) else []
            for span in spans:
                assert 0 <= span["s"] < span["e"] <= n
                assert story["text"][span["s"]:span["e"]].strip()


def _story(question: NewsqaQuestion, text: str = "The council voted 7-2 on Tuesday."):
    return [NewsqaStory("./cnn/stories/x.story", text, "train", [question])]


def test_bad_question_choice_and_validated_encodings(tmp_path):
    q = NewsqaQuestion(
        q="What?", answers=[NewsqaSourcerAnswer([CharSpan(18, 21)]), NewsqaSourcerAnswer()],
        is_answer_absent=0.5, is_question_bad=0.5,
        validated_answers=[NewsqaValidatedAnswer(CharSpan(18, 21), 1),
                           NewsqaValidatedAnswer(NO_ANSWER, 1),
                           NewsqaValidatedAnswer(BAD_QUESTION, 2)],
        consensus=BAD_QUESTION)
    write_newsqa_json(tmp_path / "x.json", _story(q))
    written = load_json(tmp_path / "x.json")["data"][0]["questions"][0]
    assert written["validatedAnswers"] == [{"count": 1, "s": 18, "e": 21},
                                           {"count": 1, "noAnswer": True},
                                           {"count": 2, "badQuestion": True}]
    assert written["consensus"] == {"badQuestion": True}
    assert written["answers"][1] == {"sourcerAnswers": [{"noAnswer": True}]}
    write_newsqa_csv(tmp_path / "x.csv", _story(q))
    row = next(csv.DictReader(io.StringIO((tmp_path / "x.csv").read_text("utf-8"))))
    assert row["answer_char_ranges"] == "18:21|None"
    assert row["validated_answers"] == '{"18:21": 1, "none": 1, "bad_question": 2}'
    assert row["is_question_bad"] == "0.5"


@pytest.mark.parametrize(("question", "needle"), [
    (NewsqaQuestion("What?", [NewsqaSourcerAnswer([CharSpan(30, 99)])], 0.0), "30:99"),
    (NewsqaQuestion("What?", [NewsqaSourcerAnswer([CharSpan(5, 5)])], 0.0), "5:5"),
    (NewsqaQuestion("What?", [], 1.5), "is_answer_absent"),
    (NewsqaQuestion("What?", [], 0.0, consensus=CharSpan(0, 400)), "0:400"),
    (NewsqaQuestion("What?", [], 0.0, validated_answers=[
        NewsqaValidatedAnswer(NO_ANSWER, 0)]), "count"),
])
def test_invalid_questions_name_story_and_question(tmp_path, question, needle):
    for writer in (write_newsqa_json, write_newsqa_csv):
        with pytest.raises(InvalidRecordError, match=r"story ./cnn/stories/x.story, question 0"):
            writer(tmp_path / "x", _story(question))
        with pytest.raises(InvalidRecordError, match=needle):
            writer(tmp_path / "x", _story(question))
    assert list(tmp_path.iterdir()) == []


def test_unknown_split_is_refused(tmp_path):
    story = NewsqaStory("s", "text", "validation", [])
    with pytest.raises(InvalidRecordError, match="train, dev, test"):
        write_newsqa_json(tmp_path / "x.json", [story])


def test_stories_without_questions_are_kept(tmp_path):
    write_newsqa_json(tmp_path / "x.json", [NewsqaStory("s", "text", "test", [])])
    assert load_json(tmp_path / "x.json") == {
        "data": [{"storyId": "s", "text": "text", "type": "test", "questions": []}],
        "version": "1"}


@pytest.mark.parametrize("value", [
    "", "plain", "a,b", 'say "hi"', "line\nbreak", "crlf\r\n", " lead", "trail ",
    "tab\tx", "semi;colon", "'single'", "ü€🙂", '"', ",", "\n", "None", "?"])
def test_csv_fields_are_quoted_exactly_like_the_csv_module(value):
    expected = io.StringIO()
    csv.writer(expected, lineterminator="\n").writerow(["x", value, "y"])
    assert f"x,{csv_field(value)},y\n" == expected.getvalue()


def test_a_lone_carriage_return_is_quoted_so_readers_keep_the_row():
    field = csv_field("cr\rhere")
    assert field == '"cr\rhere"'
    rows = list(csv.reader(io.StringIO("a," + field + ",b\n", newline="")))
    assert rows == [["a", "cr\rhere", "b"]]


def test_tricky_text_round_trips_through_the_csv_module(tmp_path):
    text = 'He said, "wait."\r\nThen\nleft; 🙂 €'
    story = NewsqaStory('./cnn/stories/"q".story', text, "dev", [NewsqaQuestion(
        'Who "said" it, then?', [NewsqaSourcerAnswer([CharSpan(0, 2), CharSpan(9, 15)])],
        0.0, None, [NewsqaValidatedAnswer(CharSpan(0, 2), 1)], CharSpan(0, 2))])
    write_newsqa_csv(tmp_path / "x.csv", [story])
    with (tmp_path / "x.csv").open(newline="", encoding="utf-8") as fh:
        row = list(csv.DictReader(fh))[0]
    assert row == {"story_id": './cnn/stories/"q".story', "question": 'Who "said" it, then?',
                   "answer_char_ranges": "0:2,9:15", "is_answer_absent": "0.0",
                   "is_question_bad": "?", "validated_answers": '{"0:2": 1}',
                   "story_text": text}


def _q(answers, validated=None, bad=None):
    return NewsqaQuestion(
        q="?", answers=[NewsqaSourcerAnswer(spans=[CharSpan(*s) for s in a]) for a in answers],
        is_answer_absent=0.0, is_question_bad=bad,
        validated_answers=None if validated is None else [
            NewsqaValidatedAnswer(choice=c if isinstance(c, str) else CharSpan(*c), count=n)
            for c, n in validated])


@pytest.mark.parametrize(("question", "expected"), [
    # No validation: the most frequent single range, ties to the first seen.
    (_q([[(301, 311)], [(308, 310)], [(308, 311)]]), CharSpan(301, 311)),
    (_q([[(1, 4)], [(5, 9)], [(5, 9)]]), CharSpan(5, 9)),
    (_q([[], [], [(5, 9)]]), NO_ANSWER),  # "None" counts as a range
    (_q([[(1, 2), (5, 9)], [(5, 9)]]), CharSpan(5, 9)),  # every span of a multi-span counts
    # Validated: a majority of at least half the votes, and a span.
    (_q([[(1, 4)], [(5, 9)]], [((1, 4), 1), ((5, 9), 1), ((10, 12), 1)]), NO_ANSWER),
    (_q([[(1, 4)], [(5, 9)]], [((1, 4), 1), ((5, 9), 1)]), CharSpan(1, 4)),  # 1 >= 2 / 2
    (_q([[(1, 4)], [(5, 9)]], [((1, 4), 1), ((5, 9), 2)]), CharSpan(5, 9)),
    (_q([[(1, 4)], []], [(NO_ANSWER, 2), ((1, 4), 1)]), NO_ANSWER),
    (_q([[(1, 4)], []], [(BAD_QUESTION, 2), ((1, 4), 1)], bad=0.5), BAD_QUESTION),
    (_q([[(1, 4)], [(5, 9)]], [((1, 4), 1), ((5, 9), 1), ((10, 12), 1)], bad=0.0), NO_ANSWER),
])
def test_consensus_is_the_official_loaders(question, expected):
    from collector.exporters import newsqa_consensus

    assert newsqa_consensus(question) == expected


def test_the_official_sample_consensus_is_reproduced():
    from collector.exporters import newsqa_consensus

    questions = [q for story in newsqa_stories() for q in story.questions]
    assert questions
    for q in questions:
        if q.consensus is not None:
            assert newsqa_consensus(q) == q.consensus, q.q


def test_story_id_lists_read_as_newsqa_split_dataset_reads_them(tmp_path):
    """A split's story-id list as NewsQA's dev_story_ids.csv: the header story_id, one id a
    row; read with pandas as its split_dataset.py does, the ids come back as written (one
    with a comma, quoted); an empty split is the header alone; an empty id is refused,
    naming the row and the file, and nothing is written."""
    import pandas as pd

    ids = ["./cnn/stories/00359f516cdf8b1800c7102711bd9aa400d1c749.story",
           "Super_Bowl_50#0", "Harlow, Essex#2"]
    entry = write_newsqa_story_ids(tmp_path / "dev_story_ids.csv", iter(ids))
    assert (tmp_path / "dev_story_ids.csv").read_text().splitlines()[:2] == [
        "story_id", "./cnn/stories/00359f516cdf8b1800c7102711bd9aa400d1c749.story"]
    assert list(pd.read_csv(tmp_path / "dev_story_ids.csv")["story_id"].values) == ids
    assert entry.records == 3 and verify_entry(entry)
    empty = write_newsqa_story_ids(tmp_path / "test_story_ids.csv", [])
    assert (tmp_path / "test_story_ids.csv").read_text() == "story_id\n"
    assert empty.records == 0 and pd.read_csv(tmp_path / "test_story_ids.csv").empty
    with pytest.raises(InvalidRecordError, match="row 3 of train_story_ids.csv"):
        write_newsqa_story_ids(tmp_path / "train_story_ids.csv", ["a", ""])
    assert not (tmp_path / "train_story_ids.csv").exists()
