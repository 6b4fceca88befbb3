"""The import page's format detection says why in the reader's language, and a record's
link that Python's URL parser refuses is named in our words (both were English on the
Chinese pages): the real samples, the link's failure kept as a job keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils.translation import override

from collector.importers import ImportFailure, format_get, source_open, units_read
from collector.importers.sniff import format_detect
from collector.importers.source import ByteCounter
from collector.stored_text import stored_text_json, stored_text_render
from tests.collector.corpus_support import (
    DUREADER_DEV,
    MSMARCO_JSONL,
    NEWSQA_CSV,
    NEWSQA_JSON,
    QUERIES_EN,
    RECO,
    SQUAD_V1,
    STORY,
)


def _reason(path: Path) -> str:
    detected = format_detect(source_open(path, max_bytes=1 << 30))
    with override("zh-hans"):
        return f"{detected.format}: {detected.reason}"


def test_each_samples_format_is_explained_in_chinese(tmp_path):
    assert _reason(SQUAD_V1) == "squad: JSON，含 'data' 文章，其 'paragraphs' 中有 'qas'"
    assert _reason(NEWSQA_JSON) == "newsqa-json: JSON，含 'storyId' 记录（NewsQA 合并文件）"
    assert _reason(NEWSQA_CSV) == ("newsqa-csv: CSV，含 'story_id' 和 'story_text' 列（NewsQA "
                                   "合并文件）")
    assert _reason(STORY) == "story: 文件名以 .story 结尾"
    assert _reason(MSMARCO_JSONL) == "msmarco: JSON，含 'query' 和 'passages'（MS MARCO）"
    assert _reason(DUREADER_DEV) == ("dureader: JSON Lines，含 'question' 和检索到的 "
                                     "'documents'（DuReader）")
    assert _reason(RECO) == "reco: JSON，含 'query'、'doc' 和 'alternatives'（ReCO）"
    assert _reason(QUERIES_EN) == "queries: JSON Lines，含 'question' 而没有 'body'：查询列表"
    first = json.loads(QUERIES_EN.read_text(encoding="utf-8").splitlines()[0])
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"key": 1, "body": first["question"], "kind": "q"}) + "\n",
                       encoding="utf-8")
    assert _reason(records) == ("jsonl: 其他记录的 JSON Lines（字段：key, body, kind）；"
                                "请将其映射到 id 和 body")
    table = tmp_path / "questions.tsv"
    table.write_text(f"qid\tquestion\n1\t{first['question']}\n", encoding="utf-8")
    assert _reason(table) == "tsv: TSV，列为 qid, question"
    lines = tmp_path / "queries.txt"
    lines.write_text(f"{first['question']}\n", encoding="utf-8")
    assert _reason(lines) == "queries: 纯文本行：每行一个查询"
    story = tmp_path / "story.txt"
    story.write_text(STORY.read_text(encoding="utf-8"), encoding="utf-8")
    assert _reason(story) == "story: 含 '@highlight' 行的文本（CNN 新闻）"


@pytest.mark.django_db
@pytest.mark.usefixtures("isolated_storage")
def test_the_import_page_says_why_in_chinese(client_for, admin_user):
    client = client_for(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    with SQUAD_V1.open("rb") as upload:
        page = client.post(reverse("collector:import"), {
            "file": upload, "corpus": "squad", "language": "en", "action": "preview",
        }).content.decode()
    detected = page.split('data-testid="detected-format"')[1].split("</p>")[0]
    assert ("JSON，含 &#x27;data&#x27; 文章，其 &#x27;paragraphs&#x27; 中有 "
            "&#x27;qas&#x27;") in detected
    assert "articles" not in detected


@pytest.mark.parametrize(("url", "english", "chinese"), [
    ("http://[example.org/phone",
     "its host has an unmatched square bracket, or text before '[' or after ']' (an IPv6 "
     "address is written as [2001:db8::1])",
     "其主机名中有不成对的方括号，或 '[' 之前、']' 之后有文本（IPv6 地址应写成 [2001:db8::1]）"),
    ("http://[example.org]/phone", "'example.org' in square brackets is not an IPv6 address",
     "方括号中的 'example.org' 不是 IPv6 地址"),
    ("http://[192.0.2.1]/phone", "an IPv4 address is written without square brackets",
     "IPv4 地址不应写在方括号中"),
    ("http://[v7]/phone",
     "the host in square brackets is not a valid IPvFuture address (v<hex digits>.<address>)",
     "方括号中的主机不是有效的 IPvFuture 地址（v<十六进制数字>.<地址>）"),
    ("http://example\uff0forg/phone",
     "its host name has characters that become '/', '?', '#', '@' or ':' once normalised "
     "(NFKC)",
     "其主机名中有经 NFKC 规范化后会变成 '/'、'?'、'#'、'@' 或 ':' 的字符"),
])
def test_a_link_pythons_parser_refuses_is_named_in_our_words(tmp_path, url, english,
                                                             chinese):
    text = RECO.read_text(encoding="utf-8")
    at = text.index('"http://example.org/phone"')
    line = text[:text.rindex("{", 0, at)].count("\n") + 1  # the line its record starts on
    path = tmp_path / "ReCO.json"
    path.write_text(text.replace('"http://example.org/phone"', json.dumps(url), 1),
                    encoding="utf-8")
    with pytest.raises(ImportFailure) as caught:
        for _ in units_read(format_get("reco"), source_open(path, max_bytes=1 << 30),
                            counter=ByteCounter()):
            pass
    kept = json.loads(json.dumps(stored_text_json(caught.value.text)))
    with override("en"):
        assert stored_text_render(kept) == (
            f"ReCO.json: [1] (line {line}): field 'url': is not a valid URL ({english})")
    with override("zh-hans"):
        assert stored_text_render(kept) == (
            f"ReCO.json：[1]（第 {line} 行）：字段 'url'：不是有效的 URL（{chinese}）")
