#!/usr/bin/env python3
"""The dev set's date questions asked in other words: each question of
`EVAL/locomo-dev/dates/queries.jsonl` keeps its day and its relevant note, and names the day in
one of the phrasings below (none of them the dev set's own five), in turn.

    python bench/date_phrasings.py EVAL/locomo-dev/dates/queries.jsonl > /tmp/phrasings.jsonl
    python bench/quality.py EVAL/locomo-dev --queries /tmp/phrasings.jsonl --modes hybrid

It measures how a question naming a day in a way we did not tune on is read; the phrasings were
written with the date forms in view, so it is a check of their reach, not an unseen set.

With `--relative`, each question names its day counted from a "today" a few days later, pinned
in its meta ("what happened the Monday before last", "a week ago today", 前天, 上周三), or
without its year ("what did I do on May 8th", "Friday the 9th", "May 8" a year on), so the
relative forms are measured on real notes (bench/quality.py asks each on its day).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
            "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
            "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth")
_CN_WEEKDAY = "一二三四五六日"
_DAY = dt.timedelta(days=1)


def _suffix(n: int) -> str:
    return "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _ordinal_words(n: int) -> str:
    if n <= 20:
        return _ORDINAL[n - 1]
    tens = "twenty" if n < 30 else "thirty"
    return f"{tens}-{_ORDINAL[n % 10 - 1]}" if n % 10 else tens[:-1] + "ieth"


PHRASINGS = (
    lambda d: f"{d:%B} {d.day}, {d.year} conversation",
    lambda d: f"what was discussed on the {d.day}{_suffix(d.day)} of {d:%B}, {d.year}?",
    lambda d: f"{d.day}-{d:%b}-{d.year}",
    lambda d: f"{d.year}/{d.month}/{d.day} notes",
    lambda d: f"{d:%a}, {d.day} {d:%b} {d.year}",
    lambda d: f"the chat of {d.month}/{d.day}/{d:%y}",
    lambda d: f"{d.year}年{d.month}月{d.day}日星期{_CN_WEEKDAY[d.weekday()]}的对话",
    lambda d: f"{d.year}年{d.month}月{d.day}号那天我们聊了啥",
    lambda d: f"tell me about {d:%B} the {d.day}{_suffix(d.day)}, {d.year}",
    lambda d: f"{d:%B} {_ordinal_words(d.day)}, {d.year}",
    lambda d: f"anything from {d:%A} ({d:%B} {d.day}, {d.year})?",
    lambda d: f"the session dated {d.day}.{d.month}.{d.year}",
    lambda d: f"what did we talk about at 1:56 pm on {d.day} {d:%B}, {d.year}",
    lambda d: f"{d.year} {d:%b} {d.day} log",
    lambda d: f"{d:%y}年{d.month}月{d.day}日聊了什么",
    lambda d: f"which topics came up on {d:%B} {d.day} ({d.year})",
    # counted from a neighbouring day (search/dates/offsets.py)
    lambda d: f"the day after {d - _DAY:%B} {(d - _DAY).day}, {(d - _DAY).year}",
    lambda d: f"what happened two days before {(d + 2 * _DAY).day} {d + 2 * _DAY:%B %Y}",
)


# (phrasing, days from the question's day to the today it is asked on)
RELATIVE = (
    (lambda d: "what happened yesterday", 1),
    (lambda d: "notes from three days ago", 3),
    (lambda d: f"what did we talk about last {d:%A}", 4),
    (lambda d: f"the {d:%A} before last", 10),
    (lambda d: "the conversation a week ago today", 7),
    (lambda d: f"two {d:%A}s ago", 12),
    (lambda d: f"what did we discuss on {d:%A} of last week", 7),
    (lambda d: "the day before yesterday", 2),
    (lambda d: "前天聊了什么", 2),
    (lambda d: f"上周{_CN_WEEKDAY[d.weekday()]}的对话", 7),
    (lambda d: "五天前", 5),
    (lambda d: f"what was said on {d:%A}", 2),
    (lambda d: "what did we discuss yday", 1),
    (lambda d: "what happened exactly a week ago", 7),
    # a day without its year (or month): the latest such day not after today
    (lambda d: f"what did I do on {d:%B} {d.day}{_suffix(d.day)}", 20),
    (lambda d: f"notes from {d.day} {d:%B}", 100),
    (lambda d: f"{d.month}月{d.day}号聊了什么", 40),
    (lambda d: f"what happened on the {d.day}{_suffix(d.day)}", 3),
    # (within 28 days: a month on, the same day may fall on the same weekday: Feb 1st and
    # March 1st, 2023)
    (lambda d: f"what did we talk about on {d:%A} the {d.day}{_suffix(d.day)}", 20),
    (lambda d: f"{d:%B} {d.day}", 400),
    (lambda d: f"the conversation on {d:%a} {d:%b} {d.day}", 60),
    (lambda d: f"what was said on {d.month}/{d.day}", 10),
    (lambda d: f"what did we talk about on the {_ordinal_words(d.day)}", 3),
    (lambda d: f"{d.day}号聊了什么", 5),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queries", help="locomo-dev/dates/queries.jsonl")
    ap.add_argument("--relative", action="store_true",
                    help="name each day counted from a pinned today (meta.today)")
    args = ap.parse_args()
    with open(args.queries, encoding="utf-8") as f:
        for i, line in enumerate(f):
            question = json.loads(line)
            day = dt.date.fromisoformat(question["meta"]["date"])
            if args.relative:
                phrase, later = RELATIVE[i % len(RELATIVE)]
                question["query"] = phrase(day)
                question["meta"]["today"] = (day + dt.timedelta(days=later)).isoformat()
                question["id"] = question["id"].replace("/d", "/r")
            else:
                question["query"] = PHRASINGS[i % len(PHRASINGS)](day)
                question["id"] = question["id"].replace("/d", "/p")
            sys.stdout.write(json.dumps(question, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
