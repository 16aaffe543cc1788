"""Round 5 of the "every word accounted for" sets (called by ``make_guard.py``): a bare count of an
item counted in lots, what is there said as a change, a change typed in the present tense, and
answers to a read-back that neither say yes nor no — each class with variants and the correct
neighbours that must still be logged in one turn.

``confidence`` on a case is the transcript's confidence (speech heard by the recognizer); without
it the text is typed (the console, ``edge ask``).
"""
from __future__ import annotations


def rec(sku: str, delta: float, place: str, kind: str = "log") -> dict:
    return {"sku": sku, "delta": delta, "place": place, "kind": kind}


GLV, PPR, PNT = ("GLV-NIT-L", "shelf A"), ("PPR-A4", "shelf D"), ("PNT-WHT", "shelf C")
FUS, WSH, DRL = ("FUS-5A", "bin 30"), ("WSH-M8", "bin 2023"), ("DRL-BIT-6", "drawer 4")


def small(c) -> None:
    """The session inventory (gloves in boxes, paper in pallets, paint in cans)."""
    # 1. a bare count of an item counted in lots: the pieces, or the lots? asked, never written
    for t in ["we used 3 gloves", "we received 12 gloves", "we took 2 nitrile gloves", "we used one glove",
              "we used a glove", "log 4 gloves used", "4 gloves used", "just used 6 gloves",
              "we took 10 gloves from shelf A", "we used 3 papers", "we received 2 copy papers", "we used 3 paints",
              "we received 2 white paints", "we used 3 fuses and 2 gloves", "we received 2 washers and 5 gloves",
              "we used 3 gloves and 2 boxes of gloves", "we used 2 boxes of gloves and 3 gloves",
              "we used 20 nitrile gloves", "grabbed 2 gloves", "we used 2 gloves and received 3 fuses"]:
        c.add("lot_piece", t, "never", asks=True)
    for t, r in [("we used 2 boxes of gloves", [rec(*GLV[:1], -2, GLV[1])]),
                 ("we received one box of gloves", [rec(GLV[0], 1, GLV[1])]),
                 ("we used one box of nitrile gloves", [rec(GLV[0], -1, GLV[1])]),
                 ("we used gloves, 2 boxes", [rec(GLV[0], -2, GLV[1])]),
                 ("we used 3 fuses and 2 boxes of gloves", [rec(FUS[0], -3, FUS[1]), rec(GLV[0], -2, GLV[1])]),
                 ("we received a pallet of paper", [rec(PPR[0], 1, PPR[1])]),
                 ("we received 4 cans of white paint", [rec(PNT[0], 4, PNT[1])]),
                 ("log twenty boxes of nitrile gloves received", [rec(GLV[0], 20, GLV[1])])]:
        c.add("neighbour", t, "must", r)
    c.add("lot_piece", "we used 3 gloves", "may", [rec(GLV[0], -3, GLV[1])], answers=["3 boxes"])
    c.add("lot_piece", "we received 2 paints", "may", [rec(PNT[0], 2, PNT[1])], answers=["two cans"])
    # the pieces said again to "how many boxes?" are no count of boxes (found by trying)
    for a in ["3 gloves", "3 single gloves", "3 pairs"]:
        c.add("lot_piece", "we used 3 gloves", "never", answers=[a])
    for a, q in [("three", 3), ("one box", 1), ("3 boxes of gloves", 3)]:
        c.add("lot_piece", "we used 3 gloves", "may", [rec(GLV[0], -q, GLV[1])], answers=[a])
    c.add("lot_piece", "we used 3 fuses and 2 gloves", "may", [rec(FUS[0], -3, FUS[1]), rec(GLV[0], -2, GLV[1])],
          answers=["2 boxes"])
    # 2. what is there is no change: never a receipt, whichever path read it
    for t in ["there are 40 fuses", "there's 40 fuses on the shelf", "we've got 40 fuses", "I've got 12 washers",
              "there are 300 cable ties", "there is 1 spanner", "there were 40 fuses", "we've got 100 washers in the bin",
              "40 fuses are on the shelf", "3 drill bits are in the drawer", "there are 20 drill bits left",
              "we've got 40 fuses in", "there's 2 goggles", "I've got 5 M8 bolts here"]:
        c.add("state", t, "never")
    # what is there said as a count (the count templates: "there are only …", "… in bin 30") is a count
    for t, r in [("there are still 20 drill bits", rec(DRL[0], -5, DRL[1], "count")),
                 ("there's only 2 goggles", rec("GOG-SAF", -6, "shelf B", "count")),
                 ("there are 40 fuses in bin 30", rec(FUS[0], -20, FUS[1], "count"))]:
        c.add("state", t, "may", [r])
    for t, r in [("we got 40 fuses", [rec(FUS[0], 40, FUS[1])]), ("we have used 3 fuses", [rec(FUS[0], -3, FUS[1])]),
                 ("we've used 3 fuses", [rec(FUS[0], -3, FUS[1])]),
                 ("we have received 10 washers", [rec(WSH[0], 10, WSH[1])]),
                 ("we've just received 10 washers", [rec(WSH[0], 10, WSH[1])]),
                 ("we used 3 fuses that are in bin 30", [rec(FUS[0], -3, FUS[1])]),
                 ("3 fuses are used", [rec(FUS[0], -3, FUS[1])])]:
        c.add("neighbour", t, "must", r)
    # 3. a change typed in the present tense: a habit, or done? read back; heard speech logs (the
    #    recognizer drops the "d" of "we used")
    for t in ["we use 3 fuses", "I take 2 washers", "we use 3 fuses and 2 washers", "they use 4 drill bits",
              "we receive 10 washers", "we just use 2 fuses", "I grab 3 fuses"]:
        c.add("present", t, "never", asks=True)
    for t, a, r in [("we use 3 fuses", "yes", [rec(FUS[0], -3, FUS[1])]),
                    ("we use 3 fuses and 2 washers", "yes", [rec(FUS[0], -3, FUS[1]), rec(WSH[0], -2, WSH[1])]),
                    ]:
        c.add("present", t, "may", r, answers=[a])
    c.add("present", "I take 2 washers", "never", answers=["no"])
    for t, r in [("we use 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("we use three drill bits from drawer four",
                                                                 [rec(DRL[0], -3, DRL[1])])]:
        c.add("present_heard", t, "must", r)
        c.rows[-1]["confidence"] = 0.9
    for t in ["we use 3 fuses every day", "we usually use 3 fuses"]:
        c.add("present_heard", t, "never")
        c.rows[-1]["confidence"] = 0.9
    # 4. an answer to a read-back that is neither yes nor no: asked again, nothing written
    for a in ["no wait", "wait", "hang on", "hold on", "wait a second", "one moment", "not yet", "fine", "whatever",
              "I guess so", "yes wait", "no wait yes", "alright", "if you say so", "hmm maybe", "yes I think so",
              "yeah probably", "I think so, yes", "not sure"]:
        c.add("answer", "add 5 to bin 30", "never", answers=[a])
    for answers, r in [(["no wait", "yes"], [rec(FUS[0], 5, FUS[1])]),
                       (["whatever", "yes"], [rec(FUS[0], 5, FUS[1])]), (["yes"], [rec(FUS[0], 5, FUS[1])])]:
        c.add("answer", "add 5 to bin 30", "may", r, answers=answers)
    c.add("answer", "add 5 to bin 30", "never", answers=["hang on", "no"])
    c.add("answer", "we used 3 gloves", "may", [rec(GLV[0], -2, GLV[1])], answers=["wait", "2 boxes"])
    _probes(c)


def _probes(c) -> None:
    """Found by trying the round-5 fixes as a hostile user, before they were added here: a taking
    verb with "back" (in, out, or both?)."""
    for t in ["took 3 fuses back", "we took 3 fuses back", "took 3 fuses back to bin 30", "we took back 3 fuses",
              "grabbed 3 fuses and took them back", "we took 3 fuses back from the van",
              "we took 2 drill bits back to drawer 4", "carried 4 washers back to the bin", "we brought 2 goggles back"]:
        c.add("back", t, "never")
    for t, r in [("we took 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("we put 3 fuses back in bin 30", [rec(FUS[0], 3, FUS[1])]),
                 ("we took 3 fuses out of the back of bin 30", [rec(FUS[0], -3, FUS[1])]),
                 ("we returned 3 fuses to bin 30", [rec(FUS[0], 3, FUS[1])]),
                 ("we got 3 fuses back", [rec(FUS[0], 3, FUS[1])])]:
        c.add("neighbour", t, "must", r)


#: the big inventory's items counted in lots, one place each
BIG = {"nitrile gloves M": ("GLV-NIT-M", "shelf A"), "leather gloves M": ("GLV-LTH-M", "bin 221"),
       "leather gloves L": ("GLV-LTH-L", "shelf B"), "duct tape": ("TAPE-DUCT", "shelf G"),
       "WD-40 spray": ("WD-40", "shelf F"), "hex key set": ("HEXK-SET", "drawer 31")}


def big(c) -> None:
    """The 2,065-item inventory: boxes, pairs, rolls, cans and sets."""
    for t in ["we used 3 nitrile gloves M", "we received 10 nitrile gloves M", "we used 5 leather gloves M",
              "we used 3 leather gloves L", "we used 2 duct tape", "we received 2 duct tapes", "we used 3 WD-40",
              "we used 2 WD-40 sprays", "we used 2 hex keys", "we took 4 leather gloves M",
              "we used 2 m8 nuts and 3 nitrile gloves M"]:
        c.add("lot_piece", t, "never", asks=True)
    for t, (sku, place), q in [("we used 2 boxes of nitrile gloves M", BIG["nitrile gloves M"], -2),
                               ("we used 3 pairs of leather gloves M", BIG["leather gloves M"], -3),
                               ("we used a pair of leather gloves L", BIG["leather gloves L"], -1),
                               ("we used 2 rolls of duct tape", BIG["duct tape"], -2),
                               ("we used a can of WD-40 spray", BIG["WD-40 spray"], -1),
                               ("we used 1 hex key set", BIG["hex key set"], -1),
                               ("received five silicone sealant tubes", ("SEAL-RU", "shelf G"), 5),
                               ("we used 3 nitrile gloves M boxes", BIG["nitrile gloves M"], -3)]:
        c.add("neighbour", t, "must", [rec(sku, q, place)])
    for t in ["there are 40 m8 nuts", "we've got 20 fuses 10 amp", "12 o-rings 10 mm are in the bin"]:
        c.add("state", t, "never")
    for t in ["we use 3 m8 nuts", "I take 2 cutting discs 115 mm"]:
        c.add("present", t, "never", asks=True)
    # found by trying: a unit the unit table does not know ("30 pounds of"), a month said as the time
    for cls, t in [("unit", "we used 30 pounds of m8 nuts"), ("unit", "we received 3 lbs of m8 washers"),
                   ("unit", "we used 2 ounces of m8 nuts"), ("time", "we used 3 m8 nuts in november"),
                   ("time", "we used 3 m8 nuts on december 5"), ("time", "we used 3 m8 nuts in may"),
                   ("time", "back in october we used 2 m8 nuts")]:
        c.add(cls, t, "never")
    for t, r in [("we used 3 of the m8 nuts", [rec("NUT-M8", -3, "bin 60")]),
                 ("we used 3 m8 nuts this afternoon", [rec("NUT-M8", -3, "bin 60")])]:
        c.add("neighbour", t, "must", r)


ZH = {"保险丝": ("FUS-5A", "bin 30"), "手套": ("GLV-NIT-L", "shelf A")}


def zh(c) -> None:
    """Mandarin: a count with a piece classifier of an item counted in boxes, what is there, and
    answers to a read-back (等一下, 好吧, 不对)."""
    for t in ["用了三个手套", "收到两个手套", "用了三只手套", "用了三手套", "拿了五个手套", "用了三个手套和两个保险丝",
              "收到两个保险丝和四只手套"]:
        c.add("lot_piece", t, "never", asks=True)
    for t, r in [("用了三盒手套和两个保险丝", [rec(GLV[0], -3, GLV[1]), rec(FUS[0], -2, FUS[1])]),
                 ("收到一盒手套", [rec(GLV[0], 1, GLV[1])])]:
        c.add("neighbour", t, "must", r)
    c.add("lot_piece", "用了三个手套", "may", [rec(GLV[0], -3, GLV[1])], answers=["三盒"])
    for a in ["三个", "三个手套", "三只"]:
        c.add("lot_piece", "用了三个手套", "never", answers=[a])
    for t in ["有四十个保险丝", "还有四十个保险丝", "三十号箱有四十个保险丝", "保险丝有四十个", "我们有四十个保险丝",
              "现在有四十个保险丝", "还剩四十个保险丝"]:
        c.add("state", t, "never")
    for a in ["好吧", "行吧", "随便", "等一下", "等等", "不对", "不对，等一下", "稍等", "嗯好吧", "都行", "应该吧", "可能吧"]:
        c.add("answer", "用了三十个护目镜", "never", answers=[a])
    for answers, r in [(["等一下", "是"], [rec("GOG-SAF", -30, "shelf B")]), (["是的"], [rec("GOG-SAF", -30, "shelf B")]),
                       (["好吧", "是"], [rec("GOG-SAF", -30, "shelf B")])]:
        c.add("answer", "用了三十个护目镜", "may", r, answers=answers)
    c.add("answer", "用了三十个护目镜", "never", answers=["等一下", "不是"])
    # found by trying: taken "back" (in or out?), borrowed, and hedges said with 吧, 应该, 三个多
    for cls, t in [("back", "刚才拿了三个保险丝回来"), ("back", "拿了两盒手套回来"), ("back", "借了三个保险丝"),
                   ("back", "领了三个保险丝回去"), ("hedge", "用了三个保险丝吧"), ("hedge", "应该用了三个保险丝"),
                   ("hedge", "用了三个多保险丝"), ("hedge", "收到两盒多手套")]:
        c.add(cls, t, "never")
    for t, r in [("还回三个保险丝", [rec(FUS[0], 3, FUS[1])]), ("拿了三个保险丝", [rec(FUS[0], -3, FUS[1])]),
                 ("又用了三个保险丝", [rec(FUS[0], -3, FUS[1])])]:
        c.add("neighbour", t, "must", r)
