"""Round 7 of the "every word accounted for" sets in Mandarin (called by ``make_guard.py`` for
``guard_zh.jsonl``): a count said as a bound or an approximation (``qualifier``: 将近三个, 不到三个,
三个以上, 至少三个, 一两个, 三五个; asked, never written as the number), what almost happened
(``not_done``: 差点用了), all but the count (``except``: 除了三个都用了), the item's name glued to
another noun (``other_thing``: 保险丝盒), someone else's or borrowed stock (``someone``: 老李的, 借了,
借给二号站), 等等 said as "and so on" or between two counts (``etc``), and stock taken from one place
and put into another (``moved``: never a use) — each with the correct neighbours that must still
be logged in one turn (fillers such as 等等，/对了，/帮我记一下 among them).
"""
from __future__ import annotations

from guard_round5 import FUS, WSH, rec

DRL = ("DRL-BIT-6", "drawer 4")
TIE = ("TIE-CBL-200", "drawer 7")

#: never written as heard: the box asks for one number (``asks``: True), says why (False) or either (None: a
#: move to a place is read back as a move)
ZH_NEVER = {
    "qualifier": (True, ["用了将近三个保险丝", "将近用了三个垫圈", "用了不到三个保险丝", "用了三个以上保险丝",
                         "用了三个保险丝以上", "至少用了三个保险丝", "用了至少两个钻头", "最多用了五个垫圈",
                         "用了超过三个保险丝", "用了不止三个扎带", "用了少于四个钻头", "收到不少于五个垫圈",
                         "用了三个左右保险丝", "用了三个保险丝左右", "用了大约三个保险丝", "用了快三个保险丝",
                         "几乎用了三个保险丝", "起码收到十个钻头", "用了接近三个保险丝", "用了一两个保险丝",
                         "用了三五个垫圈", "拿了三两个钻头", "收到一点五个保险丝", "用了顶多三个保险丝"]),
    "not_done": (False, ["差点用了三个保险丝", "差一点用了两个钻头", "险些用了三个保险丝", "差点儿拿了五个垫圈"]),
    "except": (False, ["除了三个保险丝都用了", "保险丝除了三个以外全用了", "用了除三个以外的保险丝", "垫圈除了五个之外都用了",
                       "用了保险丝，只剩三个", "钻头用了，就剩两个", "除了三个都用了", "其余的都用了，留了三个保险丝"]),
    "other_thing": (False, ["用了三个保险丝盒", "用了三个保险丝盒子", "收到两个钻头盒", "拿了两个扎带枪", "用了四个护目镜盒",
                            "收到五个垫圈盒", "保险丝盒用了三个", "用了三个保险丝盒里的保险丝", "用了一个钻头套"]),
    "someone": (False, ["用了老李的三个保险丝", "用了小王的两个钻头", "老李的保险丝用了三个", "用了别人的三个垫圈",
                        "用了隔壁车间的五个扎带", "用了二号站的三个保险丝", "拿了他的两个钻头", "用了三个老李的保险丝",
                        "借了两个钻头", "借给二号站三个保险丝", "借给老李两个钻头", "向老李借了三个保险丝",
                        "借用了三个保险丝", "外借五个垫圈"]),
    "etc": (False, ["用了三个保险丝、垫圈等等", "用了三个保险丝等等", "收到五个钻头、扎带等等", "用了三个，等等，四个保险丝",
                    "点了三个保险丝"]),
    "moved": (None, ["从30号拿了三个保险丝放到31号", "从三十号箱拿了三个保险丝放到三十一号箱", "拿了三个保险丝，从30号箱放到31号箱",
                      "从30号料箱取出两个钻头放进4号抽屉", "从四号抽屉拿了两个钻头放到三十号箱", "拿了三个保险丝放到4号抽屉"]),
}

#: correct commands beside them, ordinary fillers among them: logged in one turn
ZH_MUST = [
    ("用了二十四个保险丝", [rec(FUS[0], -24, FUS[1])]), ("用了十二个垫圈", [rec(WSH[0], -12, WSH[1])]),
    ("最近用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("三个保险丝都用了", [rec(FUS[0], -3, FUS[1])]),
    ("用了保险丝盒里的三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("给老李的车用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("收到老李送来的三个保险丝", [rec(FUS[0], 3, FUS[1])]), ("收到供应商的五个垫圈", [rec(WSH[0], 5, WSH[1])]),
    ("用了仓库的三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("用了30号箱的三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("从30号箱拿了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("从四号抽屉拿了两个钻头", [rec(DRL[0], -2, DRL[1])]),
    ("等等，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("等一下，收到五个钻头", [rec(DRL[0], 5, DRL[1])]),
    ("稍等，拿了两个垫圈", [rec(WSH[0], -2, WSH[1])]), ("对了，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("然后用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("好的，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("帮我记一下，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("用了三个保险丝，谢谢", [rec(FUS[0], -3, FUS[1])]),
    ("嗯，那个，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("用了三个保险丝啊", [rec(FUS[0], -3, FUS[1])]),
    ("差点儿忘了记，用了三个保险丝", [rec(FUS[0], -3, FUS[1])]), ("我这边用了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
    ("刚刚拿了三个扎带", [rec(TIE[0], -3, TIE[1])]), ("麻烦记一下，收到十个垫圈", [rec(WSH[0], 10, WSH[1])]),
]


def zh(c) -> None:
    """Every class above, the answers to the question a bound is asked with, and the neighbours."""
    c.add_sets(ZH_NEVER, ZH_MUST)
    # the count asked for after a bound: a plain number logs; another bound or a range never does
    for t, a, r in [("用了将近三个保险丝", "三个", [rec(FUS[0], -3, FUS[1])]),
                    ("至少用了两个钻头", "两个", [rec(DRL[0], -2, DRL[1])]),
                    ("用了一两个保险丝", "两个", [rec(FUS[0], -2, FUS[1])])]:
        c.add("qualifier", t, "may", r, answers=[a])
    for t, a in [("用了将近三个保险丝", "至少三个"), ("用了三个保险丝左右", "一两个"), ("用了不到三个保险丝", "三个左右"),
                 ("用了三个以上保险丝", "不止三个")]:
        c.add("qualifier", t, "never", answers=[a])
    # a move read back: "no" writes nothing; a take and put no move was understood of is never read back as a use
    c.add("moved", "从30号箱拿了三个保险丝放到4号抽屉", "never", answers=["不是"])
    for t in ["拿了三个保险丝，从30号箱放到31号箱", "拿了三个保险丝放到4号抽屉"]:
        c.add("moved", t, "never", answers=["是"])
    _probes(c)


def _probes(c) -> None:
    """Found by trying the round-7 fixes as a hostile user, before they were added here: bounds said
    after the count or in other words, what is kept, a strap, a master's or a line's stock, "and
    such", a take to another place with 拿到/带到, and fillers before 等等."""
    for t in ["用了三个不到的保险丝", "用了保险丝，三个不到", "用了不够三个保险丝", "撑死用了三个保险丝", "充其量用了三个保险丝",
              "少说用了三个保险丝", "用了不下三个保险丝", "用了大于三个保险丝", "用了十个出头的垫圈"]:
        c.add("qualifier", t, "never", asks=True)
    for cls, t in [("except", "保险丝用了，留下三个"), ("other_thing", "用了三个护目镜带"), ("someone", "用了师傅的三个保险丝"),
                   ("someone", "用了王师傅的三个保险丝"), ("someone", "用了一号线的三个保险丝"), ("etc", "用了三个保险丝什么的"),
                   ("etc", "用了三个保险丝之类的")]:
        c.add(cls, t, "never", asks=False)
    for t in ["把三个保险丝从30号箱拿到31号箱", "从30号箱拿了三个保险丝带到4号抽屉"]:
        c.add("moved", t, "never")
    for t in ["等等啊，用了三个保险丝", "稍等一下，用了三个保险丝", "呃，等等，用了三个保险丝"]:
        c.add("neighbour", t, "must", [rec(FUS[0], -3, FUS[1])])
