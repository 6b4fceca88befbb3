"""The lean ReCO evidence page: documents sent as text and cut into selectable tokens in the
browser, with the server's offsets (astral characters, accents, full-width digits
included); its weight and load time measured in the browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Item
from annotation.stages import reco
from tests.annotation.test_reco import QINCAI_PARAPHRASE, doc
from tests.e2e.pages import reco_batch_project, task_next

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "孕妇能吃芹菜吗"
TRICKY = ("Café naïve co-op's 𠀀𠀁 emoji 😀 ok; ２０２０年 x_y  tabs\tand\nnew lines — "
          "«quotes» <b>not bold</b> & done. 怀孕期间适量食用芹菜有好处")
LONG = [(f"第{n}篇。" + QINCAI_PARAPHRASE * 40)[:1500] for n in range(9)]


@pytest.fixture
def task_page(settings, monkeypatch, as_user):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    documents = [doc("tricky", TRICKY, "Tricky"), *(doc(f"long-{n}", t, f"长文 {n}")
                                                  for n, t in enumerate(LONG))]
    reco_batch_project(monkeypatch, name="ReCO lean", query=QUERY, documents=documents,
                       annotator="labeller")
    page = as_user("labeller")
    task_next(page)
    page.wait_for_selector('[data-testid="doc-0"] .tok')
    return page, Item.objects.get(stage__kind="reco_evidence")


def test_browser_tokens_have_the_servers_offsets(task_page, screenshot):
    page, item = task_page
    for n, document in enumerate(item.data["documents"]):
        page.get_by_test_id(f"doc-tab-{n}").click()
        got = page.locator(f'[data-testid="doc-{n}"] .tok').evaluate_all(
            "ts => ts.map(t => [+t.dataset.s, +t.dataset.e])")
        assert [tuple(p) for p in got] == reco.document_tokens(document["text"]), n
        # the text on the page is the document, verbatim
        assert page.get_by_test_id(f"doc-{n}").text_content() == document["text"]
    # select across the astral characters: the evidence is the server's slice
    page.get_by_test_id("doc-tab-0").click()
    text = item.data["documents"][0]["text"]
    start, end = text.index("𠀀"), text.index("ok") + 2
    page.locator(f'[data-testid="doc-0"] .tok[data-s="{start}"]').hover()
    page.mouse.down()
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').hover()
    page.mouse.up()
    expect(page.get_by_test_id("evidence")).to_have_text(text[start:end])
    assert page.input_value("#ev-start") == str(start)
    assert page.input_value("#ev-end") == str(end)
    screenshot("reco-evidence-lean", of=page)


def test_page_weight_and_load_time_in_the_browser(task_page):
    page, item = task_page
    text_bytes = sum(len(d["text"].encode()) for d in item.data["documents"])
    timing = page.evaluate("""() => {
        const nav = performance.getEntriesByType('navigation')[0];
        return {bytes: nav.decodedBodySize, ready: nav.domContentLoadedEventEnd,
                load: nav.loadEventEnd};
    }""")
    print(f"\nreco evidence page in chromium: {len(item.data['documents'])} documents, "
          f"{text_bytes:,} bytes of text, page {timing['bytes']:,} bytes, DOM ready "
          f"{timing['ready']:.0f} ms, load {timing['load']:.0f} ms")
    assert len(item.data["documents"]) == 10
    assert timing["bytes"] < text_bytes + 40_000
    # only the shown document is cut into tokens
    assert page.locator('[data-testid="doc-1"] .tok').count() == 0


def test_carriage_returns_keep_the_servers_offsets(settings, monkeypatch, as_user):
    """Documents imported with Windows line ends (CR LF, or a lone CR): the HTML parser turns
    both into LF, so a page that rendered the text as HTML counted one character too few
    per line end before the selection and stored the wrong evidence."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    text = "第一行。\r\n" + QINCAI_PARAPHRASE + "\r第三行\r\n\r\n这种蔬菜富含膳食纤维。"
    reco_batch_project(monkeypatch, name="ReCO CRLF", query=QUERY,
                       documents=[doc("crlf", text, "CRLF")], annotator="labeller")
    page = as_user("labeller")
    task_next(page)
    page.wait_for_selector('[data-testid="doc-0"] .tok')
    item = Item.objects.get(stage__kind="reco_evidence")
    assert item.data["documents"][0]["text"] == text
    got = page.locator('[data-testid="doc-0"] .tok').evaluate_all(
        "ts => ts.map(t => [+t.dataset.s, +t.dataset.e])")
    assert [tuple(p) for p in got] == reco.document_tokens(text)
    start, end = text.index("这种蔬菜"), text.rindex("纤维") + 2
    page.locator(f'[data-testid="doc-0"] .tok[data-s="{start}"]').hover()
    page.mouse.down()
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').hover()
    page.mouse.up()
    assert page.input_value("#ev-start") == str(start)
    assert page.input_value("#ev-end") == str(end)
    expect(page.get_by_test_id("evidence")).to_have_text(text[start:end])
