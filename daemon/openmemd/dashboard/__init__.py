"""The loopback web dashboard the daemon serves (web.py), behind a token and a Host check
(guard.py); its views (pages.py) ask the same `Handler` as the socket and MCP. Templates and
the stylesheet ship in the wheel (templates/, static/): nothing is fetched from outside."""

from openmemd.dashboard.web import Dashboard

__all__ = ["Dashboard"]
