"""What a query says about dates: the days, months or ranges it names, read against today.

Entry point: `query.understand_dates(query, today)` -> `query.DateQuery` | None, which the
search calls (`api/searcher.py`) before the legs run; `search/dated.py` then ranks the notes of
the range. `forms.py` finds the date phrases (with `numeric`, `relative`, `chinese`, `periods`,
`holidays`, `seasons`), `spans.py` and `offsets.py` combine them, `arithmetic.py` is the
calendar they share. Pure: no index, no store; `dateparser` and `borax` load only when a query
names a date in words or a lunar festival.
"""
