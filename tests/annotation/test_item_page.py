"""The item page shows each submission as its form showed it: spans highlighted in the
article, labels as labels, free text as text, a chosen option by its text."""

from __future__ import annotations

import html

from django.urls import reverse

from annotation import engine
from annotation.models import Item
from annotation.payload_display import generic_blocks, highlighted
from tests.annotation.test_newsqa_flow import _write_questions, claim_item, phrase_span


def _page(client, item) -> str:
    response = client.get(reverse("annotation:item_detail", args=[item.pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _submission(page: str, pk: int) -> str:
    return page.split(f'data-testid="submission-{pk}"', 1)[1].split("</article>", 1)[0]


def test_newsqa_questions_spans_flags_and_choices(newsqa_project, workers, committed,
                                                  client_for, admin_user):
    article = _write_questions(newsqa_project, workers["questioner"], committed)
    client = client_for(admin_user)
    question_sub = article.submissions.get()
    page = _page(client, article)
    part = _submission(page, question_sub.pk)
    assert "<dt>Questions</dt>" in part
    assert "<li>When will the builders begin work?</li>" in part
    assert "{'questions'" not in part.split("<details>")[0]  # no dict dump (only the raw)

    who = Item.objects.get(stage__kind="newsqa_answer", data__question="Who opposed the plan?")

    def answer(worker, payload):
        task = claim_item(worker, newsqa_project, who)
        with committed():
            engine.task_submit(assignment_id=task.pk, worker=worker, payload=payload)

    answer(workers["ann1"], {"spans": [phrase_span(who, "Dario Weiss")]})
    answer(workers["ann2"], {"no_answer": True})
    spans_sub, flag_sub = who.submissions.order_by("id")
    page = _page(client, who)
    spans = _submission(page, spans_sub.pk)
    assert '<dd data-kind="spans">' in spans and "<mark>Dario Weiss</mark>" in spans
    flag = _submission(page, flag_sub.pk)
    assert '<span class="badge label">No answer</span>' in flag
    assert 'data-kind="spans"' not in flag


def test_highlighted_keeps_context_around_spans_and_elides_the_rest():
    text = "a" * 500 + "ANSWER" + "b" * 500 + "SECOND" + "c" * 50
    segments = highlighted(text, [[1006, 1012], [500, 506]], context=100)
    marked = [piece for piece, on in segments if on]
    assert marked == ["ANSWER", "SECOND"]
    first, *_ = segments
    assert first == ("…" + "a" * 100, False)
    middle = segments[2][0]
    assert middle == "b" * 100 + " … " + "b" * 100
    assert segments[-1] == ("c" * 50, False)


def test_generic_blocks_labels_text_lists_and_nested_rows():
    blocks = generic_blocks({"intent": "informational", "exclusions": ["navigational"],
                             "answer": "About 12 minutes.", "decisions": {"1": "keep"},
                             "unanswerable": False, "conflict": True, "note": ""},
                            labels=("intent", "exclusions", "keep"))
    by_label = {b.label: b for b in blocks}
    assert by_label["Marked"].value == ["Conflict"]  # true flags are labels, false ones hidden
    assert (by_label["Intent"].kind, by_label["Intent"].value) == ("labels", ["informational"])
    assert by_label["Exclusions"].value == ["navigational"]
    assert (by_label["Answer"].kind, by_label["Answer"].value) == ("text", "About 12 minutes.")
    assert by_label["Decisions"].kind == "rows"
    assert "Note" not in by_label and "Unanswerable" not in by_label


def test_reco_labels_show_the_evidence_in_its_document_and_the_correct_answer():
    from annotation.stages.reco import ANSWERS, label_blocks

    data = {"documents": [{"title": "Park", "text": "Other text."},
                          {"title": "Hours", "text": "公园每天早上六点开门，晚上十点关门。"}]}
    text = data["documents"][1]["text"]
    start = text.index("晚上十点关门")
    payload = {"doc": 1, "evidence": [start, start + 6], "answer": "positive",
               "alternatives": {"positive": "开放", "negative": "不开放", "uncertain": "不确定"}}
    blocks = {b.label: b for b in label_blocks(data, payload)}
    assert blocks["Document"].value == ["2. Hours"]
    assert [p for p, on in blocks["Evidence"].segments if on] == ["晚上十点关门"]
    assert blocks["Correct answer"].value == [ANSWERS["positive"]]
    assert f"{ANSWERS['negative']}: 不开放" in blocks["Alternatives"].value
    rejected = label_blocks(data, {"reject": True, "reason": "not a yes/no question"})
    assert rejected[0].value == ["Rejected"] and rejected[1].value == "not a yes/no question"
