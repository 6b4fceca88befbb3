"""The judgment import's refusals in the reader's language (they were English): the real
DuReader, MS MARCO and SQuAD samples corrupted, each refusal read in Simplified Chinese and in
English with its file, line and field exact, on the import page too."""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import override

from annotation.models import Item, Project
from annotation.stages.judgment_import import (
    Upload,
    judgment_import,
    read_predictions,
    read_references,
)
from tests.annotation.test_judgment import draft  # noqa: F401
from tests.collector.corpus_support import DATASETS, DUREADER_DEV, DUREADER_TRAIN, SQUAD_V1

MARCO = DATASETS / "msmarco_qa_v2.1" / "synthetic"


def _refused(call: Callable[[], Any]) -> tuple[str, str]:
    """(English, Chinese) of the one message of the ValidationError ``call`` raises."""
    with pytest.raises(ValidationError) as caught:
        call()
    with override("en"):
        [english] = caught.value.messages
    with override("zh-hans"):
        [chinese] = caught.value.messages
    return english, chinese


def _train() -> list[dict]:
    return [json.loads(line) for line in DUREADER_TRAIN.read_text(encoding="utf-8").splitlines()]


def _upload(name: str, records: list[dict]) -> Upload:
    return Upload(name, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _predictions(records: list[dict]) -> list[dict]:
    return [{"question_id": r["question_id"], "answers": r["answers"][:1],
             "yesno_answers": (r.get("yesno_answers") or [])[:1]} for r in records]


def test_dureader_references():
    dev = Upload(DUREADER_DEV.name, DUREADER_DEV.read_text(encoding="utf-8"))
    assert _refused(lambda: read_references(dev)) == (
        "search.dev.sample.jsonl: line 8: field 'answers': no reference answer (a question "
        "needs at least one)",
        "search.dev.sample.jsonl：第 8 行：字段 'answers'：没有参考答案（每个问题至少需要一个）")

    records = _train()
    records[2]["question_type"] = "MAYBE"
    assert _refused(lambda: read_references(_upload("train.jsonl", records))) == (
        "train.jsonl: line 3: field 'question_type': 'MAYBE' is not one of YES_NO, ENTITY, "
        "DESCRIPTION",
        "train.jsonl：第 3 行：字段 'question_type'：'MAYBE' 不是 YES_NO, ENTITY, DESCRIPTION 之一")
    records = _train()
    records[4]["yesno_answers"] = ["Depends", "Yes"]
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 5 行：字段 'yesno_answers'：1 个答案却有 2 个标签")
    records = _train()
    del records[6]["question_type"]
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 7 行：字段 'question_type'：缺失（必填）")
    records = _train()
    records[7]["entity_answers"] = "Beijing"
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 8 行：字段 'entity_answers'：必须是由字符串列表组成的列表")
    records = _train()
    records[1]["question"] = " "
    records.append(records[0])
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 2 行：字段 'question'：必须有问题文本")
    records[1]["question"] = "？"
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 11 行：字段 'question_id'：问题 91159 出现了两次")
    records = _train()
    records[3]["question_id"] = ""
    assert _refused(lambda: read_references(_upload("train.jsonl", records)))[1] == (
        "train.jsonl：第 4 行：字段 'question_id'：必须是数字或非空字符串")
    assert _refused(lambda: read_references(Upload("blank.jsonl", "\n \n")))[1] == (
        "blank.jsonl：文件为空")


def test_json_lines_that_do_not_parse_name_line_and_column():
    lines = (MARCO / "eval_references.synthetic.jsonl").read_text(encoding="utf-8").splitlines()
    cut = lines[1][:lines[1].index('"answers":') + len('"answers":')]
    marco = Upload("refs.jsonl", "\n".join([lines[0], cut]) + "\n")
    assert _refused(lambda: read_references(marco)) == (
        f"refs.jsonl: line 2: invalid JSON: expected a value, found the end of the line "
        f"(column {len(cut) + 1})",
        f"refs.jsonl：第 2 行：无效的 JSON：应为一个值，实际为 行尾（第 {len(cut) + 1} 列）")
    listed = Upload("refs.jsonl", "\n".join([lines[0], "[1]"]))
    assert _refused(lambda: read_references(listed))[1] == (
        "refs.jsonl：第 2 行：每行应为一个 JSON 对象")
    nul = Upload("refs.jsonl", lines[0].replace("12 minutes", "12\\u0000minutes"))
    assert _refused(lambda: read_references(nul))[1] == (
        "refs.jsonl：第 1 行：字段 'answers[0]'：包含无法存储的 NUL 字符（\\u0000）")


def test_squad_references_and_predictions():
    text = SQUAD_V1.read_text(encoding="utf-8")
    quote = text.index('"Super Bowl 50 was')
    cut = Upload(SQUAD_V1.name, text[:quote + 200])
    assert _refused(lambda: read_references(cut)) == (
        f"dev-v1.1.sample.json: line 1, column {quote + 1}: invalid JSON: unterminated string",
        f"dev-v1.1.sample.json：第 1 行第 {quote + 1} 列：无效的 JSON：字符串未结束")
    deep = Upload("deep.json", '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert _refused(lambda: read_references(deep))[1] == (
        "deep.json：嵌套超过 100 层（列表和对象相互嵌套）")
    data = json.loads(text)
    data["data"][2]["paragraphs"][1]["qas"][3].pop("question")
    assert _refused(lambda: read_references(Upload("dev.json", json.dumps(data))))[1] == (
        "dev.json：字段 'data[2].paragraphs[1].qas[3]'：需要 'id' 和 'question'")

    data = json.loads(text)
    references = read_references(Upload("dev.json", text))
    predictions = {qa["id"]: qa["answers"][0]["text"] for a in data["data"]
                   for p in a["paragraphs"] for qa in p["qas"]}
    unknown = Upload("pred.json", json.dumps({**predictions, "nope": "x"}))
    assert _refused(lambda: read_predictions(unknown, references)) == (
        "pred.json: field 'nope': question nope is not in the references",
        "pred.json：字段 'nope'：问题 nope 不在参考答案中")
    first = next(iter(predictions))
    numbers = Upload("pred.json", json.dumps({**predictions, first: 50}))
    assert _refused(lambda: read_predictions(numbers, references))[1] == (
        f"pred.json：字段 '{first}'：答案必须是字符串")


def test_dureader_predictions():
    records = _train()
    references = read_references(_upload("train.jsonl", records))
    predictions = _predictions(records)
    predictions[4]["yesno_answers"] = ["Maybe"]
    assert _refused(lambda: read_predictions(_upload("sys.jsonl", predictions), references)) == (
        "sys.jsonl: line 5: field 'yesno_answers': 'Maybe' is not one of Yes, No, Depends",
        "sys.jsonl：第 5 行：字段 'yesno_answers'：'Maybe' 不是 Yes, No, Depends 之一")
    predictions = _predictions(records)
    predictions[2]["question_id"] = 1
    assert _refused(lambda: read_predictions(_upload("sys.jsonl", predictions), references))[1] == (
        "sys.jsonl：第 3 行：字段 'question_id'：问题 1 不在参考答案中")
    predictions = _predictions(records)
    predictions[6]["answers"] = "one answer"
    assert _refused(lambda: read_predictions(_upload("sys.jsonl", predictions), references))[1] == (
        "sys.jsonl：第 7 行：字段 'answers'：应为字符串列表")


@pytest.mark.django_db
def test_the_import_service_refuses_in_chinese(draft):  # noqa: F811
    records = _train()
    references, system = _upload("train.jsonl", records), _upload("a.jsonl", _predictions(records))
    assert _refused(lambda: judgment_import(project=draft, references=references,
                                            predictions=[("x", system), (" x ", system)])) == (
        "system name 'x' is given twice", "系统名称 'x' 出现了两次")
    short = _upload("short.jsonl", _predictions(records)[:-1])
    assert _refused(lambda: judgment_import(project=draft, references=references,
                                            predictions=[("x", short)])) == (
        "short.jsonl: system 'x' has no prediction for 1 question(s), e.g. 91204",
        "short.jsonl：系统 'x' 缺少 1 个问题的预测，例如 91204")
    assert _refused(lambda: judgment_import(project=draft, references=references,
                                            predictions=[("x" * 81, system)]))[1] == (
        "a.jsonl：系统名称超过 80 个字符")
    assert _refused(lambda: judgment_import(project=draft, references=references,
                                            predictions=[]))[1] == (
        "predictions：请至少添加一个系统的预测文件")
    Project.objects.filter(pk=draft.pk).update(status=Project.Status.ACTIVE)
    draft.refresh_from_db()
    assert _refused(lambda: judgment_import(project=draft, references=references,
                                            predictions=[("x", system)]))[1] == (
        "导入：只能在项目开始之前进行")
    assert not Item.objects.filter(project=draft).exists()


def _text(page: bytes) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.decode())))


@pytest.mark.django_db
def test_the_import_page_refuses_in_the_readers_language(draft, admin_user, client):  # noqa: F811
    client.force_login(admin_user)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    url = reverse("annotation:judgment_import", args=[draft.pk])
    records = _train()
    references = _upload("train.jsonl", records).text.encode()
    predictions = _upload("sys.jsonl", _predictions(records)).text.encode()

    def post(prediction_bytes: bytes) -> str:
        files = [io.BytesIO(references), io.BytesIO(prediction_bytes)]
        files[0].name, files[1].name = "train.jsonl", "sys.jsonl"
        response = client.post(url, {"references": files[0], "system": ["sys"],
                                     "predictions": [files[1]]})
        assert response.status_code == 400
        return _text(response.content)

    lines = predictions.split(b"\n")
    lines[1] = lines[1][:20] + b"\xff" + lines[1][20:]  # never in UTF-8
    page = post(b"\n".join(lines))
    assert ("sys.jsonl：第 2 行：不是有效的 UTF-8（第 21 列有错误字节）；请将文件转换为 UTF-8"
            in page)
    page = post(predictions.replace(b'"answers"', b'"answerz"', 1))
    assert "sys.jsonl：第 1 行：字段 'answers'：缺失（必填）" in page
    assert "missing" not in page
    assert not Item.objects.filter(project=draft).exists()


@pytest.mark.django_db
def test_a_release_that_cannot_give_references_is_refused_in_chinese(admin_user, settings,
                                                                     tmp_path):
    from annotation import engine
    from annotation.models import Release, ReleaseFile
    from annotation.stages.judgment_import import release_references

    settings.MEDIA_ROOT = str(tmp_path)
    marco = engine.project_create(name="Source", recipe="marco", user=admin_user)
    release = Release.objects.create(project=marco, version="1.0.0", formats=["dureader"],
                                     status=Release.Status.BUILDING, pseudonym_salt="s")
    assert _refused(lambda: release_references(release)) == (
        "release: Source 1.0.0 is not ready (status: Building)",
        "release：Source 1.0.0 尚未就绪（状态：构建中）")
    release.status = Release.Status.READY
    assert _refused(lambda: release_references(release))[1] == (
        "release：Source 1.0.0 没有 dureader 文件；请用 dureader 格式生成一个")
    ReleaseFile.objects.create(release=release, format="dureader", path="dureader.dev.jsonl",
                               split="dev", records=1, sha256="0" * 64, bytes=1)
    assert _refused(lambda: release_references(release))[1] == (
        "release：Source 1.0.0：其文件 dureader.dev.jsonl 不在存储中")
