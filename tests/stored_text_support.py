"""The Chinese of the stored texts' msgids, for tests that read stored texts in Chinese
while the catalogue (locale/, kept apart) does not have them yet: the fixture adds to the
active catalogue only the msgids it lacks, so once the catalogue has them, it is what the
tests read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # why a worker stands as they do
    "gold accuracy %(accuracy)s below %(minimum)s after %(seen)s checks":
        "黄金题正确率 %(accuracy)s，低于 %(minimum)s（共 %(seen)s 次检查）",
    "gold accuracy %(accuracy)s below %(minimum)s after %(seen)s checks since their standing "
    "last changed":
        "自上次状态变更以来，黄金题正确率 %(accuracy)s，低于 %(minimum)s（共 %(seen)s 次检查）",
    "resumed": "已恢复",
    "resumed by %(actor)s": "已由 %(actor)s 恢复",
    "sent back to training": "已退回培训",
    "sent back to training by %(actor)s": "已由 %(actor)s 退回培训",
    "paused by %(actor)s": "已由 %(actor)s 暂停",
    "blocked by %(actor)s": "已由 %(actor)s 封禁",
    # stage runs and the stalled project
    "dropped by the stage": "被该阶段丢弃",
    "%(note)s.": "%(note)s。",
    "its run (job #%(job)s) failed: %(error)s": "它的运行（任务 #%(job)s）失败：%(error)s",
    "%(count)s of %(received)s dropped: %(reason)s":
        "%(received)s 个中丢弃 %(count)s 个：%(reason)s",
    "the corpus %(corpus)s gave it nothing": "语料库 %(corpus)s 没有给它任何内容",
    "the project has no corpus": "该项目没有语料库",
    "no item was sent to it": "没有条目被发送给它",
    "taken by an earlier run": "已被之前的运行取走",
    "beyond max_queries (%(limit)s)": "超出 max_queries（%(limit)s）",
    "question type %(type)s is not sampled": "问题类型 %(type)s 不在抽样范围内",
    "not sampled: %(type)s beyond the %(wanted)s asked for (%(key)s)":
        "未抽中：%(type)s 超出要求的 %(wanted)s 个（%(key)s）",
    "%(count)s system answers to rate": "%(count)s 个系统答案待评分",
    "waiting: %(count)s item(s) not rated yet": "等待中：%(count)s 个条目尚未评分",
    "nothing new since the last report": "自上次报告以来没有新内容",
    "%(flagged)s with an outlier answer: to a checker's review; %(other)s straight to the "
    "final records":
        "%(flagged)s 个有离群答案：交审核员复查；%(other)s 个直接进入最终记录",
    "no highlights (require_highlights is on)": "没有要点（require_highlights 已开启）",
    "beyond max_articles (%(limit)s)": "超出 max_articles（%(limit)s）",
    "%(agreed)s agreed: to consolidation; %(other)s without agreement: to validation":
        "%(agreed)s 个一致：进入合并；%(other)s 个不一致：进入验证",
    "documents: %(kept)s kept, %(dropped)s dropped for trivial overlap":
        "文档：保留 %(kept)s 篇，因平凡重叠丢弃 %(dropped)s 篇",
    "rule %(rule)s: %(count)s": "规则 %(rule)s：%(count)s",
    "%(list)s, %(item)s": "%(list)s，%(item)s",
    "%(documents)s (%(rules)s)": "%(documents)s（%(rules)s）",
    "every retrieved document overlapped the query trivially": "检索到的每篇文档都与查询平凡重叠",
    # import failures: the frame
    "%(file)s: %(detail)s": "%(file)s：%(detail)s",
    "%(where)s: %(detail)s": "%(where)s：%(detail)s",
    "field '%(field)s': %(detail)s": "字段 '%(field)s'：%(detail)s",
    "line %(line)s": "第 %(line)s 行",
    "line %(line)s, column %(column)s": "第 %(line)s 行第 %(column)s 列",
    "whole file": "整个文件",
    "top level": "顶层",
    "file name": "文件名",
    "records from %(first)s to %(last)s": "从 %(first)s 到 %(last)s 的记录",
    # import failures: the problems
    "format %(format)s takes no --map (only jsonl, csv and tsv do)":
        "格式 %(format)s 不接受 --map（只有 jsonl、csv 和 tsv 接受）",
    "contains no records": "不含任何记录",
    "contains no queries": "不含任何查询",
    "should be text, found %(found)s": "应为文本，实际为 %(found)s",
    "has %(columns)s columns, the header has %(header)s": "有 %(columns)s 列，表头有 %(header)s 列",
    "is missing (column %(column)s)": "缺失（列 %(column)s）",
    "is empty (column %(column)s)": "为空（列 %(column)s）",
    "%(value)s is not one of %(choices)s": "%(value)s 不是 %(choices)s 之一",
    "is not a JSON list": "不是 JSON 列表",
    "should be a list of strings": "应为字符串列表",
    "expected a JSON object on each line": "每行应为一个 JSON 对象",
    "is not in --map; a file mapped by column numbers needs every required field mapped":
        "不在 --map 中；按列号映射的文件需要映射每个必需字段",
    "maps to column %(column)s, which the header does not have (columns: %(columns)s)":
        "映射到列 %(column)s，但表头中没有该列（列：%(columns)s）",
    "invalid JSON: %(error)s": "无效的 JSON：%(error)s",
    "expected %(expected)s, found %(found)s": "应为 %(expected)s，实际为 %(found)s",
    "expected a key in double quotes, found %(found)s": "应为双引号括起的键，实际为 %(found)s",
    "unexpected %(found)s after the end of the JSON value": "JSON 值结束后出现意外的 %(found)s",
    "the end of the file": "文件末尾",
    "contains a NUL character (\\u0000), which cannot be stored":
        "包含无法存储的 NUL 字符（\\u0000）",
    "contains a lone surrogate (%(escape)s at character %(position)s), which is not valid "
    "Unicode: fix the text or its \\u escapes":
        "包含孤立代理项（第 %(position)s 个字符处的 %(escape)s），不是有效的 Unicode：请修正文本"
        "或其 \\u 转义",
    "is nested more than %(levels)s levels deep (lists and objects inside each other)":
        "嵌套超过 %(levels)s 层（列表和对象相互嵌套）",
    "has a key that %(problem)s": "有一个键%(problem)s",
    "invalid JSON": "无效的 JSON",
    "%(invalid)s: %(error)s (column %(column)s)": "%(invalid)s：%(error)s（第 %(column)s 列）",
    "has no story text before the first @highlight": "第一个 @highlight 之前没有新闻正文",
    "should be a list of stories": "应为新闻列表",
    "is missing: this is not a NewsQA file": "缺失：这不是 NewsQA 文件",
    "is not JSON": "不是 JSON",
    "contains a control character (tab, newline, …)": "包含控制字符（制表符、换行符等）",
    "is not a valid URL (%(error)s)": "不是有效的 URL（%(error)s）",
    "%(url)s is not an http(s) URL (it has no scheme such as https://)":
        "%(url)s 不是 http(s) URL（没有 https:// 之类的协议）",
    "%(url)s is not an http(s) URL (scheme %(scheme)s); only http:// and https:// links are "
    "accepted":
        "%(url)s 不是 http(s) URL（协议 %(scheme)s）；只接受 http:// 和 https:// 链接",
    "%(url)s has no host name": "%(url)s 没有主机名",
    "expected a JSON object, found %(found)s": "应为 JSON 对象，实际为 %(found)s",
    "is missing (required)": "缺失（必填）",
    "should be a string or an integer, found %(found)s": "应为字符串或整数，实际为 %(found)s",
    "is %(length)s characters long; ids may have at most %(most)s":
        "长 %(length)s 个字符；ID 最多 %(most)s 个字符",
    "%(name)s offset should be an integer, found %(found)s":
        "%(name)s 偏移应为整数，实际为 %(found)s",
    "offsets %(start)s..%(end)s are outside the text (length %(length)s)":
        "偏移 %(start)s..%(end)s 超出文本范围（长度 %(length)s）",
    "answer text %(answer)s does not match the text at offset %(start)s (%(text)s)":
        "答案文本 %(answer)s 与偏移 %(start)s 处的文本（%(text)s）不一致",
    "is empty": "为空",
    "should be %(kind)s, found %(found)s": "应为%(kind)s，实际为%(found)s",
    "a string": "字符串",
    "an integer": "整数",
    "a number": "数字",
    "a list": "列表",
    "an object": "对象",
    "a boolean": "布尔值",
    "%(one)s or %(other)s": "%(one)s或%(other)s",
    "is JSON, but not one of the known datasets (SQuAD, NewsQA, MS MARCO, DuReader, ReCO) nor "
    "JSON Lines":
        "是 JSON，但不是已知的数据集（SQuAD、NewsQA、MS MARCO、DuReader、ReCO），也不是 JSON Lines",
    "decompresses to more than %(limit)s bytes, over the import limit (setting "
    "CROWDQA_IMPORT_MAX_BYTES)":
        "解压后超过 %(limit)s 字节，超出导入上限（设置 CROWDQA_IMPORT_MAX_BYTES）",
    "is a damaged gzip file: cannot decompress it (%(error)s)":
        "是损坏的 gzip 文件：无法解压（%(error)s）",
    "is a damaged zip archive: cannot decompress it (%(error)s)":
        "是损坏的 zip 压缩包：无法解压（%(error)s）",
    "is a %(compression)s-compressed file, which cannot be read: decompress it, or compress it "
    "with gzip (.gz) or zip":
        "是 %(compression)s 压缩文件，无法读取：请解压，或用 gzip（.gz）或 zip 压缩",
    "is a damaged zip archive (%(error)s)": "是损坏的 zip 压缩包（%(error)s）",
    "is a zip archive of %(count)s files (%(listed)s); an import reads one file: unzip it and "
    "import its files one by one":
        "是包含 %(count)s 个文件的 zip 压缩包（%(l"
        "isted)s）；一次导入只读一个文件：请解压后逐个导入",
    "is an encrypted zip archive, which cannot be read": "是加密的 zip 压缩包，无法读取",
    "is a zip archive compressed with method %(method)s, which cannot be read: re-create it "
    "with the usual (deflate) compression":
        "是用方法 %(method)s 压缩的 zip 压缩包，无法读取：请用常用的（deflate）压缩重新创建",
    "is a tar archive, which cannot be read: extract it and import its files one by one":
        "是 tar 归档，无法读取：请解包后逐个导入其中的文件",
    "is a folder; this format reads a single file": "是文件夹；此格式只读取单个文件",
    "the folder holds no %(suffix)s files": "文件夹中没有 %(suffix)s 文件",
    "no such file or folder": "没有这个文件或文件夹",
    "is empty (0 bytes)": "为空（0 字节）",
    "is %(size)s bytes, over the import limit of %(limit)s bytes (setting "
    "CROWDQA_IMPORT_MAX_BYTES)":
        "大小为 %(size)s 字节，超出 %(limit)s 字节的导入上限（设置 CROWDQA_IMPORT_MAX_BYTES）",
    "is not valid UTF-8 (bad byte at column %(column)s); convert the file to UTF-8":
        "不是有效的 UTF-8（第 %(column)s 列有错误字节）；请将文件转换为 UTF-8",
    "this record is over %(limit)s bytes, the limit for one record (setting "
    "CROWDQA_IMPORT_MAX_RECORD_BYTES)":
        "该记录超过 %(limit)s 字节，即单条记录的上限（设置 CROWDQA_IMPORT_MAX_RECORD_BYTES）",
    "contains a NUL character (at column %(column)s), which cannot be stored":
        "包含无法存储的 NUL 字符（第 %(column)s 列）",
    "bad CSV: %(error)s": "错误的 CSV：%(error)s",
    "the database refused the batch: %(detail)s": "数据库拒绝了这一批：%(detail)s",
    "document %(id)s is already in corpus %(corpus)s with a different text, so this "
    "question's offsets would not fit it":
        "文档 %(id)s 已在语料库 %(corpus)s 中且文本不同，因此该问题的偏移与其不符",
    "unknown language %(language)s (languages: %(known)s)":
        "未知语言 %(language)s（可用语言：%(known)s）",
    "unknown split mode %(mode)s (modes: %(known)s)":
        "未知切分方式 %(mode)s（可用方式：%(known)s）",
    "window_tokens: a window of %(tokens)s tokens; it needs at least 1":
        "window_tokens：窗口为 %(tokens)s 个词元；至少需要 1 个",
    "window overlap (%(overlap)s) must be smaller than the window (%(tokens)s tokens)":
        "窗口重叠（%(overlap)s）必须小于窗口（%(tokens)s 个词元）",
    "cannot create corpus %(name)s: %(problems)s": "无法创建语料库 %(name)s：%(problems)s",
    "corpus %(name)s is in %(language)s (%(code)s), not %(wanted)s":
        "语料库 %(name)s 的语言是%(language)s（%(code)s），不是 %(wanted)s",
    "corpus %(name)s already has split %(option)s %(current)s; splitting is fixed when a "
    "corpus is created":
        "语料库 %(name)s 的切分 %(option)s 已是 %(current)s；切分方式在创建语料库时即已固定",
    "duplicate document id %(id)s (first used at %(first)s)":
        "重复的文档 ID %(id)s（首次出现于%(first)s）",
    "has no text": "没有文本",
    "duplicate question id %(id)s (first used at %(first)s)":
        "重复的问题 ID %(id)s（首次出现于%(first)s）",
    "refers to document %(id)s, which is not in the same record":
        "引用的文档 %(id)s 不在同一条记录中",
    "duplicate query %(id)s (first at %(first)s)": "重复的查询 %(id)s（首次出现于%(first)s）",
    "duplicate query id %(id)s (first at %(first)s)": "重复的查询 ID %(id)s（首次出现于%(first)s）",
    "is no longer on the server: upload it again": "已不在服务器上：请重新上传",
}


@pytest.fixture
def stored_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the stored texts' msgids it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
