"""Blocklists: shipped defaults, file format, token-level matching (jieba for Chinese)."""

from __future__ import annotations

import pytest

from collector.filters import Blocklist
from collector.filters.blocklist import BLOCKLIST_DIR, parse_terms
from collector.filters.text import normalize, zh_words


def test_shipped_lists_load():
    for lang in ("en", "zh"):
        blocklist = Blocklist.default(lang)
        assert 30 <= len(blocklist) <= 120
        assert blocklist is Blocklist.default(lang)  # read once per process
        text = (BLOCKLIST_DIR / f"{lang}.txt").read_text(encoding="utf-8")
        assert len(blocklist) == len(set(parse_terms(text)))


def test_file_format(tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("# comment\n\n  Foo Bar  \nbaz\nbaz\n", encoding="utf-8")
    blocklist = Blocklist.from_file("en", path)
    assert blocklist.terms == ("foo bar", "baz")
    assert blocklist.to_text() == "foo bar\nbaz\n"
    assert Blocklist.from_text("en", blocklist.to_text()).terms == blocklist.terms


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("is cocaine addictive", "cocaine"),
        ("where to watch porn", "porn"),
        ("child-porn laws", "child porn"),  # phrase across a hyphen, longest term wins
        ("is sussex in england", None),  # not a substring match
        ("essex county history", None),
        ("can you see mars with the naked eye", None),
        ("how to make a bomb shelter", "make a bomb"),
        ("Is SEX education compulsory?", "sex"),
    ],
)
def test_english_token_matching(text, term):
    assert Blocklist.default("en").match(normalize(text)) == term


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("吸食大麻犯法吗", "大麻"),  # a whole jieba token
        ("怎么约炮", "约炮"),  # jieba cuts 约 / 炮: consecutive tokens joined
        ("2017还怎么下载岛国片", "岛国片"),  # 岛国 / 片
        ("强奸罪判几年", "强奸"),  # dictionary word inside the token 强奸罪
        ("看a片会怎样", "a片"),  # Latin letter + character, lower-cased
        ("大麻花好吃吗", None),  # 大 / 麻花: 大麻 is only a substring
        ("裸睡有什么好处和坏处", None),
        ("狗狗安乐死多少钱", None),
        ("岛国 片", None),  # no match across a space
    ],
)
def test_chinese_token_matching(text, term):
    assert Blocklist.default("zh").match(normalize(text)) == term


def test_chinese_prefilter_is_exact():
    """The substring pre-scan never hides a token match: compare with jieba on every query."""
    blocklist = Blocklist.default("zh")
    queries = ["吸食大麻犯法吗", "大麻花好吃吗", "怎么约炮", "孕妇能吃银耳吗", "强奸罪判几年"]
    for q in queries:
        assert blocklist.match(q) == blocklist._match_zh(zh_words(q))


def test_empty_and_custom_lists():
    assert Blocklist("en", []).match("porn") is None
    assert Blocklist("zh", []).match("色情") is None
    custom = Blocklist("zh", ["芹菜"])
    assert custom.match("孕妇能吃芹菜吗") == "芹菜"
    assert repr(custom) == "Blocklist('zh', 1 terms)"
    with pytest.raises(ValueError, match="language"):
        Blocklist("de", ["x"])
