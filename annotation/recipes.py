"""Recipes: presets of stage lists with the papers' parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_noop as _  # stage names: translated on display

from annotation import guidelines_zh as zh


@dataclass(frozen=True)
class StageSpec:
    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    guidelines: str = ""
    guidelines_zh_hans: str = ""  # the same in Simplified Chinese (annotation.guidelines_zh)


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
  differently (or too short for BLEU to weigh: fewer than four words, or four Chinese
  characters, always weigh 0).
- **Drop** a flagged answer that is wrong, answers something else, is not from the
  passages, or is not an answer.

Every flagged answer needs a decision; it is recorded with your name.
"""

RECO_EVIDENCE_GUIDELINES = """\
**Find the evidence and write the three answers.**

You see a question that people typed into a search engine and the documents it found
(tabs <kbd>1</kbd>–<kbd>0</kbd>).

1.  **Select the evidence** in **one** document: drag over it with the mouse, or focus
    the document and use <kbd>←</kbd>/<kbd>→</kbd>, <kbd>Shift</kbd>+arrows and
    <kbd>Enter</kbd>. The four evidence principles:

    - the evidence is **self-contained** enough to answer the question, and **as short
      as possible**;
    - if several passages answer it, choose the **most implicit** one, the one that needs
      the deepest inference;
    - if no document answers it, select the **most relevant** passage (and mark the
      uncertain answer correct);
    - a question that cannot be answered by **yes / no / uncertain** is **rejected**
      (button *Reject the question*).

2.  **Write three alternatives** in your own words: a **positive** one, a **negative**
    one and an **uncertain** one, short, as a person would answer this question (能 /
    不能 / 无法确定, 有 / 没有 / 不确定, *yes / no / can't tell*). They need not be words
    of the evidence or of the question.
3.  **Mark the correct alternative.**

Your work comes in batches; a checker inspects a sample of every finished batch. Wrong
answers and questions that are blurred or not yes/no/uncertain count as full errors,
evidence with much irrelevant text and questions that are too easy count half. A batch
below 95% goes back to you to relabel.

证据原则：证据能独立回答问题且尽量简短；多个证据时选最隐含、需要更深推理的；文档中没有能回答的证据时选最相关的段落；
不能用"是 / 否 / 不确定"回答的问题应拒绝。
"""

RECO_CHOICE_GUIDELINES = """\
**Choose the better evidence.**

Two annotators labelled this test question independently and agree on the answer. Choose
the evidence that follows the principles better: **self-contained and short**, and when
both answer the question, the **more implicit** one (the one that needs deeper
inference). Keys <kbd>1</kbd> and <kbd>2</kbd>.
"""

RECO_ADJUDICATE_GUIDELINES = """\
**Decide between two labels that disagree.**

Two annotators labelled this test question independently and gave different answers (or
one rejected it). Keep the label whose answer is correct and whose evidence follows the
principles, or reject the question when it cannot be answered by yes / no / uncertain.
"""

JUDGMENT_RATE_GUIDELINES = """\
**Score the answer from 1 to 5.**

You see a question, its reference answer(s) and one answer to score. Judge whether the
answer satisfies what the question asks, how much of the key points it covers, and how
concise it is:

- **5** — perfectly answers the question, with little redundant information;
- **4** — sufficiently answers it, with something unvital missing or some redundancy;
- **3** — a little insufficient, such as only giving the opinion without supporting
  context in a yes-no answer;
- **2** — something vital is missing, or there is an error;
- **1** — totally irrelevant.

Treat these as the key points and weigh them most:

- **yes-no questions**: the **yes-or-no opinion** (shown as *Yes* / *No* / *Depends*) and
  the important supporting information: an answer with the wrong opinion has a vital
  error, however similar its words are;
- **entity questions**: the **gold entities** (shown under the references): an answer
  that lacks or gets them wrong misses something vital.

Keys <kbd>1</kbd>–<kbd>5</kbd> score and take you to the next answer. You do not see who
wrote the answer, nor anyone else's scores.
"""

RECIPES: dict[str, list[StageSpec]] = {
    "newsqa": [
        StageSpec("newsqa_articles", _("Import articles")),
        StageSpec("newsqa_split", _("Split 90/5/5 by article")),
        StageSpec("newsqa_question", _("Question sourcing"), guidelines=NEWSQA_QUESTION_GUIDELINES,
                  guidelines_zh_hans=zh.NEWSQA_QUESTION),
        StageSpec("newsqa_answer", _("Answer sourcing"), guidelines=NEWSQA_ANSWER_GUIDELINES,
                  guidelines_zh_hans=zh.NEWSQA_ANSWER),
        StageSpec("newsqa_agreement", _("Agreement")),
        StageSpec("newsqa_validate", _("Validation"), guidelines=NEWSQA_VALIDATE_GUIDELINES,
                  guidelines_zh_hans=zh.NEWSQA_VALIDATE),
        StageSpec("newsqa_consolidate", _("Cleanup and consolidation")),
    ],
    "marco": [
        StageSpec("marco_queries", _("Import queries")),
        StageSpec("marco_judge", _("Query judgment"), guidelines=MARCO_JUDGE_GUIDELINES,
                  guidelines_zh_hans=zh.MARCO_JUDGE),
        StageSpec("marco_retrieve", _("Retrieve passages")),
        StageSpec("marco_curate", _("Passage curation"), guidelines=MARCO_CURATE_GUIDELINES,
                  guidelines_zh_hans=zh.MARCO_CURATE),
        StageSpec("marco_distill", _("Answer distillation"), guidelines=MARCO_DISTILL_GUIDELINES,
                  guidelines_zh_hans=zh.MARCO_DISTILL),
        StageSpec("marco_consensus", _("Consensus weighting (pa-BLEU)")),
        StageSpec("marco_review", _("Outlier review"), guidelines=MARCO_REVIEW_GUIDELINES,
                  guidelines_zh_hans=zh.MARCO_REVIEW),
        StageSpec("marco_record", _("Final records")),
    ],
    "reco": [
        StageSpec("reco_queries", _("Import queries")),
        StageSpec("reco_query_filter", _("Query filter (intent, content, yes/no)")),
        StageSpec("reco_retrieve", _("Retrieve top-10 documents")),
        StageSpec("reco_doc_filter", _("Document filter (trivial overlap)")),
        StageSpec("reco_split", _("Split")),
        StageSpec("reco_evidence", _("Evidence and answers (batches)"),
                  guidelines=RECO_EVIDENCE_GUIDELINES,
                  guidelines_zh_hans=zh.RECO_EVIDENCE),
        StageSpec("reco_test_evidence", _("Test set: evidence and answers (two annotators)"),
                  guidelines=RECO_EVIDENCE_GUIDELINES,
                  guidelines_zh_hans=zh.RECO_EVIDENCE),
        StageSpec("reco_evidence_choice", _("Test set: choose the evidence"),
                  guidelines=RECO_CHOICE_GUIDELINES,
                  guidelines_zh_hans=zh.RECO_CHOICE),
        StageSpec("reco_adjudicate", _("Test set: adjudication by a checker"),
                  guidelines=RECO_ADJUDICATE_GUIDELINES,
                  guidelines_zh_hans=zh.RECO_ADJUDICATE),
        StageSpec("reco_final", _("Final set")),
    ],
    "judgment": [
        StageSpec("judgment_sample", _("Sample questions per type")),
        StageSpec("judgment_rate", _("Rate answers 1-5"), guidelines=JUDGMENT_RATE_GUIDELINES,
                  guidelines_zh_hans=zh.JUDGMENT_RATE),
        StageSpec("judgment_study", _("Study: metrics against human judgment")),
    ],
}


def recipe_stages(recipe: str) -> list[StageSpec]:
    try:
        return RECIPES[recipe]
    except KeyError:
        raise ValidationError(
            f"unknown recipe {recipe!r}; known: {', '.join(sorted(RECIPES))}"
        ) from None
