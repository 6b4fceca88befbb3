"""Stored texts: a msgid and its parameters, kept as JSON and rendered in the active
language; an import failure is one, its file, place and field kept exactly."""

from __future__ import annotations

import json

import pytest
from django.utils.translation import gettext_noop, override

from collector.importers import ImportFailure
from collector.importers.errors import at_line
from collector.stored_text import (
    StoredText,
    stored_label,
    stored_text_english,
    stored_text_json,
    stored_text_render,
)


def test_a_stored_text_goes_through_json_and_renders_in_the_active_language():
    text = StoredText(gettext_noop("%(where)s: %(detail)s"), where=at_line(3),
                      detail=StoredText(gettext_noop("is empty")))
    kept = json.loads(json.dumps(stored_text_json(text)))
    assert StoredText.from_json(kept) == text
    with override("zh-hans"):
        assert stored_text_render(kept) == "第 3 行：为空"
        assert stored_text_english(text) == "line 3: is empty"
    with override("en"):
        assert stored_text_render(kept) == "line 3: is empty"


@pytest.mark.parametrize("stored", [{}, None, "words someone wrote"])
def test_words_and_nothing_render_as_they_are(stored):
    with override("zh-hans"):
        assert stored_text_render(stored, "old English") == "old English"
        assert stored_text_render("as written") == "as written"
    assert stored_text_json("plain words") == {}


def test_a_msgid_whose_translation_no_longer_fits_its_parameters_falls_back():
    with override("en"):
        assert stored_text_render({"msgid": "line %(line)s", "params": {"row": 4}},
                                  "line 4") == "line 4"


def test_a_label_is_kept_by_its_english():
    from collector.models import Language

    with override("zh-hans"):
        assert stored_label(Language("en").label).msgid == "English"


def test_an_import_failure_reads_in_the_active_language_with_file_place_and_field_exact():
    failure = ImportFailure(StoredText(gettext_noop("is missing (required)")),
                            file="книги.jsonl", where=at_line(12), field="passages[0].url")
    assert failure.args == ("книги.jsonl: line 12: field 'passages[0].url': is missing "
                            "(required)",)
    with override("en"):
        assert str(failure) == failure.args[0]
    with override("zh-hans"):
        assert str(failure) == "книги.jsonl：第 12 行：字段 'passages[0].url'：缺失（必填）"
    # Words given as a plain string (a library's message) stay as they are, whitespace folded.
    plain = ImportFailure("bad\n  thing", file="a.csv")
    with override("zh-hans"):
        assert str(plain) == "a.csv：bad thing"
    assert plain.text.english() == "a.csv: bad thing"
