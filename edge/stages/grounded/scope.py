"""What the box cannot know or do, and small talk: told apart by their words before any model runs,
each answered with a fixed, honest sentence (never a generated fact, never a claimed action).

The box knows its stock, places, records and the site's documents. It cannot control machines, set
timers, order from suppliers, or know the weather, the news, people or schedules.
"""
from __future__ import annotations

import re

#: topic → the sentence said; the key is what the model's ``cannot`` call or the words pick
CANNOT = {
    "machines": "I can't control machines; I can log and look up stock.",
    "timer": "I can't set timers or alarms; I can log and look up stock.",
    "order": "I can't order from suppliers; I can tell you what is low so you can order it.",
    "weather": "I don't know the weather; I only know this stock room's stock, records and documents.",
    "news": "I don't follow the news; I only know this stock room's stock, records and documents.",
    "people": "I don't know about people; I only know this stock room's stock, records and documents.",
    "schedule": "I don't know schedules or shifts; I only know this stock room's stock, records and documents.",
    "other": "I don't know that; I only know this stock room's stock, records and documents.",
}
CANNOT_ZH = {
    "machines": "我不能控制机器；我可以记录和查询库存。",
    "timer": "我不能设置计时器；我可以记录和查询库存。",
    "order": "我不能向供应商下单；我可以告诉你哪些库存偏低。",
    "other": "这个我不知道；我只知道这个库房的库存、记录和文件。",
}
SMALL_TALK = {
    "greeting": "Hello! Ask me about stock, or tell me what you used or received.",
    "thanks": "You're welcome.",
    "how_are_you": "I'm fine, thanks. Ask me about stock whenever you like.",
    "who": "I'm the stock room's voice assistant: I log and look up stock, records and documents.",
    "help": "You can ask how many of an item there are, what is in a place, what is low, what was used, "
            "or tell me what you used or received.",
    "joke": "Why did the bolt break up with the nut? It felt screwed.",
    "bye": "Bye for now.",
    "praise": "Thank you!",
}
SMALL_TALK_ZH = {"greeting": "你好！可以问我库存，或告诉我用了或收到了什么。", "thanks": "不客气。",
                 "other": "你好！可以问我库存，或告诉我用了或收到了什么。"}

_W = r"\b(?:{})\b"
_TOPICS = (
    ("timer", re.compile(_W.format(r"timer|alarm|remind me to|remind me at|reminder|stopwatch|countdown|wake me"))),
    ("machines", re.compile(
        _W.format(r"turn|crank|turn (?:on|off)|switch (?:on|off)|shut (?:down|off)|power (?:on|off|up|down)|start up|"
                  r"reset|restart|reboot|open|close|unlock|lock|run|stop|start|dim|heat|cool") +
        r".*\b(?:compressor|machine|lathe|mill|press|pump|fan|lights?|heater|heating|door|gate|conveyor|"
        r"forklift|saw|drill press|welder|grinder|boiler|oven|printer|alarm system|ac|air con(?:ditioning)?)\b|"
        + _W.format(r"(?:compressor|machine|lathe|pump|fan|lights?|heater|door|conveyor|welder|grinder)s? "
                    r"(?:on|off)"))),
    ("order", re.compile(_W.format(r"order(?: \w+){0,4} from|order (?:more|some|new|in|us)|place an order|reorder|re-order|buy|purchase|"
                                   r"send (?:an? )?(?:email|message|text) to (?:the )?supplier|(?:call|email|text|message|ring|phone|contact) "
                                   r"(?:the |our )?suppliers?"))),
    ("weather", re.compile(_W.format(r"weather|rain(?:ing)?|sunny|forecast|temperature outside|snow(?:ing)?|"
                                     r"windy|umbrella"))),
    ("news", re.compile(_W.format(r"news|headlines?|stock market|share price|election|football|score|match result"))),
    ("schedule", re.compile(_W.format(r"schedule|shift|rota|meeting|calendar|appointment|holiday|"
                                      r"what time|what day|when (?:do|does|is) (?:my|the|our) (?:shift|break|lunch)|"
                                      r"when (?:is|does) .* (?:open|close|start|finish)|lunch break|break time|opening hours|"
                                      r"open (?:on|at|this|next|tomorrow|today)|closed (?:on|at|this|next|tomorrow|today)"))),
    ("people", re.compile(_W.format(r"who is|who's|whos|where is (?:bob|alice|the manager|my boss|the boss|john|"
                                    r"mike|sarah|dave)|phone number|email address|birthday|is \w+ (?:in|here|at work)"
                                    r" today|called in sick|president|prime minister|ceo"))),
)
_SMALL = (
    ("thanks", re.compile(r"^\W*(?:thanks?|thank you|cheers|ta|much appreciated)\b")),
    ("greeting", re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening)|morning|yo)\W*(?:there|box|mate)?\W*$")),
    ("how_are_you", re.compile(r"\bhow are you\b|\bhow's it going\b|\bhow are things\b|\bhow do you do\b")),
    ("who", re.compile(r"\bwho are you\b|\bwhat are you\b|\byour name\b|\bare you a (?:robot|person|human)\b")),
    ("help", re.compile(r"\bwhat can you do\b|\bhow do (?:i|you) use you\b|\bwhat do you do\b|\bhelp me\W*$|^\W*help\W*$")),
    ("joke", re.compile(r"\bjoke\b|\bsomething funny\b|\bmake me laugh\b")),
    ("bye", re.compile(r"^\W*(?:bye|goodbye|see you|see ya|good night|later)\b|\bhave a (?:nice|good|great) "
                       r"(?:day|one|evening|weekend)\b")),
    ("praise", re.compile(r"^\W*(?:nice one|well done|good job|great job|great|awesome|brilliant|cool|perfect|lovely|"
                          r"good (?:stuff|work)|you(?:'re| are) (?:great|awesome|the best|doing (?:great|well|fine)|"
                          r"a star|brilliant|helpful))\W*$")),
)
#: a question asking how something is done (the documents answer it, or it is declined)
_HOW_TO = re.compile(r"^\W*(?:how|what|why|where|which|when|is there|does|do i|can i|should i)\b")
#: words that make a "who"/"what time" question a records question the tools answer
_RECORDS_CUES = re.compile(r"\b(?:logged|log|used|received|took|taken|came in|delivered|moved|counted|stock|records?)\b")


def topic(text: str) -> str | None:
    """The topic of ``text`` the box cannot answer or do (a key of :data:`CANNOT`), or None.
    A question about who logged or used something is the records', not people's ("who logged the
    gloves"). Raises nothing."""
    t = " ".join((text or "").lower().replace("\u2019", "'").split())
    for name, rx in _TOPICS:
        if rx.search(t):
            if name in ("people", "schedule") and _RECORDS_CUES.search(t):
                continue
            if name == "machines" and _HOW_TO.match(t):
                continue  # "how do I reset the compressor": a question for the documents, not a command
            return name
    return None


def small_talk(text: str) -> str | None:
    """The kind of small talk ``text`` is (a key of :data:`SMALL_TALK`), or None."""
    t = " ".join((text or "").lower().replace("\u2019", "'").split())
    return next((name for name, rx in _SMALL if rx.search(t)), None)


def cannot_text(name: str, language: str = "en") -> str:
    """The honest sentence for topic ``name`` (:data:`CANNOT`; unknown → ``other``)."""
    table = CANNOT_ZH if language == "zh" else CANNOT
    return table.get(name, table["other"])


def small_talk_text(name: str, language: str = "en") -> str:
    table = SMALL_TALK_ZH if language == "zh" else SMALL_TALK
    return table.get(name, table.get("other", SMALL_TALK["greeting"]))
