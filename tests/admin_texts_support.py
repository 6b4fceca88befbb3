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
    # the item page's result fields
    "Agreed": "一致",
    "Consensus": "共识",
    "Dropped": "丢弃",
    "Failed step": "未通过的步骤",
    "Kept": "保留",
    "Matched": "匹配",
    "Outcome": "结果",
    "Passage": "段落",
    "Passage text": "段落文本",
    "Passed": "通过",
    "Rank": "排名",
    "Reasons": "原因",
    "Rule": "规则",
    "Scores": "分数",
    "Step": "步骤",
    "Validated": "已验证",
    # the job page's figures (stage runs and other jobs)
    "%(name)s: %(value)s.": "%(name)s：%(value)s。",
    "Articles": "文章",
    "Candidates": "候选答案",
    "Checked": "已检查",
    "Consolidated": "已整合",
    "Count": "数量",
    "Documents created": "创建的文档",
    "Documents dropped": "丢弃的文档",
    "Documents kept": "保留的文档",
    "Flagged": "已标记",
    "New": "新增",
    "Queries left without documents": "没有剩余文档的查询",
    "Refused": "拒绝",
    "Report": "报告",
    "Retrieved": "已检索",
    "Sampled": "已抽样",
    "Splits": "划分",
    "Table2 overall": "表 2 总体",
    "Timings": "用时",
    "To review": "待复核",
    "To validation": "待验证",
    "Weighed": "已加权",
    "Without documents": "没有文档",
    "Without passages": "没有段落",
    "report #%(report)s over %(count)s rated candidate(s)":
        "报告 #%(report)s，涵盖 %(count)s 个已评分的候选答案",
    # the workers pages: a submission in a few words, the plots
    "no answer in the article": "文章中没有答案",
    "the question makes no sense": "问题没有意义",
    "rejected the query": "拒绝了该查询",
    "all answers are bad": "所有答案都很差",
    "chose answer %(n)s": "选择了答案 %(n)s",
    "not answerable by the passages": "这些段落无法回答",
    "selected passages %(ranks)s": "选择了段落 %(ranks)s",
    "answer %(n)s: %(decision)s": "答案 %(n)s：%(decision)s",
    "chose label %(label)s": "选择了标注 %(label)s",
    "Submissions per hour": "每小时的提交数",
    "Submissions per day": "每天的提交数",
    "%(title)s (%(when)s)": "%(title)s（%(when)s）",
    "accuracy %(value)s": "准确率 %(value)s",
    "Gold accuracy after the first check": "第一次检查后的标准答案准确率",
    "Gold accuracy after each check (cumulative)": "每次检查后的标准答案准确率（累计）",
    # studies, inspections, worker actions: refusals of bad input
    "platform: %(platform)s is not one of %(choices)s":
        "platform: %(platform)s 不是 %(choices)s 之一",
    "%(field)s: %(code)s is not a code (letters, digits, '_' and '-', at most 64)":
        "%(field)s: %(code)s 不是有效的代码（字母、数字、“_”和“-”，最多 64 个字符）",
    "quota: %(quota)s tasks per session; give at least 1 (or none for no limit)":
        "quota: 每次会话 %(quota)s 个任务；请至少填 1（或留空表示不限）",
    "quota: %(quota)s tasks per session is more than %(most)s; give none for no limit":
        "quota: 每次会话 %(quota)s 个任务超过了 %(most)s；请留空表示不限",
    "platform: MTurk pays bonuses in US dollars only, and this project's payments were "
    "already exported in %(currency)s: its MTurk workers could not be paid":
        "platform: MTurk 只以美元支付奖金，而本项目的支付已经以 %(currency)s 导出："
        "其 MTurk 工作者将无法得到支付",
    "name: at most %(most)s characters (%(given)s given)":
        "name: 最多 %(most)s 个字符（给出了 %(given)s 个）",
    "verdict: %(verdict)s is not one of accept, return":
        "verdict: %(verdict)s 不是 accept、return 之一",
    "item %(item)s: unknown rule(s) %(rules)s": "条目 %(item)s：未知规则 %(rules)s",
    "comment on item %(item)s: it is not in the sample":
        "对条目 %(item)s 的评论：该条目不在样本中",
    "action: %(action)s is not one of resume, retrain, pause, block":
        "action: %(action)s 不是 resume、retrain、pause、block 之一",
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
