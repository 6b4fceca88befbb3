"""The interface in Simplified Chinese in chromium: an annotator picks 简体中文 in the header
and works a ReCO task in Chinese; a Chinese browser gets the Chinese login page; and the
Chinese text is drawn with glyphs, not tofu boxes, on a machine without a CJK font: the page
loads the served subset (static/fonts) and each character's pixels differ from the box
drawn for a character no font has."""

from __future__ import annotations

import subprocess

import pytest
from playwright.sync_api import expect

from annotation.models import Item, Submission, UserPreference
from tests.annotation.test_reco import FARGO, QINCAI_PARAPHRASE, QINCAI_VERBATIM, doc
from tests.e2e.conftest import watch_csp
from tests.e2e.pages import reco_batch_project, submit, task_next
from tests.e2e.pixels import difference, ink

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "孕妇能吃芹菜吗"
FONT = "CrowdQA CJK SC"
# Private-use code points: no font has a glyph for them, so chromium draws its box (tofu).
TOFU = "\ue000\ue001\ue002\ue003\ue004\ue005\ue006"


@pytest.fixture
def reco_project(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    documents = [doc("qincai-1", QINCAI_VERBATIM, "芹菜问答"),
                 doc("qincai-2", QINCAI_PARAPHRASE, "孕期饮食"), doc("fargo", FARGO, "冰血暴")]
    return reco_batch_project(monkeypatch, name="ReCO 中文", query=QUERY, documents=documents,
                              annotator="labeller")


def _choose_chinese(page) -> None:
    submit(page, '[data-testid="language-switch"] button[value="zh-hans"]')


def test_an_annotator_picks_chinese_and_works_a_reco_task(reco_project, as_user, screenshot):
    project, annotator = reco_project
    page = as_user("labeller")
    expect(page.locator("h1").first).to_have_text("My tasks")
    _choose_chinese(page)
    expect(page.locator("h1").first).to_have_text("我的任务")
    expect(page.locator("nav.nav")).to_contain_text("我的任务")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert UserPreference.objects.get(user=annotator).language == "zh-hans"
    screenshot("zh-annotator-home", of=page)
    task_next(page, ready='[data-testid="doc-0"] .tok')
    expect(page.get_by_test_id("query")).to_have_text(QUERY)
    expect(page.get_by_test_id("submit")).to_contain_text("提交")
    expect(page.locator("details.guidelines")).to_contain_text("四条证据原则")
    # the page's script speaks Chinese too (the JavaScript catalogue): no evidence yet
    page.get_by_test_id("alt-positive").fill("能")
    page.get_by_test_id("alt-negative").fill("不能")
    page.get_by_test_id("alt-uncertain").fill("无法确定")
    page.get_by_test_id("answer-positive").check()
    page.get_by_test_id("submit").click()
    expect(page.locator("#evidence-none")).to_have_text(
        "请先在一篇文档中选择证据，或拒绝该问题。")
    screenshot("zh-reco-evidence", of=page)
    # select the evidence with the mouse and submit
    text = Item.objects.get(stage__kind="reco_evidence").data["documents"][0]["text"]
    start, end = 0, text.index("，")
    page.locator(f'[data-testid="doc-0"] .tok[data-s="{start}"]').hover()
    page.mouse.down()
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').hover()
    page.mouse.up()
    expect(page.get_by_test_id("evidence")).to_have_text(text[start:end])
    expect(page.locator("#evidence-where")).to_have_text("（文档 1）")
    submit(page, '[data-testid="submit"]')
    expect(page.locator(".messages")).to_contain_text("这是目前最后一个任务。")
    assert Submission.objects.get(worker=annotator).payload["evidence_text"] == text[:end]


def test_a_chinese_browser_gets_the_chinese_login_page(browser, live_server, csp_violations,
                                                       screenshot):
    context = browser.new_context(base_url=live_server.url, locale="zh-CN",
                                  viewport={"width": 1280, "height": 700})
    watch_csp(context, csp_violations)
    page = context.new_page()
    try:
        page.goto("/accounts/login/")
        expect(page.locator("h1")).to_have_text("登录")
        expect(page.locator("label[for=id_username]")).to_contain_text("用户名")
        assert page.locator("html").get_attribute("lang") == "zh-hans"
        # Drawn in the served subset where the machine has no CJK font, with nothing asking
        # for it but the page's font stack: with system-ui first, chromium drew the heading
        # in DejaVu Sans, as boxes, and never fetched the subset.
        page.evaluate("() => document.fonts.ready")
        assert FONT in _drawn_with(page, "h1") or _system_cjk_fonts()
        screenshot("zh-login", of=page)
    finally:
        context.close()


def _drawn_with(page, selector: str) -> list[str]:
    """The font families chromium drew the element's text with (DevTools' platform fonts),
    which a font-loaded check does not tell: a loaded font may go unused."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument")["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()
    return [font["familyName"] for font in fonts]


def _system_cjk_fonts() -> list[str]:
    """The machine's fonts for Chinese, as fontconfig (which chromium uses) lists them."""
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if line.strip()]


def _shot(page, text: str) -> bytes:
    """A screenshot of ``text`` in a box on the page, in the page's own font stack."""
    return page.evaluate_handle("""(text) => {
        const box = document.createElement("span");
        box.className = "glyph-probe";
        box.textContent = text;
        Object.assign(box.style, {display: "inline-block", fontSize: "40px", padding: "4px",
                                  color: "#000", background: "#fff", lineHeight: "1.2"});
        document.querySelector("main").prepend(box);
        return box;
    }""", text).as_element().screenshot()


def test_chinese_text_is_drawn_with_glyphs_not_tofu(reco_project, as_user, screenshot):
    page = as_user("labeller")
    _choose_chinese(page)
    task_next(page, ready='[data-testid="doc-0"] .tok')
    page.evaluate("() => document.fonts.ready")
    # Without a system CJK font (a bare Linux, as here: fonts-noto-cjk is not installed),
    # the page's font stack reaches the served subset, which chromium fetched because the
    # page has Chinese in its unicode-range; with one, the system font comes first.
    faces = page.evaluate("""(family) => Array.from(document.fonts)
        .filter(f => f.family.replace(/"/g, "") === family).map(f => f.status)""", FONT)
    assert faces == ["loaded"] or _system_cjk_fonts(), faces
    # either way the subset loads and covers the query's characters
    assert page.evaluate("""async ([font, text]) =>
        (await document.fonts.load(font, text)).length""", [f'40px "{FONT}"', QUERY]) == 1
    assert page.evaluate("([font, text]) => document.fonts.check(font, text)",
                         [f'40px "{FONT}"', QUERY])
    # the heading with the known Chinese query, against the same element holding tofu
    heading = page.get_by_test_id("query")
    page.evaluate("""(tofu) => {
        const h = document.querySelector('[data-testid="query"]');
        const twin = h.cloneNode(); twin.textContent = tofu; twin.dataset.testid = "tofu";
        h.after(twin);
    }""", TOFU)
    real, boxes = heading.screenshot(), page.get_by_test_id("tofu").screenshot()
    assert ink(real) and ink(boxes)
    assert difference(real, boxes) > 0.5
    # each character alone: never the box, and all different from each other
    tofu = _shot(page, TOFU[0])
    glyphs = {char: _shot(page, char) for char in QUERY}
    for char, shot in glyphs.items():
        assert ink(shot), char
        assert difference(shot, tofu) > 0.3, f"{char} is drawn as the missing-glyph box"
    assert len({tuple(ink(shot)) for shot in glyphs.values()}) == len(set(QUERY))
    # and the boxes of two different missing characters are the same box
    assert difference(_shot(page, TOFU[1]), tofu) < 0.05
    screenshot("zh-glyphs-not-tofu", of=page)


def test_switching_language_halfway_through_a_task_keeps_what_was_written(
    reco_project, as_user
):
    """The language switch reloaded the task page empty: the alternatives typed and the
    evidence selected were lost. They come back on the page in the other language."""
    project, annotator = reco_project
    page = as_user("labeller")
    task_next(page, ready='[data-testid="doc-0"] .tok')
    page.get_by_test_id("alt-positive").fill("能")
    page.get_by_test_id("alt-negative").fill("不能")
    page.get_by_test_id("answer-positive").check()
    text = Item.objects.get(stage__kind="reco_evidence").data["documents"][0]["text"]
    end = text.index("，")
    page.locator('[data-testid="doc-0"] .tok[data-s="0"]').hover()
    page.mouse.down()
    page.locator(f'[data-testid="doc-0"] .tok[data-e="{end}"]').hover()
    page.mouse.up()
    expect(page.get_by_test_id("evidence")).to_have_text(text[:end])
    task_url = page.url
    _choose_chinese(page)
    expect(page.get_by_test_id("submit")).to_contain_text("提交")
    assert page.url == task_url
    expect(page.get_by_test_id("alt-positive")).to_have_value("能")
    expect(page.get_by_test_id("alt-negative")).to_have_value("不能")
    expect(page.get_by_test_id("answer-positive")).to_be_checked()
    expect(page.get_by_test_id("evidence")).to_have_text(text[:end])
    expect(page.locator(".messages")).to_have_count(0)
    page.get_by_test_id("alt-uncertain").fill("无法确定")
    submit(page, '[data-testid="submit"]')
    expect(page.locator(".messages")).to_contain_text("这是目前最后一个任务。")
    payload = Submission.objects.get(worker=annotator).payload
    assert payload["evidence_text"] == text[:end]
    assert payload["alternatives"] == {"positive": "能", "negative": "不能",
                                       "uncertain": "无法确定"}
