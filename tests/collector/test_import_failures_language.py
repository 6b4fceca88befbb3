"""Each format's import failures, and Python's JSON and CSV parsers' complaints, read in the
reader's language: the real samples corrupted, the failure kept as a job keeps it (JSON) and
shown in Simplified Chinese and in English, file, place and field exact in both (the
format's own messages and the parsers' words stayed English inside the Chinese frame)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils.translation import override

from collector.importers import (
    ImportFailure,
    format_get,
    mapping_parse,
    queries_read,
    source_open,
    units_read,
)
from collector.importers.sniff import QUERIES
from collector.importers.source import ByteCounter
from collector.models import Corpus, Job
from collector.services import corpus_import
from collector.stored_text import stored_text_json, stored_text_render
from tests.collector.corpus_support import (
    DUREADER_DEV,
    MSMARCO_COLUMNAR,
    MSMARCO_JSONL,
    NEWSQA_CSV,
    NEWSQA_JSON,
    QUERIES_EN,
    RECO,
    SQUAD_V1,
    SQUAD_V2,
)


def _failure(path: Path, fmt: str) -> ImportFailure:
    source = source_open(path, max_bytes=1 << 30)
    records = (queries_read(source, counter=ByteCounter()) if fmt == QUERIES
               else units_read(format_get(fmt), source, counter=ByteCounter()))
    with pytest.raises(ImportFailure) as caught:
        for _ in records:
            pass
    return caught.value


def _read(path: Path, fmt: str) -> tuple[str, str]:
    """(English, Chinese) of the failure reading ``path``, from what a job keeps of it."""
    kept = json.loads(json.dumps(stored_text_json(_failure(path, fmt).text)))
    with override("en"):
        english = stored_text_render(kept)
    with override("zh-hans"):
        chinese = stored_text_render(kept)
    return english, chinese


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def _jsonl(records: list) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


# -- SQuAD -------------------------------------------------------------------------------
def _squad_by_article(data: dict) -> str:
    """The sample with one article a line (article i on line i + 2)."""
    return ('{"data": [\n' + ",\n".join(json.dumps(a) for a in data["data"])
            + '\n], "version": "1.1"}\n')


def test_squad(tmp_path):
    data = json.loads(SQUAD_V1.read_text(encoding="utf-8"))
    data["data"][1]["paragraphs"][2]["qas"][0]["answers"] = []
    assert _read(_write(tmp_path, "dev.json", _squad_by_article(data)), "squad") == (
        "dev.json: data[1].paragraphs[2].qas[0] (article at line 3): field 'answers': is empty "
        "for an answerable question (is_impossible is not true)",
        "dev.json：data[1].paragraphs[2].qas[0]（文章起于第 3 行）：字段 'answers'：对可回答的问题"
        "不能为空（is_impossible 不为 true）")

    data = json.loads(SQUAD_V2.read_text(encoding="utf-8"))
    data["data"][2]["paragraphs"] = {"not": "a list"}
    assert _read(_write(tmp_path, "v2.json", _squad_by_article(data)), "squad")[1] == (
        "v2.json：data[2]（第 4 行）：字段 'paragraphs'：应为列表，实际为对象")

    data["data"] = {"not": "a list"}
    assert _read(_write(tmp_path, "v2.json", json.dumps(data)), "squad") == (
        "v2.json: top level: field 'data': should be a list of articles",
        "v2.json：顶层：字段 'data'：应为文章列表")
    del data["data"]
    assert _read(_write(tmp_path, "v2.json", json.dumps(data)), "squad")[1] == (
        "v2.json：顶层：字段 'data'：缺失：这不是 SQuAD 文件")
    assert _read(_write(tmp_path, "list.json", "\n  [" + SQUAD_V1.read_text()[:40]), "squad") == (
        "list.json: line 2, column 3: invalid JSON: a SQuAD file is one JSON object with a "
        "'data' list",
        "list.json：第 2 行第 3 列：无效的 JSON：SQuAD 文件应为一个带 'data' 列表的 JSON 对象")


def test_python_json_errors_in_a_streamed_file_say_line_and_column(tmp_path):
    text = SQUAD_V1.read_text(encoding="utf-8")  # one line
    tab = text.index("Super Bowl 50 was") + len("Super")
    tabbed = text[:tab] + "\t" + text[tab + 1:]
    assert _read(_write(tmp_path, "tab.json", tabbed), "squad") == (
        f"tab.json: line 1, column {tab + 1}: invalid JSON: control character '\\t' inside a "
        "string: write it as an escape (\\n, \\t, \\u0000)",
        f"tab.json：第 1 行第 {tab + 1} 列：无效的 JSON：字符串中有控制字符 '\\t'：请写成转义形式"
        "（\\n、\\t、\\u0000）")

    reco = RECO.read_text(encoding="utf-8")
    line = _line_of(reco, "示例河全长")
    column = len(reco.splitlines()[line - 1].split("示例河")[0]) + 1
    escaped = reco.replace("示例河全长", "\\q示例河全长", 1)
    assert _read(_write(tmp_path, "ReCO.json", escaped), "reco")[1] == (
        f"ReCO.json：第 {line} 行第 {column} 列：无效的 JSON：字符串中有无效的转义 '\\q'")
    # Python places a bad \\u escape at its "u", one after the backslash.
    unicode_escape = reco.replace("示例河全长", "\\u12zz", 1)
    assert _read(_write(tmp_path, "ReCO.json", unicode_escape), "reco")[1] == (
        f"ReCO.json：第 {line} 行第 {column + 1} 列：无效的 JSON：字符串中有无效的转义 '\\u12zz'")

    query = '"query": "示例牌手机能防水吗"'
    missing_comma = reco.replace(query + ",", query, 1)
    line = _line_of(reco, '"url": "http://example.org/phone"')
    assert _read(_write(tmp_path, "ReCO.json", missing_comma), "reco") == (
        f"ReCO.json: line {line}, column 3: invalid JSON: expected ',', found '\"'",
        f"ReCO.json：第 {line} 行第 3 列：无效的 JSON：应为 ','，实际为 '\"'")
    no_value = reco.replace('"answer": "不能"', '"answer": }', 1)
    line = _line_of(reco, '"answer": "不能"')
    assert _read(_write(tmp_path, "ReCO.json", no_value), "reco")[1] == (
        f"ReCO.json：第 {line} 行第 13 列：无效的 JSON：应为一个值，实际为 '}}'")
    cut = reco[:reco.index('"doc": "示例河全长') + 12]
    line = _line_of(reco, '"doc": "示例河全长')
    assert _read(_write(tmp_path, "ReCO.json", cut), "reco")[1] == (
        f"ReCO.json：第 {line} 行第 10 列：无效的 JSON：字符串未结束")


# -- NewsQA ------------------------------------------------------------------------------
def test_newsqa_json(tmp_path):
    data = json.loads(NEWSQA_JSON.read_text(encoding="utf-8"))
    data["data"][0]["questions"][1]["answers"][0]["sourcerAnswers"][0] = "66:69"
    assert _read(_write(tmp_path, "newsqa.json", json.dumps(data, indent=2)), "newsqa-json") == (
        "newsqa.json: data[0].questions[1] (story at line 3): field "
        "'answers[0].sourcerAnswers[0]': should be an object",
        "newsqa.json：data[0].questions[1]（新闻起于第 3 行）："
        "字段 'answers[0].sourcerAnswers[0]'：应为对象")
    data["data"][0]["questions"][1]["answers"][0]["sourcerAnswers"][0] = {"s": 66, "e": 69}
    data["data"][0]["questions"][1]["consensus"] = "66:69"
    assert _read(_write(tmp_path, "newsqa.json", json.dumps(data, indent=2)), "newsqa-json")[1] == (
        "newsqa.json：data[0].questions[1]（新闻起于第 3 行）：字段 'consensus'：应为对象")
    del data["data"][0]["text"]
    assert _read(_write(tmp_path, "newsqa.json", json.dumps(data, indent=2)), "newsqa-json")[1] == (
        "newsqa.json：data[0]（第 3 行）：字段 'text'：缺失（必填）")
    assert _read(_write(tmp_path, "newsqa.json", "[]"), "newsqa-json")[1] == (
        "newsqa.json：第 1 行第 1 列：无效的 JSON：NewsQA 文件应为一个带 'data' 列表的 JSON 对象")


def test_newsqa_csv(tmp_path):
    text = NEWSQA_CSV.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    # Each row's story text spans four lines: rows start on lines 2, 6, 10 and 14.
    header, first, second = lines[0], "".join(lines[1:5]), "".join(lines[5:9])
    assert second.startswith("./cnn/") and first.count('"') == 2

    no_story = text.replace(",story_text\n", ",story\n", 1)
    assert _read(_write(tmp_path, "newsqa.csv", no_story), "newsqa-csv") == (
        "newsqa.csv: line 1: field 'story_text': column 'story_text' is missing from the header "
        "(the story-less question file cannot be imported: use the combined CSV with "
        "story_text)",
        "newsqa.csv：第 1 行：字段 'story_text'：表头中缺少列 'story_text'（不含新闻正文的问题文件"
        "无法导入：请使用带 story_text 的合并 CSV）")
    no_question = text.replace("story_id,question,", "story_id,q,", 1)
    assert _read(_write(tmp_path, "newsqa.csv", no_question), "newsqa-csv")[1] == (
        "newsqa.csv：第 1 行：字段 'question'：表头中缺少列 'question'")

    ranges = text.replace("66:69|60:69|66:69", "66-69|60:69|66:69", 1)
    assert _read(_write(tmp_path, "newsqa.csv", ranges), "newsqa-csv") == (
        "newsqa.csv: line 2: field 'answer_char_ranges': '66-69' is not start:end",
        "newsqa.csv：第 2 行：字段 'answer_char_ranges'：'66-69' 不是 start:end 形式")
    absent = text.replace("66:69|60:69|66:69,0.0,", "66:69|60:69|66:69,maybe,", 1)
    assert _read(_write(tmp_path, "newsqa.csv", absent), "newsqa-csv")[1] == (
        "newsqa.csv：第 2 行：字段 'is_answer_absent'：'maybe' 不是数字，也不是 '?'")

    assert _line_of(text, '"{""178:186"": 2') == 6
    counted = text.replace('""none"": 1', '""none"": ""one""', 1)
    assert _read(_write(tmp_path, "newsqa.csv", counted), "newsqa-csv")[1] == (
        "newsqa.csv：第 6 行：字段 'validated_answers'：'none' 的计数应为整数")
    listed = text.replace('"{""178:186"": 2, ""none"": 1}"', '"[1, 2]"', 1)
    assert _read(_write(tmp_path, "newsqa.csv", listed), "newsqa-csv")[1] == (
        "newsqa.csv：第 6 行：字段 'validated_answers'：应为 JSON 对象")
    broken = text.replace('""none"": 1}', '""none"" 1}', 1)
    column = '{"178:186": 2, "none" 1}'.index(" 1}") + 2
    assert _read(_write(tmp_path, "newsqa.csv", broken), "newsqa-csv") == (
        "newsqa.csv: line 6: field 'validated_answers': is not JSON: expected ':', found '1' "
        f"(column {column})",
        "newsqa.csv：第 6 行：字段 'validated_answers'：不是 JSON：应为 ':'，实际为 '1'"
        f"（第 {column} 列）")

    # A value of several lines: its own line and column, the record's line in the file.
    two_lines = text.replace('""none"": 1}', '\n ""none"" 1}', 1)
    assert _read(_write(tmp_path, "newsqa.csv", two_lines), "newsqa-csv")[1] == (
        "newsqa.csv：第 6 行：字段 'validated_answers'：不是 JSON：应为 ':'，实际为 '1'"
        "（该值的第 2 行第 9 列）")

    differs = header + first + second.replace("PORTVALE", "PORTVILLE", 1)
    assert _read(_write(tmp_path, "newsqa.csv", differs), "newsqa-csv") == (
        "newsqa.csv: line 6: field 'story_text': differs from the story text of the story's "
        "earlier rows",
        "newsqa.csv：第 6 行：字段 'story_text'：与该新闻前面各行的新闻正文不同")
    again = header + first + first.replace("a001.story", "a002.story", 1) + first
    assert _read(_write(tmp_path, "newsqa.csv", again), "newsqa-csv")[1] == (
        "newsqa.csv：第 10 行：字段 'story_id'：新闻 '000000000000000000000000000000000000a001' "
        "在其他新闻之后再次出现；同一新闻的各行必须相邻")


def test_python_csv_errors_name_the_line(tmp_path):
    text = NEWSQA_CSV.read_text(encoding="utf-8")
    quoted = text.replace(',"PORTVALE, Examplestan', ',"PORTVALE," Examplestan', 1)
    assert _read(_write(tmp_path, "newsqa.csv", quoted), "newsqa-csv") == (
        "newsqa.csv: line 2: bad CSV: a quote '\"' ends a field but is followed by more text, "
        "not by ',' or the end of the line (write a quote inside a quoted field as two quotes)",
        "newsqa.csv：第 2 行：错误的 CSV：引号 '\"' 结束了一个字段，但其后还有文本，而不是 ',' 或"
        "行尾（加引号的字段中的引号应写成两个引号）")
    # The quote closes on the record's fifth line: that line is named, not the record's first.
    late = text.replace('road repairs instead.\nThe harbor', 'road repairs "instead".\nThe harbor',
                        1)
    assert late != text
    assert _read(_write(tmp_path, "newsqa.csv", late), "newsqa-csv")[1].startswith(
        "newsqa.csv：第 4 行：错误的 CSV：引号 '\"' 结束了一个字段")
    cut = text[:text.index("harbor site has been empty")]
    assert _read(_write(tmp_path, "newsqa.csv", cut), "newsqa-csv") == (
        "newsqa.csv: line 2: bad CSV: the file ends inside a quoted field that starts in this "
        "record (its closing quote is missing)",
        "newsqa.csv：第 2 行：错误的 CSV："
        "文件在本记录中开始的一个加引号的字段内结束（缺少结束引号）")
    carriage = text.replace("How did the council vote?", "How did the\rcouncil vote?", 1)
    assert _read(_write(tmp_path, "newsqa.csv", carriage), "newsqa-csv")[1] == (
        "newsqa.csv：第 2 行：错误的 CSV："
        "未加引号的字段中有回车符（\\r）：请给该字段加引号或删除该字符")


# -- MS MARCO ----------------------------------------------------------------------------
def test_msmarco_jsonl(tmp_path):
    records = [json.loads(line) for line in _lines(MSMARCO_JSONL)]
    records[1]["answers"] = [12]
    assert _read(_write(tmp_path, "marco.jsonl", _jsonl(records)), "msmarco") == (
        "marco.jsonl: line 2: field 'answers[0]': should be a string",
        "marco.jsonl：第 2 行：字段 'answers[0]'：应为字符串")
    records[1]["answers"] = ["No Answer Present."]
    records[2]["wellFormedAnswers"] = "none"
    assert _read(_write(tmp_path, "marco.jsonl", _jsonl(records)), "msmarco")[1] == (
        "marco.jsonl：第 3 行：字段 'wellFormedAnswers'：应为列表或字符串 '[]'")


def test_msmarco_columns(tmp_path):
    data = json.loads(MSMARCO_COLUMNAR.read_text(encoding="utf-8"))
    data["answers"]["1"] = [12]
    assert _read(_write(tmp_path, "marco.json", json.dumps(data)), "msmarco") == (
        "marco.json: row '1': field 'answers[0]': should be a string",
        "marco.json：行 '1'：字段 'answers[0]'：应为字符串")
    data["answers"]["1"] = ["No Answer Present."]
    del data["query"]["1"]
    assert _read(_write(tmp_path, "marco.json", json.dumps(data)), "msmarco") == (
        "marco.json: query: field 'query': rows are out of step: expected row '1', found row "
        "'2'",
        "marco.json：query：字段 'query'：各列的行没有对齐：应为行 '1'，实际为行 '2'")
    data = json.loads(MSMARCO_COLUMNAR.read_text(encoding="utf-8"))
    for column in data.values():
        column.pop("2")
    data["wellFormedAnswers"]["2"] = "[]"
    assert _read(_write(tmp_path, "marco.json", json.dumps(data)), "msmarco")[1] == (
        "marco.json：wellFormedAnswers：字段 'wellFormedAnswers'：有 'query_id' 中没有的行 '2'")
    data = json.loads(MSMARCO_COLUMNAR.read_text(encoding="utf-8"))
    del data["passages"]
    assert _read(_write(tmp_path, "marco.json", json.dumps(data)), "msmarco")[1] == (
        "marco.json：顶层：字段 'passages'：缺少该列")
    data = json.loads(MSMARCO_COLUMNAR.read_text(encoding="utf-8"))
    data["query_type"] = ["NUMERIC"]
    text = json.dumps(data, indent=1)
    line = _line_of(text, '"query_type": [')
    assert _read(_write(tmp_path, "marco.json", text), "msmarco")[1] == (
        f"marco.json：第 {line} 行第 16 列：无效的 JSON：列 'query_type' 应将行键映射到值")


# -- ReCO --------------------------------------------------------------------------------
def test_reco(tmp_path):
    text = RECO.read_text(encoding="utf-8")
    two = text.replace('"不能|能|无法确定"', '"不能|能"', 1)
    assert _read(_write(tmp_path, "ReCO.json", two), "reco") == (
        "ReCO.json: [1] (line 11): field 'alternatives': should be three answers joined by '|', "
        "found '不能|能'",
        "ReCO.json：[1]（第 11 行）：字段 'alternatives'："
        "应为用 '|' 连接的三个答案，实际为 '不能|能'")
    records = json.loads(text)
    records[2]["answer"] = "也许"
    assert _read(_write(tmp_path, "ReCO.jsonl", _jsonl(records)), "reco") == (
        "ReCO.jsonl: line 3: field 'answer': '也许' is not one of the alternatives "
        "'无法确定|有|没有'",
        "ReCO.jsonl：第 3 行：字段 'answer'：'也许' 不是备选答案 '无法确定|有|没有' 之一")


# -- DuReader ----------------------------------------------------------------------------
def test_dureader(tmp_path):
    lines = _lines(DUREADER_DEV)
    record = json.loads(lines[2])
    record["documents"][1]["most_related_para"] = 99
    lines[2] = _jsonl([record])
    assert _read(_write(tmp_path, "search.dev.jsonl", "".join(lines)), "dureader") == (
        "search.dev.jsonl: line 3: field 'documents[1].most_related_para': paragraph index 99 is "
        "outside the document's 3 paragraphs",
        "search.dev.jsonl：第 3 行：字段 'documents[1].most_related_para'：段落序号 99 超出该文档的"
        " 3 个段落")
    lines = _lines(DUREADER_DEV)
    record = json.loads(lines[5])
    record["answer_docs"] = [7]
    lines[5] = _jsonl([record])
    assert _read(_write(tmp_path, "search.dev.jsonl", "".join(lines)), "dureader")[1] == (
        f"search.dev.jsonl：第 6 行：字段 'answer_docs[0]'：文档序号 7 超出该记录的 "
        f"{len(record['documents'])} 篇文档")
    record["answer_docs"] = [0]
    record["answers"].append(3)
    lines[5] = _jsonl([record])
    assert _read(_write(tmp_path, "search.dev.jsonl", "".join(lines)), "dureader")[1] == (
        f"search.dev.jsonl：第 6 行：字段 'answers[{len(record['answers']) - 1}]'：应为字符串")


def test_a_cut_json_line_names_its_line_and_the_column_at_its_end(tmp_path):
    """The line's ending is not the place: Python says "line 2, column 1" of the line."""
    lines = _lines(DUREADER_DEV)
    lines[3] = lines[3][:lines[3].index('"question":') + len('"question":')] + "\n"
    column = len(lines[3])  # one past the colon
    assert _read(_write(tmp_path, "search.dev.jsonl", "".join(lines)), "dureader") == (
        f"search.dev.jsonl: line 4: invalid JSON: expected a value, found the end of the line "
        f"(column {column})",
        f"search.dev.jsonl：第 4 行：无效的 JSON：应为一个值，实际为 行尾（第 {column} 列）")


# -- query lists -------------------------------------------------------------------------
def test_queries(tmp_path):
    lines = _lines(QUERIES_EN)
    record = json.loads(lines[4])
    record["q"] = record.pop("question")
    lines[4] = _jsonl([record])
    assert _read(_write(tmp_path, "nq.jsonl", "".join(lines)), QUERIES) == (
        "nq.jsonl: line 5: field 'question': is missing (a query needs one of question, query, "
        "text)",
        "nq.jsonl：第 5 行：字段 'question'：缺失（查询需要 question, query, text 之一）")
    lines = _lines(QUERIES_EN)
    lines[1] = "[1, 2]\n"
    assert _read(_write(tmp_path, "nq.jsonl", "".join(lines)), QUERIES)[1] == (
        "nq.jsonl：第 2 行：每行应为一个 JSON 对象")
    lines = _lines(QUERIES_EN)
    lines[6] = lines[6].rstrip("\n") + " x\n"
    column = len(lines[6]) - 1
    assert _read(_write(tmp_path, "nq.jsonl", "".join(lines)), QUERIES)[1] == (
        f"nq.jsonl：第 7 行：无效的 JSON：JSON 值结束后出现意外的 'x'（第 {column} 列）")


# -- the field mapping of JSONL, CSV and TSV -------------------------------------------------
@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_a_bad_field_mapping_is_refused_in_chinese(tmp_path, client_for, admin_user):
    path = _write(tmp_path, "docs.jsonl", _jsonl([{"key": "a", "text": "Some text."}]))
    with pytest.raises(ImportFailure) as caught:
        corpus_import(path=path, corpus="docs", language="en", format="jsonl",
                      mapping="id=key,bdy=text")
    assert caught.value.args[0] == ("docs.jsonl: --map: unknown field 'bdy' (fields: id, body, "
                                    "title, url, source_type, highlights)")
    with override("zh-hans"):
        assert str(caught.value) == ("docs.jsonl：--map：未知字段 'bdy'（可用字段：id, body, "
                                     "title, url, source_type, highlights）")
        with pytest.raises(ValueError) as twice:
            mapping_parse("id=key,id=text")
        assert str(twice.value) == "--map：字段 'id' 被映射了两次"
    assert not Corpus.objects.filter(name="docs").exists()

    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    with path.open("rb") as upload:
        page = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "docs", "language": "en", "format": "jsonl",
            "mapping": "nope"}).content.decode()
    assert "--map：&#x27;nope&#x27; 不是 field=column 形式" in page
    assert not Job.objects.exists()


# -- through a job: what its page shows ----------------------------------------------------
@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_a_failed_import_job_shows_the_formats_failure_in_chinese(
        django_capture_on_commit_callbacks, client_for, admin_user, tmp_path):
    text = RECO.read_text(encoding="utf-8")
    path = _write(tmp_path, "ReCO.json", text.replace('"不能|能|无法确定"', '"不能|能"', 1))
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    with path.open("rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collector:import"), {
            "file": upload, "corpus": "reco", "language": "zh", "format": "reco",
        })
    job = Job.objects.get(kind="corpus_import")
    assert job.status == Job.Status.FAILED
    assert job.error.endswith("[1] (line 11): field 'alternatives': should be three answers "
                              "joined by '|', found '不能|能'")
    page = client.get(reverse("collector:job_detail", args=[job.pk])).content.decode()
    assert ("ReCO.json：[1]（第 11 行）：字段 &#x27;alternatives&#x27;：应为用 &#x27;|&#x27; "
            "连接的三个答案，实际为 &#x27;不能|能&#x27;") in page
    assert "should be three answers" not in page
    assert not Corpus.objects.filter(name="reco").exists()
