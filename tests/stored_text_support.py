"""The Chinese of the import failures' new msgids, for tests that read them in Chinese while
the catalogue (locale/, kept apart) does not have them yet: the fixture adds to the active
catalogue only the msgids it lacks, so once the catalogue has them, it is what the tests
read (and this module can go, as its predecessor did)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # places
    "%(path)s (line %(line)s)": "%(path)s（第 %(line)s 行）",
    "%(path)s (article at line %(line)s)": "%(path)s（文章起于第 %(line)s 行）",
    "%(path)s (story at line %(line)s)": "%(path)s（新闻起于第 %(line)s 行）",
    "row %(row)s": "行 %(row)s",
    # Python's JSON and CSV parsers, in our words
    "expected a value, found %(found)s": "应为一个值，实际为 %(found)s",
    "unterminated string": "字符串未结束",
    "control character %(found)s inside a string: write it as an escape (\\n, \\t, \\u0000)":
        "字符串中有控制字符 %(found)s：请写成转义形式（\\n、\\t、\\u0000）",
    "invalid escape %(escape)s in a string": "字符串中有无效的转义 %(escape)s",
    "the end of the line": "行尾",
    "the end of the value": "值的末尾",
    "%(invalid)s: %(error)s (line %(line)s of the value, column %(column)s)":
        "%(invalid)s：%(error)s（该值的第 %(line)s 行第 %(column)s 列）",
    "the file ends inside this value": "文件在此值内部结束",
    "the file ends where a value was expected": "文件在应有值的位置结束",
    "a quote %(quote)s ends a field but is followed by more text, not by %(delimiter)s or the "
    "end of the line (write a quote inside a quoted field as two quotes)":
        "引号 %(quote)s 结束了一个字段，但其后还有文本，而不是 %(delimiter)s 或行尾（加引号的字段中"
        "的引号应写成两个引号）",
    "the file ends inside a quoted field that starts in this record (its closing quote is "
    "missing)":
        "文件在本记录中开始的一个加引号的字段内结束（缺少结束引号）",
    "a carriage return (\\r) inside a field that is not quoted: quote the field or remove the "
    "character":
        "未加引号的字段中有回车符（\\r）：请给该字段加引号或删除该字符",
    # SQuAD
    "a SQuAD file is one JSON object with a 'data' list":
        "SQuAD 文件应为一个带 'data' 列表的 JSON 对象",
    "should be a list of articles": "应为文章列表",
    "is missing: this is not a SQuAD file": "缺失：这不是 SQuAD 文件",
    "is empty for an answerable question (is_impossible is not true)":
        "对可回答的问题不能为空（is_impossible 不为 true）",
    # NewsQA
    "a NewsQA file is one JSON object with a 'data' list":
        "NewsQA 文件应为一个带 'data' 列表的 JSON 对象",
    "should be an object": "应为对象",
    "column %(column)s is missing from the header": "表头中缺少列 %(column)s",
    "column %(column)s is missing from the header (the story-less question file cannot be "
    "imported: use the combined CSV with story_text)":
        "表头中缺少列 %(column)s（不含新闻正文的问题文件无法导入：请使用带 story_text 的合并 CSV）",
    "story %(story)s appears again after other stories; the rows of one story must be "
    "consecutive":
        "新闻 %(story)s 在其他新闻之后再次出现；同一新闻的各行必须相邻",
    "differs from the story text of the story's earlier rows": "与该新闻前面各行的新闻正文不同",
    "%(value)s is not a number or '?'": "%(value)s 不是数字，也不是 '?'",
    "%(value)s is not start:end": "%(value)s 不是 start:end 形式",
    "should be a JSON object": "应为 JSON 对象",
    "count for %(choice)s should be an integer": "%(choice)s 的计数应为整数",
    # MS MARCO
    "column is missing": "缺少该列",
    "no more rows": "没有更多行",
    "rows are out of step: expected %(expected)s, found %(found)s":
        "各列的行没有对齐：应为%(expected)s，实际为%(found)s",
    "has %(row)s that %(lead)s lacks": "有 %(lead)s 中没有的%(row)s",
    "column %(column)s should map row keys to values": "列 %(column)s 应将行键映射到值",
    "should be a string": "应为字符串",
    "should be a list or the string '[]'": "应为列表或字符串 '[]'",
    # ReCO
    "should be three answers joined by '|', found %(found)s":
        "应为用 '|' 连接的三个答案，实际为 %(found)s",
    "%(answer)s is not one of the alternatives %(alternatives)s":
        "%(answer)s 不是备选答案 %(alternatives)s 之一",
    # DuReader
    "paragraph index %(index)s is outside the document's %(count)s paragraphs":
        "段落序号 %(index)s 超出该文档的 %(count)s 个段落",
    "document index %(index)s is outside the record's %(count)s documents":
        "文档序号 %(index)s 超出该记录的 %(count)s 篇文档",
    # the field mapping of JSONL, CSV and TSV
    "--map: %(part)s is not field=column": "--map：%(part)s 不是 field=column 形式",
    "--map: unknown field %(field)s (fields: %(fields)s)":
        "--map：未知字段 %(field)s（可用字段：%(fields)s）",
    "--map: field %(field)s is mapped twice": "--map：字段 %(field)s 被映射了两次",
    # query lists
    "is missing (a query needs one of %(keys)s)": "缺失（查询需要 %(keys)s 之一）",
    # the judgment study's references and predictions
    "the file is empty": "文件为空",
    "a number or a non-empty string is required": "必须是数字或非空字符串",
    "no question with a reference answer": "没有带参考答案的问题",
    "the question text is required": "必须有问题文本",
    "no reference answer (a question needs at least one)": "没有参考答案（每个问题至少需要一个）",
    "%(labels)s labels for %(answers)s answers": "%(answers)s 个答案却有 %(labels)s 个标签",
    "a list of lists of strings is required": "必须是由字符串列表组成的列表",
    "a SQuAD dataset needs a 'data' list": "SQuAD 数据集需要一个 'data' 列表",
    "needs 'id' and 'question'": "需要 'id' 和 'question'",
    "no answerable question": "没有可回答的问题",
    "the answer must be a string": "答案必须是字符串",
    "question %(id)s appears twice": "问题 %(id)s 出现了两次",
    "question %(id)s is not in the references": "问题 %(id)s 不在参考答案中",
    "release: %(release)s is not ready (status: %(status)s)":
        "release：%(release)s 尚未就绪（状态：%(status)s）",
    "release: %(release)s has no dureader file; build one with the dureader format":
        "release：%(release)s 没有 dureader 文件；请用 dureader 格式生成一个",
    "release: %(release)s: its file %(path)s is missing from the storage":
        "release：%(release)s：其文件 %(path)s 不在存储中",
    "project %(project)s: not a judgment project": "项目 %(project)s：不是评判研究项目",
    "import: only before the project starts": "导入：只能在项目开始之前进行",
    "project %(project)s: no sampling stage": "项目 %(project)s：没有抽样阶段",
    "import: this project has its questions already; create a new project for another set":
        "导入：该项目已有问题；如需导入另一组问题，请新建项目",
    "predictions: add at least one system's prediction file":
        "predictions：请至少添加一个系统的预测文件",
    "give the system a name": "请为该系统命名",
    "the system name is longer than %(most)s characters": "系统名称超过 %(most)s 个字符",
    "system name %(name)s is given twice": "系统名称 %(name)s 出现了两次",
    "system %(name)s has no prediction for %(count)s question(s), e.g. %(example)s":
        "系统 %(name)s 缺少 %(count)s 个问题的预测，例如 %(example)s",
}


@pytest.fixture
def stored_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the msgids of ``ZH`` it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
