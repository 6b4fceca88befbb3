"""Recipes: presets of stage lists with the papers' parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError


@dataclass(frozen=True)
class StageSpec:
    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    guidelines: str = ""


NEWSQA_QUESTION_GUIDELINES = """\
**Write questions about the highlights of a story.**

1. Read the **highlights** (you do not see the article).
2. Write up to three **questions** about them. Their answers do not have to be in the
   highlights: assume the highlights summarise an article that can answer more.

Good, for the highlights *"Sarah Palin from Alaska meets with McCain"*:
*Where is Palin from?* · *What was the meeting about?* · *What was McCain's choice?*

Not allowed:
- copying the highlights: a question made of their words is refused;
- **how** or **why** questions, whose answers are not short (*how far / long / many /
  much* are fine);
- the same or very similar questions twice.
"""

NEWSQA_ANSWER_GUIDELINES = """\
**Answer the question from the article.**

- Select the shortest span of the article that answers the question (drag with the
  mouse, or use the keyboard: see the keys under the article). Several spans are allowed
  when the answer is a list, but prefer one continuous span.
- If the article does not answer it, choose **No answer in the article**.
- If the question is not a question or makes no sense, choose **The question makes no
  sense**.
"""

NEWSQA_VALIDATE_GUIDELINES = """\
**Choose the best answer.**

Read the question and the article, then pick the answer that answers the question best.
If none is acceptable, choose **All answers are bad**; if the question makes no sense,
choose **The question makes no sense**.
"""

RECIPES: dict[str, list[StageSpec]] = {
    "newsqa": [
        StageSpec("newsqa_articles", "Import articles"),
        StageSpec("newsqa_split", "Split 90/5/5 by article"),
        StageSpec("newsqa_question", "Question sourcing", guidelines=NEWSQA_QUESTION_GUIDELINES),
        StageSpec("newsqa_answer", "Answer sourcing", guidelines=NEWSQA_ANSWER_GUIDELINES),
        StageSpec("newsqa_agreement", "Agreement"),
        StageSpec("newsqa_validate", "Validation", guidelines=NEWSQA_VALIDATE_GUIDELINES),
        StageSpec("newsqa_consolidate", "Cleanup and consolidation"),
    ],
}


def recipe_stages(recipe: str) -> list[StageSpec]:
    try:
        return RECIPES[recipe]
    except KeyError:
        raise ValidationError(
            f"unknown recipe {recipe!r}; known: {', '.join(sorted(RECIPES))}"
        ) from None
