"""The interface in English and Simplified Chinese: the catalogue is complete and compiled,
every template string is marked, the language comes from the user's stored choice or the
browser, the header's switcher stores it, and guidelines follow it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotation import engine
from annotation.models import UserPreference
from annotation.roles import Role
from scripts import i18n_templates
from tests.conftest import skip_or_fail

ROOT = Path(settings.BASE_DIR)
MESSAGES = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
DOMAINS = ("django", "djangojs")


def _gettext_tools() -> None:
    """msgfmt, xgettext and msgmerge (Debian's gettext): needed to check and collect the
    catalogue, not to run the site (the .mo files are committed)."""
    missing = [tool for tool in ("msgfmt", "xgettext", "msgmerge") if not shutil.which(tool)]
    if missing:
        skip_or_fail(f"gettext is not installed ({', '.join(missing)})",
                     required_by="CROWDQA_REQUIRE_GETTEXT")


def _translated(entry: polib.POEntry) -> bool:
    if entry.msgid_plural:
        return bool(entry.msgstr_plural) and all(entry.msgstr_plural.values())
    return bool(entry.msgstr)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_msgid_has_a_chinese_translation_and_the_mo_is_compiled(domain):
    po = polib.pofile(str(MESSAGES / f"{domain}.po"))
    assert len(po) > (500 if domain == "django" else 3)
    assert not [e.msgid for e in po if not _translated(e)], "untranslated msgids"
    assert not [e.msgid for e in po if "fuzzy" in e.flags], "fuzzy msgids"
    # the translations are Chinese, not copies of the English
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in e.msgstr or e.msgstr_plural[0])
               for e in po) > 0.8 * len(po)
    # placeholders kept (msgfmt --check-format), and the committed .mo is this .po compiled
    _gettext_tools()
    subprocess.run(["msgfmt", "--check-format", "-o", "/dev/null", str(MESSAGES / f"{domain}.po")],
                   check=True)
    mo = {(e.msgctxt, e.msgid, e.msgid_plural): (e.msgstr, e.msgstr_plural.get(0, ""))
          for e in polib.mofile(str(MESSAGES / f"{domain}.mo")) if e.msgid}
    assert mo == {(e.msgctxt, e.msgid, e.msgid_plural): (e.msgstr, e.msgstr_plural.get(0, ""))
                  for e in po}, "the .mo is stale: run make compilemessages"


def test_makemessages_finds_no_new_msgid(tmp_path):
    """Run makemessages over a copy of the sources into an empty catalogue: it must find
    exactly the msgids of the committed one (`make messages` adds any new string)."""
    _gettext_tools()
    for name in ("manage.py", "config", "annotation", "collector", "templates", "static"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name,
                            ignore=shutil.ignore_patterns("__pycache__", "vendor", "fonts"))
        else:
            shutil.copy2(source, tmp_path / name)
    (tmp_path / "locale").mkdir()
    for domain in DOMAINS:
        subprocess.run([sys.executable, "manage.py", "makemessages", "-d", domain, "-l",
                        "zh_Hans", "--no-location", "--no-obsolete"],
                       cwd=tmp_path, check=True, capture_output=True)
        found = {e.msgid for e in polib.pofile(
            str(tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po"))}
        committed = {e.msgid for e in polib.pofile(str(MESSAGES / f"{domain}.po"))}
        assert len(found) > 3, "makemessages found nothing"
        assert found - committed == set(), f"new {domain} msgids: run make messages"
        assert committed - found == set(), f"obsolete {domain} msgids: run make messages"


def test_every_template_string_is_marked_for_translation():
    unmarked = {str(path.relative_to(ROOT)): lines for path in i18n_templates.templates()
                if (lines := i18n_templates.unmarked(path.read_text(encoding="utf-8")))}
    assert unmarked == {}, "run scripts/i18n_templates.py --fix, then make messages"


def test_the_template_marker_wraps_text_variables_and_attributes():
    source = ('{% extends "base.html" %}<p title="Open it">Hello {{ user.name }}</p>'
              '<kbd>Enter</kbd><button>Save</button> 42 ·')
    marked = i18n_templates.mark(source)
    assert marked == ('{% extends "base.html" %}\n{% load i18n %}'
                      '<p title="{% translate "Open it" %}">{% blocktranslate with name=user.name'
                      ' %}Hello {{ name }}{% endblocktranslate %}</p><kbd>Enter</kbd>'
                      '<button>{% translate "Save" %}</button> 42 ·')
    assert i18n_templates.mark(marked) == marked


@pytest.mark.django_db
def test_accept_language_chooses_the_login_page_language():
    chinese = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5").get(reverse("login"))
    page = chinese.content.decode()
    assert chinese["Content-Language"] == "zh-hans"
    assert '<html lang="zh-hans">' in page and "用户名" in page and "登录" in page
    english = Client(HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.8").get(reverse("login"))
    assert '<html lang="en">' in english.content.decode() and "Log in" in english.content.decode()
    assert "登录" not in english.content.decode()
    # neither: the default, English
    assert "Log in" in Client(HTTP_ACCEPT_LANGUAGE="fr").get(reverse("login")).content.decode()


@pytest.mark.django_db
def test_the_switcher_stores_a_signed_in_users_choice_for_every_device(client_for, annotator):
    client = client_for(annotator)
    home = reverse("annotation:annotator_home")
    page = client.get(home).content.decode()
    assert "My tasks" in page and 'action="/i18n/language/"' in page
    assert 'name="csrfmiddlewaretoken"' in page.split('data-testid="language-switch"')[1]
    response = client.post(reverse("set_language"), {"language": "zh-hans", "next": home})
    assert response.status_code == 302 and response["Location"] == home
    assert UserPreference.objects.get(user=annotator).language == "zh-hans"
    page = client.get(home).content.decode()
    assert "我的任务" in page and 'src="/i18n/catalog.js?l=zh-hans"' in page
    # another device: no cookie, an English browser; the stored choice wins once signed in
    other = Client(HTTP_ACCEPT_LANGUAGE="en")
    assert "Log in" in other.get(reverse("login")).content.decode()
    other.force_login(annotator)
    assert "我的任务" in other.get(home).content.decode()
    # back to English, from the Chinese page
    client.post(reverse("set_language"), {"language": "en", "next": home})
    assert UserPreference.objects.get(user=annotator).language == "en"
    assert "My tasks" in client.get(home).content.decode()


@pytest.mark.django_db
def test_the_switcher_for_anonymous_visitors_and_unknown_languages(client_for, annotator):
    anonymous = Client()
    response = anonymous.post(reverse("set_language"), {"language": "zh-hans",
                                                         "next": reverse("login")})
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert "用户名" in anonymous.get(reverse("login")).content.decode()
    assert not UserPreference.objects.exists()
    client = client_for(annotator)
    client.post(reverse("set_language"), {"language": "klingon", "next": "/"})
    assert not UserPreference.objects.exists()
    # a GET changes nothing (and an off-site next is not followed)
    assert client.get(reverse("set_language")).status_code == 405
    away = client.post(reverse("set_language"), {"language": "en", "next": "https://evil.example/"})
    assert away["Location"] == "/"


@pytest.mark.django_db
def test_guidelines_follow_the_interface_language_and_fall_back(client_for, annotator,
                                                                admin_user):
    project = engine.project_create(name="ReCO zh", recipe="reco", user=admin_user)
    stage = project.stages.get(kind="reco_evidence")
    assert stage.guidelines_zh_hans.startswith("**找出证据并写出三个答案。**")
    engine.project_member_add(project=project, user=annotator, role=Role.ANNOTATOR)
    client = client_for(annotator)
    url = reverse("annotation:stage_guidelines", args=[stage.pk])
    english = client.get(url).content.decode()
    assert "The four evidence principles" in english and "四条证据原则" not in english
    client.post(reverse("set_language"), {"language": "zh-hans", "next": url})
    chinese = client.get(url).content.decode()
    assert "四条证据原则" in chinese and "The four evidence principles" not in chinese
    assert "标注指南" in chinese  # the page around them too
    stage.guidelines_zh_hans = ""
    stage.save(update_fields=["guidelines_zh_hans"])
    assert "The four evidence principles" in client.get(url).content.decode()


def test_every_recipe_stage_with_guidelines_has_them_in_chinese():
    from annotation.recipes import RECIPES

    for recipe, specs in RECIPES.items():
        for spec in specs:
            assert bool(spec.guidelines) == bool(spec.guidelines_zh_hans), (recipe, spec.kind)
            # the same keys in both languages
            for key in ("<kbd>1</kbd>", "<kbd>Enter</kbd>", "95%", "<kbd>k</kbd>"):
                assert (key in spec.guidelines) == (key in spec.guidelines_zh_hans), \
                    (recipe, spec.kind, key)


@pytest.mark.django_db
def test_the_javascript_catalogue_is_a_script_file_in_the_users_language():
    response = Client(HTTP_ACCEPT_LANGUAGE="zh-CN").get(reverse("javascript_catalog"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Cache-Control"] == "max-age=3600, private"
    body = response.content.decode()
    for chinese in ("删除", "（文档 %s）", "请先在一篇文档中选择证据，或拒绝该问题。"):
        assert json.dumps(chinese)[1:-1] in body or chinese in body


def test_the_served_cjk_font_covers_the_chinese_interface_and_stays_small():
    """static/fonts holds the subset with its licence; every character of the catalogue and
    of the Chinese guidelines has a glyph in it (`make font` after adding new ones)."""
    from fontTools.ttLib import TTFont

    from scripts import font_subset

    font = ROOT / "static" / "fonts" / "crowdqa-cjk-sc.woff2"
    assert font.stat().st_size < font_subset.MAX_BYTES
    assert "SIL OPEN FONT LICENSE Version 1.1" in (font.parent / "OFL.txt").read_text()
    cmap = TTFont(str(font)).getBestCmap()
    needed = {c for c in font_subset.text_characters(ROOT) if "\u3400" <= c <= "\u9fff"}
    assert len(needed) > 1000
    assert sorted(c for c in needed if ord(c) not in cmap) == []
    assert all(ord(c) in cmap for c in font_subset.gb2312_level1())
    css = (ROOT / "static" / "css" / "crowdqa.css").read_text()
    assert 'url("../fonts/crowdqa-cjk-sc.woff2") format("woff2")' in css
    assert "font-display: swap" in css and "unicode-range: U+00B7" in css


def test_the_checkers_rules_are_translated():
    from django.utils import translation

    from annotation.batches import violation_label
    from collector.filters.inspection import Violation

    for rule in Violation:
        with translation.override("zh-hans"):
            chinese = violation_label(rule)
        with translation.override("en"):
            assert violation_label(rule) == rule.label
        assert chinese != rule.label and all("\u4e00" <= c <= "\u9fff" or not c.isalpha()
                                            for c in chinese), chinese


def test_texts_the_task_pages_take_from_the_code_follow_the_language():
    """The question check's reasons, the judgment and rating pages' type and score labels,
    and the engine's refusals were English on Chinese pages."""
    from django.utils import translation

    from annotation.models import Item
    from annotation.stages import stage_kind
    from collector.question_rules import check_question

    judge = Item(data={"query": "q", "query_id": 1})
    rate = Item(data={"question": "q", "question_type": "ENTITY", "answer": "a",
                      "reference": {"answers": ["a"]}})
    with translation.override("zh-hans"):
        why = check_question("Why is the sky blue today?", [], max_overlap=0.5).reason
        types = [o["label"] for o in stage_kind("marco_judge").context(judge)["question_types"]]
        rating = stage_kind("judgment_rate").context(rate)
    assert "为什么" in why
    assert types == ["是 / 否", "实体", "描述"]
    assert rating["type_label"] == "实体" and rating["scores"][-1]["label"] == "完全无关"
    with translation.override("en"):
        assert stage_kind("judgment_rate").context(rate)["type_label"] == "Entity"


def test_flash_messages_go_through_the_catalogue():
    """A message shown after an action (``messages.success(request, …)``) written as an
    f-string or a bare literal stays English in the Chinese interface: each is a gettext
    call, with ``%(name)s`` for what varies."""
    import ast

    def untranslated(node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
            return untranslated(node.left)
        return isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str))

    found = []
    for path in sorted([*(ROOT / "annotation").rglob("*.py"),
                        *(ROOT / "collector").rglob("*.py")]):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "messages"
                    and node.func.attr in ("success", "error", "warning", "info")
                    and len(node.args) > 1 and untranslated(node.args[1])):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
