"""The refusals of the files an admin uploads to a project, read in the reader's language
(they were English on the Chinese pages): gold items, the members CSV and the ReCO labelled
queries, each framed as the corpus import's (``file: line 3: field 'x': problem``) with its
line and field exact, in the services and on the pages."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.translation import override

from annotation import engine, gold, invites
from annotation.models import Item, Project, ProjectMember
from annotation.stages import reco
from tests.annotation.test_gold import ARTICLE, TRAINING, build, gold_line
from tests.collector.corpus_support import QUERIES_EN


def _refused(call: Callable[[], Any]) -> tuple[list[str], list[str]]:
    """(English, Chinese) of the messages of the ValidationError ``call`` raises."""
    with pytest.raises(ValidationError) as caught:
        call()
    with override("en"):
        english = caught.value.messages
    with override("zh-hans"):
        chinese = caught.value.messages
    return english, chinese


def _chinese(client) -> None:
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})


def _text(response) -> str:
    return html.unescape(response.content.decode())


# Gold items ---------------------------------------------------------------------------------

def test_gold_items_refused_line_by_line_in_chinese(news_corpus, workers, admin_user,
                                                   committed, settings):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    cut = gold_line(*TRAINING[2])[:40]  # inside the question's text
    opened = cut.rindex('"') + 1  # where the string that does not end starts
    lines = [
        gold_line(*TRAINING[0]),
        gold_line(*TRAINING[1], document="no-such-story"),
        json.dumps({"key": "q", "data": {}, "document": ARTICLE,
                    "expected": {"no_answer": True}}),
        gold_line(*TRAINING[0]),
        cut,
        gold_line("extra", "Who?", "Dario Weiss", "", colour="red"),
        json.dumps({"key": "nodoc", "data": {"question": "Who?"}}),
        gold_line("nul", "Who\u0000?", "Dario Weiss", ""),
        gold_line("noexp", "Who?", "Dario Weiss", "", expected=None).replace(
            ', "expected": null', ""),
        gold_line("", "Who?", "Dario Weiss", ""),
    ]
    before = Item.objects.count()
    english, chinese = _refused(lambda: gold.gold_items_import(
        stage=answer, text="\n".join(lines), name="gold.jsonl", purpose="check"))
    assert chinese == [
        "gold.jsonl：第 2 行：字段 'document'：项目的语料库中没有文档 'no-such-story'",
        "gold.jsonl：第 3 行：字段 'data.question'：缺失（任务页面需要显示它）",
        "gold.jsonl：第 4 行：字段 'key'：'weiss' 也出现在第 1 行",
        f"gold.jsonl：第 5 行：无效的 JSON：字符串未结束（第 {opened} 列）",
        "gold.jsonl：第 6 行：字段 'colour'：未知字段；可用字段为 key, data, document, "
        "expected, reason",
        "gold.jsonl：第 7 行：字段 'document'：缺失：该阶段的任务要显示一篇文档；请给出其外部 ID",
        "gold.jsonl：第 8 行：字段 'data.question'：包含无法存储的 NUL 字符（\\u0000）",
        "gold.jsonl：第 9 行：字段 'expected'：缺失（必填）",
        "gold.jsonl：第 10 行：字段 'key'：为空",
    ]
    assert english[1] == ("gold.jsonl: line 3: field 'data.question': is missing (the task "
                          "shows it)")
    assert Item.objects.count() == before

    with override("zh-hans"):  # said in the language active when refused
        _, [kind] = _refused(lambda: gold.gold_items_import(
            stage=answer, text=gold_line(*TRAINING[0]), name="gold.jsonl", purpose="exam"))
    assert kind == "purpose：'exam' 不是 check, training 之一"
    _, [empty] = _refused(lambda: gold.gold_items_import(
        stage=answer, text="\n \n", name="gold.jsonl", purpose="check"))
    assert empty == "gold.jsonl：文件中没有金标准条目"


def test_the_gold_page_refuses_in_chinese(news_corpus, workers, admin_user, committed,
                                          settings, client_for):
    project, answer = build(news_corpus, workers, admin_user, committed, settings)
    client = client_for(admin_user)
    _chinese(client)
    url = reverse("annotation:stage_gold", args=[answer.pk])
    good = (gold_line(*TRAINING[0]) + "\n").encode()
    bad_byte = good + gold_line(*TRAINING[1]).encode().replace(b"will", b"\xffill", 1)
    page = client.post(url, {"action": "import", "purpose": "check",
                             "file": SimpleUploadedFile("check.jsonl", bad_byte)})
    assert page.status_code == 400
    column = gold_line(*TRAINING[1]).index("will") + 1
    assert (f"check.jsonl：第 2 行：不是有效的 UTF-8（第 {column} 列有错误字节）；请将文件转换为 "
            "UTF-8") in _text(page)
    numbered = {**json.loads(gold_line(*TRAINING[1])), "key": 7}
    taken = good + (json.dumps(numbered) + "\n").encode()
    page = client.post(url, {"action": "import", "purpose": "check",
                             "file": SimpleUploadedFile("check.jsonl", taken)})
    assert "check.jsonl：第 2 行：字段 'key'：应为字符串" in _text(page)
    page = client.post(url, {"action": "import", "purpose": "check"})
    assert "file：请附上金标准条目的 JSONL 文件" in _text(page)
    page = client.post(url, {"action": "from_project", "purpose": "check", "project": "",
                             "limit": "5"})
    assert "project：请选择要从中选取金标准条目的项目" in _text(page)
    page = client.post(url, {"action": "from_project", "purpose": "check",
                             "project": project.pk, "limit": "5"})
    assert "来源项目：请从较早的项目中选取金标准条目，而不是从本项目自身" in _text(page)
    assert not Item.objects.filter(stage=answer).exclude(gold="").exists()


# The members CSV ----------------------------------------------------------------------------

@pytest.fixture
def harbor(db):
    return Project.objects.create(name="Harbor news", recipe="newsqa")


def test_members_csv_refused_row_by_row_in_chinese(harbor):
    text = ("username,email,role,project\n"
            "kofi,kofi@uni.edu,annotator,\n"
            ",nobody@uni.edu,annotator,\n"
            "ines,ines(at)uni.edu,checker,\n"
            "KOFI,kofi@uni.edu,annotator,\n"
            "=cmd,,annotator,\n"
            "mei,mei@uni.edu,boss,\n"
            "li,li@uni.edu,checker,Atlantis\n"
            "kofi,kofi@else.edu,checker,\n"
            "tomas,,annotator\n")
    english, chinese = _refused(lambda: invites.members_import(
        text=text, name="roster.csv", project=harbor))
    assert chinese == [
        "roster.csv：第 10 行：有 3 列，表头有 4 列",
        "roster.csv：第 3 行：字段 'username'：为空",
        "roster.csv：第 4 行：字段 'email'：'ines(at)uni.edu' 不是电子邮件地址",
        "roster.csv：第 5 行：字段 'username'：'KOFI' 以 annotator 身份加入 'Harbor news' "
        "已出现在第 2 行",
        "roster.csv：第 6 行：字段 'username'：'=cmd' 只能包含字母、数字和 @ . + - _",
        "roster.csv：第 7 行：字段 'role'：'boss' 不是 annotator, checker, admin 之一",
        "roster.csv：第 8 行：字段 'project'：没有名为 'Atlantis' 的项目",
        "roster.csv：第 9 行：字段 'email'：'kofi@else.edu' 与第 2 行为 'kofi' 给出的 "
        "'kofi@uni.edu' 不同",
    ]
    assert english[1] == "roster.csv: line 3: field 'username': is empty"
    _, header = _refused(lambda: invites.members_import(
        text="username,Username,team,\nkofi,kofi,x,\n", name="roster.csv", project=harbor))
    assert header == [
        "roster.csv：第 1 行：字段 'team'：未知列；可用的列为 username, email, role, project",
        "roster.csv：第 1 行：有一列没有名称；可用的列为 username, email, role, project",
        "roster.csv：第 1 行：字段 'email'：缺少该列",
        "roster.csv：第 1 行：字段 'role'：缺少该列",
        "roster.csv：第 1 行：字段 'username'：该列出现了两次",
    ]
    _, plus = _refused(lambda: invites.members_import(
        text="username,email,role\n+1-1,,annotator\n", name="roster.csv", project=harbor))
    assert plus == ["roster.csv：第 2 行：字段 'username'：'+1-1' 以 '+' 开头；请以字母、数字或 "
                    "'_' 开头"]
    _, empty = _refused(lambda: invites.members_import(text="", name="roster.csv",
                                                       project=harbor))
    assert empty == ["roster.csv：文件为空（应有表头行 username,email,role）"]
    _, bare = _refused(lambda: invites.members_import(text="username,email,role\n",
                                                      name="roster.csv", project=harbor))
    assert bare == ["roster.csv：表头下没有任何行"]
    _, none = _refused(lambda: invites.members_import(
        text="username,email,role\nkofi,,annotator\n", name="roster.csv"))
    assert none == ["roster.csv：第 2 行：字段 'project'：为空，而本次上传并非针对某一个项目"]
    assert not ProjectMember.objects.exists()


def test_the_members_page_refuses_an_upload_in_chinese(harbor, admin_user, client_for):
    client = client_for(admin_user)
    _chinese(client)
    url = reverse("annotation:members_import", args=[harbor.pk])
    text = "username,email,role\nkofi,kofi@uni.edu,annotator\nmei,m\xe9i@uni.edu,checker\n"
    page = client.post(url, {"file": SimpleUploadedFile("roster.csv",
                                                        text.encode("latin-1"))})
    assert page.status_code == 400
    assert ("roster.csv：第 3 行：不是有效的 UTF-8（第 6 列有错误字节）；请将文件转换为 UTF-8"
            in _text(page))
    page = client.post(url, {"file": SimpleUploadedFile("roster.csv", text.replace(
        "checker", "boss").encode())})
    assert ("roster.csv：第 3 行：字段 'role'：'boss' 不是 annotator, checker, admin 之一"
            in _text(page))
    page = client.post(url, {})
    assert "CSV 文件：该字段是必填项。" in _text(page)
    assert not ProjectMember.objects.exists()


# The ReCO labelled queries ------------------------------------------------------------------

def _labelled() -> list[str]:
    """Real questions (Natural Questions, open dev sample) labelled as such, a JSON object a
    line, then queries that are not questions, tab-separated."""
    questions = [json.loads(line)["question"] for line in
                 QUERIES_EN.read_text(encoding="utf-8").splitlines()[:12]]
    return ([json.dumps({"text": q, "label": "question"}) for q in questions]
            + [f"not_question\t{q}" for q in ("cheap flights paris", "pizza near me",
                                             "facebook login", "nba scores")])


def test_labelled_queries_refused_in_chinese():
    lines = _labelled()

    def read(changed: list[str]) -> tuple[str, str]:
        english, chinese = _refused(lambda: reco.labelled_queries_read(
            "\n".join(changed), name="labels.txt"))
        return english[0], chinese[0]

    maybe = [*lines[:4], lines[4].replace('"question"}', '"maybe"}'), *lines[5:]]
    assert read(maybe) == (
        "labels.txt: line 5: field 'label': 'maybe' is not a label (use true/false, 1/0 or "
        "yes/no)",
        "labels.txt：第 5 行：字段 'label'：'maybe' 不是标签（请使用 true/false、1/0 或 yes/no）")
    assert read([*lines[:13], "pizza near me", *lines[14:]])[1] == (
        "labels.txt：第 14 行：应为 'label<TAB>text' 或一个 JSON 对象")
    assert read([*lines[:2], lines[2][:-2], *lines[3:]])[1] == (
        f"labels.txt：第 3 行：无效的 JSON：字符串未结束（第 {len(lines[2]) - 10} 列）")
    assert read([lines[0], '{"label": "question"}'])[1] == (
        "labels.txt：第 2 行：字段 'text'：缺失（必填）")
    assert read([lines[0], '{"text": " ", "label": "question"}'])[1] == (
        "labels.txt：第 2 行：字段 'text'：为空")
    assert read([lines[0], '{"text": ["who", "won"]}'])[1] == (
        "labels.txt：第 2 行：字段 'text'：应为字符串")
    assert read(["", "  "])[1] == "labels.txt：文件中没有已标注的查询"


@pytest.mark.django_db
def test_the_labels_page_refuses_in_chinese(admin_user, client_for):
    project = engine.project_create(name="trained", recipe="reco", user=admin_user,
                                    params={2: {"language": "en"}})
    client = client_for(admin_user)
    _chinese(client)
    url = reverse("annotation:reco_filter_labels", args=[project.pk])

    def post(name: str, data: bytes, language: str = "en") -> str:
        return _text(client.post(url, {"action": "train", "language": language,
                                       "labelled": SimpleUploadedFile(name, data)},
                                 follow=True))

    lines = _labelled()
    latin = "\n".join([*lines[:3], "not_question\tcaf\xe9 near me"]).encode("latin-1")
    assert ("labels.txt：第 4 行：不是有效的 UTF-8（第 17 列有错误字节）；请将文件转换为 UTF-8"
            in post("labels.txt", latin))
    assert ("labels.txt：第 2 行：字段 'label'：'maybe' 不是标签（请使用 true/false、1/0 或 "
            "yes/no）" in post("labels.txt", f"{lines[0]}\nmaybe\tpizza near me\n".encode()))
    only_questions = "\n".join(lines[:12]).encode()
    assert ("训练需要问题和非问题两类；该文件有 12 个问题和 0 个非问题"
            in post("labels.jsonl", only_questions))
    assert ("language：'fr' 不是 en, zh 之一"
            in post("labels.jsonl", "\n".join(lines).encode(), language="fr"))
    page = _text(client.post(url, {"action": "train", "language": "en"}, follow=True))
    assert "labelled：请附上已标注查询的文件" in page
    stage = project.stages.get(kind="reco_query_filter")
    assert "intent_models" not in stage.params or not stage.params["intent_models"]
