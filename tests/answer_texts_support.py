"""The Chinese of the answer refusals' new msgids (the stage kinds' payload checks, the NUL
refusal, the page's active time, the API's NUL parse error), for tests that read them in
Chinese while the catalogue (locale/, kept apart) does not have them yet: the fixture adds
to the active catalogue only the msgids it lacks, so once the catalogue has them, it is
what the tests read (and this module can go, as ``upload_texts_support`` did)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import translation

ZH = {
    # every kind: the NUL refusal, the JSON of a form, the active time, the API's parser
    "holds a NUL character (U+0000), which is not text": "包含 NUL 字符（U+0000），这不是文本",
    "stage %(stage)s: the parameter at %(where)s %(detail)s":
        "阶段 %(stage)s：参数 %(where)s %(detail)s",
    "payload: not valid JSON (%(error)s)": "payload: 不是有效的 JSON（%(error)s）",
    "payload: a JSON object is required": "payload: 必须是一个 JSON 对象",
    "active_time_s: %(value)s is not a number of seconds": "active_time_s: %(value)s 不是秒数",
    "active_time_s: %(value)s is not a time: it must be a finite number of seconds, 0 or more":
        "active_time_s: %(value)s 不是时间：必须是有限的秒数（0 或更多）",
    "JSON parse error - %(where)s contains a NUL character (\\u0000), which no field accepts":
        "JSON 解析错误 - %(where)s 包含 NUL 字符（\\u0000），任何字段都不接受",
    # MS MARCO
    "%(name)s: text expected": "%(name)s: 应为文本",
    "%(name)s: %(value)s is not one of %(choices)s": "%(name)s: %(value)s 不是 %(choices)s 之一",
    "%(name)s: choose one of %(choices)s": "%(name)s: 请从 %(choices)s 中选择一项",
    "%(name)s: true or false expected": "%(name)s: 应为 true 或 false",
    "exclusions: a list of reasons expected": "exclusions: 应为排除原因的列表",
    "exclusions: unknown reason(s) %(unknown)s; known: %(known)s":
        "exclusions: 未知原因 %(unknown)s；可用的原因：%(known)s",
    "selected: a list of passage ranks expected": "selected: 应为段落排名的列表",
    "selected: a passage is selected twice": "selected: 有段落被选了两次",
    "selected: no passage has rank %(rank)s": "selected: 没有排名为 %(rank)s 的段落",
    "selected: passage ranks expected": "selected: 应为段落排名",
    "yesno: %(value)s is not one of %(choices)s": "yesno: %(value)s 不是 %(choices)s 之一",
    "yesno: only YES_NO questions take an opinion label": "yesno: 只有是非类问题才需要观点标签",
    "entities: a list of entity names expected": "entities: 应为实体名称的列表",
    "entities: only ENTITY questions take a list of entities":
        "entities: 只有实体类问题才需要实体列表",
    "decisions: keep or drop for each flagged answer expected":
        "decisions: 应为每个被标记的答案给出保留或丢弃",
    "decisions: answer %(n)d is not flagged": "decisions: 答案 %(n)d 未被标记",
    "decisions: unknown answer %(answer)s": "decisions: 未知答案 %(answer)s",
    # NewsQA
    "questions: a list of question texts is required": "questions: 必须是问题文本的列表",
    "question %(n)d: %(reason)s": "question %(n)d: %(reason)s",
    "spans[%(n)d]: expected [start, end] character offsets":
        "spans[%(n)d]: 应为 [start, end] 字符偏移量",
    "spans[%(n)d]: [%(start)d, %(end)d] is outside the article (0..%(length)d)":
        "spans[%(n)d]: [%(start)d, %(end)d] 超出了文章范围（0..%(length)d）",
    "choice: pick one of the %(count)d answers, 'all answers are bad' or 'the question makes "
    "no sense'":
        "choice: 请在 %(count)d 个答案中选择一个，或选择“所有答案都很差”或“问题没有意义”",
}


@pytest.fixture
def answer_texts_in_chinese() -> Iterator[dict[str, str]]:
    """The zh_Hans catalogue with the msgids of ``ZH`` it lacks, for the test."""
    catalogue = translation.trans_real.translation("zh-hans")._catalog
    added = {msgid: zh for msgid, zh in ZH.items() if msgid not in catalogue}
    for msgid, zh in added.items():
        catalogue[msgid] = zh
    yield ZH
    first = catalogue._catalogs[0]
    for msgid in added:
        first.pop(msgid, None)
