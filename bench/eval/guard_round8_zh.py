"""Round 8 of the "every word accounted for" sets in Mandarin (called by ``make_guard.py`` for
``guard_zh.jsonl``): a written negation (``negated``: 未收到, 并未, 尚未), a past day the round-2 words
missed (``time``: 昨晚, 上个礼拜, 两天前, 周一, 那天), a count for each of several (``each``: 每台机器),
a question said without ？ (``question``: 是否, 难道, 怎么, 哪里, …不), what is still there said after a
change (``still``: 用了三个保险丝，还有五十七个保险丝, never 3+57), another party's receipt (``theirs``:
客户收到), a log that says neither used nor received (``no_direction``: 登记五个钻头, asked), a count in
cases or lots (``unit``: 两箱手套 of boxes, 五批钻头), another kind of the item (``kind``: 三盒乳胶手套 of
nitrile gloves), and a change heard from a named person (``hearsay``: 老王说…, read back) — each with
the correct neighbours that must still be logged in one turn.
"""
from __future__ import annotations

from guard_round5 import DRL, FUS, GLV, WSH, rec

TIE = ("TIE-CBL-200", "drawer 7")
BLT = ("BLT-M8-30", "bin 12")

#: never written as heard: the box says why (``asks`` False) or asks (True: the unit, the direction, a
#: hearsay read back)
ZH_NEVER = {
    "negated": (False, ["未收到五个钻头", "并未收到五个钻头", "尚未收到五个钻头", "还未收到五个钻头", "暂未收到五个钻头",
                        "未用三个保险丝", "未领三个垫圈"]),
    "time": (False, ["昨晚用了三个保险丝", "上个礼拜收到五个钻头", "上个星期用了三个保险丝", "前两天用了三个保险丝",
                     "两天前用了三个保险丝", "一周前收到五个钻头", "礼拜一收到五个钻头", "周一用了三个保险丝",
                     "星期三用了三个保险丝", "那天用了三个保险丝", "前一天用了三个保险丝", "上回收到五个钻头",
                     "月初收到五个钻头", "半个月前收到五个钻头", "周末用了三个保险丝", "这两天用了三个保险丝"]),
    "each": (False, ["每个用了三个保险丝", "每台机器用了三个保险丝", "每箱用了三个保险丝", "每个工位用了三个保险丝",
                     "每辆车用了三个保险丝", "每条线用了三个保险丝"]),
    "question": (False, ["是否用了三个保险丝", "难道收到五个钻头了", "怎么用了三个保险丝", "咋用了三个保险丝",
                         "哪里用了三个保险丝", "哪儿用了三个保险丝", "何时用了三个保险丝", "干嘛用了三个保险丝",
                         "凭什么用了三个保险丝", "莫非用了三个保险丝", "用了三个保险丝不", "收到五个钻头否"]),
    "still": (False, ["用了三个保险丝，还有三个保险丝", "用了三个保险丝，还有五十七个保险丝", "收到五个钻头还有五个钻头",
                      "用了两个垫圈还有两个垫圈"]),
    "theirs": (False, ["客户收到五个钻头", "供应商收到三个保险丝", "隔壁收到了五个钻头", "他们那边收到了五个钻头",
                       "对方收到五个钻头", "工地收到五个钻头"]),
    "no_direction": (True, ["登记五个钻头", "记录三个保险丝", "记一下五个钻头", "记上三个保险丝"]),
    "unit": (True, ["用了两箱手套", "收到三箱手套", "用了一箱手套", "收到两箱丁腈手套", "丁腈手套用了两箱", "收到五批钻头",
                    "收到三捆扎带", "收到三串扎带", "收到三车垫圈"]),
    "kind": (False, ["用了三盒乳胶手套", "用了三盒橡胶手套", "用了三个弹簧垫圈", "用了三盒M号手套", "用了三盒小号手套",
                     "用了三个不锈钢垫圈", "用了三盒棉手套"]),
    "hearsay": (True, ["老王说用了三个保险丝", "听老王说用了三个保险丝", "老王讲他用了三个保险丝", "老王告诉我用了三个保险丝",
                       "夜班的说用了三个保险丝", "据老王讲用了三个保险丝", "用了三个保险丝，老王说的",
                       "老王跟我说收到五个钻头"]),
}

#: correct commands beside them: logged in one turn
ZH_MUST = [
    ("今天用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("上午用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("今早用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("刚才用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("用了三个保险丝还有两个垫圈", [rec(FUS[0], -3, FUS[1]), rec(WSH[0], -2, WSH[1])]),
    ("用了三个保险丝和两个保险丝", [rec(FUS[0], -5, FUS[1])]), ("从老王那收到三个保险丝", [rec(FUS[0], 3, FUS[1])]),
    ("我们那边收到五个钻头", [rec(DRL[0], 5, DRL[1])]), ("老王收到五个钻头", [rec(DRL[0], 5, DRL[1])]),
    ("老王用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("登记用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("记录收到五个钻头", [rec(DRL[0], 5, DRL[1])]), ("用了两盒手套", [rec(GLV[0], -2, GLV[1])]),
    ("用了三盒丁腈手套", [rec(GLV[0], -3, GLV[1])]), ("用了三个新钻头", [rec(DRL[0], -3, DRL[1])]),
    ("用了三个这种钻头", [rec(DRL[0], -3, DRL[1])]), ("用了三个30号箱的保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("用了三个m8的螺栓", [rec(BLT[0], -3, BLT[1])]), ("老实说，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("用了三根扎带", [rec(TIE[0], -3, TIE[1])]), ("收到一打保险丝", [rec(FUS[0], 12, FUS[1])]),
    ("收到一百零五个垫圈", [rec(WSH[0], 105, WSH[1])]), ("又用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("收到老李送来的三个保险丝", [rec(FUS[0], 3, FUS[1])]), ("怎么说呢，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
]


def zh(c) -> None:
    """Every class above, the answers to what is asked, and the neighbours."""
    c.add_sets(ZH_NEVER, ZH_MUST)
    # asked, then answered: the direction and a hearsay's yes write; a past day, a lot or another kind never does
    for cls, t, a, r in [("no_direction", "登记五个钻头", ["收到"], [rec(DRL[0], 5, DRL[1])]),
                         ("no_direction", "记录三个保险丝", ["用了"], [rec(FUS[0], -3, FUS[1])]),
                         ("hearsay", "老王说用了三个保险丝", ["是"], [rec(FUS[0], -3, FUS[1])]),
                         ("unit", "用了两箱手套", ["二十盒"], [rec(GLV[0], -20, GLV[1])])]:
        c.add(cls, t, "may", r, answers=a)
    for cls, t, a in [("time", "半个月前收到五个钻头", ["五个", "是"]), ("kind", "用了三四盒乳胶手套", ["三盒"]),
                      ("kind", "用了两三个弹簧垫圈", ["两个"])]:
        c.add(cls, t, "never", answers=a)
