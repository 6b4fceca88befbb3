"""The Chinese of the upload refusals' new msgids (gold items, members CSV, ReCO labels, the
import page's format detection and URL check), for tests that read them in Chinese while
the catalogue (locale/, kept apart) does not have them yet: the fixture adds to the active
catalogue only the msgids it lacks, so once the catalogue has them, it is what the tests
read (and this module can go, as ``stored_text_support`` did)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # gold items (the stage's gold page)
    "purpose: %(purpose)s is not one of %(choices)s": "purpose：%(purpose)s 不是 %(choices)s 之一",
    "stage %(stage)s (%(kind)s) has no gold measure: its answers cannot be scored against a "
    "gold answer":
        "阶段 %(stage)s（%(kind)s）没有金标准度量：其答案无法与金标准答案比较评分",
    "stage %(stage)s hands out whole batches: gold checks are not mixed into it; import "
    "training items for its qualification":
        "阶段 %(stage)s 按整批分发任务：金标准检查题不会混入其中；请为其资格测试导入训练题",
    "is missing (the task shows it)": "缺失（任务页面需要显示它）",
    "is missing: this stage's tasks show a document; give its external id":
        "缺失：该阶段的任务要显示一篇文档；请给出其外部 ID",
    "is not the shape the task needs (%(error)s)": "不是任务所需的结构（%(error)s）",
    "should be an object (an answer of the stage's kind)": "应为对象（该阶段类型的一个答案）",
    "does not fit the item (%(error)s)": "与该条目不符（%(error)s）",
    "stage %(stage)s: a gold item with one of these keys was added meanwhile; nothing was "
    "imported":
        "阶段 %(stage)s：其间已有人添加了使用其中某个键的金标准条目；未导入任何内容",
    "unknown field; the fields are %(fields)s": "未知字段；可用字段为 %(fields)s",
    "is longer than %(most)s characters": "超过 %(most)s 个字符",
    "%(key)s is on line %(line)s too": "%(key)s 也出现在第 %(line)s 行",
    "the stage already has a gold item %(key)s": "该阶段已有金标准条目 %(key)s",
    "no document %(id)s in the project's corpus": "项目的语料库中没有文档 %(id)s",
    "the file holds no gold item": "文件中没有金标准条目",
    "source project: take gold items from an earlier project, not from the project itself":
        "来源项目：请从较早的项目中选取金标准条目，而不是从本项目自身",
    "source project: %(source)s is a %(recipe)s project; stage %(stage)s needs records of a "
    "%(wanted)s project":
        "来源项目：%(source)s 是 %(recipe)s 项目；阶段 %(stage)s 需要 %(wanted)s 项目的记录",
    "stage %(stage)s (%(kind)s) cannot take gold items from consolidated records; stages that "
    "can: %(kinds)s. Import a JSONL file instead":
        "阶段 %(stage)s（%(kind)s）不能从汇总记录中选取金标准条目；可以的阶段：%(kinds)s。"
        "请改为导入 JSONL 文件",
    "limit: take at least one record": "limit：至少选取一条记录",
    "project %(project)s has no consolidated record usable as a new gold item (%(records)s "
    "record(s) read)":
        "项目 %(project)s 没有可用作新金标准条目的汇总记录（已读取 %(records)s 条记录）",
    "file: attach a JSONL file of gold items": "file：请附上金标准条目的 JSONL 文件",
    "%(file)s: larger than %(limit)s MiB": "%(file)s：大于 %(limit)s MiB",
    "project: choose the project to take gold items from":
        "project：请选择要从中选取金标准条目的项目",
    "limit: how many records to take (1 or more)": "limit：要选取多少条记录（1 条或更多）",
    "unknown action %(action)s": "未知操作 %(action)s",
    # the members CSV
    "the file is empty (expected a header row %(header)s)": "文件为空（应有表头行 %(header)s）",
    "a column has no name; the columns are %(columns)s": "有一列没有名称；可用的列为 %(columns)s",
    "unknown column; the columns are %(columns)s": "未知列；可用的列为 %(columns)s",
    "the column appears twice": "该列出现了两次",
    "no rows under the header": "表头下没有任何行",
    "%(value)s may only hold letters, digits and @ . + - _":
        "%(value)s 只能包含字母、数字和 @ . + - _",
    "%(value)s starts with %(start)s; start it with a letter, a digit or '_'":
        "%(value)s 以 %(start)s 开头；请以字母、数字或 '_' 开头",
    "%(value)s is not an e-mail address": "%(value)s 不是电子邮件地址",
    "no project named %(name)s": "没有名为 %(name)s 的项目",
    "is empty, and the upload is not for one project": "为空，而本次上传并非针对某一个项目",
    "%(username)s as %(role)s in %(project)s is on line %(line)s already":
        "%(username)s 以 %(role)s 身份加入 %(project)s 已出现在第 %(line)s 行",
    "%(email)s differs from %(earlier)s given for %(username)s on line %(line)s":
        "%(email)s 与第 %(line)s 行为 %(username)s 给出的 %(earlier)s 不同",
    "%(file)s: larger than %(limit)s KiB": "%(file)s：大于 %(limit)s KiB",
    # the ReCO labelled queries
    "expected 'label<TAB>text' or a JSON object": "应为 'label<TAB>text' 或一个 JSON 对象",
    "%(value)s is not a label (use true/false, 1/0 or yes/no)":
        "%(value)s 不是标签（请使用 true/false、1/0 或 yes/no）",
    "the file holds no labelled query": "文件中没有已标注的查询",
    "language: %(value)s is not one of %(choices)s": "language：%(value)s 不是 %(choices)s 之一",
    "training needs questions and non-questions; the file has %(questions)s question(s) and "
    "%(others)s non-question(s)":
        "训练需要问题和非问题两类；该文件有 %(questions)s 个问题和 %(others)s 个非问题",
    "training: %(error)s": "训练：%(error)s",
    "labelled: attach a file of labelled queries": "labelled：请附上已标注查询的文件",
    # the import page's format detection
    "the file name ends in .story": "文件名以 .story 结尾",
    "JSON with 'data' articles whose 'paragraphs' hold 'qas'":
        "JSON，含 'data' 文章，其 'paragraphs' 中有 'qas'",
    "JSON with 'storyId' records (NewsQA combined)": "JSON，含 'storyId' 记录（NewsQA 合并文件）",
    "JSON Lines with 'question' and retrieved 'documents' (DuReader)":
        "JSON Lines，含 'question' 和检索到的 'documents'（DuReader）",
    "JSON with 'query' and 'passages' (MS MARCO)": "JSON，含 'query' 和 'passages'（MS MARCO）",
    "JSON with 'query', 'doc' and 'alternatives' (ReCO)":
        "JSON，含 'query'、'doc' 和 'alternatives'（ReCO）",
    "JSON Lines with a '%(key)s' and no 'body': a query list":
        "JSON Lines，含 '%(key)s' 而没有 'body'：查询列表",
    "JSON Lines of other records (fields: %(fields)s); map them to id and body":
        "其他记录的 JSON Lines（字段：%(fields)s）；请将其映射到 id 和 body",
    "text with '@highlight' lines (a CNN story)": "含 '@highlight' 行的文本（CNN 新闻）",
    "CSV with 'story_id' and 'story_text' columns (NewsQA combined)":
        "CSV，含 'story_id' 和 'story_text' 列（NewsQA 合并文件）",
    "%(format)s with columns %(columns)s": "%(format)s，列为 %(columns)s",
    "plain text lines: one query a line": "纯文本行：每行一个查询",
    # Python's URL parser, in our words
    "its host has an unmatched square bracket, or text before '[' or after ']' (an IPv6 "
    "address is written as [2001:db8::1])":
        "其主机名中有不成对的方括号，或 '[' 之前、']' 之后有文本（IPv6 地址应写成 [2001:db8::1]）",
    "%(host)s in square brackets is not an IPv6 address": "方括号中的 %(host)s 不是 IPv6 地址",
    "the host in square brackets is not a valid IPvFuture address (v<hex digits>.<address>)":
        "方括号中的主机不是有效的 IPvFuture 地址（v<十六进制数字>.<地址>）",
    "an IPv4 address is written without square brackets": "IPv4 地址不应写在方括号中",
    "its host name has characters that become '/', '?', '#', '@' or ':' once normalised (NFKC)":
        "其主机名中有经 NFKC 规范化后会变成 '/'、'?'、'#'、'@' 或 ':' 的字符",
}


@pytest.fixture
def upload_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the msgids of ``ZH`` it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
