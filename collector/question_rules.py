"""Checks on crowd-written questions (pure Python, no Django).

NewsQA question sourcing (paper section 3.2 and Figure 3): questions with significant word
overlap with the summary points are rejected, and "how" / "why" questions are not allowed
because their answers are not short ("how far / long / many / much" are fine).

A question is also refused when it starts with a character that makes a spreadsheet
(Excel, LibreOffice) run a CSV field as a formula (CSV injection): the NewsQA combined CSV
carries the question as written, and its format leaves no way to neutralise it at export.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
# Function words do not count towards overlap: sharing "the" or "did" with the highlights
# is not copying them.
_STOPWORDS_TEXT = """a an the of in on at to for from by with and or but is are was were be been
being do does did has have had what who whom whose which when where how why that this these
those it its as into about than then there their they he she his her him them will would can
could should shall may might must not no s"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
ALLOWED_HOW = frozenset({"far", "long", "many", "much"})
#: What a field may not start with, lest a spreadsheet read it as a formula (OWASP, "CSV
#: Injection"). Questions are stored stripped, so a tab or carriage return never leads one;
#: they are listed for any text checked as it is.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def starts_like_a_formula(text: str) -> bool:
    """Whether a spreadsheet opening a CSV would run ``text`` as a formula."""
    return text.startswith(FORMULA_STARTS)


def content_words(text: str) -> list[str]:
    return [w for w in _WORDS.findall(text.lower()) if w not in STOPWORDS]


def highlight_overlap(question: str, highlights: list[str]) -> float:
    """Share of the question's content words that also occur in the highlights (0..1)."""
    words = content_words(question)
    if not words:
        return 0.0
    vocabulary = {w for h in highlights for w in content_words(h)}
    return sum(1 for w in words if w in vocabulary) / len(words)


@dataclass(frozen=True)
class QuestionVerdict:
    ok: bool
    reason: str = ""
    overlap: float = 0.0


def check_question(
    question: str, highlights: list[str], *, max_overlap: float, forbid_how_why: bool = True,
    min_words: int = 3,
) -> QuestionVerdict:
    """Accept or refuse one question (as it will be stored: stripped), with an explanation
    a worker can act on."""
    text = question.strip()
    words = _WORDS.findall(text.lower())
    overlap = highlight_overlap(text, highlights)
    if starts_like_a_formula(text):
        return QuestionVerdict(
            False, _("Start your question with a word: a text that starts with =, +, - or @ "
                     "runs as a formula when the dataset is opened in a spreadsheet."), overlap)
    if len(words) < min_words:
        return QuestionVerdict(False, _("Write a full question of at least %(n)d words.")
                               % {"n": min_words}, overlap)
    if forbid_how_why:
        if words[0] == "why":
            return QuestionVerdict(
                False, _('"Why" questions are not allowed: their answers are not short.'), overlap
            )
        if words[0] == "how" and (len(words) < 2 or words[1] not in ALLOWED_HOW):
            return QuestionVerdict(
                False, _('"How" questions are not allowed (their answers are not short); '
                         '"how far / long / many / much" are fine.'), overlap,
            )
    if overlap > max_overlap:
        return QuestionVerdict(
            False,
            _("%(share)s of your question's words come from the highlights (limit "
              "%(limit)s). Ask about something the highlights do not already say, in your "
              "own words.") % {"share": f"{overlap:.0%}", "limit": f"{max_overlap:.0%}"},
            overlap,
        )
    return QuestionVerdict(True, "", overlap)
