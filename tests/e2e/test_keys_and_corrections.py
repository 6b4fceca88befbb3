"""Keyboard span selection over a 600-word article (word, phrase and sentence keys) and an
answerer correcting their last answer while its question is still open."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Item, Submission
from annotation.roles import Role
from tests.e2e.pages import submit, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = ["council", "members", "said", "the", "harbor", "library", "would", "open", "next",
         "spring", "with", "new", "reading", "rooms"]


def sentence(n: int) -> str:
    """Sentence ``n``: 20 words, a comma after the eighth, a full stop."""
    words = [f"w{n}x{k}" if k in (0, 19) else WORDS[(n + k) % len(WORDS)] for k in range(20)]
    return " ".join(words[:8]) + ", " + " ".join(words[8:]) + "."


SENTENCES = [sentence(n) for n in range(30)]  # 600 words
BODY = " ".join(SENTENCES[:15]) + "\n\n" + " ".join(SENTENCES[15:])


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-long", language="en")
    Document.objects.create(corpus=corpus, source_type="news", external_id="long",
                            title="A long article", body=BODY,
                            highlights=["The council met", "A library opens"])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(name="Long article", recipe="newsqa", corpus=corpus,
                                    user=admin)
    for name in ("asker", "reader1", "reader2"):
        engine.project_member_add(project=project, user=user_with_roles(name, Role.ANNOTATOR),
                                  role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    asker = Item.objects.get(stage__kind="newsqa_question")
    task = engine.task_claim(worker=user_with_roles("asker", Role.ANNOTATOR), project=project)
    assert task.item_id == asker.pk
    engine.task_submit(assignment_id=task.pk, worker=task.worker,
                       payload={"questions": ["What did the members say?"]})
    return project


def spans_text(page) -> str:
    return page.inner_text('[data-testid="spans"]')


def test_sentence_phrase_and_word_keys_over_a_600_word_article(project, as_user, screenshot):
    reader = as_user("reader1")
    task_next(reader, '[data-testid="article"]')
    assert reader.locator(".tok").count() > 600
    reader.click('[data-testid="span-keys"] summary')
    assert "previous / next sentence" in reader.inner_text('[data-testid="span-keys"]')
    reader.focus('[data-testid="article"]')
    # Sentence 17 (index 16, after the paragraph break) in 18 keys: 16 x "]", "s", Enter.
    for _ in range(16):
        reader.keyboard.press("]")
    reader.keyboard.press("s")
    reader.keyboard.press("Enter")
    assert spans_text(reader).startswith(f"“{SENTENCES[16]}”")
    # Its first phrase by Home, Shift+Ctrl+→ (to the comma): one more span.
    reader.keyboard.press("Backspace")
    reader.keyboard.press("Home")
    reader.keyboard.press("Shift+Control+ArrowRight")
    reader.keyboard.press("Enter")
    assert spans_text(reader).startswith(f"“{SENTENCES[16].split(',')[0]},”")
    # Back one sentence with "[" and take the last two words with End, Shift+Ctrl+←... :
    reader.keyboard.press("Backspace")
    reader.keyboard.press("[")
    reader.keyboard.press("[")  # the start of sentence 16 (index 15)
    reader.keyboard.press("End")  # its full stop
    reader.keyboard.press("ArrowLeft")
    reader.keyboard.press("Shift+ArrowLeft")
    reader.keyboard.press("Enter")
    assert spans_text(reader).startswith(f"“{' '.join(SENTENCES[15][:-1].split()[-2:])}”")
    # Ctrl+End, then Shift+Home: the whole last sentence.
    reader.keyboard.press("Backspace")
    reader.keyboard.press("Control+End")
    reader.keyboard.press("Shift+Home")
    reader.keyboard.press("Enter")
    assert spans_text(reader).startswith(f"“{SENTENCES[-1]}”")
    screenshot("newsqa-answer-keys", of=reader)
    submit(reader, key="Control+Enter")
    first = Submission.objects.get(worker__username="reader1")
    s, e = first.payload["spans"][0]
    assert BODY[s:e] == SENTENCES[-1]


def test_the_last_answer_is_corrected_while_the_question_is_open(project, as_user, screenshot):
    reader = as_user("reader1")
    task_next(reader, '[data-testid="article"]')
    reader.focus('[data-testid="article"]')
    reader.keyboard.press("s")  # the first sentence
    reader.keyboard.press("Enter")
    submit(reader, key="Control+Enter")
    wrong = Submission.objects.get(worker__username="reader1")
    reader.goto("/tasks/")
    row = reader.locator('[data-testid="recent-1"]')
    assert "waiting for others" in row.inner_text()
    assert "What did the members say?" in row.inner_text()
    screenshot("annotator-recent-answers", of=reader)
    submit(reader, '[data-testid="correct-last"]')
    assert "correcting your answer" in reader.inner_text('[data-testid="correcting"]')
    # the old answer is there, pre-filled; replace it with the second sentence
    assert spans_text(reader).startswith(f"“{SENTENCES[0]}”")
    screenshot("annotator-correct-answer", of=reader)
    reader.focus('[data-testid="article"]')
    reader.keyboard.press("Backspace")
    expect(reader.locator("#no-spans")).to_be_visible()
    reader.keyboard.press("]")
    reader.keyboard.press("s")
    reader.keyboard.press("Enter")
    submit(reader, key="Control+Enter")
    assert "Corrected" in reader.locator(".message.success").inner_text()
    wrong.refresh_from_db()
    new = wrong.superseded_by
    assert new is not None and new.payload["spans"] != wrong.payload["spans"]
    s, e = new.payload["spans"][0]
    assert BODY[s:e] == SENTENCES[1]
    row = reader.locator('[data-testid="recent-2"]')
    assert "corrected" in row.inner_text()
    # the second answerer completes the question: agreement reads the correction
    other = as_user("reader2")
    task_next(other, '[data-testid="article"]')
    other.focus('[data-testid="article"]')
    for key in ("]", "s", "Enter"):
        other.keyboard.press(key)
    submit(other, key="Control+Enter")
    agreement = Item.objects.get(stage__kind="newsqa_agreement")
    assert agreement.data["answers"][0] == new.payload
    reader.goto("/tasks/")
    assert reader.locator('[data-testid="correct-last"]').count() == 0
