"""What the command line's operator commands do below it: `doctor`'s checks of the engine
(`engine_checks.py`), `openmemd store copy` (`store_copy.py`) and `openmemd store adopt`
(`store_adopt.py`).

They reach the store and the embedding layers, which the command line may not import
(DESIGN.md: cli -> api -> store, embed), so they live in `api`; only cli/ uses them.
"""
