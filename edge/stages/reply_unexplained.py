"""What the box says when a word of a command was left unexplained and nothing was written
(:mod:`edge.stages.nlu.accounting`: the kinds and what they stand for): the words said back, why,
and what to say instead. English and Mandarin."""
from __future__ import annotations


def unexplained_reply(kind: str, words: str, language: str = "en") -> str:
    """Why nothing was written when a word of the command was left unexplained (see
    :mod:`edge.stages.nlu.accounting`): the words said back and what to say instead."""
    if language == "zh":
        return {"question": f"没有记录：“{words}”听起来是在提问。要记录的话，请直接说，例如“用了3个保险丝”。",
                "frequency": f"没有记录：“{words}”是次数，不是数量。请说一共多少。",
                "counts": f"没有记录：我听到了几个数量（{words}）。请一次说一项变动。",
                "direction": f"没有记录：一句话里既有{words}。请一次说一项变动。",
                "negation": f"没有记录：你在变动旁边说了“{words}”。请一次说一项变动。",
                "size": f"没有记录：“{words}”是规格，不是数量。请说是哪一种、用了几个。",
                "not_count": f"没有记录：“{words}”不是这次的数量（是序号或别的东西的数目）。请说一共多少。",
                "hedge": f"没有记录：你说的是“{words}”，不确定。确定以后请再说一次。",
                "correction": f"没有记录：你改了口（“{words}”）。请把要记的那一项完整地再说一次。",
                "other_item": f"没有记录：“{words}”里有两样东西但只有一个数量。请每样东西各说数量。",
                "time": f"没有记录：你说的是“{words}”，记录只能记在现在的时间。请在控制台按日期补记，或不带时间再说一次。",
                "future": f"没有记录：“{words}”说的是还没发生的事。用了以后再告诉我。",
                "not_plain": f"没有记录：“{words}”让这个数不是这次变动的数量。请说一共用了或收到多少。",
                "back": f"没有记录：“{words}”说不清是放回库存还是拿出去。放回请说“退回”加数量和物品，用了请说“用了”加数量和物品。",
                "state": f"没有记录：“{words}”说的是现在有多少，不是变动。要盘点请说“盘点”加数量；用了或收到请直接说。",
                "total": f"没有记录：“{words}”可能包括已经记录过的变动。请只说新的变动。",
                "not_done": f"没有记录：“{words}”说的不是真的发生的变动。真的发生了再直接告诉我，例如“用了3个保险丝”。",
                "equipment": f"没有记录：“{words}”是装进设备或车里，不是入库。用掉了请说“用了”加数量和物品；放进库位请说是哪个料箱或货架。",
                "count_what": f"没有记录：“{words}”说不清数的是库存还是用掉的。盘点请说“盘点”加数量和物品；用了请说“用了”加数量和物品。",
                "direction_back": f"没有记录：“{words}”说不清是出库还是入库、是谁的库存。请直接说，例如“用了3个保险丝”或“收到3个保险丝”。",
                "etc": f"没有记录：“{words}”说还有别的东西没说出来。请每样东西各说数量。",
                "moved": f"没有记录：“{words}”是从一个位置移到另一个位置，不是用掉。移动请说从哪里移多少到哪里，"
                         "例如“从30号料箱移3个保险丝到4号抽屉”。",
                "someones": f"没有记录：“{words}”是别人的库存，不是这里的。这里的库存用了或收到了，请直接说，例如“用了3个保险丝”。",
                "loan": f"没有记录：“{words}”是借进或借出，不是用掉或收到，我不猜。用掉了请说“用了”，收到了请说“收到”，加数量和物品。",
                "other_thing": f"没有记录：“{words}”不是库存里的这样东西，是另一种东西。请说清楚是哪一样。"}.get(
                    kind, f"没有记录：我不明白“{words}”在这句话里的意思。请一次说一项变动。")
    return {"question": f"Nothing logged: that sounded like a question (\u201c{words}\u201d). To log a change, "
                        "say it plainly, like 'log 3 fuses used'.",
            "someone": f"Nothing logged: that was about someone else's change (\u201c{words}\u201d). Whoever made "
                       "it can log it; say your own change on its own.",
            "direction": f"Nothing logged: you said {words} in one sentence. Please say each change on its own.",
            "frequency": f"Nothing logged: \u201c{words}\u201d says how often, not how many. Please say how many "
                         "in all.",
            "but": "Nothing logged: I could not tell which count you meant after \u201cbut\u201d. Please say the "
                   "change once more.",
            "other_item": f"Nothing logged: I heard \u201c{words}\u201d with one count. Please say each item "
                          "with its own count.",
            "negation": f"Nothing logged: you said \u201c{words}\u201d beside a change. Please say each change "
                        "on its own.",
            "time": f"Nothing logged: you said \u201c{words}\u201d, and a record carries the time it is logged, so "
                    "it would be written at the wrong time. Say it without the time to log it as of now.",
            "not_count": f"Nothing logged: \u201c{words}\u201d is not how many. Please say how many in all.",
            "size": f"Nothing logged: you said \u201c{words}\u201d, and the item I found is not that size. "
                    "Please say which one, with its size.",
            "hedge": f"Nothing logged: you said \u201c{words}\u201d. Say it again when you are sure.",
            "last": f"Nothing logged: \u201c{words}\u201d would leave none, and I won't guess against the stock. "
                    "Please say how many you used, or count what is left.",
            "total": f"Nothing logged: \u201c{words}\u201d may include changes already logged. Please say only "
                     "what is new since the last record.",
            "back": f"Nothing logged: \u201c{words}\u201d may be stock going back in or going out, and I won't "
                    "guess. Say 'we returned', the count and the item for stock coming back, or 'we used' for stock going "
                    "out.",
            "state": "Nothing logged: that says how many there are, not a change. To record a count, say"
                     " 'count', the number and the item; to log a change, say 'we used …' or 'we received …'.",
            "counts": f"Nothing logged: I heard {words} in one change. Please say each change on its own.",
            "not_done": f"Nothing logged: \u201c{words}\u201d does not say a change that happened. When it has, "
                        "say it plainly, like 'we used 3 fuses'.",
            "equipment": f"Nothing logged: \u201c{words}\u201d puts stock into a machine, a vehicle or a kit, which "
                         "is no receipt. If it was used, say 'we used', the count and the item; if it went into "
                         "stock, say which bin, shelf or drawer.",
            "count_what": f"Nothing counted: \u201c{words}\u201d does not say how many are in stock. To record a count, "
                          "say 'counted', the number and the item; for a use, say 'we used …'.",
            "undo": f"Nothing logged or undone: you said \u201c{words}\u201d beside a change. Please say 'undo' on its "
                    "own first, then the change.",
            "direction_back": f"Nothing logged: \u201c{words}\u201d takes stock out, not in, and I won't guess. "
                              "Say it as a use, like 'log 3 fuses used', to take them off the stock.",
            "moved": f"Nothing logged: \u201c{words}\u201d moves stock between places, which is no use or receipt. "
                     "To move it, say how many, from which place and to which place.",
            "reason": f"Nothing logged: \u201c{words}\u201d may change the count. Please say the change on its "
                      "own, with the number to log.",
            "correction": f"Nothing logged: you corrected yourself (\u201c{words}\u201d). Please say the whole "
                          "change once more.",
            **{k: v.format(words=words) for k, v in _SAID_WHY.items()}}.get(kind, f"Nothing logged: I could not place \u201c{words}\u201d. Please "
                                                 "say the change once more.")


#: a test said first (:mod:`edge.stages.nlu.understand`), an item set aside beside the change
#: (:mod:`edge.stages.nlu.asides`), stock said to be not the store's
#: (:mod:`edge.stages.nlu.not_ours`)
_SAID_WHY = {
    "test": "Nothing logged: that sounded like a test (\u201c{words}\u201d). Say the change without it to log it.",
    "aside": "Nothing logged or undone: you set \u201c{words}\u201d aside beside a change, and I won't guess which "
             "item the count is for. To take a record back, say 'undo' on its own first; then say the change on its "
             "own.",
    "someones": "Nothing logged: \u201c{words}\u201d sounds like someone else's stock, not the store's. If it came out "
                "of our stock, say it without that, like 'we used 3 fuses'.",
    "loan": "Nothing logged: \u201c{words}\u201d is a loan: it goes back or comes back, so it is neither a use nor a "
            "receipt of our stock. Log it when it is used or received for good.",
    "swap": "Nothing logged: \u201c{words}\u201d is a swap, two changes in one. Please say each change on its own, "
            "with its count.",
    "place": "Nothing logged: \u201c{words}\u201d is not a place of the stock, so it is not the item's bin that "
             "changed. Say which bin, shelf or drawer it was, or say it without the place if it was the stock.",
}
