"""The evaluation cases written one by one (see casekit for the shape), over the pinned items of
make_inventory.py. Each section is one behaviour of the stock room."""
from __future__ import annotations

from casekit import case as c

Q, LG, U, CN, PC, TR, SC, LS, OT = ("query_stock", "log_record", "undo", "cancel", "place_contents", "transfer",
                                    "stock_count", "low_stock", "other")
NOTHING: tuple = ()


def stock_per_place() -> list[dict]:
    """Queries per place and in total; logs that name their place, use the only one, or must ask."""
    return [
        c("place", Q, "how many M8 x 30 hex bolts do we have", reply=("200", "bin 12", "bin 47"), asks=False),
        c("place", Q, "how many hex bolts M8 x 30 mm are in bin 47", reply=("60",), asks=False),
        c("place", Q, "how many six millimetre drill bits are there", reply=("35", "drawer 4", "bin 118")),
        c("place", Q, "how many drill bits 6 mm are in bin one eighteen", reply=("10",), asks=False),
        c("place", Q, "where are the large nitrile gloves", reply=("shelf A", "shelf B"), p=True),
        c("place", Q, "how many boxes of nitrile gloves L on shelf B", reply=("4",), asks=False),
        c("place", Q, "how much flex cable 2.5 mm have we got in total", reply=("100",), p=True),
        c("place", Q, "where do we keep the 380 cable ties", reply=("drawer 7", "drawer 8"), p=True),
        c("place", Q, "how many M12 x 100 bolts are on shelf C", reply=("40",)),
        c("place", Q, "is there anything left of the 125 cutting discs in drawer twelve", reply=("20",), p=True),
        c("place", LG, "we used three drill bits 6 mm from drawer four", [("DB-6", -3, "drawer 4")], asks=False),
        c("place", LG, "we used two drill bits 6 mm", [("DB-6", -2, "bin 118")], asks=True,
          answers=("bin one eighteen",), reply=("drawer 4", "bin 118")),
        c("place", LG, "took ten M8 x 30 bolts", [("HB-M8-30", -10, "bin 12")], asks=True,
          answers=("bin twelve",), p=True),
        c("place", LG, "log five M8 x 30 bolts used", NOTHING, asks=True, reply=("bin 12", "bin 47")),
        c("place", LG, "we used four hex bolts M8 x 40 mm", [("HB-M8-40", -4, "bin 13")], asks=False),
        c("place", LG, "we used 2 boxes of nitrile gloves L from shelf B", [("GLV-NIT-L", -2, "shelf B")], asks=False),
        c("place", LG, "received 20 metres of flex cable 2.5 mm", [("CBL-FLX-2.5", 20, "shelf E")], asks=True,
          answers=("shelf E",)),
        c("place", LG, "put 30 cable ties 380 mm into drawer 8", [("CT-380", 30, "drawer 8")], asks=False),
        c("place", LG, "we got 12 hose clamps 40 mm in", [("HC-40", 12, "drawer 9")], asks=False, p=True),
        c("place", LG, "used 5 cutting discs 125 mm from the shelf", [("CD-125", -5, "shelf D")], asks=False, p=True),
    ]


def sizes_and_variants() -> list[dict]:
    """Sizes said the way people say them; a missing variant asks naming the variants; a
    non-existent one is said so; the answer given as a number, "the long ones", or another way."""
    return [
        c("variant", LG, "we used four M10 bolts eighty millimetre", [("HB-M10-80", -4, "bin 22")], asks=False),
        c("variant", LG, "we took six M10 by 80 bolts", [("HB-M10-80", -6, "bin 22")], asks=False, p=True),
        c("variant", LG, "grabbed two ten by eighty hex bolts", [("HB-M10-80", -2, "bin 22")], p=True),
        c("variant", LG, "we used three six mil drill bits from drawer four", [("DB-6", -3, "drawer 4")], asks=False,
          p=True),
        c("variant", LG, "used one drill bit six and a half mil", [("DB-6.5", -1, "drawer 4")], asks=False, p=True),
        c("variant", LG, "we used two eight mil drill bits", [("DB-8", -2, "drawer 4")], asks=False, p=True),
        c("variant", LG, "we used one box of large nitrile gloves from shelf A", [("GLV-NIT-L", -1, "shelf A")],
          asks=False),
        c("variant", LG, "received 4 boxes of medium nitrile gloves", [("GLV-NIT-M", 4, "shelf A")], asks=False),
        c("variant", LG, "we used a pair of extra large leather gloves", [("GLV-LTH-XL", -1, "shelf B")], p=True),
        c("variant", Q, "how many small nitrile gloves are left", reply=("6",), asks=False),
        c("variant", LG, "took 6 o-rings twelve mil", [("OR-12", -6, "drawer 20")], asks=False, p=True),
        c("variant", LG, "we used two one-twenty-five cutting discs from shelf D", [("CD-125", -2, "shelf D")], p=True),
        c("variant", LG, "we used five M10 bolts", [("HB-M10-80", -5, "bin 22")], asks=True, answers=("eighty",),
          reply=("80", "100")),
        c("variant", LG, "we used three M10 hex bolts", [("HB-M10-50", -3, "bin 20")], asks=True,
          answers=("fifty millimetre",)),
        c("variant", LG, "log eight M8 bolts used from bin 16", [("HB-M8-80", -8, "bin 16")], asks=False),
        c("variant", LG, "we used ten cable ties from drawer 7", [("CT-380", -10, "drawer 7")], asks=True,
          answers=("the long ones",), reply=("200", "380")),
        c("variant", LG, "we used 25 cable ties", [("CT-200", -25, "drawer 7")], asks=True, answers=("the short ones",)),
        c("variant", LG, "used four hose clamps", [("HC-40", -4, "drawer 9")], asks=True, answers=("the big ones",)),
        c("variant", LG, "we used six jubilee clips", [("HC-20", -6, "drawer 9")], asks=True,
          answers=("the small ones",), p=True),
        c("variant", LG, "we used two drill bits from drawer 4", [("DB-6.5", -2, "drawer 4")], asks=True,
          answers=("six and a half millimetre",)),
        c("variant", LG, "took one drill bit out of drawer four", [("DB-8", -1, "drawer 4")], asks=True,
          answers=("the eight mil one",), p=True),
        c("variant", LG, "we used three M8 x 30 bolts from bin twelve", [("HB-M8-30", -3, "bin 12")], asks=False),
        c("variant", LG, "we used two hex bolts M8 from bin 13", [("HB-M8-40", -2, "bin 13")], asks=False),
        c("variant", LG, "we used 2 litres of hydraulic oil", [("OIL-HYD-46", -2, "shelf F")], asks=True,
          answers=("forty six",)),
        c("variant", LG, "we used four M10 bolts 90 millimetre", NOTHING, reply=("80", "100")),
        c("variant", LG, "we used two drill bits 7.25 mm", NOTHING, reply=("7.5",)),
        c("variant", LG, "we used one box of triple extra large nitrile gloves", NOTHING, p=True),
        c("variant", Q, "how many M10 bolts 90 mm do we have", NOTHING, reply=("80",)),
        c("variant", LG, "used three o-rings 61 mm", NOTHING, reply=("60",)),
        c("variant", Q, "how many large gloves do we have", NOTHING, reply=("nitrile", "leather")),
        c("variant", LG, "we used one box of large gloves", [("GLV-NIT-L", -1, "shelf A")], asks=True,
          answers=("nitrile", "shelf A")),
        c("variant", Q, "how many M8 x 30 mm bolts", reply=("200",)),
        c("variant", Q, "what have we got in M10 bolts", reply=("80",), p=True),
        c("variant", LG, "we used a three mil drill bit", [("DB-3", -1, "drawer 3")], p=True),
        c("variant", LG, "two masonry bits eight mil used", [("MDB-8", -2, "drawer 6")], p=True),
    ]


def place_contents() -> list[dict]:
    return [
        c("template-like", PC, "what is in drawer 4", reply=("drill bit",)),
        c("template-like", PC, "what's in bin 12", reply=("M8",)),
        c("template-like", PC, "what do we keep in drawer 9", reply=("hose clamp",)),
        c("template-like", PC, "what is on shelf F", reply=("hydraulic oil", "cutting oil")),
        c("template-like", PC, "list the contents of drawer 40", reply=("Älva", "Ölva")),
        c("paraphrase", PC, "what lives in drawer seven", reply=("cable tie",), p=True),
        c("paraphrase", PC, "tell me what's sitting on shelf D", reply=("cutting disc",), p=True),
        c("paraphrase", PC, "drawer thirty, what's in there", reply=("spanner",), p=True),
        c("paraphrase", PC, "remind me what goes in bin two oh four", reply=("washer",), p=True),
        c("paraphrase", PC, "which items are stored on shelf A", reply=("nitrile gloves",), p=True),
        c("paraphrase", PC, "anything in drawer 35?", reply=("bearing",), p=True),
        c("template-like", PC, "what's in drawer 20", reply=("o-ring",)),
        c("template-like", PC, "what is in bin 30", reply=("fuse",)),
    ]


def transfers() -> list[dict]:
    return [
        c("template-like", TR, "move 20 M8 x 30 bolts from bin 12 to bin 47",
          [("HB-M8-30", -20, "bin 12", "transfer"), ("HB-M8-30", 20, "bin 47", "transfer")]),
        c("template-like", TR, "move 5 drill bits 6 mm from drawer 4 to bin 118",
          [("DB-6", -5, "drawer 4", "transfer"), ("DB-6", 5, "bin 118", "transfer")]),
        c("template-like", TR, "transfer 3 boxes of nitrile gloves L from shelf A to shelf B",
          [("GLV-NIT-L", -3, "shelf A", "transfer"), ("GLV-NIT-L", 3, "shelf B", "transfer")]),
        c("template-like", TR, "move 10 cutting discs 125 mm from shelf D to drawer 12",
          [("CD-125", -10, "shelf D", "transfer"), ("CD-125", 10, "drawer 12", "transfer")]),
        c("paraphrase", TR, "I shifted fifty cable ties 380 from drawer eight over to drawer seven",
          [("CT-380", -50, "drawer 8", "transfer"), ("CT-380", 50, "drawer 7", "transfer")], p=True),
        c("paraphrase", TR, "put 30 metres of the 2.5 flex cable from shelf E into bin 250",
          [("CBL-FLX-2.5", -30, "shelf E", "transfer"), ("CBL-FLX-2.5", 30, "bin 250", "transfer")], p=True),
        c("paraphrase", TR, "take 15 hose clamps 20 mm out of drawer 9 and put them in drawer 8",
          [("HC-20", -15, "drawer 9", "transfer"), ("HC-20", 15, "drawer 8", "transfer")], p=True, answers=("yes",)),
        c("paraphrase", TR, "relocate 6 safety goggles from shelf B to shelf A",
          [("GOG-SAF", -6, "shelf B", "transfer"), ("GOG-SAF", 6, "shelf A", "transfer")], p=True, answers=("yes",)),
        c("template-like", TR, "move 4 hex bolts M12 x 100 mm from shelf C to bin 31",
          [("HB-M12-100", -4, "shelf C", "transfer"), ("HB-M12-100", 4, "bin 31", "transfer")]),
        c("paraphrase", TR, "ten of the M8 nuts went from bin sixty to bin sixty one",
          [("NUT-M8", -10, "bin 60", "transfer"), ("NUT-M8", 10, "bin 61", "transfer")], p=True, answers=("yes",)),
        c("template-like", TR, "move 8 drill bits 6 mm to bin 118", [("DB-6", -8, "drawer 4", "transfer"),
                                                                      ("DB-6", 8, "bin 118", "transfer")],
          answers=("drawer four",)),
        c("template-like", TR, "move 5 M8 x 30 bolts from bin 12 to bin 12", NOTHING),
        c("template-like", TR, "move 500 drill bits 6 mm from drawer 4 to bin 118", NOTHING, answers=("no",)),
        c("paraphrase", TR, "can you book 2 rolls of duct tape over from shelf G to shelf H",
          [("TAPE-DUCT", -2, "shelf G", "transfer"), ("TAPE-DUCT", 2, "shelf H", "transfer")], p=True, answers=("yes",)),
    ]


def stock_counts() -> list[dict]:
    return [
        c("template-like", SC, "count: there are 130 M8 x 30 bolts in bin 12", [("HB-M8-30", -10, "bin 12", "count")]),
        c("template-like", SC, "I counted 22 drill bits 6 mm in drawer 4", [("DB-6", -3, "drawer 4", "count")]),
        c("template-like", SC, "stock count drawer 9 hose clamps 20 mm 70", [("HC-20", -10, "drawer 9", "count")]),
        c("template-like", SC, "we counted 15 boxes of nitrile gloves L on shelf A",
          [("GLV-NIT-L", 3, "shelf A", "count")]),
        c("paraphrase", SC, "there are actually only 40 cutting discs 125 on shelf D",
          [("CD-125", -5, "shelf D", "count")], p=True),
        c("paraphrase", SC, "just did a stock take, bin 60 has 790 M8 nuts", [("NUT-M8", -10, "bin 60", "count")],
          p=True),
        c("paraphrase", SC, "the real number of 5 amp fuses in bin 30 is 55", [("FUS-5A", -5, "bin 30", "count")],
          p=True),
        c("paraphrase", SC, "set the flex cable 1.5 mm on shelf E to 142 metres",
          [("CBL-FLX-1.5", -8, "shelf E", "count")], p=True),
        c("template-like", SC, "count 11 safety goggles on shelf B", [("GOG-SAF", 3, "shelf B", "count")]),
        c("paraphrase", SC, "after counting drawer 20 we have 58 o-rings 12 mm", [("OR-12", -2, "drawer 20", "count")],
          p=True),
        c("template-like", SC, "I counted 9 drill bits 6 mm", [("DB-6", -1, "bin 118", "count")], asks=True,
          answers=("bin 118",)),
        c("paraphrase", SC, "recount: 57 litres of hydraulic fluid on shelf F",
          [("OIL-HYD-46", -3, "shelf F", "count")], p=True),
    ]


def low_stock() -> list[dict]:
    return [
        c("template-like", LS, "what is running low"),
        c("template-like", LS, "which items are below their reorder level"),
        c("template-like", LS, "what do we need to reorder"),
        c("paraphrase", LS, "anything we're about to run out of?", p=True),
        c("paraphrase", LS, "what should I put on the order list", p=True),
        c("paraphrase", LS, "are we short on anything", p=True),
        c("template-like", LS, "are we low on gloves", reply=("nitrile",)),
        c("template-like", LS, "are we running low on cutting discs", reply=("230",)),
        c("paraphrase", LS, "is anything on shelf F getting low", reply=("cutting oil",), p=True),
        c("paraphrase", LS, "do any of the drill bits need restocking", reply=("10",), p=True),
        c("template-like", LS, "low stock report"),
        c("paraphrase", LS, "give me the shopping list for the supplier", p=True),
        c("template-like", LS, "which nuts are low", reply=("M12",)),
    ]


def cancels() -> list[dict]:
    return [
        c("cancel", CN, "never mind", asks=False),
        c("cancel", CN, "forget it", asks=False),
        c("cancel", CN, "oh never mind, I found them", p=True),
        c("cancel", CN, "nothing, sorry", p=True),
        c("cancel", CN, "wrong button, ignore me", p=True),
        c("cancel", CN, "actually, forget about it", p=True),
        c("cancel", CN, "stop, never mind"),
        c("cancel", CN, "cancel"),
        c("cancel", CN, "sorry, didn't mean to wake you", p=True),
        c("cancel", CN, "no no, it's fine, nothing", p=True),
        c("cancel", CN, "forget what I was going to say", p=True),
        c("cancel", LG, "we used some M10 bolts", NOTHING, asks=True, answers=("never mind",)),
        c("cancel", LG, "we took two drill bits 6 mm", NOTHING, asks=True, answers=("forget it",)),
        c("cancel", LG, "log 3 cable ties used", NOTHING, asks=True, answers=("cancel",)),
    ]


def corrections() -> list[dict]:
    return [
        c("correction", LG, "we used three, no, two drill bits 6 mm from drawer 4", [("DB-6", -2, "drawer 4")]),
        c("correction", LG, "3, no wait, 4 M8 nuts used", [("NUT-M8", -4, "bin 60")]),
        c("correction", LG, "log five boxes, sorry, six boxes of medium nitrile gloves received",
          [("GLV-NIT-M", 6, "shelf A")]),
        c("correction", LG, "we took twelve, I mean twenty, M10 nuts", [("NUT-M10", -20, "bin 61")], p=True),
        c("correction", LG, "add 40, uh no, 50 cable ties 200 mm", [("CT-200", 50, "drawer 7")]),
        c("correction", LG, "we used two drill bits 6 mm from drawer 4, no, from bin 118", [("DB-6", -2, "bin 118")],
          p=True),
        c("correction", LG, "used two M8 nuts, no, M10 nuts", [("NUT-M10", -2, "bin 61")], p=True),
        c("correction", LG, "we used seven, actually make that eight, 5 amp fuses", [("FUS-5A", -8, "bin 30")], p=True),
        c("correction", LG, "received 100 no sorry 120 blind rivets 4 mm", [("RIV-4", 120, "bin 290")]),
        c("correction", LG, "we used four o-rings 12 mm, correction, five", [("OR-12", -5, "drawer 20")], p=True),
        c("correction", LG, "log two litres, no, three litres of degreaser used", [("DEGR", -3, "shelf F")]),
        c("correction", LG, "we used three, no wait", NOTHING),
        c("correction", LG, "take out four, no, hmm, of the M8 nuts", NOTHING, p=True),
        c("correction", LG, "we used six large nitrile gloves, no, medium, from shelf A", [("GLV-NIT-M", -6, "shelf A")],
          p=True),
        c("correction", TR, "move 10 M8 nuts from bin 60 to bin 61, no, to bin 62",
          [("NUT-M8", -10, "bin 60", "transfer"), ("NUT-M8", 10, "bin 62", "transfer")], p=True, answers=("yes",)),
        c("correction", LG, "used 2 cutting discs 115, I mean 125 mm, from shelf D", [("CD-125", -2, "shelf D")], p=True),
    ]


def refusals() -> list[dict]:
    """Ranges, negations and "already logged": nothing written (a range asks)."""
    return [
        c("range", LG, "we used three or four drill bits 6 mm from drawer 4", [("DB-6", -4, "drawer 4")], asks=True,
          answers=("four",)),
        c("range", LG, "five or six M8 nuts used", NOTHING, asks=True),
        c("range", LG, "somewhere between ten and fifteen cable ties 200 mm went", NOTHING, asks=True, p=True),
        c("range", LG, "we used a few 5 amp fuses", NOTHING, asks=True, p=True),
        c("range", LG, "two to three boxes of small nitrile gloves received", [("GLV-NIT-S", 3, "shelf A")], asks=True,
          answers=("three",)),
        c("range", LG, "used maybe 20 or so M10 nuts", NOTHING, asks=True, p=True),
        c("range", LG, "we took about eight or nine o-rings 20 mm", NOTHING, asks=True, p=True),
        c("negation", LG, "we did not use 3 drill bits 6 mm", NOTHING),
        c("negation", LG, "don't log 3 drill bits", NOTHING),
        c("negation", LG, "we didn't take any M8 nuts", NOTHING, p=True),
        c("negation", LG, "no need to log the gloves", NOTHING, p=True),
        c("negation", LG, "I haven't used the 5 cutting discs 125 mm yet", NOTHING, p=True),
        c("negation", LG, "don't record that we used 2 o-rings 12 mm", NOTHING),
        c("negation", LG, "we never received the 20 boxes of nitrile gloves M", NOTHING, p=True),
        c("negation", LG, "do not add 50 washers to bin 204", NOTHING),
        c("negation", LG, "we were going to use four hose clamps 20 mm but we didn't", NOTHING, p=True),
        c("negation", LG, "nobody took the 10 5 amp fuses", NOTHING, p=True),
        c("negation", LG, "don't take 2 rolls of duct tape off", NOTHING, p=True),
        c("negation", LG, "we did not receive the 30 metres of flex cable 1.5 mm", NOTHING),
        c("already_done", LG, "the 3 drill bits 6 mm from drawer 4 are already logged", NOTHING),
        c("already_done", LG, "I already logged the 20 M8 nuts", NOTHING),
        c("already_done", LG, "those 50 washers in bin 204 were logged yesterday", NOTHING, p=True),
        c("already_done", LG, "Bob already put in the 10 cable ties 380 mm", NOTHING, p=True),
        c("already_done", LG, "the four hose clamps 40 mm have been booked out already", NOTHING, p=True),
        c("already_done", LG, "2 boxes of nitrile gloves L from shelf A, that's already in the system", NOTHING,
          p=True),
        c("already_done", LG, "already recorded: 6 o-rings 12 mm used", NOTHING),
    ]


def numbers() -> list[dict]:
    """Hesitations, fractions, "oh" words."""
    return [
        c("hesitation", LG, "we used, uh, three drill bits 6 mm from drawer four", [("DB-6", -3, "drawer 4")]),
        c("hesitation", LG, "um, log, er, twenty M10 nuts received", [("NUT-M10", 20, "bin 61")]),
        c("hesitation", Q, "how many, uh, how many M8 nuts have we got", reply=("800",)),
        c("hesitation", LG, "so we, um, we took like two hose clamps 40 mm", [("HC-40", -2, "drawer 9")], p=True),
        c("hesitation", LG, "we used... let me see... four 5 amp fuses", [("FUS-5A", -4, "bin 30")], p=True),
        c("hesitation", LG, "erm, add, erm, thirty blind rivets 4 mm", [("RIV-4", 30, "bin 290")]),
        c("hesitation", PC, "uh what's in, um, drawer 9", reply=("hose clamp",)),
        c("hesitation", LG, "right so, uh, used one cutting disc 230 mm", [("CD-230", -1, "shelf D")]),
        c("hesitation", LG, "hmm, we took, you know, three o-rings 20 mm", [("OR-20", -3, "drawer 20")], p=True),
        c("hesitation", TR, "move, uh, five, um, M8 nuts from bin sixty to, er, bin sixty two",
          [("NUT-M8", -5, "bin 60", "transfer"), ("NUT-M8", 5, "bin 62", "transfer")], answers=("yes",)),
        c("hesitation", U, "uh, undo that", [("DB-6", -3, "drawer 4"), ("DB-6", 3, "drawer 4", "undo")],
          before=("we used three drill bits 6 mm from drawer 4",)),
        c("hesitation", LG, "the the the 5 amp fuses, we used two", [("FUS-5A", -2, "bin 30")], p=True),
        c("fraction", LG, "we used two and a half boxes of large nitrile gloves from shelf A", NOTHING, asks=True),
        c("fraction", LG, "we used one and a half boxes of medium nitrile gloves", [("GLV-NIT-M", -2, "shelf A")],
          asks=True, answers=("two",)),
        c("fraction", LG, "we used 2.5 metres of flex cable 1.5 mm", [("CBL-FLX-1.5", -2.5, "shelf E")], asks=False),
        c("fraction", LG, "one and a half litres of hydraulic fluid used", [("OIL-HYD-46", -1.5, "shelf F")],
          asks=False),
        c("fraction", LG, "half a box of ear plugs went", NOTHING, asks=True, p=True),
        c("fraction", LG, "we used three quarters of a litre of cutting oil", [("OIL-CUT", -0.75, "shelf F")],
          asks=False),
        c("fraction", LG, "we used half a metre of air hose 10 mm", [("HOSE-AIR-10", -0.5, "shelf H")], asks=False),
        c("fraction", LG, "four and a half M8 nuts used", NOTHING, asks=True),
        c("fraction", LG, "received twelve point five metres of flex cable 1.5 mm", [("CBL-FLX-1.5", 12.5, "shelf E")]),
        c("fraction", LG, "we used 0.5 litres of degreaser", [("DEGR", -0.5, "shelf F")]),
        c("fraction", LG, "took two and a half 5 amp fuses", NOTHING, asks=True),
        c("fraction", LG, "used a litre and a half of cutting oil", [("OIL-CUT", -1.5, "shelf F")], p=True),
        c("fraction", LG, "three and a quarter metres of flex cable 2.5 mm from shelf E",
          [("CBL-FLX-2.5", -3.25, "shelf E")], p=True),
        c("fraction", Q, "do we have half a box of small nitrile gloves", reply=("6",), p=True),
        c("oh", LG, "add 50 washers to bin two oh four", [("WSH-M8", 50, "bin 204")]),
        c("oh", LG, "four o-rings 12 mm from drawer twenty", [("OR-12", -4, "drawer 20")]),
        c("oh", LG, "we used two o-rings twenty five mil", [("OR-25", -2, "drawer 21")], p=True),
        c("oh", Q, "how many M10 washers are in bin two oh five", reply=("320",)),
        c("oh", LG, "we used ten spring washers from bin two oh six", [("SWS-M8", -10, "bin 206")]),
        c("oh", LG, "six oh-rings twelve millimetre used", [("OR-12", -6, "drawer 20")], p=True),
        c("oh", LG, "took one oh five blind rivets 4 mm", [("RIV-4", -105, "bin 290")], p=True),
        c("oh", Q, "bin two oh four has how many washers", reply=("500",), p=True),
        c("oh", PC, "what's in bin two five oh", reply=("flex cable",)),
        c("oh", LG, "o-rings 20 mm, we used eight", [("OR-20", -8, "drawer 20")], p=True),
        c("oh", LG, "oh, we used three o-rings 12 mm", [("OR-12", -3, "drawer 20")]),
        c("oh", LG, "log twenty o-rings 25 mm received", [("OR-25", 20, "drawer 21")]),
        c("oh", Q, "oh how many o-rings 20 mm do we have left", reply=("45",)),
        c("oh", LG, "put one oh oh blind rivets 4 mm in bin two nine oh", [("RIV-4", 100, "bin 290")]),
    ]


def multis_and_unknowns() -> list[dict]:
    return [
        c("multi", LG, "we used 3 drill bits 6 mm from drawer 4 and 2 5 amp fuses",
          [("DB-6", -3, "drawer 4"), ("FUS-5A", -2, "bin 30")]),
        c("multi", LG, "received 10 boxes of medium nitrile gloves and 5 boxes of small nitrile gloves",
          [("GLV-NIT-M", 10, "shelf A"), ("GLV-NIT-S", 5, "shelf A")]),
        c("multi", LG, "used 3 M8 nuts and 2 drill bits", [("NUT-M8", -3, "bin 60"), ("DB-6.5", -2, "drawer 4")],
          asks=True, answers=("six and a half",)),
        c("multi", LG, "used 2 5 amp fuses and 3 flux capacitors", NOTHING),
        c("multi", LG, "we took four M8 nuts, four M8 washers and four hex bolts M8 x 40 mm",
          [("NUT-M8", -4, "bin 60"), ("WSH-M8", -4, "bin 204"), ("HB-M8-40", -4, "bin 13")], p=True),
        c("multi", LG, "two cutting discs 115 mm plus one cutting disc 230 mm used",
          [("CD-115", -2, "shelf D"), ("CD-230", -1, "shelf D")], p=True),
        c("multi", LG, "log 20 cable ties 200 mm and 10 hose clamps 20 mm received",
          [("CT-200", 20, "drawer 7"), ("HC-20", 10, "drawer 9")]),
        c("multi", LG, "we used a roll of duct tape and a can of WD-40",
          [("TAPE-DUCT", -1, "shelf G"), ("WD-40", -1, "shelf F")], p=True),
        c("multi", LG, "used six o-rings 12 mm and six o-rings 20 mm",
          [("OR-12", -6, "drawer 20"), ("OR-20", -6, "drawer 20")]),
        c("multi", LG, "one box of FFP2 masks and two boxes of ear plugs went out",
          [("MASK-FFP2", -1, "shelf A"), ("EAR-PLG", -2, "shelf A")], p=True),
        c("multi", LG, "we used 2 drill bits 6 mm and 3 cable ties", NOTHING, asks=True),
        c("unknown", Q, "how many flux capacitors do we have", NOTHING, reply=("inventory",)),
        c("unknown", LG, "we used 3 hammer drills", NOTHING, reply=("inventory",)),
        c("unknown", LG, "log 5 boxes of vinyl gloves received", NOTHING, reply=("vinyl",)),
        c("unknown", Q, "do we have any unobtainium", NOTHING, reply=("unobtainium",), p=True),
        c("unknown", LG, "we used two banana plugs from drawer 4", NOTHING, reply=("banana",)),
        c("unknown", Q, "how many titanium bolts are in bin 12", NOTHING, reply=("titanium",)),
        c("unknown", LG, "add ten sprockets", NOTHING, reply=("sprocket",)),
        c("unknown", Q, "where are the torque wrenches", NOTHING, reply=("torque wrench",), p=True),
        c("unknown", LG, "took one pair of welding goggles", NOTHING),
        c("unknown", LG, "we used 4 M7 bolts", NOTHING, reply=("M7",)),
        c("unknown", Q, "how many kilos of rice have we got", NOTHING, reply=("rice",), p=True),
        c("unknown", LG, "we got a delivery of 12 carbide inserts", NOTHING, reply=("carbide",), p=True),
        c("unknown", LG, "put five gizmos in bin 3", NOTHING),
        c("unknown", LG, "log three gaskets", NOTHING, asks=True),
    ]


def unicode_names() -> list[dict]:
    return [
        c("unicode", Q, "how many hyllclips Älva are in drawer 40", reply=("30",)),
        c("unicode", Q, "how many hyllclips Ölva do we have", reply=("22",)),
        c("unicode", LG, "we used 4 hyllclips Ölva", [("CLIP-OELVA", -4, "drawer 40")]),
        c("unicode", LG, "we used 3 hyllclips Älva", [("CLIP-AELVA", -3, "drawer 40")]),
        c("unicode", Q, "how many hyllclips A\u0308lva are there", reply=("30",)),
        c("unicode", LG, "took two HYLLCLIPS ÖLVA", [("CLIP-OELVA", -2, "drawer 40")]),
        c("unicode", Q, "how many hyllclips Alva are there", reply=("Älva",)),
        c("unicode", Q, "сколько изолента синяя", reply=("20",), p=True),
        c("unicode", Q, "how many rolls of изолента синяя are left", reply=("20",)),
        c("unicode", LG, "we used one roll of изолента синяя", [("TAPE-ISO-RU", -1, "drawer 38")]),
        c("unicode", LG, "used one tube of герметик", [("SEAL-RU", -1, "shelf G")]),
        c("unicode", Q, "how much 生料带 is left", reply=("35",)),
        c("unicode", LG, "we used two rolls of 生料带", [("PTFE-ZH", -2, "drawer 39")]),
        c("unicode", LG, "we used two rolls of thread seal tape", [("PTFE-ZH", -2, "drawer 39")]),
        c("unicode", Q, "how many rolls of PTFE tape do we have", reply=("35",)),
        c("unicode", LG, "one Drahtbürste used", [("BRUSH-DE", -1, "shelf H")]),
        c("unicode", Q, "how many wire brushes are on shelf H", reply=("11",)),
        c("unicode", LG, "we used 1 drahtburste", [("BRUSH-DE", -1, "shelf H")], p=True),
        c("unicode", Q, "how many blue insulating tape rolls", reply=("20",), p=True),
        c("unicode", LG, "received five silicone sealant tubes", [("SEAL-RU", 5, "shelf G")]),
    ]


def undos() -> list[dict]:
    d6 = ("we used three drill bits 6 mm from drawer 4",)
    tr = ("move 20 M8 x 30 bolts from bin 12 to bin 47",)
    log_d6 = [("DB-6", -3, "drawer 4"), ("DB-6", 3, "drawer 4", "undo")]
    tr_undone = [("HB-M8-30", -20, "bin 12", "transfer"), ("HB-M8-30", 20, "bin 47", "transfer"),
                 ("HB-M8-30", 20, "bin 12", "undo"), ("HB-M8-30", -20, "bin 47", "undo")]
    return [
        c("undo", U, "undo that", log_d6, before=d6),
        c("undo", U, "undo the last one", log_d6, before=d6),
        c("undo", U, "take that back", log_d6, before=d6, p=True),
        c("undo", U, "that was wrong, remove it", log_d6, before=d6, p=True),
        c("undo", U, "oops, scratch the last entry", log_d6, before=d6, p=True),
        c("undo", U, "I made a mistake, delete that record", log_d6, before=d6, p=True),
        c("undo", U, "reverse the last booking", log_d6, before=d6, p=True),
        c("undo", U, "undo the transfer", tr_undone, before=tr),
        c("undo", U, "put that move back the way it was", tr_undone, before=tr, p=True),
        c("undo", U, "undo", [("NUT-M8", 10, "bin 60"), ("NUT-M8", -10, "bin 60", "undo")],
          before=("received 10 M8 nuts",)),
        c("undo", U, "forget the last thing I logged", [("NUT-M8", 10, "bin 60"), ("NUT-M8", -10, "bin 60", "undo")],
          before=("add ten M8 nuts",), p=True),
        c("undo", U, "undo that last count", [("HC-20", -10, "drawer 9", "count"), ("HC-20", 10, "drawer 9", "undo")],
          before=("I counted 70 hose clamps 20 mm in drawer 9",)),
        c("undo", U, "please undo that", NOTHING, asks=False, reply=("nothing",)),
        c("undo", U, "cancel the last record", log_d6, before=d6, p=True),
    ]


def readbacks_and_other() -> list[dict]:
    return [
        c("readback", LG, "we used 30 M8 nuts", [("NUT-M8", -30, "bin 60")], confidence=0.4, asks=True,
          answers=("yes",), reply=("30",)),
        c("readback", LG, "we used 40 M10 nuts", NOTHING, confidence=0.35, asks=True, answers=("no",)),
        c("readback", LG, "received 15 boxes of medium nitrile gloves", [("GLV-NIT-M", 15, "shelf A")], confidence=0.5,
          asks=True, answers=("yes that's right",)),
        c("readback", LG, "we used 60 cable ties 200 mm", NOTHING, confidence=0.3, asks=True, answers=("nope",)),
        c("readback", LG, "we used 10 drill bits 10 mm", NOTHING, asks=True, answers=("no",), reply=("3",)),
        c("readback", LG, "we used 5 drill bits 10 mm", [("DB-10", -5, "drawer 5")], asks=True, answers=("yes",)),
        c("readback", LG, "we used one can of white paint", NOTHING, asks=True, answers=("no, leave it",)),
        c("readback", LG, "we used 12 spanners 13 mm", NOTHING, asks=True, answers=("no",)),
        c("readback", LG, "we used 3 drill bits 6 mm from drawer 4", [("DB-6", -3, "drawer 4")], confidence=0.45,
          asks=True, answers=("yes",)),
        c("readback", LG, "received 200 hex nuts M8", [("NUT-M8", 200, "bin 60")], confidence=0.9, asks=False),
        c("other", OT, "tell me a short joke about hammers", p=True),
        c("other", OT, "what's the weather like", p=True),
        c("other", OT, "what time does the canteen open", p=True),
        c("other", OT, "thanks, that's all", p=True),
    ]


def everyday() -> list[dict]:
    """Stock questions and logs as people say them on the shop floor."""
    return [
        c("paraphrase", Q, "have we got any M8 nuts left", reply=("800",), p=True),
        c("paraphrase", Q, "are we out of white paint", reply=("white paint",), p=True),
        c("paraphrase", Q, "how are we doing on the 125 cutting discs", reply=("65",), p=True),
        c("paraphrase", Q, "do we still have six mil drill bits", reply=("35",), p=True),
        c("paraphrase", Q, "how many of the 380 zip ties are there", reply=("220",), p=True),
        c("paraphrase", Q, "what's the stock on hose clamps 40 mm", reply=("35",), p=True),
        c("paraphrase", Q, "M10 nuts, how many?", reply=("450",), p=True),
        c("paraphrase", Q, "got any safety goggles?", reply=("8",), p=True),
        c("paraphrase", Q, "any duct tape left", reply=("14",), p=True),
        c("paraphrase", Q, "is there any WD-40 in the building", reply=("9",), p=True),
        c("paraphrase", Q, "tell me how much cutting oil is left", reply=("12",), p=True),
        c("paraphrase", Q, "how much hydraulic fluid is on the shelf", reply=("60",), p=True),
        c("paraphrase", Q, "count of FFP2 masks please", reply=("25",), p=True),
        c("paraphrase", Q, "bearings 6204 2RS, what have we got", reply=("16",), p=True),
        c("paraphrase", Q, "quick check, spanners 13 mm?", reply=("6",), p=True),
        c("paraphrase", LG, "I'm taking two rolls of duct tape", [("TAPE-DUCT", -2, "shelf G")], p=True),
        c("paraphrase", LG, "grabbed a can of WD-40", [("WD-40", -1, "shelf F")], p=True),
        c("paraphrase", LG, "booked in 40 boxes of FFP2 masks", [("MASK-FFP2", 40, "shelf A")], p=True),
        c("paraphrase", LG, "the supplier dropped off 500 M10 nuts", [("NUT-M10", 500, "bin 61")], p=True),
        c("paraphrase", LG, "Dave needs three sanding sheets P120 for the doors", [("SAND-P120", -3, "shelf G")],
          p=True),
        c("paraphrase", LG, "use up one bearing 6205 2RS on the conveyor", [("BRG-6205", -1, "drawer 35")], p=True),
        c("paraphrase", LG, "I've put 200 wood screws 5 x 50 mm back in bin 150", [("WS-5-50", 200, "bin 150")],
          p=True),
        c("paraphrase", LG, "signing out the hex key set", [("HEXK-SET", -1, "drawer 31")], asks=True, answers=("one",),
          p=True),  # "the" names the item, not a count: asked
        c("paraphrase", LG, "a box of ear plugs for the new starter", [("EAR-PLG", -1, "shelf A")], p=True),
        c("paraphrase", LG, "we burned through 12 o-rings 20 mm on the pump today", [("OR-20", -12, "drawer 20")],
          p=True),
    ]


def hand_cases() -> list[dict]:
    out: list[dict] = []
    for section in (stock_per_place, sizes_and_variants, place_contents, transfers, stock_counts, low_stock,
                    cancels, corrections, refusals, numbers, multis_and_unknowns, unicode_names, undos,
                    readbacks_and_other, everyday):
        out.extend(section())
    return out
