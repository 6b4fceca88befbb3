"""The Chinese of the ReCO filters' new msgids (their refusals of stage parameters, their
verdicts' reasons) and of the API's not-found message, for tests that read them in Chinese
while the catalogue (locale/, kept apart) does not have them yet: the fixture adds to the
active catalogue only the msgids it lacks, so once the catalogue has them, it is what the
tests read (and this module can go, as ``admin_texts_support`` did)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # the filters' refusals of stage parameters (collector/filters)
    "language must be one of %(known)s; got %(value)s":
        "language 必须是 %(known)s 之一；实际为 %(value)s",
    "a yes/no feature needs name, pattern and weight: %(feature)s":
        "是非特征需要 name、pattern 和 weight：%(feature)s",
    "yes/no feature %(name)s: weight must be a number": "是非特征 %(name)s：weight 必须是数字",
    "yes/no feature names must be unique: %(names)s": "是非特征的名称不能重复：%(names)s",
    "yes/no feature %(name)s: bad pattern: %(error)s":
        "是非特征 %(name)s：正则表达式有误：%(error)s",
    "%(name)s must map a language (en, zh) to its setting; got %(type)s %(value)s":
        "%(name)s 必须把语言（en、zh）映射到其设置；实际为 %(type)s %(value)s",
    "steps must be distinct names from %(known)s; got %(value)s":
        "steps 必须是 %(known)s 中互不重复的名称；实际为 %(value)s",
    "intent_mode must be one of %(known)s; got %(value)s":
        "intent_mode 必须是 %(known)s 之一；实际为 %(value)s",
    "yesno_threshold must be a number above 0 (a query is yes/no when its features' weights "
    "reach it); got %(value)s":
        "yesno_threshold 必须是大于 0 的数字（查询的特征权重之和达到它时即为是非问题）；"
        "实际为 %(value)s",
    "intent_models[%(language)s] is a %(model)s model":
        "intent_models[%(language)s] 是 %(model)s 语言的模型",
    "intent_mode %(mode)s needs intent_models[%(language)s]":
        "intent_mode %(mode)s 需要 intent_models[%(language)s]",
    "blocklists[%(language)s] must be a list of terms; got %(value)s":
        "blocklists[%(language)s] 必须是词语列表；实际为 %(value)s",
    "blocklists[%(language)s] is a %(list)s list":
        "blocklists[%(language)s] 是 %(list)s 语言的列表",
    "unknown query filter parameters: %(unknown)s": "未知的查询过滤参数：%(unknown)s",
    "rules must be distinct names from %(known)s; got %(value)s":
        "rules 必须是 %(known)s 中互不重复的名称；实际为 %(value)s",
    "ngram_n[%(language)s] must be an integer from 1 to 6; got %(value)s":
        "ngram_n[%(language)s] 必须是 1 到 6 的整数；实际为 %(value)s",
    "%(name)s must be in (0, 1]; got %(value)s": "%(name)s 必须在 (0, 1] 之内；实际为 %(value)s",
    "window_factor must be >= 1; got %(value)s": "window_factor 必须 >= 1；实际为 %(value)s",
    "unknown document filter parameters: %(unknown)s": "未知的文档过滤参数：%(unknown)s",
    # the query filter's verdict reasons
    "not a question: no question word, auxiliary inversion, request or question mark":
        "不是问题：没有疑问词、助动词倒装、请求或问号",
    "not a question: no question particle, question word, yes/no form or question mark":
        "不是问题：没有疑问语气词、疑问词、是非形式或问号",
    "question: %(rule)s '%(matched)s'": "是问题：%(rule)s “%(matched)s”",
    "question mark": "问号",
    "final question particle": "句末疑问语气词",
    "question word": "疑问词",
    "yes/no form": "是非形式",
    "alternative question": "选择问句",
    "question word first": "句首疑问词",
    "auxiliary-verb inversion": "助动词倒装",
    "preposition + question word": "介词 + 疑问词",
    "imperative request": "祈使请求",
    "embedded question": "嵌入式问句",
    "question word + auxiliary": "疑问词 + 助动词",
    "how + quantity": "how + 数量词",
    "question word last": "句末疑问词",
    "no yes/no feature": "没有是非特征",
    "yes/no question: score %(score)s >= %(threshold)s (%(features)s)":
        "是非问题：得分 %(score)s >= %(threshold)s（%(features)s）",
    "not a yes/no question: score %(score)s < %(threshold)s (%(features)s)":
        "不是是非问题：得分 %(score)s < %(threshold)s（%(features)s）",
    "empty query": "空查询",
    "no blocklisted term": "没有屏蔽词",
    "inappropriate content: blocklisted term '%(term)s'": "不当内容：屏蔽词“%(term)s”",
    "classifier p=%(p)s %(op)s %(threshold)s": "分类器 p=%(p)s %(op)s %(threshold)s",
    "question: %(model)s": "是问题：%(model)s",
    "not a question: %(model)s": "不是问题：%(model)s",
    "%(rules)s; %(model)s": "%(rules)s；%(model)s",
    # the API's 404 for an object that does not exist (or that its reader may not see)
    "No %(kind)s with %(lookup)s.": "没有 %(lookup)s 的%(kind)s。",
    "project": "项目",
    "corpus": "语料库",
    "release": "发布版本",
    "Release %(release)s has no file %(path)s.": "发布版本 %(release)s 没有文件 %(path)s。",
    "The file %(path)s of release %(release)s is missing from the release storage.":
        "发布版本 %(release)s 的文件 %(path)s 不在发布存储中。",
    # the API's other refusals
    "Only admins create releases.": "只有管理员可以创建发布版本。",
    "JSON parse error - %(error)s": "JSON 解析错误 - %(error)s",
    "The request body is larger than this server accepts.": "请求体超过了本服务器接受的大小。",
    # the document filter's verdict reasons
    "query core not in document": "文档中没有查询主干",
    "query core in document": "文档中有查询主干",
    "%(n)s-gram share %(score)s %(op)s %(threshold)s":
        "%(n)s-gram 占比 %(score)s %(op)s %(threshold)s",
    "window share %(score)s %(op)s %(threshold)s": "窗口占比 %(score)s %(op)s %(threshold)s",
    "dropped: the whole query '%(query)s' occurs in the document":
        "已丢弃：整个查询“%(query)s”出现在文档中",
    "dropped: %(share)s of the query's %(count)s n-grams occur in the document":
        "已丢弃：查询的 %(count)s 个 n-gram 出现在文档中（%(share)s）",
    "dropped: %(share)s of the query's content units occur within %(window)s consecutive "
    "document units":
        "已丢弃：查询的内容单元出现在文档连续 %(window)s 个单元之内（%(share)s）",
    "kept: %(summary)s": "已保留：%(summary)s",
    # the query filter's refusals grouped by cause (the run's report, the project page)
    "inappropriate content: '%(term)s'": "不当内容：“%(term)s”",
    "not yes/no: %(features)s": "不是是非问题：%(features)s",
    "not a question": "不是问题",
    "refused": "已拒绝",
}


@pytest.fixture
def i18n2_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the msgids of ``ZH`` it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
