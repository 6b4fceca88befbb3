"""A ReCO annotator whose interface is in Simplified Chinese: the task page, its guidelines,
a refused submit's message next to its field, and the messages after submitting."""

from __future__ import annotations

import re

from django.urls import reverse

from annotation.models import Assignment
from tests.annotation.test_reco import TRAIN_ONLY, join, make_project, people  # noqa: F401


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_chinese_annotator_works_a_reco_task_in_chinese(make_project, people,  # noqa: F811
                                                           client_for, committed):
    project = make_project(["孕妇能吃芹菜吗", "冰血暴好看吗"],
                           params={**TRAIN_ONLY, 6: {"batch_size": 2}})
    join(project, people)
    client = client_for(people["ann1"])
    home = reverse("annotation:annotator_home")
    client.post(reverse("set_language"), {"language": "zh-hans", "next": home})
    page = _text(client.get(home).content.decode())
    assert "我的任务" in page and "下一个任务" in page and "My tasks" not in page
    url = client.post(reverse("annotation:task_next"))["Location"]
    task = Assignment.objects.get(worker=people["ann1"], status="active")
    html = client.get(url).content.decode()
    page = _text(html)
    for chinese in ("问题", "证据：", "尚未选择。", "提交", "标注指南", "四条证据原则",
                    "拒绝该问题：不能用是 / 否 / 不确定回答", "肯定（是）", "否定（否）", "不确定",
                    "选择文字的按键", "证据和答案（按批次）"):
        assert chinese in page, chinese
    for english in ("Submit", "Evidence:", "The four evidence principles", "Reject the question",
                    "Evidence and answers"):
        assert english not in page, english
    assert '<html lang="zh-hans">' in html and task.item.data["query"] in page
    # a refused submit says what is missing in Chinese, next to its field
    form = {"doc": "0", "start": "0", "end": "4", "alt_positive": "能", "alt_negative": "能",
            "alt_uncertain": "无法确定", "answer": "positive"}
    refused = client.post(url, form)
    assert refused.status_code == 400
    field = re.search(r'data-testid="field-error-alternatives">(.*?)</p>',
                      refused.content.decode()).group(1)
    assert field == "三个候选答案必须互不相同"
    with committed():
        done = client.post(url, {**form, "alt_negative": "不能"}, follow=True)
    assert "已保存。这是你的下一个任务。" in _text(done.content.decode())
    assert task.item.submissions.get().payload["alternatives"]["negative"] == "不能"


def test_the_same_task_page_stays_english_for_an_english_annotator(
        make_project, people, client_for):  # noqa: F811
    project = make_project(["孕妇能吃芹菜吗"], params={**TRAIN_ONLY, 6: {"batch_size": 2}})
    join(project, people)
    client = client_for(people["ann2"])
    url = client.post(reverse("annotation:task_next"))["Location"]
    page = _text(client.get(url).content.decode())
    assert "Submit" in page and "The four evidence principles" in page
    assert "提交" not in page and "四条证据原则" not in page
