"""The ReCO filters' texts in the reader's language: their refusals of a stage's parameters
(raised by ``collector.filters``, which has no Django: a msgid and its parameters, translated
by the stage) and the query filter's verdict reasons on the project page (stored with the
verdict as a msgid and parameters; a verdict stored before shows its English reason)."""
# ruff: noqa: F811 (fixtures imported from other test modules are arguments here)

from __future__ import annotations

import html
import subprocess
import sys

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import override

from annotation.models import Item
from annotation.stages import stage_kind
from tests.annotation.test_reco import make_project  # noqa: F401 - a fixture


def _refusal(kind: str, params: dict) -> str:
    with pytest.raises(ValidationError) as refused:
        stage_kind(kind).clean_params(params)
    return refused.value.messages[0]


# (stage kind, parameters, the English refusal, the Chinese)
REFUSALS = [
    ("reco_query_filter", {"blocklists": {"en": "celery"}},
     "stage reco_query_filter: blocklists['en'] must be a list of terms; got 'celery'",
     "阶段 reco_query_filter：blocklists['en'] 必须是词语列表；实际为 'celery'"),
    ("reco_query_filter", {"steps": ["intent", "vibes"]},
     "stage reco_query_filter: steps must be distinct names from ('intent', 'blocklist', "
     "'yesno'); got ('intent', 'vibes')",
     "阶段 reco_query_filter：steps 必须是 ('intent', 'blocklist', 'yesno') 中互不重复的名称；"
     "实际为 ('intent', 'vibes')"),
    ("reco_query_filter", {"intent_mode": "model"},
     "stage reco_query_filter: intent_mode 'model' needs intent_models['en']",
     "阶段 reco_query_filter：intent_mode 'model' 需要 intent_models['en']"),
    ("reco_query_filter", {"language": "fr"},
     "stage reco_query_filter: language must be one of en, zh, auto; got 'fr'",
     "阶段 reco_query_filter：language 必须是 en, zh, auto 之一；实际为 'fr'"),
    ("reco_query_filter", {"yesno_features": {"en": [{"name": "x", "pattern": "(",
                                                      "weight": 1}]}},
     "stage reco_query_filter: yes/no feature 'x': bad pattern: missing ), unterminated "
     "subpattern at position 0",
     "阶段 reco_query_filter：是非特征 'x'：正则表达式有误：missing ), unterminated subpattern "
     "at position 0"),
    ("reco_doc_filter", {"rules": ["contains", "vibes"]},
     "stage reco_doc_filter: rules must be distinct names from ('contains', 'ngram', "
     "'window'); got ('contains', 'vibes')",
     "阶段 reco_doc_filter：rules 必须是 ('contains', 'ngram', 'window') 中互不重复的名称；"
     "实际为 ('contains', 'vibes')"),
]


@pytest.mark.parametrize(("kind", "params", "english", "chinese"), REFUSALS)
def test_a_filters_refusal_of_a_parameter_is_in_the_admins_language(
        kind, params, english, chinese):
    with override("en"):
        assert _refusal(kind, params) == english
    with override("zh-hans"):
        assert _refusal(kind, params) == chinese


def test_the_filters_stay_free_of_django():
    """The messages are msgids and parameters, not gettext calls: importing the filters
    loads no Django."""
    code = ("import sys, collector.filters, collector.filters.messages;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


NOT_A_QUESTION = "celery soup recipe"
BLOCKED = "is celery soup safe"


def test_the_project_page_gives_the_query_filters_reasons_in_the_readers_language(
        make_project, client_for, admin_user):
    project = make_project([NOT_A_QUESTION, BLOCKED, "is sussex in england"],
                           params={2: {"blocklists": {"en": ["celery"]}}})
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])
    english = html.unescape(client.get(url).content.decode())
    assert ("intent: not a question: no question word, auxiliary inversion, request or "
            "question mark") in english
    assert "blocklist: inappropriate content: blocklisted term 'celery'" in english

    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    chinese = html.unescape(client.get(url).content.decode())
    assert "不是问题：没有疑问词、助动词倒装、请求或问号" in chinese
    assert "不当内容：屏蔽词“celery”" in chinese
    assert "not a question" not in chinese and "blocklisted term" not in chinese

    # a verdict stored before its reason was a msgid shows its English reason as it is
    item = Item.objects.get(project=project, stage__kind="reco_query_filter",
                            data__query=BLOCKED)
    del item.result["reason_text"]
    item.result["reason"] = "inappropriate content: blocklisted term 'celery' (old run)"
    item.save(update_fields=["result"])
    chinese = html.unescape(client.get(url).content.decode())
    assert "inappropriate content: blocklisted term 'celery' (old run)" in chinese
    assert "不是问题：没有疑问词、助动词倒装、请求或问号" in chinese


def test_the_document_filters_reasons_in_the_readers_language(
        make_project, client_for, admin_user):
    from tests.annotation.test_reco import QUERIES

    project = make_project(QUERIES)
    client = client_for(admin_user)
    url = reverse("annotation:project_detail", args=[project.pk])
    english = html.unescape(client.get(url).content.decode())
    assert "dropped: the whole query 'pregnant women eat celery' occurs in the document" in english
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    chinese = html.unescape(client.get(url).content.decode())
    assert "已丢弃：整个查询“pregnant women eat celery”出现在文档中" in chinese
    assert "dropped: the whole query" not in chinese
    # a document dropped before its reason was a msgid keeps its English
    item = Item.objects.filter(project=project, stage__kind="reco_doc_filter",
                               result__dropped__gt=0).first()
    for doc in item.result["documents"]:
        doc.pop("reason_text")
    item.save(update_fields=["result"])
    chinese = html.unescape(client.get(url).content.decode())
    assert "dropped: the whole query '" in chinese


def test_verdict_reasons_are_stored_as_msgids_with_english_beside():
    from collector.filters import QueryFilter
    from collector.stored_text import stored_text_render

    verdict = QueryFilter(language="en").check("is celery soup safe to eat").to_dict()
    assert verdict["accepted"]
    assert verdict["reason"].startswith("yes/no question: score ")
    assert verdict["reason_text"]["msgid"] == (
        "yes/no question: score %(score)s >= %(threshold)s (%(features)s)")
    intent = verdict["steps"][0]
    assert intent["reason"] == "question: auxiliary-verb inversion 'is'"
    assert intent["reason_text"] == {"msgid": "question: %(rule)s '%(matched)s'", "params": {
        "rule": {"msgid": "auxiliary-verb inversion", "params": {}}, "matched": "is"}}
    with override("en"):
        assert stored_text_render(intent["reason_text"]) == intent["reason"]
