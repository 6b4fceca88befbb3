"""The admin's project path in the interface language: the new-project form (labels, help,
its refusals), what the project page says after an action, and why a release is refused.
They were English in the Chinese interface (f-strings, unmarked labels)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from annotation import engine
from annotation.models import Project
from annotation.roles import Role
from collector.models import Corpus
from tests.factories import user_with_roles, zh_catalogue_holds

#: The new msgids and their translations (as the catalogue gets them).
CHINESE = {
    "Name": "名称",
    "Copied verbatim into the datasheet and dataset card of every release: describe the "
    "work, not who did it.": "原样复制到每个发布的数据说明和数据集卡片中：请描述这项工作，"
                            "而不是谁做了它。",
    "The description names %(names)s: it is copied verbatim into the datasheet and dataset "
    "card of every release. Remove the usernames, or tick the box below to keep them.":
        "描述中提到了 %(names)s：描述会原样复制到每个发布的数据说明和数据集卡片中。"
        "请删除这些用户名，或勾选下面的方框保留它们。",
    "Keep these usernames in the description (they will be published with every release)":
        "在描述中保留这些用户名（它们会随每个发布公开）",
    "A project with this name exists already.": "已有同名项目。",
    "Project %(name)s created. Check the stage parameters, add members, then start it.":
        "项目 %(name)s 已创建。请检查各阶段的参数，添加成员，然后启动项目。",
    "Project started.": "项目已启动。",
    "%(count)s membership(s) added.": "已添加 %(count)s 个成员资格。",
    "Parameters of stage %(order)s not saved: see the errors next to the fields.":
        "阶段 %(order)s 的参数未保存：请查看字段旁的错误。",
    "Parameters of stage %(order)s saved.": "阶段 %(order)s 的参数已保存。",
    "Unknown action %(action)s.": "未知操作 %(action)s。",
    "formats: choose at least one format": "格式：请至少选择一种格式",
    "formats: %(name)s does not apply to a %(recipe)s project; use %(formats)s":
        "格式：%(name)s 不适用于 %(recipe)s 项目；请使用 %(formats)s",
    "not answerable (SQuAD v2.0 is_impossible, with the answers as plausible answers; left "
    "out of SQuAD v1.1), as the NewsQA paper suggests treating them":
        "不可回答（SQuAD v2.0 的 is_impossible，答案作为 plausible answers；SQuAD v1.1 中略去），"
        "按 NewsQA 论文建议的方式处理",
    "left out of SQuAD and Hugging Face, as the NewsQA paper's experiments use only questions "
    "with answer agreement":
        "在 SQuAD 和 Hugging Face 中略去，因为 NewsQA 论文的实验只使用答案一致的问题",
    "answerable when the official NewsQA consensus is a span":
        "当官方 NewsQA 共识是一个片段时视为可回答",
}


@pytest.fixture
def chinese_catalogue():
    """The committed Chinese catalogue holds ``CHINESE`` (the pages are read in it)."""
    zh_catalogue_holds(CHINESE)


@pytest.fixture
def corpus(db):
    return Corpus.objects.create(name="news", language="en")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _in_chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


NEW = "/manage/projects/new/"


def test_the_new_project_form_and_its_refusals_are_in_chinese(
        chinese_catalogue, client_for, admin_user, corpus):
    user_with_roles("ann1", Role.ANNOTATOR)
    client = client_for(admin_user)
    _in_chinese(client)
    page = _text(client.get(NEW).content.decode())
    for english in ("Name", "Recipe", "Corpus", "Description"):
        assert f" {english} " not in page
    assert "名称" in page and "方案" in page and "语料库" in page and "描述" in page
    assert "原样复制到每个发布的数据说明和数据集卡片中" in page
    assert "describe the work" not in page
    page = _text(client.post(NEW, {"name": "P", "recipe": "newsqa", "corpus": corpus.pk,
                                   "description": "written by ann1"}).content.decode())
    assert "描述中提到了 ann1" in page and "The description names" not in page
    assert "在描述中保留这些用户名" in page
    engine.project_create(name="Taken", recipe="newsqa", corpus=corpus, user=admin_user)
    page = _text(client.post(NEW, {"name": "Taken", "recipe": "newsqa",
                                   "corpus": corpus.pk}).content.decode())
    assert "已有同名项目。" in page


def test_the_project_pages_messages_are_in_chinese(
        chinese_catalogue, client_for, admin_user, corpus):
    client = client_for(admin_user)
    _in_chinese(client)
    page = _text(client.post(NEW, {"name": "News", "recipe": "newsqa", "corpus": corpus.pk},
                             follow=True).content.decode())
    assert "项目 News 已创建。" in page and "Check the stage parameters" not in page
    project = Project.objects.get(name="News")
    action = reverse("annotation:project_action", args=[project.pk])
    stage = project.stages.order_by("order").first()
    prefix = f"stage{stage.pk}"
    saved = _text(client.post(action, {"action": "params", "stage": stage.pk,
                                       f"{prefix}-max_articles": "5"},
                              follow=True).content.decode())
    assert f"阶段 {stage.order} 的参数已保存。" in saved
    refused = _text(client.post(action, {"action": "params", "stage": stage.pk,
                                         f"{prefix}-max_articles": "-5"}).content.decode())
    assert f"阶段 {stage.order} 的参数未保存：请查看字段旁的错误。" in refused
    page = _text(client.post(action, {"action": "members", "user": []},
                             follow=True).content.decode())
    assert "已添加 0 个成员资格。" in page
    page = _text(client.post(action, {"action": "dance"}, follow=True).content.decode())
    assert "未知操作 'dance'。" in page
    page = _text(client.post(action, {"action": "start"}, follow=True).content.decode())
    assert "项目已启动。" in page and "Project started." not in page


def test_a_refused_release_says_why_in_chinese(chinese_catalogue, client_for, admin_user,
                                               corpus):
    project = engine.project_create(name="News", recipe="newsqa", corpus=corpus,
                                    user=admin_user)
    client = client_for(admin_user)
    _in_chinese(client)
    url = reverse("annotation:release_action", args=[project.pk])
    page = _text(client.post(url, {"action": "create", "version": "1.0.0"},
                             follow=True).content.decode())
    assert "格式：请至少选择一种格式" in page
    page = _text(client.post(url, {"action": "create", "version": "1.0.0", "formats": "reco"},
                             follow=True).content.decode())
    assert "格式：reco 不适用于 newsqa 项目；请使用 squad-v1" in page


def test_the_release_forms_choices_for_unagreed_questions_are_in_chinese(
        chinese_catalogue, client_for, admin_user, corpus):
    """The project page offers them translated; the datasheet keeps them in English."""
    from annotation.release_records import UNAGREED_CHOICES

    project = engine.project_create(name="News", recipe="newsqa", corpus=corpus,
                                    user=admin_user)
    client = client_for(admin_user)
    _in_chinese(client)
    page = _text(client.get(reverse("annotation:project_detail",
                                    args=[project.pk])).content.decode())
    assert "omit: 在 SQuAD 和 Hugging Face 中略去" in page
    assert "consensus: 当官方 NewsQA 共识是一个片段时视为可回答" in page
    assert "unanswerable: 不可回答" in page
    assert "as the NewsQA paper suggests" not in page
    assert UNAGREED_CHOICES["consensus"] == (
        "answerable when the official NewsQA consensus is a span")


def test_a_judgment_study_is_created_in_the_language_of_its_answers(client_for, admin_user,
                                                                   corpus):
    """The form made a judgment study choose a corpus it never reads and took the corpus's
    language, which sets how the study's metrics tokenise: Chinese answers rated in a
    project over an English corpus were scored word by word. Its language is now the
    answers' (chosen), with no corpus needed; other recipes still need their corpus."""
    from annotation.stages.judgment import token_level

    client = client_for(admin_user)
    response = client.post(NEW, {"name": "Study", "recipe": "judgment", "language": "zh"})
    assert response.status_code == 302
    study = Project.objects.get(name="Study")
    assert (study.corpus, study.language, token_level(study.language)) == (None, "zh", "char")
    # Over a corpus (English here), the language chosen still decides.
    client.post(NEW, {"name": "Study 2", "recipe": "judgment", "corpus": corpus.pk,
                      "language": "zh"})
    assert Project.objects.get(name="Study 2").language == "zh"
    page = client.post(NEW, {"name": "Study 3", "recipe": "judgment"}).content.decode()
    assert "Choose the language of the answers the study rates." in page
    page = client.post(NEW, {"name": "News", "recipe": "newsqa", "language": "zh"}
                       ).content.decode()
    assert "Choose the corpus the newsqa recipe works on." in page
    client.post(NEW, {"name": "News", "recipe": "newsqa", "corpus": corpus.pk, "language": "zh"})
    assert Project.objects.get(name="News").language == "en"  # the corpus's
    assert not Project.objects.filter(name__in=["Study 3"]).exists()
