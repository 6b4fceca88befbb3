"""ReCO in the browser: an annotator labels a small batch (evidence by mouse and by
keyboard, three alternatives, the correct one), a checker rejects it, the annotator
relabels, the checker accepts, and the admin sees the final set."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation import engine
from annotation.models import Batch, Item
from annotation.roles import Role
from annotation.stages import reco
from tests.annotation.test_reco import DOCUMENTS, QINCAI_PARAPHRASE, doc, rows
from tests.e2e.pages import jobs_settled, row, submit, task_next
from tests.factories import user_with_roles

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = ["孕妇能吃芹菜吗", "can pregnant women eat celery"]
# The English query keeps two documents; its evidence is in the second (key "2").
SECOND = doc("greens", "Leafy greens and celery are low in calories. Midwives say a serving "
             "a day is a sensible amount during pregnancy.", "Greens")
EVIDENCE = {"孕妇能吃芹菜吗": "芹菜富含叶酸和膳食纤维",
            "can pregnant women eat celery": "a serving a day is a sensible amount"}
ALTERNATIVES = {"孕妇能吃芹菜吗": ("能", "不能", "无法确定"),
                "can pregnant women eat celery": ("yes", "no", "can't tell")}


@pytest.fixture
def project(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(reco.QueriesKind, "queries", lambda self, project: rows(QUERIES))
    documents = {**DOCUMENTS, QUERIES[1]: [*DOCUMENTS[QUERIES[1]], SECOND]}
    monkeypatch.setattr(reco, "_retrieve_documents",
                        lambda project, text, k, max_chars=0: documents.get(text, [])[:k])
    admin = user_with_roles("boss", Role.ADMIN)
    checker = user_with_roles("checker", Role.CHECKER)
    project = engine.project_create(
        name="ReCO browser", recipe="reco", user=admin,
        params={5: {"train": 1.0, "dev": 0.0, "test": 0.0},
                6: {"batch_size": 2, "inspect_fraction": 1.0}},
    )
    engine.project_member_add(project=project, user=user_with_roles("labeller", Role.ANNOTATOR),
                              role=Role.ANNOTATOR)
    engine.project_member_add(project=project, user=checker, role=Role.CHECKER)
    engine.project_start(project=project, actor=admin)
    jobs_settled(what="the first stage run")
    return project


def label(page, *, answer: str, keyboard: bool) -> str:
    """Label the open task: the evidence, three alternatives, the correct one. Returns the
    query."""
    page.wait_for_selector('[data-testid="doc-0"]')
    query = page.inner_text('[data-testid="query"]')
    item = Item.objects.get(stage__kind="reco_evidence", data__query=query)
    n = next(i for i, d in enumerate(item.data["documents"]) if EVIDENCE[query] in d["text"])
    if n:  # switch documents with the number key
        page.locator("body").focus()
        page.keyboard.press(str(n + 1))
        assert page.get_attribute(f'[data-testid="doc-tab-{n}"]', "aria-selected") == "true"
    text = item.data["documents"][n]["text"]
    start = text.index(EVIDENCE[query])
    end = start + len(EVIDENCE[query])
    first = page.locator(f'.doc-panel:not([hidden]) .tok[data-s="{start}"]')
    last = page.locator(f'.doc-panel:not([hidden]) .tok[data-e="{end}"]')
    if keyboard:  # click the first token, extend with Shift+arrows, take with Enter
        first.click()
        tokens = page.locator(".doc-panel:not([hidden]) .tok")
        count = sum(1 for s in tokens.evaluate_all("ts => ts.map(t => +t.dataset.s)")
                    if start < s < end)
        for _ in range(count):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("Enter")
    else:  # drag with the mouse
        first.hover()
        page.mouse.down()
        last.hover()
        page.mouse.up()
    assert page.inner_text('[data-testid="evidence"]') == EVIDENCE[query]
    assert page.input_value("#ev-doc") == str(n)
    for key, value in zip(("positive", "negative", "uncertain"), ALTERNATIVES[query],
                          strict=True):
        page.fill(f'[data-testid="alt-{key}"]', value)
    page.check(f'[data-testid="answer-{answer}"]')
    return query


def test_batch_rejected_relabelled_accepted_and_final_set(project, as_user,
                                                          screenshot):
    labeller = as_user("labeller")
    task_next(labeller)
    # First round: both answers "negative"; a refused submission keeps the evidence.
    query = label(labeller, answer="negative", keyboard=False)
    labeller.fill('[data-testid="alt-negative"]', ALTERNATIVES[query][0])
    labeller.click('[data-testid="submit"]')
    labeller.wait_for_selector('[data-testid="errors"]')
    assert "must differ" in labeller.inner_text('[data-testid="errors"]')
    assert labeller.inner_text('[data-testid="evidence"]') == EVIDENCE[query]
    labeller.fill('[data-testid="alt-negative"]', ALTERNATIVES[query][1])
    screenshot("reco-evidence", of=labeller)
    submit(labeller, '[data-testid="submit"]')
    label(labeller, answer="negative", keyboard=True)
    submit(labeller, key="Control+Enter")
    batch = row(Batch.objects.all(), what="the labelled batch")
    assert batch.status == "inspection"

    # The checker marks one answer incorrect: the running accuracy falls to 50%, Accept is
    # disabled; comments on the item and the batch; Return sends it back (not in green).
    checker = as_user("checker")
    checker.goto("/review/")
    assert "labeller" in checker.inner_text('[data-testid="waiting-batches"]')
    checker.click(f'[data-testid="inspect-{project.pk}-{batch.number}"]')
    checker.wait_for_selector('[data-testid="sample-1"]')
    assert checker.inner_text('[data-testid="batch-annotator"]') == "labeller"
    assert checker.locator('[data-testid="inspect-query"]').count() == 2
    assert QINCAI_PARAPHRASE[:4] in checker.inner_text('[data-testid="sample-1"]') or \
        QINCAI_PARAPHRASE[:4] in checker.inner_text('[data-testid="sample-2"]')
    expect(checker.locator('[data-testid="accuracy"]')).to_have_text("100.0%")
    expect(checker.locator('[data-testid="return"]')).to_be_disabled()
    checker.check('[data-testid="rule-1-answer_incorrect"]')
    expect(checker.locator('[data-testid="accuracy"]')).to_have_text("50.0%")
    expect(checker.locator('[data-testid="accept"]')).to_be_disabled()
    assert "not above the threshold" in checker.inner_text('[data-testid="verdict-text"]')
    checker.check('[data-testid="rule-1-evidence_irrelevant"]')  # an item counts 1 at most
    expect(checker.locator('[data-testid="accuracy"]')).to_have_text("50.0%")
    checker.uncheck('[data-testid="rule-1-evidence_irrelevant"]')
    checker.fill('[data-testid="comment-1"]', "The evidence says the opposite.")
    checker.fill('[data-testid="batch-comment"]', "Check each answer against its evidence.")
    screenshot("reco-inspection", of=checker)
    submit(checker, '[data-testid="return"]')
    message = checker.locator(".message.warning")
    assert "returned to labeller" in message.inner_text()
    assert checker.locator(".message.success").count() == 0
    screenshot("reco-inspection-returned", of=checker)
    jobs_settled(what="the batch's return to its annotator")
    batch.refresh_from_db()
    assert (batch.status, batch.round) == ("returned", 2)
    inspection = batch.inspections.get(round=1)
    marked = inspection.sample[0]

    # The labeller sees the batch come back, each item with the checker's marks and
    # comments and their previous answer filled in; they correct the answer, resubmit.
    labeller.goto("/tasks/")
    assert "Check each answer against its evidence." in labeller.inner_text(
        '[data-testid="returned-batches"]')
    screenshot("reco-returned-home", of=labeller)
    task_next(labeller, '[data-testid="returned-banner"]')
    for _ in range(2):
        banner = labeller.inner_text('[data-testid="returned-banner"]')
        assert "Check each answer against its evidence." in banner and "0.500" in banner
        query = labeller.inner_text('[data-testid="query"]')
        item = Item.objects.get(stage__kind="reco_evidence", data__query=query)
        if item.pk == marked:
            assert "The answer is incorrect" in banner
            assert "The evidence says the opposite." in banner
            screenshot("reco-returned-item", of=labeller)
        else:
            assert "found nothing wrong" in banner
        # the previous answer, pre-filled: evidence, alternatives, the "negative" choice
        assert labeller.inner_text('[data-testid="evidence"]') == EVIDENCE[query]
        assert labeller.input_value('[data-testid="alt-positive"]') == ALTERNATIVES[query][0]
        assert labeller.is_checked('[data-testid="answer-negative"]')
        labeller.check('[data-testid="answer-positive"]')
        submit(labeller, '[data-testid="submit"]')
    assert {s.payload["answer"] for s in batch.items.get(pk=marked).submissions.all()} == {
        "negative", "positive"}

    # Second round passes: Accept, in green.
    checker.goto("/review/")
    checker.click(f'[data-testid="inspect-{project.pk}-{batch.number}"]')
    checker.wait_for_selector('[data-testid="sample-1"]')
    expect(checker.locator('[data-testid="accept"]')).to_be_enabled()
    submit(checker, '[data-testid="accept"]')
    assert "accepted" in checker.locator(".message.success").inner_text()
    checker.wait_for_selector('[data-testid="plot-accuracy"]')
    screenshot("reco-checker-dashboard", of=checker)

    # All batches of the projects the checker checks: searched and filtered.
    submit(checker, '[data-testid="all-batches-link"]')
    checker.fill('[data-testid="batch-filters"] input[name="q"]', "labeller")
    checker.select_option('[data-testid="batch-filters"] select[name="status"]', "accepted")
    submit(checker, '[data-testid="batch-filters"] button[type="submit"]')
    rows = checker.locator('[data-testid="batch-list"] tbody tr')
    assert rows.count() == 1 and "by checker, accepted" in rows.inner_text()
    screenshot("checker-batch-list", of=checker)

    # The admin sees the final set, once the stage jobs after the acceptance are done.
    jobs_settled(what="the final records of the accepted batch")
    boss = as_user("boss")
    boss.goto(f"/manage/projects/{project.pk}/")
    boss.wait_for_selector('[data-testid="reco-final"]')
    assert boss.inner_text('[data-testid="reco-records"]') == "2"
    final = boss.inner_text('[data-testid="reco-final"]')
    for query in QUERIES:
        assert query in final and EVIDENCE[query] in final
    assert "能|不能|无法确定" in final and "yes|no|can't tell" in final
    assert boss.inner_text('[data-testid="reco-mean-rounds"]') == "2"
    screenshot("reco-dashboard", of=boss)
    # Each automatic stage's last run: received, passed on, dropped with the reasons.
    assert "received 2, passed on 2" in boss.inner_text('[data-testid="stage-report-2"]')
    # (one run per retrieved query here: each query's verbatim document is dropped)
    last_filter = boss.inner_text('[data-testid="stage-report-4"]')
    assert "received 1, passed on 1" in last_filter
    assert "1 dropped for trivial overlap (rule contains: 1)" in last_filter
    screenshot("project-stage-reports", of=boss, element='[data-testid="stage-table"]')
    # The run's job page says the same in sentences.
    submit(boss, '[data-testid="stage-report-4"] a')
    job_page = boss.inner_text("main")
    assert "Received 1, passed on 1." in job_page
    assert "1 dropped for trivial overlap (rule contains: 1)." in job_page
    screenshot("job-stage-run", of=boss)
    records = list(reco.final_records(project=project))
    assert {r["answer_type"] for r in records} == {"positive"}
    assert {r["provenance"]["round"] for r in records} == {2}
    by_query = {r["query"]: r for r in records}
    assert by_query[QUERIES[1]]["provenance"]["document_external_id"] == "greens"
    assert by_query[QUERIES[0]]["provenance"]["document_external_id"] == "qincai-2"
