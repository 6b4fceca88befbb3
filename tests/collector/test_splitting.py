"""Passage splitting: exact spans by paragraph and by overlapping token windows."""

from __future__ import annotations

import pytest

from collector.splitting import paragraph_spans, passage_spans, window_spans
from tests.collector.corpus_support import squad_contexts


def test_paragraphs_are_lines_without_surrounding_blanks():
    text = "  First line.  \n\n\tSecond one\r\n   \nThird"
    spans = paragraph_spans(text)
    assert [text[s:e] for s, e in spans] == ["First line.", "Second one", "Third"]


def test_given_paragraphs_are_used_and_blank_ones_dropped():
    paragraphs = ["第一段。", "", "  第二段 ", "第三段\n还是第三段"]
    body = "\n".join(paragraphs)
    spans, offset = [], 0
    for p in paragraphs:
        spans.append((offset, offset + len(p)))
        offset += len(p) + 1
    got = paragraph_spans(body, spans)
    assert [body[s:e] for s, e in got] == ["第一段。", "第二段", "第三段\n还是第三段"]


@pytest.mark.parametrize(("size", "overlap"), [(10, 0), (10, 3), (50, 49), (1, 0)])
def test_windows_cover_every_token_with_the_overlap(size, overlap):
    _, text = squad_contexts()[0]
    tokens = text.split()
    spans = window_spans(text, size=size, overlap=overlap)
    windows = [text[s:e].split() for s, e in spans]
    assert all(len(w) <= size for w in windows)
    assert windows[0] == tokens[:size]
    assert windows[-1][-1] == tokens[-1]
    step = size - overlap
    for i, window in enumerate(windows):
        assert window == tokens[i * step:i * step + size]
    assert len(windows) == max(1, -(-(len(tokens) - overlap) // step))


def test_chinese_windows_count_han_characters():
    text = "海信电视国产最好的 LED TV 2017年 我家都用海信电视"
    spans = window_spans(text, size=5, overlap=1, language="zh")
    assert [text[s:e] for s, e in spans[:2]] == ["海信电视国", "国产最好的"]
    assert "LED TV" in text[spans[2][0]:spans[2][1]]  # Latin words are one token each
    assert text[spans[-1][0]:spans[-1][1]].endswith("海信电视")


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        window_spans("a b c", size=3, overlap=3)
    with pytest.raises(ValueError, match="unknown split mode"):
        passage_spans("a", mode="sentence")
    assert window_spans("   ", size=3, overlap=1) == []
