"""The Chinese of the admin and checker texts' new msgids (the stage parameters' refusals,
the payload labels of the review and item pages, the NUL refusals), for tests that read them
in Chinese while the catalogue (locale/, kept apart) does not have them yet: the fixture
adds to the active catalogue only the msgids it lacks, so once the catalogue has them, it
is what the tests read (and this module can go, as ``answer_texts_support`` did)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # stage parameters (Param.clean, StageKind.clean_params, the split shares, recipes)
    "parameter %(name)s: expected %(type)s, got %(value)s":
        "参数 %(name)s：应为 %(type)s，实际为 %(value)s",
    "parameter %(name)s: %(value)s is below %(minimum)s":
        "参数 %(name)s：%(value)s 小于最小值 %(minimum)s",
    "parameter %(name)s: %(value)s is above %(maximum)s":
        "参数 %(name)s：%(value)s 大于最大值 %(maximum)s",
    "parameter %(name)s: %(value)s is not one of %(choices)s":
        "参数 %(name)s：%(value)s 不是 %(choices)s 之一",
    "stage %(stage)s: unknown parameter(s) %(unknown)s; known: %(known)s":
        "阶段 %(stage)s：未知参数 %(unknown)s；可用的参数：%(known)s",
    "stage %(stage)s: the split shares (%(shares)s) add up to %(total)s, not 1":
        "阶段 %(stage)s：划分比例（%(shares)s）之和为 %(total)s，而不是 1",
    "stage %(stage)s: %(detail)s": "阶段 %(stage)s：%(detail)s",
    "stage %(order)s (%(name)s): %(detail)s": "阶段 %(order)s（%(name)s）：%(detail)s",
    "unknown stage kind %(kind)s; known: %(known)s":
        "未知的阶段类型 %(kind)s；可用的类型：%(known)s",
    # payload labels (review, inspection and item pages)
    "Marked": "已标记",
    "Rejected": "已拒绝",
    "Chose": "选择了",
    "Correct answer": "正确答案",
    "Selected passages": "选中的段落",
    "(no such passage)": "（没有这个段落）",
    "answer %(n)s": "答案 %(n)s",
    "label %(n)s": "标注 %(n)s",
    "option %(n)s": "选项 %(n)s",
    "Choice": "选择",
    "Conflict": "冲突",
    "Conflict reason": "冲突原因",
    "Decisions": "决定",
    "Document id": "文档 ID",
    "Entities": "实体",
    "Evidence text": "证据文本",
    "Exclusions": "排除原因",
    "No answer": "无答案",
    "Note": "备注",
    "Query type": "查询类型",
    "Question type": "问题类型",
    "Selected": "已选",
    "Spans": "片段",
    "Unanswerable": "无法回答",
    "Yes / no label": "是 / 否标签",
    # the NUL refusals, a page's and the API's
    "The URL path contains a NUL character (%%00), which no URL here accepts.":
        "URL 路径包含 NUL 字符（%%00），这里的任何 URL 都不接受。",
    "The query parameter %(name)s contains a NUL character (%%00), which no URL here accepts.":
        "查询参数 %(name)s 包含 NUL 字符（%%00），这里的任何 URL 都不接受。",
    "The form field %(name)s contains a NUL character (%%00), which no form here accepts.":
        "表单字段 %(name)s 包含 NUL 字符（%%00），这里的任何表单都不接受。",
    "A form field's name contains a NUL character (%%00), which no form here accepts.":
        "某个表单字段的名称包含 NUL 字符（%%00），这里的任何表单都不接受。",
    "Not found: no API endpoint or object at %(path)s.":
        "未找到：%(path)s 处没有 API 端点或对象。",
    "Request refused": "请求被拒绝",
}


@pytest.fixture
def admin_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the msgids of ``ZH`` it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
