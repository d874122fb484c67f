"""What a query says about dates (`search/dates/query.py`): each common English and Chinese form
resolves to its range against a pinned today, the date words leave the searched text, "about
the date" is told from "a topic in a range", and things that only look like numbers name no
date. Pure and fast: no index, no model."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap

import pytest
from date_rows import Row, each_row, resolves

from openmemd.search.dates.query import understand_dates

FRI = dt.date(2026, 7, 10)  # a Friday; weeks run Monday 6th .. Sunday 12th
WINTER = dt.date(2026, 2, 10)  # a Tuesday early in the year: year-less dates reach back

D = dt.date
# (query, today, first day, last day, about the date itself?)
ROWS: list[Row] = [
    # absolute, English
    ("March 27, 2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("27 March 2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("Mar 27 2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("mar. 27th, 2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("Monday the 27th of March 2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("what came up on Tue, Sept 5 2023?", FRI, D(2023, 9, 5), D(2023, 9, 5), True),
    ("recap for the 5th of September, 2023", FRI, D(2023, 9, 5), D(2023, 9, 5), True),
    ("anything written down Dec 31 '24", FRI, D(2024, 12, 31), D(2024, 12, 31), True),
    ("in March 2023", FRI, D(2023, 3, 1), D(2023, 3, 31), True),
    # the year said after "of"/"in" is the day's, not a second range; "may" with its year
    ("May 8th of 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("what happened between 8 and 10 May 2023", FRI, D(2023, 5, 8), D(2023, 5, 10), True),
    ("between May 8 and 10, 2023", FRI, D(2023, 5, 8), D(2023, 5, 10), True),
    ("notes from March 3 in 2025", FRI, D(2025, 3, 3), D(2025, 3, 3), True),
    ("the eighth of may 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("what happened on the 8th day of May 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("the eighth day of May, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    # the year first, as in a log; a year in brackets is the day's
    ("2023 May 8", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("what happened on May 8 (2023)?", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    # a clock time or a weekday beside the date is no topic (notes are by day)
    ("1:56 pm on 8 May, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("Monday, May 8, 2023 at 1:56 pm", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("2023-05-08T13:56", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("8th May 2023 (Mon)", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("which topics came up on May 8 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("which things did we cover on May 8 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("anything mentioned on 8 May 2023?", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("what did we decide at 3pm on May 8 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), False),
    # a two-digit year from 69 on is the 1900s, as strptime's %y
    ("notes from 5/8/99", FRI, D(1999, 5, 8), D(1999, 5, 8), True),
    ("what did I log during Feb 2024", FRI, D(2024, 2, 1), D(2024, 2, 29), True),
    # a month and a two-digit year (dateparser alone reads "July '26" as the 26th of July)
    ("what did we ship in July '26", FRI, D(2026, 7, 1), D(2026, 7, 31), False),
    ("Mar '25", FRI, D(2025, 3, 1), D(2025, 3, 31), True),
    ("journal entries from 2025", FRI, D(2025, 1, 1), D(2025, 12, 31), True),
    # numbers: ISO, month first unless the first number can only be a day, day-first dots
    ("2023-03-27", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("the log of 2023/03/27", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("20230327", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("3/27/2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("27/3/2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("3/4/2023", FRI, D(2023, 3, 4), D(2023, 3, 4), True),
    ("13/4/2023", FRI, D(2023, 4, 13), D(2023, 4, 13), True),
    ("4/13/23", FRI, D(2023, 4, 13), D(2023, 4, 13), True),
    ("27.03.2023", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("everything from 2023-03", FRI, D(2023, 3, 1), D(2023, 3, 31), True),
    ("what happened on 3/27", FRI, D(2026, 3, 27), D(2026, 3, 27), True),
    # year-less: the most recent one not after today
    ("what did I do on July 3rd", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
    ("what did I do on July 10th", FRI, D(2026, 7, 10), D(2026, 7, 10), True),
    ("what did I do on July 11th", FRI, D(2025, 7, 11), D(2025, 7, 11), True),
    ("December 25", WINTER, D(2025, 12, 25), D(2025, 12, 25), True),
    ("what happened in March", FRI, D(2026, 3, 1), D(2026, 3, 31), True),
    ("what happened in March", WINTER, D(2025, 3, 1), D(2025, 3, 31), True),
    # relative, English
    ("what did I do yesterday", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("today", FRI, FRI, FRI, True),
    ("the day before yesterday", FRI, D(2026, 7, 8), D(2026, 7, 8), True),
    ("the night before last", FRI, D(2026, 7, 8), D(2026, 7, 8), True),
    # "the other day": some day of the past week, not today
    ("what did Ana say about the budget the other day", FRI, D(2026, 7, 3), D(2026, 7, 9),
     False),
    ("three days ago", FRI, D(2026, 7, 7), D(2026, 7, 7), True),
    ("what happened 3 days back", FRI, D(2026, 7, 7), D(2026, 7, 7), True),
    ("within the last 3 days", FRI, D(2026, 7, 7), D(2026, 7, 10), True),
    ("what did we talk about 2 days ago", FRI, D(2026, 7, 8), D(2026, 7, 8), True),
    ("two weeks ago", FRI, D(2026, 6, 22), D(2026, 6, 28), True),
    ("last week", FRI, D(2026, 6, 29), D(2026, 7, 5), True),
    ("this week", FRI, D(2026, 7, 6), D(2026, 7, 12), True),
    ("the week before last", FRI, D(2026, 6, 22), D(2026, 6, 28), True),
    ("the past week", FRI, D(2026, 7, 3), FRI, True),
    ("over the last 3 days", FRI, D(2026, 7, 7), FRI, True),
    ("last Friday", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
    ("on Monday", FRI, D(2026, 7, 6), D(2026, 7, 6), True),
    ("this Sunday", FRI, D(2026, 7, 12), D(2026, 7, 12), True),
    ("last weekend", FRI, D(2026, 7, 4), D(2026, 7, 5), True),
    ("this month", FRI, D(2026, 7, 1), D(2026, 7, 31), True),
    ("last month", FRI, D(2026, 6, 1), D(2026, 6, 30), True),
    ("last month", D(2026, 1, 15), D(2025, 12, 1), D(2025, 12, 31), True),
    ("last year", FRI, D(2025, 1, 1), D(2025, 12, 31), True),
    ("since March", FRI, D(2026, 3, 1), FRI, True),
    ("年初到现在", FRI, D(2026, 1, 1), FRI, True),
    ("上个月至今", FRI, D(2026, 6, 1), FRI, True),
    # a relative phrase tied to a named day counts from that day
    ("last Sunday before October 25, 2022", FRI, D(2022, 10, 23), D(2022, 10, 25), True),
    ("what did Jo finish last Friday on 23 January, 2022", FRI, D(2022, 1, 21), D(2022, 1, 23),
     False),
    ("the trip last weekend before April 10, 2023", FRI, D(2023, 4, 8), D(2023, 4, 10), False),
    ("that issue last week, as mentioned on November 6, 2023", FRI, D(2023, 10, 30),
     D(2023, 11, 6), False),
    ("the forest picture shared on December 1,2023", FRI, D(2023, 12, 1), D(2023, 12, 1), False),
    ("during September 2023", FRI, D(2023, 9, 1), D(2023, 9, 30), True),
    # ranges
    ("between 2023-03-01 and 2023-03-05", FRI, D(2023, 3, 1), D(2023, 3, 5), True),
    ("March 3 to March 10, 2023", FRI, D(2023, 3, 3), D(2023, 3, 10), True),
    ("from May 2 2024 until May 9 2024", FRI, D(2024, 5, 2), D(2024, 5, 9), True),
    ("March 27-29, 2023", FRI, D(2023, 3, 27), D(2023, 3, 29), True),
    ("27-29 March 2023", FRI, D(2023, 3, 27), D(2023, 3, 29), True),
    ("what did we do from 1 to 10 March 2023", FRI, D(2023, 3, 1), D(2023, 3, 10), True),
    ("notes from March 27 to 29", FRI, D(2026, 3, 27), D(2026, 3, 29), True),
    ("July 9-11", FRI, D(2026, 7, 9), D(2026, 7, 11), True),  # begun: this year's
    ("the week of March 27, 2023", FRI, D(2023, 3, 27), D(2023, 4, 2), True),
    ("8-May-2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("8/May/2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("08.Mar.23", FRI, D(2023, 3, 8), D(2023, 3, 8), True),
    ("the eighth of May 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("May twenty-seventh, 2023", FRI, D(2023, 5, 27), D(2023, 5, 27), True),
    ("anything from Monday (May 8, 2023)?", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("the chat dated 8.5.2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    # a weekday said with it picks the reading of an ambiguous numeric date that falls on it
    ("what happened on Monday 05.08.2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("Monday 8/5/2023", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    # a day of the month alone; counts said loosely; a weekday of a named week
    ("on the 27th", FRI, D(2026, 6, 27), D(2026, 6, 27), True),
    ("what did we do on the 10th?", FRI, FRI, FRI, True),
    ("a couple of days ago", FRI, D(2026, 7, 7), D(2026, 7, 9), True),
    ("a few days ago", FRI, D(2026, 7, 6), D(2026, 7, 8), True),
    ("a few weeks ago", FRI, D(2026, 6, 8), D(2026, 6, 28), True),
    ("the past few days", FRI, D(2026, 7, 7), FRI, True),
    ("the past two weeks", FRI, D(2026, 6, 26), FRI, True),
    ("Tuesday of last week", FRI, D(2026, 6, 30), D(2026, 6, 30), True),
    ("on Tuesday last week", FRI, D(2026, 6, 30), D(2026, 6, 30), True),
    ("last week's Monday", FRI, D(2026, 6, 29), D(2026, 6, 29), True),
    # Chinese
    ("2023年3月27日星期一", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("2023年3月27日（周一）聊了什么", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("去年3月27日", FRI, D(2025, 3, 27), D(2025, 3, 27), True),
    ("23年5月8日", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("5月8日（2023年）", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("五月八日，2023年", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("5月8日 2023年", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("去年三月", FRI, D(2025, 3, 1), D(2025, 3, 31), True),
    ("今年3月的笔记", FRI, D(2026, 3, 1), D(2026, 3, 31), True),
    ("上个月27号", FRI, D(2026, 6, 27), D(2026, 6, 27), True),
    ("本月5日", FRI, D(2026, 7, 5), D(2026, 7, 5), True),
    ("3月27日到29日", FRI, D(2026, 3, 27), D(2026, 3, 29), True),
    ("2023年3月1日至10日", FRI, D(2023, 3, 1), D(2023, 3, 10), True),
    ("3月27日那周的会议", FRI, D(2026, 3, 23), D(2026, 3, 29), False),
    ("最近三天", FRI, D(2026, 7, 7), FRI, True),
    ("过去一周", FRI, D(2026, 7, 3), FRI, True),
    ("这两天", FRI, D(2026, 7, 8), FRI, True),
    ("前几天", FRI, D(2026, 7, 6), D(2026, 7, 8), True),
    ("周一，3月23日的会议", FRI, D(2026, 3, 23), D(2026, 3, 23), False),
    ("2023年5月8号那天聊了啥", FRI, D(2023, 5, 8), D(2023, 5, 8), True),
    ("2023年3月27日", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("2023年3月27日我们聊了什么", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("二〇二三年三月二十七日", FRI, D(2023, 3, 27), D(2023, 3, 27), True),
    ("3月27号", FRI, D(2026, 3, 27), D(2026, 3, 27), True),
    ("3月27日的记录", FRI, D(2026, 3, 27), D(2026, 3, 27), True),
    ("十二月三十一号发生了什么", WINTER, D(2025, 12, 31), D(2025, 12, 31), True),
    ("2023年3月", FRI, D(2023, 3, 1), D(2023, 3, 31), True),
    ("三月份的笔记", FRI, D(2026, 3, 1), D(2026, 3, 31), True),
    ("昨天", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("我昨天做了什么", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("前天", FRI, D(2026, 7, 8), D(2026, 7, 8), True),
    ("大前天", FRI, D(2026, 7, 7), D(2026, 7, 7), True),
    ("今天", FRI, FRI, FRI, True),
    ("上周", FRI, D(2026, 6, 29), D(2026, 7, 5), True),
    ("上个星期都干了什么", FRI, D(2026, 6, 29), D(2026, 7, 5), True),
    ("这周", FRI, D(2026, 7, 6), D(2026, 7, 12), True),
    ("上周五", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
    ("星期一", FRI, D(2026, 7, 6), D(2026, 7, 6), True),
    ("上周末", FRI, D(2026, 7, 4), D(2026, 7, 5), True),
    ("上个月", FRI, D(2026, 6, 1), D(2026, 6, 30), True),
    ("本月", FRI, D(2026, 7, 1), D(2026, 7, 31), True),
    ("去年", FRI, D(2025, 1, 1), D(2025, 12, 31), True),
    ("3天前", FRI, D(2026, 7, 7), D(2026, 7, 7), True),
    ("两周前", FRI, D(2026, 6, 22), D(2026, 6, 28), True),
    ("半个月前", FRI, D(2026, 6, 19), D(2026, 7, 3), True),  # said loosely: 1-3 weeks back
    ("半年前的计划", FRI, D(2025, 12, 1), D(2026, 2, 28), False),
    ("从3月1日到3月5日", FRI, D(2026, 3, 1), D(2026, 3, 5), True),
    # quarters and halves: with a year, in words, or after a preposition (FRI is in Q3)
    ("Q3 2026", FRI, D(2026, 7, 1), D(2026, 9, 30), True),
    ("what did we ship in Q2", FRI, D(2026, 4, 1), D(2026, 6, 30), False),
    ("in Q4", FRI, D(2025, 10, 1), D(2025, 12, 31), True),  # the latest Q4 begun by today
    ("2025-Q4 planning", FRI, D(2025, 10, 1), D(2025, 12, 31), False),
    ("q1 '25 retro notes", FRI, D(2025, 1, 1), D(2025, 3, 31), False),
    ("the third quarter of 2025", FRI, D(2025, 7, 1), D(2025, 9, 30), True),
    ("the second quarter", FRI, D(2026, 4, 1), D(2026, 6, 30), True),
    ("last quarter", FRI, D(2026, 4, 1), D(2026, 6, 30), True),
    ("this quarter", FRI, D(2026, 7, 1), D(2026, 9, 30), True),
    ("last quarter", D(2026, 2, 10), D(2025, 10, 1), D(2025, 12, 31), True),
    ("H1 2026", FRI, D(2026, 1, 1), D(2026, 6, 30), True),
    ("the first half of 2025", FRI, D(2025, 1, 1), D(2025, 6, 30), True),
    ("during H2", FRI, D(2026, 7, 1), D(2026, 12, 31), True),
    ("2026年第三季度的会议", FRI, D(2026, 7, 1), D(2026, 9, 30), False),
    ("2026年Q1", FRI, D(2026, 1, 1), D(2026, 3, 31), True),
    ("三季度", FRI, D(2026, 7, 1), D(2026, 9, 30), True),
    ("上季度做了什么", FRI, D(2026, 4, 1), D(2026, 6, 30), True),
    ("本季度", FRI, D(2026, 7, 1), D(2026, 9, 30), True),
    ("2025年下半年", FRI, D(2025, 7, 1), D(2025, 12, 31), True),
    ("上半年", FRI, D(2026, 1, 1), D(2026, 6, 30), True),
    # weeks of a month: days 1-7, 8-14, ...; the last, its final seven; without a year, the
    # latest such week begun by today
    ("meetings in the first week of June", FRI, D(2026, 6, 1), D(2026, 6, 7), False),
    ("the last week of March 2025", FRI, D(2025, 3, 25), D(2025, 3, 31), True),
    ("the second week of July", FRI, D(2026, 7, 8), D(2026, 7, 14), True),
    ("the 3rd week of July", FRI, D(2025, 7, 15), D(2025, 7, 21), True),
    ("what happened in the last week of Feb '24", FRI, D(2024, 2, 23), D(2024, 2, 29), True),
    ("6月第一周的会议", FRI, D(2026, 6, 1), D(2026, 6, 7), False),
    ("十一月的最后一周", FRI, D(2025, 11, 24), D(2025, 11, 30), True),
    # counted back from a weekday or to the day: "the Monday before last" is the one before
    # last Monday, "a week ago today" one day
    ("what did I do the Monday before last", FRI, D(2026, 6, 29), D(2026, 6, 29), True),
    ("two Fridays ago", FRI, D(2026, 6, 26), D(2026, 6, 26), True),
    ("notes from a week ago today", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
    ("a month ago yesterday", FRI, D(2026, 6, 9), D(2026, 6, 9), True),
    ("this day last year", FRI, D(2025, 7, 10), D(2025, 7, 10), True),
    # hours reach into the days they cover; a fortnight is two weeks
    ("what happened in the last 24 hours", FRI, D(2026, 7, 9), FRI, True),
    ("the past 48 hours", FRI, D(2026, 7, 8), FRI, True),
    ("a fortnight ago", FRI, D(2026, 6, 22), D(2026, 6, 28), True),
    ("the past fortnight", FRI, D(2026, 6, 26), FRI, True),
    # the part of a period: a month's thirds are days 1-10, 11-20, 21 on (三月初, 中旬, 下旬),
    # a year's four months each, a week's two or three days; halves; said without its year,
    # the latest such part begun by today
    ("the end of last month", FRI, D(2026, 6, 21), D(2026, 6, 30), True),
    ("early March", FRI, D(2026, 3, 1), D(2026, 3, 10), True),
    ("mid-November", FRI, D(2025, 11, 11), D(2025, 11, 20), True),
    ("late July", FRI, D(2025, 7, 21), D(2025, 7, 31), True),  # this July's has not begun
    ("late December", WINTER, D(2025, 12, 21), D(2025, 12, 31), True),
    ("the first half of November 2025", FRI, D(2025, 11, 1), D(2025, 11, 15), True),
    ("the beginning of the year", FRI, D(2026, 1, 1), D(2026, 4, 30), True),
    ("the end of the month", FRI, D(2026, 6, 21), D(2026, 6, 30), True),
    ("the end of 2025", FRI, D(2025, 9, 1), D(2025, 12, 31), True),
    ("early 2025", FRI, D(2025, 1, 1), D(2025, 4, 30), True),
    ("the end of last week", FRI, D(2026, 7, 3), D(2026, 7, 5), True),
    ("towards the end of last year", FRI, D(2025, 9, 1), D(2025, 12, 31), True),
    ("the end of June to the start of July", FRI, D(2026, 6, 21), D(2026, 7, 10), True),
    ("what did we decide about the database at the end of last month", FRI, D(2026, 6, 21),
     D(2026, 6, 30), False),
    ("三月初", FRI, D(2026, 3, 1), D(2026, 3, 10), True),
    ("3月中旬的会议", FRI, D(2026, 3, 11), D(2026, 3, 20), False),
    ("上个月底", FRI, D(2026, 6, 21), D(2026, 6, 30), True),
    ("去年年底", FRI, D(2025, 9, 1), D(2025, 12, 31), True),
    ("月初", FRI, D(2026, 7, 1), D(2026, 7, 10), True),
    ("年底", FRI, D(2025, 9, 1), D(2025, 12, 31), True),
    ("notes from the 15th", FRI, D(2026, 6, 15), D(2026, 6, 15), True),
    # politeness names no topic, nor does "earlier", nor a time of day
    ("notes from yesterday evening", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("昨天下午做了什么", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("今晚", FRI, FRI, FRI, True),
    ("what did I write earlier today", FRI, FRI, FRI, True),
    ("notes (3 Jul 2026) please", FRI, D(2026, 7, 3), D(2026, 7, 3), True),
    ("please show me what happened yesterday", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    ("请告诉我昨天做了什么", FRI, D(2026, 7, 9), D(2026, 7, 9), True),
    # a topic too: the date only narrows it
    ("what did we decide about the database last week", FRI, D(2026, 6, 29), D(2026, 7, 5),
     False),
    ("Caroline's adoption plans on 8 May, 2023", FRI, D(2023, 5, 8), D(2023, 5, 8), False),
    ("上周关于数据库的决定", FRI, D(2026, 6, 29), D(2026, 7, 5), False),
    ("昨天的会议纪要", FRI, D(2026, 7, 9), D(2026, 7, 9), False),
    ("standup notes for the billing service yesterday", FRI, D(2026, 7, 9), D(2026, 7, 9),
     False),
]

NO_DATE = [
    "version 3.12", "error 404", "python 3.12.1 on ubuntu 22.04", "what may happen to the server",
    "the last time we deployed", "march to the beat", "retry after 30 seconds",
    "port 8080 and 443", "ratio 3/4", "1.2.3", "we prefer TypeScript", "sat on the sun deck",
    "how do I configure the database", "数据库的配置", "一个月的预算", "第3章",
    "2 of 5 tests failed", "issue #2023", "", "   ", "on the 3rd floor", "the 2nd attempt failed",
    "a few people came", "第3天的训练", "we may first need to deploy", "first of all",
    "service for the Audi Q3", "Q3 planning template", "the H1 heading", "每个季度的预算",
    "the last hour of the workshop was boring", "the end of the pipeline",
    "the first half of the book", "early access program", "初学者的问题", "期末考试",
    "这个问题的底线", "工作了10年",
    # the future names no note's day (and no past Monday is meant)
    "what is planned for next Monday", "this coming Friday",
    "what is happening on Friday next week", "the Monday after next", "下周一开会", "下个周末",
]


@each_row(ROWS)
def test_a_date_form_resolves_to_its_range(
        query: str, today: dt.date, first: dt.date, last: dt.date, about: bool) -> None:
    resolves(query, today, first, last, about)


@pytest.mark.parametrize("query", NO_DATE)
def test_things_that_only_look_like_dates_name_none(query: str) -> None:
    assert understand_dates(query, FRI) is None


@pytest.mark.parametrize(("query", "rest"), [
    ("what did I do on July 3rd", "what did I do"),
    ("notes from 3 July 2026", "notes"),
    ("what did we decide about the database last week", "what did we decide about the database"),
    ("What did we talk about on Monday, May 8th 2023?", "What did we talk about?"),
    ("我昨天做了什么", "我做了什么"),
    ("anything from Monday (May 8, 2023)?", "anything?"),
    ("gym notes (21 Sep 2023) please", "gym notes please"),
    ("standup (from May 8 to May 10) notes", "standup notes"),
    ("周一（3月27日）做了什么", "做了什么"),
    ("the week of March 27, 2023", ""),
    ("上个月的会议", "会议"),
    ("2023-03-27", ""),
    ("what happened at the end of last month", "what happened"),
    ("notes from early March", "notes"),
    ("what did we do over Easter 2025", "what did we do"),
    ("去年年底的总结", "总结"),
])
def test_the_date_words_leave_the_searched_text(query: str, rest: str) -> None:
    found = understand_dates(query, FRI)
    assert found is not None and found.query == rest


def test_the_meta_says_what_was_understood() -> None:
    found = understand_dates("notes from 27 March 2023", FRI)
    assert found is not None
    assert found.to_meta() == {"from": "2023-03-27", "to": "2023-03-27",
                               "text": "27 March 2023", "about": "date"}
    two = understand_dates("the release on 2026-07-01 and yesterday", FRI)
    assert two is not None and two.to_meta() == {
        "from": "2026-07-01", "to": "2026-07-09", "text": "2026-07-01 / yesterday",
        "about": "topic", "ranges": [
            {"from": "2026-07-01", "to": "2026-07-01", "text": "2026-07-01"},
            {"from": "2026-07-09", "to": "2026-07-09", "text": "yesterday"}]}
    assert two.covers(dt.date(2026, 7, 9)) and not two.covers(dt.date(2026, 7, 5))


@pytest.mark.parametrize(("query", "text"), [
    ("anything from Monday (May 8, 2023)?", "Monday (May 8, 2023)"),  # its bracket closed
    ("gym notes (21 Sep 2023) please", "21 Sep 2023"),  # the brackets are not the date
    ("周一（3月27日）做了什么", "周一（3月27日）"),
])
def test_the_understood_text_keeps_brackets_whole(query: str, text: str) -> None:
    found = understand_dates(query, FRI)
    assert found is not None and found.to_meta()["text"] == text


def test_no_date_library_for_a_query_without_dates_and_no_network_for_one_with() -> None:
    """The pre-check keeps dateparser out of a search without dates; a search with dates in
    words imports it and reads nothing from the network and writes no file (audit hooks see
    every socket and every open for writing)."""
    script = textwrap.dedent("""
        import datetime, json, sys
        events = []
        def hook(name, args):
            if name.startswith("socket.") or (name == "open" and len(args) > 1
                                             and isinstance(args[1], str)
                                             and any(m in args[1] for m in "wax+")):
                events.append([name, repr(args)[:200]])
        sys.addaudithook(hook)
        from openmemd.search.dates.query import understand_dates
        today = datetime.date(2026, 7, 10)
        understand_dates("how do I configure the database", today)
        understand_dates("error 404 in version 3.12", today)
        before = "dateparser" in sys.modules
        for q in ("March 27, 2023", "three days ago", "Monday the 27th of March 2023",
                  "in March", "last Friday"):
            assert understand_dates(q, today) is not None, q
        print(json.dumps({"before": before, "after": "dateparser" in sys.modules,
                          "events": events}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"before": False, "after": True, "events": []}


def test_a_date_said_without_its_year_can_move_a_year_back_and_no_other() -> None:
    may = understand_dates("what did we do in May", FRI)
    assert may is not None and may.ranges[0].year_given is False
    earlier = may.a_year_earlier()
    assert earlier is not None and (earlier.start, earlier.end) == (D(2025, 5, 1), D(2025, 5, 31))
    assert earlier.query == may.query and earlier.topic == may.topic
    leap = understand_dates("notes of February 29th", D(2028, 3, 1))
    assert leap is not None and leap.a_year_earlier() is not None
    assert leap.a_year_earlier().start == D(2027, 2, 28)  # type: ignore[union-attr]
    for given in ("in May 2023", "yesterday", "last week", "on the 27th", "2023-05-08"):
        found = understand_dates(given, FRI)
        assert found is not None and found.a_year_earlier() is None, given

