"""Time for dreaming: the configured timezone, day buckets and OpenClaw's timestamp format.

Every date a user sees or a store keeps (recall days, report file names, the promotion section
header) is a day in the dreaming timezone; every instant stored is UTC in JavaScript's
`toISOString()` form (``2026-04-12T03:00:00.000Z``) so OpenClaw reads our files unchanged.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = timezone.utc
DAY_SECONDS = 86_400.0

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
# Abbreviations Intl.DateTimeFormat("en-US", {timeZoneName: "short"}) prints by name; every
# other zone is shown as an offset ("GMT+8"), which is what OpenClaw's diary dates look like.
_US_ABBREVIATIONS = frozenset({"EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT",
                               "AKST", "AKDT", "HST"})


def resolve_timezone(name: str = "") -> tzinfo:
    """The IANA zone `name`, or the machine's local zone when empty."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown timezone {name!r}") from exc
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:  # pragma: no cover - tzlocal cannot tell on some minimal systems
        return datetime.now().astimezone().tzinfo or UTC


def as_utc(moment: datetime | None = None) -> datetime:
    """`moment` as aware UTC; None = now. A naive value is local time (Python's rule)."""
    if moment is None:
        return datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.astimezone(UTC)


def day_bucket(moment: datetime, tz: tzinfo) -> str:
    """The calendar day (YYYY-MM-DD) of `moment` in `tz`."""
    return as_utc(moment).astimezone(tz).date().isoformat()


def iso_z(moment: datetime) -> str:
    """JavaScript's Date.toISOString(): UTC, milliseconds, trailing Z."""
    utc = as_utc(moment)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(value: object) -> datetime | None:
    """Parse an ISO timestamp as OpenClaw writes it (or any offset form); None if unusable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def normalize_day(value: object) -> str | None:
    """The leading YYYY-MM-DD of a string, as OpenClaw's normalizeIsoDay does."""
    if not isinstance(value, str):
        return None
    match = _DAY_RE.match(value.strip())
    return match.group(1) if match else None


def parse_day(day: str) -> date | None:
    try:
        return date.fromisoformat(day)
    except (TypeError, ValueError):
        return None


def days_between(earlier: datetime, later: datetime) -> float:
    """Fractional days from `earlier` to `later`, never negative."""
    return max(0.0, (as_utc(later) - as_utc(earlier)).total_seconds() / DAY_SECONDS)


def lookback_cutoff(now: datetime, lookback_days: float) -> datetime:
    return as_utc(now) - timedelta(days=max(0.0, lookback_days))


def day_within_lookback(day: str, cutoff: datetime) -> bool:
    """OpenClaw's rule: a day counts while its last millisecond (UTC) is not before the cutoff."""
    parsed = parse_day(day)
    if parsed is None:
        return False
    end = datetime(parsed.year, parsed.month, parsed.day, 23, 59, 59, 999_000, tzinfo=UTC)
    return end >= cutoff


def format_diary_date(moment: datetime, tz: tzinfo) -> str:
    """en-US long date as OpenClaw's diary prints it: 'April 12, 2026 at 3:00 AM PDT'."""
    local = as_utc(moment).astimezone(tz)
    hour = local.hour % 12 or 12
    meridiem = "AM" if local.hour < 12 else "PM"
    return (f"{_MONTHS[local.month - 1]} {local.day}, {local.year} at "
            f"{hour}:{local.minute:02d} {meridiem} {_zone_label(local)}")


def _zone_label(local: datetime) -> str:
    name = local.tzname() or ""
    if name == "UTC":
        return "UTC"
    key = getattr(local.tzinfo, "key", "") or ""
    if name in _US_ABBREVIATIONS and key.startswith(("America/", "US/", "Pacific/Honolulu")):
        return name
    offset = local.utcoffset() or timedelta(0)
    minutes = math.floor(offset.total_seconds() / 60)
    if minutes == 0:
        return "GMT"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"GMT{sign}{hours}" + (f":{rest:02d}" if rest else "")
