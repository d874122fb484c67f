"""The Chinese date forms: 2023年3月27日, 3月27号, 三月二十七日, 2023年3月, 三月份, 昨天,
前天, 上周, 上个月, 去年, 上周五, 这周末, 3天前, 去年的今天 ... (conventions:
`search/dates/forms.py`).
The numbers are in the pattern's hands (Arabic or Chinese numerals), so no library reads them:
dateparser misreads the partial forms (3月27号 → April 10th, 2023年3月 → year 3)."""

from __future__ import annotations

import datetime as dt
import re

from openmemd.search.dates.arithmetic import (
    DAY,
    MAX_YEAR,
    MIN_YEAR,
    Form,
    Resolved,
    full_year,
    latest_day_of_month,
    latest_not_after,
    latest_part,
    month_range,
    most_recent_weekday,
    offset,
    one_day,
    part_index,
    relative,
    same_day_months_back,
    shift_months,
    units_back,
    week_of,
    year_range,
    ymd,
)

_CN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "两": 2}
_CN_NUM = r"(?:\d{1,2}|[一二三四五六七八九十两]{1,3})"
_CN_YEAR = r"(?:\d{4}|[〇零一二三四五六七八九]{4})"
_CN_DAY_END = r"(?:日|号|號)"
# 今年三月, 去年3月27日: a year said relative to today; 23年5月8日: a year said short (with
# its month only: 23年 alone is a length of time).
_CN_YEAR_OR_RELATIVE = rf"(?:(?P<y>{_CN_YEAR}|(?<!\d)\d\d)\s*年|(?P<ry>今年|去年|前年))\s*"
# 2023年3月27日星期一, 3月27日（周一）: the weekday said with the date is part of it.
_CN_WITH_WEEKDAY = r"(?:\s*[（(]?\s*(?:星期|周|週|礼拜|禮拜)[一二三四五六日天]\s*[)）]?)?"


def cn_number(text: str) -> int | None:
    """12, 十二, 二十七, 三十一, 二〇二三 → int; None if not a number."""
    if text.isdigit():
        return int(text)
    if "十" not in text:
        digits = [_CN_DIGITS.get(c) for c in text]
        return None if None in digits else int("".join(str(d) for d in digits))
    tens, _, ones = text.partition("十")
    high = _CN_DIGITS.get(tens, -1) if tens else 1
    low = _CN_DIGITS.get(ones, -1) if ones else 0
    return None if high < 0 or low < 0 else high * 10 + low


def _year_of(match: re.Match[str], today: dt.date) -> int | None:
    """The year a match names (2023年, 二〇二三年, 去年), None when it names none or a bad one."""
    if match["ry"]:
        return today.year - _CN_RELATIVE_YEAR[match["ry"]]
    return full_year(match["y"]) if match["y"] and match["y"].isdigit() else (
        cn_number(match["y"]) if match["y"] else None)


def _cn_date(match: re.Match[str], today: dt.date) -> Resolved:
    month, day = cn_number(match["m"]), cn_number(match["d"])
    if month is None or day is None:
        return None
    if match["y"] or match["ry"]:
        year = _year_of(match, today)
        return None if year is None else one_day(ymd(year, month, day))
    if not 1 <= month <= 12:
        return None
    found = latest_not_after(today, month, day)
    return None if found is None else (found, found, False)


def _cn_month(match: re.Match[str], today: dt.date) -> Resolved:
    month = cn_number(match["m"])
    if month is None or not 1 <= month <= 12:
        return None
    if match["y"] or match["ry"]:
        year = _year_of(match, today)
        if year is None or not MIN_YEAR <= year <= MAX_YEAR:
            return None
        return month_range(year, month)
    first = latest_not_after(today, month)
    return None if first is None else (*month_range(first.year, month), False)


def _cn_year(match: re.Match[str], today: dt.date) -> Resolved:
    year = cn_number(match["y"])
    if year is None or not MIN_YEAR <= year <= MAX_YEAR:
        return None
    return year_range(year)


_CN_RELATIVE_YEAR = {"今年": 0, "去年": 1, "前年": 2}
_CN_WEEKDAY = {c: i for i, c in enumerate("一二三四五六")} | {"日": 6, "天": 6}


@relative
def _cn_unit(match: re.Match[str], today: dt.date) -> Resolved:
    """上周 / 这周 / 上上周, 上个月 / 本月, 今年 / 去年."""
    text = match.group()
    if text in _CN_RELATIVE_YEAR:
        year = today.year - _CN_RELATIVE_YEAR[text]
        return year_range(year)
    return units_back(today, "month" if "月" in text else "week", text.count("上"))


@relative
def _cn_weekday(match: re.Match[str], today: dt.date) -> Resolved:
    target = _CN_WEEKDAY[match["wd"]]
    which = match["which"] or ""
    if which:  # 上周五 is Friday of last week, 这周五 of this one
        day = week_of(today)[0] - 7 * which.count("上") * DAY + target * DAY
    else:
        day = most_recent_weekday(today, target)
    return day, day


@relative
def _cn_weekend(match: re.Match[str], today: dt.date) -> Resolved:
    """上周末 (last week's), 这周末 / 本周末 (this week's); 周末 alone: the latest one begun."""
    which = match["which"] or ""
    monday = week_of(today)[0] - 7 * which.count("上") * DAY
    if not which and today.weekday() < 5:
        monday -= 7 * DAY
    return monday + 5 * DAY, monday + 6 * DAY


def _cn_day_range(match: re.Match[str], today: dt.date) -> Resolved:
    """3月27日到29日, 2023年3月1日至10日: days of one month."""
    last = cn_number(match["d2"])
    first = _cn_date(match, today)
    if first is None or last is None or last <= first[0].day:
        return None
    end = ymd(first[0].year, first[0].month, last)
    return None if end is None else (first[0], end, *first[2:])


@relative
def _cn_month_day(match: re.Match[str], today: dt.date) -> Resolved:
    """上个月27号, 这个月5日, 本月1号."""
    day = cn_number(match["d"])
    return None if day is None else one_day(
        ymd(*shift_months(today, -match["which"].count("上")), day))


@relative
def _cn_day_alone(match: re.Match[str], today: dt.date) -> Resolved:
    """8号, 二十七号: the latest such day of a month not after today (as "on the 27th")."""
    day = cn_number(match["d"])
    return None if day is None else one_day(latest_day_of_month(today, day))


@relative
def _cn_recent(match: re.Match[str], today: dt.date) -> Resolved:
    """最近三天, 过去一周, 近两个月: the days up to today; 这两天 (2), 这几天 (a few: 3)."""
    if match["n2"]:
        return today - (2 if match["n2"] == "两" else 3) * DAY, today
    n = cn_number(match["n"])
    if n is None or not 0 < n <= 3660:
        return None
    days = n * {"天": 1, "日": 1, "个月": 30, "年": 365}.get(match["unit"], 7)
    return today - days * DAY, today


@relative
def _cn_few_days_ago(match: re.Match[str], today: dt.date) -> Resolved:
    """前几天, 几天前: a few days ago (as "a few days ago": 2 to 4 days back)."""
    return today - 4 * DAY, today - 2 * DAY


@relative
def _cn_half_ago(match: re.Match[str], today: dt.date) -> Resolved:
    """半个月前 (about two weeks: one to three weeks back), 半年前 (about six months: the five
    to seven months back), counts said loosely."""
    if match["unit"] == "月":
        return today - 21 * DAY, today - 7 * DAY
    return (month_range(*shift_months(today, -7))[0], month_range(*shift_months(today, -5))[1])


@relative
def _cn_ago(match: re.Match[str], today: dt.date) -> Resolved:
    n = cn_number(match["n"])
    if n is None or not 0 < n <= 3660:
        return None
    unit = match["unit"]
    if unit in ("天", "日"):
        return today - n * DAY, today - n * DAY
    return units_back(today, "month" if unit == "个月" else "year" if unit == "年" else "week", n)


@relative
def _cn_part(match: re.Match[str], today: dt.date) -> Resolved:
    """月初, 月底, 年初, 年底 said alone: of this month or year, or the last one when this one's
    part has not begun (as "the end of the month")."""
    return latest_part(today, "month" if match["unit"] == "月" else "year",
                       part_index(match["part"]))


@relative
def _cn_same_day(match: re.Match[str], today: dt.date) -> Resolved:
    """去年的今天, 上个月的今天, 上周的今天: that one day (a 29th of February a year back is
    the 28th; a 31st a month back, that month's last day)."""
    which = match["which"]
    if "年" in which:
        day = same_day_months_back(today, 12 * (2 if which.startswith("前") else 1))
    elif "月" in which:
        day = same_day_months_back(today, which.count("上"))
    else:
        day = today - 7 * which.count("上") * DAY
    return day, day


_CN_MONTH_DAY = (rf"(?:{_CN_YEAR_OR_RELATIVE})?(?<![个\d一二三四五六七八九十两])"
                 rf"(?P<m>{_CN_NUM})\s*月\s*(?P<d>{_CN_NUM})")
CN_FORMS: tuple[Form, ...] = (
    # 2023年3月27日, 3月27号, 二〇二三年三月二十七日, 去年3月27日, 2023年3月27日星期一
    (re.compile(rf"{_CN_MONTH_DAY}(?:\s*{_CN_DAY_END}|(?![\d个])){_CN_WITH_WEEKDAY}"), _cn_date),
    # 3月27日到29日, 2023年3月1日至10号
    (re.compile(rf"{_CN_MONTH_DAY}\s*{_CN_DAY_END}?\s*(?:到|至|-|–|—|~)\s*"
                rf"(?P<d2>{_CN_NUM})\s*{_CN_DAY_END}"), _cn_day_range),
    # 2023年3月, 三月份, 去年三月 (not 一个月: that is a length; 3月底: search/dates/query.py)
    (re.compile(rf"(?:{_CN_YEAR_OR_RELATIVE})?(?<![个\d一二三四五六七八九十两])"
                rf"(?P<m>{_CN_NUM})\s*月份?(?!\s*{_CN_NUM})"), _cn_month),
    # 上个月27号, 本月5日
    (re.compile(rf"(?P<which>上上|上|这|本)(?:个)?月\s*(?P<d>{_CN_NUM})\s*{_CN_DAY_END}"),
     _cn_month_day),
    # 8号聊了什么, 27号那天 (not 3号线, 8号楼, 第8号: only before what goes on about the day)
    (re.compile(rf"(?<![\d月〇零一二三四五六七八九十两第])(?P<d>{_CN_NUM})\s*[号號]"
                r"(?=的|那|当天|當天|晚|早|上午|下午|中午|聊|说|說|讲|講|谈|談|做|干|幹|发生|發生"
                r"|开会|開會|去|有|是|我|你|他|她|咱|[，。？！、,.?!\s]|$)"), _cn_day_alone),
    (re.compile(rf"(?:最近|过去|過去|近)(?:的)?\s*(?P<n>{_CN_NUM})\s*"
                r"(?P<unit>天|日|周|週|个星期|星期|个礼拜|礼拜|个月|年)"
                r"|这(?P<n2>两|几)天"), _cn_recent),
    (re.compile(r"前几天|几天前|幾天前"), _cn_few_days_ago),
    (re.compile(r"半(?:个|個)?(?P<unit>月|年)(?:前|之前|以前)"), _cn_half_ago),
    (re.compile(rf"(?P<y>{_CN_YEAR})\s*年(?!\s*{_CN_NUM}\s*月)"), _cn_year),
    # 去年的今天, 上个月今天, 上周的今天 (before 去年 and 今天 alone)
    (re.compile(r"(?P<which>去年|前年|上上个?月|上个?月|上上(?:周|週|星期|礼拜)|上(?:周|週|星期|礼拜))"
                r"的?(?:今天|今日|这一?天)"), _cn_same_day),
    (re.compile(r"今天|今日|今晚|今早|今天早上"), offset(0)),
    (re.compile(r"昨天|昨日|昨晚"), offset(1)),
    (re.compile(r"(?<!大)前天"), offset(2)),
    (re.compile(r"大前天"), offset(3)),
    (re.compile(r"(?:上上|上|这|本)(?:个)?(?:周|週|星期|礼拜|禮拜)(?![一二三四五六日天])"
                r"|(?:上上|上|这|本)(?:个)?月|今年|去年|前年"), _cn_unit),
    # 上周五, 周五, 这周末 (not 下周一, 下个周末: the future names no note's day)
    (re.compile(r"(?<!下)(?<!下个)(?P<which>上上|上|这|本)?(?:个)?(?:周|週|星期|礼拜|禮拜)"
                r"(?P<wd>[一二三四五六日天])"), _cn_weekday),
    (re.compile(r"(?<!下)(?<!下个)(?P<which>上上|上|这|本)?(?:个)?(?:周末|週末)"), _cn_weekend),
    (re.compile(rf"(?P<n>{_CN_NUM})\s*(?P<unit>天|日|周|个星期|星期|个礼拜|礼拜|个月|年)"
                r"(?:前|之前|以前)"), _cn_ago),
    # 月初, 月底, 月中旬, 年初, 年底 alone (三月初, 上个月底, 去年年底: search/dates/query.py)
    (re.compile(r"(?<![\d〇零一二三四五六七八九十两个上下本这今去前年月])(?P<unit>[月年])"
                r"(?P<part>初|上旬|中旬|下旬|底|末)"), _cn_part),
)
