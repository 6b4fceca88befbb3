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

MARCO_JUDGE_GUIDELINES = """\
**Decide whether the query can be answered by a short passage.**

Keep a query only when it has **one unambiguous intent** and a **short passage of text**
could answer it **definitively and completely**: someone reading a candidate answer could
easily tell whether it answers the query.

1. Choose the **intent** (keys <kbd>1</kbd>–<kbd>3</kbd>):
    - *informational*: wants to know something (*"how long to boil an egg"*);
    - *navigational*: wants a web site (*"facebook"*) — **exclude**;
    - *transactional*: wants to do something (*"watch game of thrones"*) — **exclude**.
2. Exclude informational queries that
    - seek **geo-local directions** (*"pharmacy near me"*, *"how to get to the airport"*);
    - ask for a **list that cannot reasonably be exhaustive** (*"holiday classroom
      activities"*);
    - seek **general information about a topic** (*"leaning tower of pisa"*);
    - contain **sensitive information** or **adult content**;
    - have **no unambiguous intent**, or no short passage could answer them completely.
3. Choose **keep** (<kbd>k</kbd>) or **exclude** (<kbd>e</kbd>); an excluded
   informational query needs its reason ticked. The reasons are kept.
4. Optionally, for kept queries, the **answer type** (MS MARCO: description, numeric,
   entity, location, person) and the **question type** (yes/no, entity, description).
   Yes/no and entity questions ask the answer writers for an opinion label or the
   entities their answer names.
"""

MARCO_CURATE_GUIDELINES = """\
**Select the passages that answer the query.**

The passages are in the order a search engine ranked them.

- Select **one**, or **a few** passages that **together** give a **coherent, complete**
  answer (keys <kbd>1</kbd>–<kbd>9</kbd>, <kbd>0</kbd> for the tenth).
- Never select passages that **conflict** (give incompatible answers). When equally
  complete passages conflict, select the **most trustworthy** one — judge by the writing
  and the authority of the site — tick **the passages conflict** (<kbd>c</kbd>) and say
  why you trusted the one you chose.
- If no passage answers the query adequately, mark it **not answerable by these
  passages** (<kbd>u</kbd>): the query leaves the dataset, with that reason.

You are not expected to be an expert in the subject: choose as a careful reader would.
"""

MARCO_DISTILL_GUIDELINES = """\
**Write the answer in your own words.**

Read the query and the selected passages, then write the **complete answer the passages
give**, in your own words: anything from a single word (*"yes"*) or a name (*"Tom
Cruise"*) to a few sentences. Use only what the passages say.

- Avoid spelling and grammar mistakes: words the dictionary does not know are shown under
  the answer as you type (a warning; you can still submit).
- **Yes/no questions**: also label your answer's opinion: **Yes**, **No** or
  **Depends**.
- **Entity questions**: list the entities your answer names, one per line.
- Other editors answer the same query; you do not see their answers, and they do not see
  yours. The time you take is recorded.
"""

MARCO_REVIEW_GUIDELINES = """\
**Keep or drop the flagged answers.**

Each answer's weight is how much it agrees with the other answers for the same query
(the pa-metric importance, with BLEU). Answers far below the others are **flagged**.

- **Keep** a flagged answer that is a correct answer from the passages, only phrased
  differently (or too short for BLEU to weigh: fewer than four words always weigh 0).
- **Drop** a flagged answer that is wrong, answers something else, is not from the
  passages, or is not an answer.

Every flagged answer needs a decision; it is recorded with your name.
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
    "marco": [
        StageSpec("marco_queries", "Import queries"),
        StageSpec("marco_judge", "Query judgment", guidelines=MARCO_JUDGE_GUIDELINES),
        StageSpec("marco_retrieve", "Retrieve passages"),
        StageSpec("marco_curate", "Passage curation", guidelines=MARCO_CURATE_GUIDELINES),
        StageSpec("marco_distill", "Answer distillation", guidelines=MARCO_DISTILL_GUIDELINES),
        StageSpec("marco_consensus", "Consensus weighting (pa-BLEU)"),
        StageSpec("marco_review", "Outlier review", guidelines=MARCO_REVIEW_GUIDELINES),
        StageSpec("marco_record", "Final records"),
    ],
}


def recipe_stages(recipe: str) -> list[StageSpec]:
    try:
        return RECIPES[recipe]
    except KeyError:
        raise ValidationError(
            f"unknown recipe {recipe!r}; known: {', '.join(sorted(RECIPES))}"
        ) from None
