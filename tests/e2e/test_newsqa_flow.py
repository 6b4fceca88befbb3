"""NewsQA in the browser: questions (one refused for overlap), two answerers who disagree,
a validator, and the admin's consolidated record and dashboard."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Item
from annotation.roles import Role
from tests.annotation.conftest import ARTICLES
from tests.e2e.pages import jobs_settled, row, submit, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(settings):
    from collector.models import Corpus, Document

    settings.CELERY_TASK_ALWAYS_EAGER = True
    corpus = Corpus.objects.create(name="e2e-news", language="en")
    Document.objects.create(corpus=corpus, source_type="news", **ARTICLES[0])
    admin = user_with_roles("boss", Role.ADMIN)
    project = engine.project_create(
        name="NewsQA browser", recipe="newsqa", corpus=corpus, user=admin,
        # Four annotators: the questioner and the two answerers may not validate, so one
        # validator suffices.
        params={4: {"max_extra_answers": 0}, 6: {"validators_per_question": 1}},
    )
    for name in ("asker", "reader1", "reader2", "judge"):
        engine.project_member_add(project=project, user=user_with_roles(name, Role.ANNOTATOR),
                                  role=Role.ANNOTATOR)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    return project


def test_questions_answers_validation_and_dashboard(project, as_user, screenshot):
    highlights = ARTICLES[0]["highlights"]
    # The questioner: headline and highlights only; a copied question is refused live.
    asker = as_user("asker")
    task_next(asker, '[data-testid="highlights"]')
    assert "city council of Portvale voted" not in asker.content()
    asker.fill('[data-testid="question-1"]', highlights[1] + "?")
    asker.wait_for_selector('[data-testid="verdict-1"] [data-testid="refusal"]')
    assert "come from the highlights" in asker.inner_text('[data-testid="verdict-1"]')
    screenshot("newsqa-question-refused", of=asker)
    asker.fill('[data-testid="question-1"]', "Who opposed the plan?")
    asker.wait_for_selector('[data-testid="verdict-1"] .ok')
    submit(asker, '[data-testid="submit"]')

    # First answerer: drags over "Dario Weiss" with the mouse.
    jobs_settled(what="the answer item of the question")
    reader1 = as_user("reader1")
    task_next(reader1, '[data-testid="article"]')
    assert reader1.inner_text('[data-testid="question"]') == "Who opposed the plan?"
    first = reader1.locator(".tok", has_text="Dario").first
    last = reader1.locator(".tok", has_text="Weiss").first
    first.hover()
    reader1.mouse.down()
    last.hover()
    reader1.mouse.up()
    reader1.click('[data-testid="add-span"]')
    assert "Dario Weiss" in reader1.inner_text('[data-testid="spans"]')
    screenshot("newsqa-answer-span", of=reader1)
    submit(reader1, '[data-testid="submit"]')

    # Second answerer disagrees, by keyboard: "]" jumps to the next sentence ("Mayor ..."),
    # then one word right, Shift+one word, Enter: "Lena Ortiz" in four keys.
    reader2 = as_user("reader2")
    task_next(reader2, '[data-testid="article"]')
    reader2.focus('[data-testid="article"]')
    for key in ("]", "ArrowRight", "Shift+ArrowRight", "Enter"):
        reader2.keyboard.press(key)
    assert "Lena Ortiz" in reader2.inner_text('[data-testid="spans"]')
    submit(reader2, key="Control+Enter")

    # No agreement and no extra answerers allowed: validation. Neither the answerers nor
    # the questioner may validate it; a fourth annotator picks the first unique answer with
    # the "1" key. The agreement check is a stage job: wait for it to emit the validation
    # item.
    validation = row(Item.objects.filter(stage__kind="newsqa_validate"),
                     what="the validation item (after the agreement stage job)")
    assert [a["spans"] for a in validation.data["unique_answers"]]
    judge = as_user("judge")
    task_next(judge, '[data-testid="choice-0"]')
    options = judge.locator("label.choice").all_inner_texts()
    assert options[0].strip() == "Dario Weiss" and options[1].strip() == "Lena Ortiz"
    assert "Enter" in judge.inner_text('[data-testid="submit"]')
    judge.keyboard.press("Enter")  # nothing chosen yet: refused, next to the choices
    judge.locator('[data-testid="client-error-choice"]').wait_for()
    assert "Choose an answer first" in judge.inner_text('[data-testid="client-error-choice"]')
    screenshot("newsqa-validation-missing", of=judge)
    # the first choice has the focus; its number key still works there
    assert judge.evaluate("document.activeElement.dataset.testid") == "choice-0"
    judge.keyboard.press("1")
    screenshot("newsqa-validation", of=judge)
    submit(judge, key="Enter")  # 1 then Enter sends it

    record = row(Item.objects.filter(stage__kind="newsqa_consolidate", status="done"),
                 what="the consolidated record (after the consolidation stage job)")
    body = ARTICLES[0]["body"]
    assert body[record.result["consensus"]["s"]:record.result["consensus"]["e"]] == "Dario Weiss"

    boss = as_user("boss")
    boss.goto(f"/manage/projects/{project.pk}/")
    boss.wait_for_selector('[data-testid="plot-stages"]')
    assert boss.inner_text('[data-testid="needed-validation"]') == "100.0%"
    screenshot("newsqa-dashboard", of=boss)
    boss.goto(f"/manage/items/{record.pk}/")
    result = boss.text_content('[data-testid="item-result"]')  # the raw result, folded
    assert "'validated': True" in result and "'agreed': False" in result
    screenshot("newsqa-record", of=boss)
    # An answer item: each answer drawn as the form showed it, its spans marked in the article.
    answered = Item.objects.filter(stage__kind="newsqa_answer",
                                   submissions__payload__has_key="spans").first()
    boss.goto(f"/manage/items/{answered.pk}/")
    marked = boss.locator('dd[data-kind="spans"] mark').first
    expect(marked).to_be_visible()
    assert marked.inner_text() in body
    screenshot("item-answer-spans", of=boss)


HEBREW = "מי התנגד לתוכנית?"  # "Who opposed the plan?", as a questioner may write it


def _question_mark_ends_the_line(page) -> bool:
    """Whether the question's final "?" is drawn where its sentence ends: left of its last
    word for a right-to-left question. In a left-to-right paragraph the browser draws it
    right of the Hebrew run, before the first word as a reader of Hebrew reads."""
    return page.evaluate("""() => {
      const node = document.querySelector('[data-testid="question"]').firstChild;
      const text = node.data.trim(), start = node.data.indexOf(text);
      const left = (from, to) => { const range = document.createRange();
        range.setStart(node, start + from); range.setEnd(node, start + to);
        return range.getBoundingClientRect().left; };
      const last = text.lastIndexOf(' ') + 1;
      return left(text.length - 1, text.length) < left(last, text.length - 1);
    }""")


def test_a_right_to_left_question_reads_right_to_left(project, as_user):
    """A question written in Hebrew (or Arabic) in an English project: the answer and the
    validation pages show it in its own direction, its "?" at its end."""
    from annotation.stages import Emit

    question_stage = project.stages.get(kind="newsqa_question")
    doc = project.items.get(stage=question_stage).document
    engine.items_emit(source_stage=question_stage, emits=[Emit(
        kind="newsqa_answer", key="rtl", data={"question": HEBREW}, document_id=doc.pk)])
    answers = [{"spans": [[0, 8]]}, {"no_answer": True}]
    engine.items_emit(source_stage=project.stages.get(kind="newsqa_agreement"), emits=[Emit(
        kind="newsqa_validate", key="rtl-v", document_id=doc.pk,
        data={"question": HEBREW, "answers": answers, "unique_answers": answers})])
    judge = as_user("judge")
    task_next(judge, '[data-testid="choice-0"]')  # the latest stage first: the validation
    assert judge.inner_text('[data-testid="question"]') == HEBREW
    assert _question_mark_ends_the_line(judge)
    reader = as_user("reader1")  # the judge holds the only validation slot
    task_next(reader, '[data-testid="article"]')
    assert reader.inner_text('[data-testid="question"]') == HEBREW
    assert _question_mark_ends_the_line(reader)
