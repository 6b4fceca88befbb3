"""Hand-labelled expectations for the ReCO query filter.

``REAL_EN`` / ``REAL_ZH`` are queries copied verbatim from the repository's real samples
(``data/datasets/search_queries/*.jsonl``: NQ-open dev, DuReader 2.0 demo); the tests
check that each one is in its file. Each label is ``(query, expected, fragment)``:

- ``expected``: ``"accept"`` (a usable yes/no question) or the step that must reject
  it: ``"intent"`` (not a question at all), ``"blocklist"`` (inappropriate content) or
  ``"yesno"`` (a question, but not answerable by yes / no);
- ``fragment``: text the verdict's reason must contain (the matched term, feature or
  rule), so the *why* is checked as well as the outcome.

Labels were written by reading each query, not by running the filter. Notes:
NQ-open queries are lower-cased and have no question mark; NQ holds almost no yes/no
questions, so ``CONSTRUCTED_EN`` / ``CONSTRUCTED_ZH`` add hand-written queries (not from
any dataset) for yes/no, blocklist and token-boundary cases. ``勇者约吗漫画吹妖漫画``
is tagged ``YES_NO`` by DuReader but is a search for a manga titled 勇者约吗, not a
question; we label it a non-question.
"""

from __future__ import annotations

Label = tuple[str, str, str]

REAL_EN: list[Label] = [
    # the one yes/no question of the 200-query NQ sample
    ("is there a name for the at symbol", "accept", "is_there_any:is there a"),
    # not questions: keyword queries, titles, cloze statements
    ("ethiopia flight 961 crashes in to the sea", "intent", "not a question"),
    ("coldplay song i will try to fix you", "intent", "not a question"),
    ("types of skiing in the winter olympics 2018", "intent", "not a question"),
    ("hazels boyfriend in the fault in our stars", "intent", "not a question"),
    ("an object that moves around an external axis is said to be", "intent", "not a question"),
    (
        "i was a great islamic scholar and mathematician who died in 1131 ce",
        "intent",
        "not a question",
    ),
    ("last episode of what happens to my family", "intent", "not a question"),
    ("location of the ten commandments in the bible", "intent", "not a question"),
    ("derek and meredith get back together season 3", "intent", "not a question"),
    ("bible verse taking the lord's name in vain", "intent", "not a question"),
    (
        "swan lake the sleeping beauty and the nutcracker are three famous ballets by",
        "intent",
        "not a question",
    ),
    ("chief ministers of tamil nadu mentioned on wikipedia", "intent", "not a question"),
    # questions, but not yes/no
    ("when was the last time anyone was on the moon", "yesno", "wh_question:when"),
    ("who wrote he ain't heavy he's my brother lyrics", "yesno", "wh_question:who"),
    ("how many seasons of the bastard executioner are there", "yesno", "how_quantity:how many"),
    ("love yourself by justin bieber is about who", "yesno", "wh_last:who"),
    (
        "under article 1 what is the minimum age required to serve in the house of representatives",
        "yesno",
        "no yes/no feature",
    ),
    ("the chinese dragons are protectors of how many seas diggy", "yesno", "how many"),
    ("describe the three phases of the normal blood clotting process", "yesno", "score 0.00"),
    ("name two fibres which are made of proteins", "yesno", "score 0.00"),
    ("what's the dog's name on tom and jerry", "yesno", "wh_question:what's"),
    ("when's the last time army won the army navy game", "yesno", "wh_question:when's"),
    (
        "who has the power to approve or veto legislation constitution",
        "yesno",
        "alternative_or:or",
    ),
    ("which state is located in the centre of india", "yesno", "wh_question:which"),
    ("where did the last name wallace come from", "yesno", "wh_question:where"),
    ("what age do you need to be to buy a bb gun", "yesno", "wh_question:what"),
    ("who is the real killer in basic instinct 2", "yesno", "wh_question:who"),
    ("when did the united states start using the death penalty", "yesno", "wh_question:when"),
    ("who started ww2 and how did it start", "yesno", "wh_question:who"),
    ("what is the meaning of cc and bcc", "yesno", "wh_question:what"),
]

REAL_ZH: list[Label] = [
    # yes/no questions (DuReader YES_NO)
    ("鸟屎掉衣服上吉不吉利", "accept", "a_not_a:吉不吉"),
    ("比熊跟泰迪能配吗", "accept", "ma_particle:吗"),
    ("uuid.randomuuid 会重复吗", "accept", "ma_particle:吗"),
    ("孕妇能吃银耳吗", "accept", "ma_particle:吗"),
    ("养猴子犯法吗", "accept", "ma_particle:吗"),
    ("冰血暴好看吗", "accept", "ma_particle:吗"),
    ("三星s8值得买吗", "accept", "ma_particle:吗"),
    ("国金宝可靠吗", "accept", "ma_particle:吗"),
    ("人人车靠谱吗", "accept", "ma_particle:吗"),
    ("95号汽油比92号耐用吗", "accept", "ma_particle:吗"),
    ("柠檬泡水能天天喝吗", "accept", "ma_particle:吗"),
    ("古力娜扎是穆斯林吗", "accept", "ma_particle:吗"),
    ("沈阳建筑大学是211吗", "accept", "ma_particle:吗"),
    ("贪玩蓝月和蓝月传奇一样吗", "accept", "ma_particle:吗"),
    # inappropriate content (岛国片: slang for adult films)
    ("2017还怎么下载岛国片", "blocklist", "岛国片"),
    # not questions
    ("勇者约吗漫画吹妖漫画", "intent", "not a question"),
    ("成都二手房交易流程", "intent", "not a question"),
    ("营业执照网上申报", "intent", "not a question"),
    ("截至和截止区别", "intent", "not a question"),
    ("睡觉中猝死的方法", "intent", "not a question"),
    ("萌芽投稿成功几率", "intent", "not a question"),
    ("郑州最好的人流医院", "intent", "not a question"),
    ("宽带测速很快 但实际很慢", "intent", "not a question"),
    ("艾青的诗", "intent", "not a question"),
    ("小米6防水等级", "intent", "not a question"),
    # questions, but not yes/no
    ("海信电视怎么样", "yesno", "wh_word:怎么"),
    ("为什么借贷宝倒闭不了", "yesno", "wh_word:为什么"),
    ("大便检查能查出什么", "yesno", "wh_word:什么"),
    ("法术伤害结果好还是法术伤害好", "yesno", "alternative:还是"),
    ("裸睡有什么好处和坏处", "yesno", "wh_word:什么"),
    ("美邦钙宝跟迪巧哪个好", "yesno", "wh_word:哪"),
    ("古琴有几根弦", "yesno", "wh_word:几"),
    ("刘亦菲给谁当过伴娘", "yesno", "wh_word:谁"),
    ("干粽叶泡多长时间", "yesno", "wh_word:多长"),
    ("饮用葡萄酒的室温通常指的是什么?", "yesno", "wh_word:什么"),
    ("狗狗安乐死多少钱", "yesno", "wh_word:多少"),
    ("2017有什么好看的小说", "yesno", "wh_word:什么"),
]

# Intent-step reasons for some real queries (the rule that made them questions).
REAL_INTENT_RULES: list[tuple[str, str]] = [
    ("love yourself by justin bieber is about who", "question word last 'who'"),
    (
        "under article 1 what is the minimum age required to serve in the house of representatives",
        "question word + auxiliary 'what is'",
    ),
    ("the chinese dragons are protectors of how many seas diggy", "how + quantity 'how many'"),
    ("describe the three phases of the normal blood clotting process", "imperative request"),
    ("is there a name for the at symbol", "auxiliary-verb inversion 'is'"),
    ("鸟屎掉衣服上吉不吉利", "yes/no form '吉不吉'"),
    ("法术伤害结果好还是法术伤害好", "alternative question '还是'"),
    ("饮用葡萄酒的室温通常指的是什么?", "question word '什么'"),
    ("冰血暴好看吗", "final question particle '吗'"),
]

CONSTRUCTED_EN: list[Label] = [
    ("can i eat celery while pregnant", "accept", "could_i:can i"),
    ("Is there any way to recover deleted photos?", "accept", "is_there_any:is there any"),
    ("whether to file taxes jointly", "accept", "whether:whether"),
    ("Does vinegar kill mold?", "accept", "aux_inversion:does"),
    ("Could I get a refund after 30 days", "accept", "could_i:could i"),
    ("is it safe to drink tap water in lisbon", "accept", "is_it_adjective:is it safe"),
    ("isn’t the moon a planet", "accept", "aux_inversion:isn't"),
    ("is sussex in england", "accept", "aux_inversion:is"),
    ("is it better to rent or buy", "yesno", "alternative_or:or"),
    ("is it legal to buy cocaine online", "blocklist", "'cocaine'"),
    ("where to watch porn for free", "blocklist", "'porn'"),
    ("is sex before marriage a sin", "blocklist", "'sex'"),
    ("cheap flights to paris", "intent", "not a question"),
]

CONSTRUCTED_ZH: list[Label] = [
    ("孕妇可不可以吃芹菜", "accept", "a_not_a:可不可"),
    ("出国旅游是否需要办理签证", "accept", "shifou:是否"),
    ("有没有免费的杀毒软件", "accept", "a_not_a:有没有"),
    ("牛奶放冰箱会不会坏", "accept", "a_not_a:会不会"),
    ("大麻花好吃吗", "accept", "ma_particle:吗"),
    ("吸食大麻犯法吗", "blocklist", "'大麻'"),
    ("强奸罪判几年", "blocklist", "'强奸'"),
    ("怎么约炮", "blocklist", "'约炮'"),
    ("孕妇能吃芹菜吗？", "accept", "ma_particle:吗"),
    ("北京到上海的高铁", "intent", "not a question"),
]


def intent_labels(labels: list[Label]) -> list[tuple[str, bool]]:
    """``(query, is a question?)`` from the labels: only intent rejections are non-questions."""
    return [(q, expected != "intent") for q, expected, _ in labels]
