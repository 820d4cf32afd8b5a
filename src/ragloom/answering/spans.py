"""The answer span inside a supporting sentence: the value, date, name or phrase asked for.

A sentence is what a user checks; the span is what they asked. Spans come from the
sentence itself, never from outside it, so a span can never hold a number or name the
evidence lacks. The rules follow the question's form ("how much" -> an amount, "when"
-> a date or time, "who" -> a name, "how many" -> a count); other questions get the
part of the sentence the question does not already say, when it is short. A table
row ("label: value; label: value") gives the value of the column the question names.
"""

from __future__ import annotations

import re

from ragloom.answering.grounding import content_words
from ragloom.retrieval.stemmer import porter_stem

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_NUMWORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
            r"twenty|thirty|forty|fifty|sixty|hundred|thousand|million|billion|half|a dozen)")
_UNIT = (r"(?:%|percent|per cent|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|"
         r"years?|kg|g|grams?|kilograms?|lbs?|pounds?|tonnes?|km|kilometres?|kilometers?|"
         r"miles?|m|metres?|meters?|cm|mm|litres?|liters?|l|ml|watts?|w|kw|kwh|v|volts?|"
         r"mah|wh|gb|mb|tb|ghz|mhz|hz|inch(?:es)?|ft|feet|people|staff|employees|members|"
         r"points?|euros?|dollars?|pence|p|°c|°f|degrees?|times?|nights?|sessions?|items?|"
         r"pages?|copies|seats?|rooms?|places?|units?|users?|devices?|rpm|mbps|gbps)")
_MONEY = re.compile(r"[£$€¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion))?|"
                    r"\d[\d,]*(?:\.\d+)?\s?(?:euros?|pounds?|dollars?|usd|eur|gbp|pence|p)\b",
                    re.I)
_DATE = re.compile(
    rf"\b(?:{_DAY},?\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?(?:,?\s+\d{{4}})?\b|"
    rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|"
    rf"\b{_MONTH}\.?\s+\d{{4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|"
    rf"\b(?:in |by |from |until |since )?(?:the )?(?:early |late |mid-?)?\d{{1,2}}(?:st|nd|rd|th) "
    rf"(?:and \d{{1,2}}(?:st|nd|rd|th) )?centur(?:y|ies)\b|\b(?:1[0-9]|20)\d{{2}}s?\b|"
    rf"\b{_DAY}s?\b", re.I)
_WEEKDAY = re.compile(rf"\b(?:every |each |on )?(?:{_DAY}s?|weekdays?|daily)\b"
                      rf"(?:\s+(?:to|and|-)\s+{_DAY}s?)?", re.I)
_CLOCK = (r"(?:\b\d{1,2}[:.]\d{2}\s?(?:am|pm|a\.m\.|p\.m\.)?|\b\d{1,2}\s?(?:am|pm|a\.m\.|"
          r"p\.m\.)|\bnoon\b|\bmidnight\b)")
# A time, or a range of two ("9:00 to 18:00", "8am-4pm"): opening hours are a range.
_TIME = re.compile(rf"{_CLOCK}(?:\s?(?:-|\u2013|to|until|till)\s?{_CLOCK})?", re.I)
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s*(?:hours?|hrs?|minutes?|mins?)\b(?:,?\s*(?:and\s+)?"
                       r"\d+(?:\.\d+)?\s*(?:minutes?|mins?|seconds?|secs?)\b)?", re.I)
# "how long does it take", "how much notice", "how many days ahead": a length of time.
_ASKS_DURATION = re.compile(r"\bhow (long|soon|quickly)\b|\bhow fast (do|does|will|can|is|are)"
                            r"\b.*\b(fix|repair|reply|respond|deliver|process|refund|arrive|"
                            r"done|sent|ready)|\bhow much notice\b|\bhow many (days|weeks|"
                            r"months|years|hours|minutes|working days)\b|\bhow far (ahead|in "
                            r"advance)\b")
_PERIOD = re.compile(rf"(?:\b(?:up to|at least|within|about|around|over|under)\s+)?"
                     rf"(?:(?<![\w.])\d+(?:\.\d+)?|\b{_NUMWORD}|\ban?)\s*(?:-\s*\d+\s*)?"
                     rf"(?:working |"
                     rf"calendar |business |clear |full )?(?:seconds?|secs?|minutes?|mins?|"
                     rf"hours?|hrs?|h|days?|weeks?|months?|years?)\b(?:,?\s*(?:and\s+)?\d+"
                     rf"(?:\.\d+)?\s*(?:minutes?|mins?|m|seconds?|secs?)?\b)?", re.I)
# Besides a length of time, "how long" may ask for a length.
_LENGTH = re.compile(r"(?:m|cm|mm|km|metres?|meters?|miles?|ft|feet|inch(?:es)?|yards?)$",
                     re.I)
_QUANTITY = re.compile(rf"(?:\b(?:about|around|over|under|up to|at least|at most|almost|"
                       rf"nearly|more than|less than|fewer than)\s+)?"
                       rf"(?:(?<![\w.])\d[\d,]*(?:\.\d+)?|"
                       rf"\b{_NUMWORD})(?:\s?-\s?(?:\d[\d,]*(?:\.\d+)?))?"
                       rf"(?:\s?(?:%|{_UNIT}\b))?",  # "30%": no word boundary after "%"
                       re.I)
_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_NAME = re.compile(rf"\b[{_UPPER}][\w'\u2019.-]+(?:\s+(?:of|de|van|von|the|da|du|la|le)?\s*"
                   rf"[{_UPPER}][\w'\u2019.-]+)*")
_WORD = re.compile(r"[\w'\u2019-]+")
_CELL = re.compile(r"(?:^|;\s*|\|\s*)([^:;|]{1,40}):\s*([^;|]+)")


def _stems(text: str) -> set[str]:
    return {porter_stem(w) for w in content_words(text)}


# What a measure question asks for, and the units that answer it: "how heavy" is a
# weight (kg), not the "2 cm" of water the same page warns about.
MEASURES: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("weight", re.compile(r"\bhow heavy\b|\bweigh(s|t)?\b", re.I),
     re.compile(r"\d\s?(?:kg|g|grams?|kilograms?|lbs?|tonnes?)\b", re.I)),
    ("distance", re.compile(r"\bhow far\b(?!\s+(ahead|in advance))|\b(range|distance)\b",
                            re.I),
     re.compile(r"\d\s?(?:km|kilometres?|kilometers?|miles?|m|metres?|meters?)\b(?!/)",
                re.I)),  # "15 km/h" is a speed
    ("size", re.compile(r"\bhow (tall|high|wide|deep)\b|\b(height|width|depth|dimensions?)\b",
                        re.I),
     re.compile(r"\d\s?(?:m|cm|mm|metres?|meters?|ft|feet|inch(?:es)?)\b", re.I)),
    ("speed", re.compile(r"\bhow fast\b|\bspeed\b", re.I),
     re.compile(r"\d\s?(?:km/h|kph|mph|rpm|mbps|gbps)\b", re.I)),
    ("temperature", re.compile(r"\bhow (hot|cold|warm)\b|\btemp(erature)?s?\b", re.I),
     re.compile(r"\d\s?(?:\u00b0\s?[cf]|degrees?|c)\b", re.I)),
    ("power", re.compile(r"\b(wattage|power|watts?)\b", re.I),
     re.compile(r"\d\s?(?:w|kw|watts?)\b", re.I)),
)


_TIME_CUE = re.compile(r"\bhow (fast|quickly|soon)\b", re.I)


def measure_cue(question: str) -> tuple[set[str], re.Pattern[str]] | None:
    """The question's words that ask for a measure ("far" of "how far", "temp") and the
    measure's units; None when it asks none. A question asking a length of time ("how
    fast do they fix repairs", "how soon") is answered by a duration."""
    if value_kind(question) == "duration":
        asked = _TIME_CUE.search(question)
        return ({asked.group(1).lower()}, _PERIOD) if asked else None
    for _, cue, units in MEASURES:
        found = cue.search(question)
        if found:
            return {w for w in re.findall(r"[a-z]+", found.group().lower()) if w != "how"}, units
    return None


def asked_measure(question: str) -> tuple[str, re.Pattern[str]] | None:
    """``(measure, its units)`` when the question asks for a measure by its cue ("how
    heavy", "range", "what temp"); None otherwise."""
    for name, cue, units in MEASURES:
        if cue.search(question):
            return name, units
    return None


def value_kind(question: str) -> str:
    """The kind of value a question asks for: money, time, weekday, date, quantity, name
    or other."""
    q = question.lower().strip()
    if _ASKS_DURATION.search(q):
        return "duration"
    if asked_measure(q) and not re.search(r"\b(price|cost|fee)\b", q):
        return "quantity"
    if re.search(r"\bhow (much|expensive)\b|\b(price|cost|fee|charge|rate)\b", q):
        return "money"
    if re.search(r"\bwhat time\b|\bwhat hours?\b|\bopening (hours|times)\b|"
                 r"^\s*when (does|do|is|are|will)\b.*\b(open|close|shut|start|finish|end)s?\b",
                 q):
        return "time"
    if re.search(r"\b(what|which) days?\b|\bday of the week\b|\bbin day\b|"
                 r"\bcollection day\b", q):
        return "weekday"
    if re.search(r"^\s*(when|what (year|date|day|month|century|decade))\b|\bwhat (year|date|"
                 r"day|month|century|decade)\b|\bin which (year|century|month)\b", q):
        return "date"
    if re.search(r"\bhow (many|long|far|old|big|heavy|tall|high|wide|often|fast)\b|"
                 r"\bwhat (percentage|proportion|share|number|amount|size|weight|capacity)\b",
                 q):
        return "quantity"
    if re.search(r"^\s*(who|whom|whose)\b|\bwhich (person|people|company|king|queen|man|"
                 r"woman|team|group|firm|organi[sz]ation)\b", q):
        return "name"
    return "other"


def _closest(candidates: list[re.Match[str]], sentence: str, question: str) -> str:
    """The candidate nearest the question's words in the sentence (first on ties)."""
    asked = _stems(question)
    positions = [m.start() for m in _WORD.finditer(sentence)
                 if porter_stem(m.group().lower()) in asked]
    asked_text = question.lower()

    def distance(match: re.Match[str]) -> tuple[int, int]:
        inside = 1 if match.group().lower().strip() in asked_text else 0
        if not positions:
            return inside, match.start()
        return inside, min(abs(match.start() - p) for p in positions)

    return min(candidates, key=distance).group().strip(" ,;.")


def table_value(question: str, sentence: str) -> str:
    """From a row of ``label: value`` cells, the value whose label the question names."""
    cells = [(m.group(1).strip(), m.group(2).strip()) for m in _CELL.finditer(sentence)]
    if len(cells) < 2:
        return ""
    asked = _stems(question)
    kind = value_kind(question)
    named = [(label, value) for label, value in cells if _stems(label) & asked
             and not _stems(value) <= asked and _cell_fits(kind, value)]
    if len(named) == 1:
        return named[0][1]
    if kind == "money" and not named:
        # "how much is a bag": the row's one price column ("price_gbp: 7.99"), not a
        # figure in its notes ("offer: 3 for £20").
        priced = [value for label, value in cells if _PRICE_LABEL.search(label)
                  and _cell_fits(kind, value)]
        if len(priced) == 1:
            return priced[0]
    return ""


_PRICE_LABEL = re.compile(r"(?<![a-z])(?:price|cost|fee|charge|rate|gbp|usd|eur)(?![a-z])|"
                          r"[\u00a3$\u20ac]", re.I)


_OTHER_UNIT = re.compile(r"\s?(%|percent|per cent|[a-z]+)", re.I)
# What may follow a number asked for with "how much" / "price": money, or a share
# ("how much is the discount": 30%).
_MONEY_WORDS = frozenset({"%", "percent", "euro", "euros", "pound", "pounds", "dollar",
                          "dollars", "usd",
                          "eur", "gbp", "pence", "p", "k", "m", "bn", "million", "billion",
                          "each", "a", "per", "for", "and", "or", "to", "off", "plus", "with",
                          "in", "on", "at", "by", "from", "the"})


def fits(kind: str, match: re.Match[str], sentence: str) -> bool:
    """Whether a candidate span can be the kind of value asked for: an amount of
    money is never a length of time or a count, and "30 days" is not a price."""
    text = match.group().strip()
    before = sentence[: match.start()].rstrip()[-1:]
    money = bool(_MONEY.fullmatch(text)) or (bool(before) and before in "£$€¥")
    if kind == "duration":
        # A length of time has a unit: a bare "12" (a "12-space shelter") is not one.
        return not money and (bool(_PERIOD.fullmatch(text)) or bool(_LENGTH.search(text)))
    if kind == "quantity":
        return not money
    if kind == "money" and not money:
        unit = _OTHER_UNIT.match(sentence, match.end())
        named = re.search(r"[a-z%]+\s*$", text, re.I)
        word = (named.group() if named else unit.group() if unit else "").strip().lower()
        return not word or word in _MONEY_WORDS
    return True


def _cell_fits(kind: str, value: str) -> bool:
    """Whether a table cell can hold the kind of value asked for (a cell of another
    kind is not the answer however well its label matches)."""
    pattern = {"money": _MONEY, "duration": _PERIOD}.get(kind)
    if kind == "money":
        return bool(_MONEY.search(value)) or bool(re.fullmatch(r"[\d,]+(?:\.\d+)?", value))
    if pattern is not None:
        return bool(pattern.search(value))
    if kind == "quantity":
        return not _MONEY.search(value)
    return True


def states_money(text: str) -> bool:
    """Whether ``text`` writes an amount of money: a sign or a currency word ("£5.40",
    "85p", "25 euros"), or a figure in a price column ("price_gbp: 7.99")."""
    if _MONEY.search(text):
        return True
    return any(_PRICE_LABEL.search(m.group(1)) and re.search(r"\d", m.group(2))
               for m in _CELL.finditer(text))


def measure_cell(units: re.Pattern[str], text: str) -> str:
    """The value, with its unit, of a column whose label names a unit of ``units``
    ("height_cm: 500" -> "500 cm"); "" when none does."""
    for cell in _CELL.finditer(text):
        label, value = cell.group(1), cell.group(2)
        unit = re.search(r"(?:_|\(|\[|\s)([a-z\u00b0/]+)\s*[)\]]?\s*$", label.strip(), re.I)
        figure = re.match(r"\s*(\d[\d,.]*)", value)
        if unit and figure:
            written = f"{figure.group(1)} {unit.group(1)}"
            if units.search(written):
                return written
    return ""


def states_measure(units: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` writes a value in ``units``, in the text or in a column whose
    label names the unit ("height_cm: 500", "Weight (kg): 17.4")."""
    return bool(units.search(text) or measure_cell(units, text))


def answer_span(question: str, sentence: str) -> str:
    """The part of ``sentence`` that answers ``question`` ("" when none stands out)."""
    cell = table_value(question, sentence)
    if cell:
        return cell
    kind = value_kind(question)
    patterns = {"money": [_MONEY, _QUANTITY], "time": [_TIME, _DATE], "date": [_DATE, _TIME],
                "weekday": [_WEEKDAY], "duration": [_PERIOD, _QUANTITY],
                "quantity": [_DURATION, _QUANTITY], "name": [_NAME]}.get(kind, [])
    asked = question.lower()
    measure = asked_measure(asked) if kind == "quantity" else None
    table_row = len(_CELL.findall(sentence)) >= 2
    if measure is not None and not measure[1].search(sentence):
        labelled_value = measure_cell(measure[1], sentence)
        if labelled_value:
            return labelled_value  # "height_cm: 500" -> "500 cm"
    for pattern in patterns:
        found = [m for m in pattern.finditer(sentence) if m.group().strip()
                 and (kind != "name" or m.group().lower() not in asked)
                 and fits(kind, m, sentence)]
        if kind == "money" and pattern is _QUANTITY and table_row:
            # A bare count in a row is a price only under a label the question names
            # or a price column: "Sleeps: 2" is no answer to "how much is a permit".
            found = [m for m in found if _priced_cell(sentence, m.start(), question)]
        if measure is not None:
            # Only a value in the measure's units ("17.4 kg" for "how heavy").
            found = [m for m in found
                     if measure[1].search(sentence[m.start(): m.end() + 6])]
        if kind == "name":
            found = [m for m in found if m.start() > 0 and not _stems(m.group()) <= _stems(
                question)] or [m for m in found if not _stems(m.group()) <= _stems(question)]
        if found:
            picked = _first_or_last(found, asked) if pattern is _TIME else None
            return picked or _closest(found, sentence, question)
    return ""


_LABEL_BEFORE = re.compile(r"(?:^|;)\s*([^:;]+):[^;]*$")


def _priced_cell(sentence: str, start: int, question: str) -> bool:
    """Whether the row cell holding position ``start`` may hold a price: its label is a
    price column or names a word of the question."""
    found = _LABEL_BEFORE.search(sentence[:start])
    if found is None:
        return True
    label = found.group(1)
    return bool(_PRICE_LABEL.search(label)) or bool(_stems(label) & _stems(question))


_FIRST = re.compile(r"\b(first|earliest)\b")
_LAST = re.compile(r"\b(last|latest|final)\b")


def _minutes(text: str) -> int | None:
    clock = re.match(r"(\d{1,2})(?:[:.](\d{2}))?\s?(am|pm|a\.m\.|p\.m\.)?", text.strip(), re.I)
    if clock is None:
        return None
    hour, minute = int(clock.group(1)), int(clock.group(2) or 0)
    if clock.group(3) and clock.group(3).lower().startswith("p") and hour < 12:
        hour += 12
    return hour * 60 + minute


def _first_or_last(found: list[re.Match[str]], asked: str) -> str | None:
    """The earliest or latest of several times when the question asks for the first
    or the last one ("last bus from quayside" in a row of departures)."""
    first, last = _FIRST.search(asked), _LAST.search(asked)
    if len(found) < 2 or bool(first) == bool(last):
        return None
    timed = [(m, _minutes(m.group())) for m in found]
    known = [(m, t) for m, t in timed if t is not None]
    if len(known) < 2:
        return None
    pick = min if first else max
    return pick(known, key=lambda item: item[1])[0].group().strip(" ,;.")
