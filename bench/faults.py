"""Fault figures at full size: what the tests check small, measured the way users hit it.

    python bench/faults.py                       # every scenario
    python bench/faults.py --only fuzz race      # some of them
    python bench/faults.py --race-seconds 60 --fuzz-messages 21000

Scenarios (each prints one or two lines of figures; goals from issue 9):
  dream-append  a line appended to MEMORY.md every 5 ms during `openmemd dream` (100 candidates,
                200 KB MEMORY.md): lines lost (goal 0)
  stale-lock    a dream killed with -9 while holding the recall-store lock: how long the next
                `openmemd dream` waits (goal: at once)
  fuzz          N malformed / odd protocol messages to the daemon: unanswered, daemon alive,
                then a normal search answers (goal 0 unanswered)
  race          `get memory/race/x.md` looped while memory/race flips between a directory and
                a symlink to an outside directory: outside bytes served (goal 0)
  damage        the index deleted / truncated / middle third overwritten while the daemon runs:
                seconds until a search finds a known note again (goal ≤ 60 s, no restart)
  overflow      2,500 notes deleted at once with a small kernel event queue: seconds until
                status shows the deletions (goal ≤ 10 s)
  adds-during-index  a first index with the default local model (e5) of a generated workspace;
                8 concurrent `openmemd add` and one `openmemd status` while it runs: each
                one's latency (goal: adds ≤ 10 s, status ≤ 3 s) and whether every note landed
                exactly once; then 32 clients asking add, search, status and ping in turn for
                30 s: answers, failures and the slowest of each op
  context-bytes hostile notes (every C0 and C1 control, DEL, CSI / OSC / DCS / APC sequences,
                CR, a NUL past the binary probe, an escape in a file name) and a binary one:
                control characters in the daemon's `context` reply and in `openmemd context`
                (text and --json), and whether the binary note is skipped and named (goal 0)
  refill        e5 (always): a daemon stopped while 64 notes about bikes wait for vectors, then
                restarted: seconds until the one note naming "Brompton" is in the top 6 for
                "Brompton bike" (goal: at once, its vector still pending)
  secrets       a transcript holding each chat form of tests/index/test_redact_chat.py,
                searched for each line and read with `get` through the daemon: forms whose
                value is served in clear (goal 0, issue 43)
  broken-index  the index garbage, 0 bytes, unreadable (as root: under setpriv without
                CAP_DAC_OVERRIDE), a state dir that is a file, a FIFO at the index path: doctor's
                verdict, and whether search / status printed a traceback or hung (goal from
                issue 43: ✗ each, no traceback, no hang, an unreadable index kept)
  date-reader   reading the dates of a 4 KB date-heavy query ("Jan 1 " x 666, "may 8\\n" x 683,
                372 different days, a list of 1,364 days) and of 1, 2, 4, 8 KB of "Jan 1 ":
                CPU time over that of a plain query of the same length (goal ≤ 3, issue 43);
                in process, no daemon

Every daemon here runs in a subprocess on a generated workspace under /tmp, keyword-only
(`provider = "none"`) unless `--provider auto` (adds-during-index always embeds), and is
stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import zmq

from fault_daemon import Daemon, notes_workspace, scratch

OUTSIDE = "OUTSIDE-SECRET-" + "x" * 32


# -- dream-append ---------------------------------------------------------------------------
def dream_append(args: argparse.Namespace) -> None:
    from openmemd.dreaming import RecallHit, record_recalls

    with scratch() as root:
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        filler = "".join(f"- an old fact number {i} kept for size\n" for i in range(6000))
        (ws / "MEMORY.md").write_text("# Memory\n\n" + filler[: 200_000])
        today = datetime.now(timezone.utc)
        note = f"memory/{(today - timedelta(days=1)).date().isoformat()}.md"
        facts = [f"- Fact {i}: the service {i} runs on port {4000 + i} behind gateway {i % 7}."
                 for i in range(100)]
        (ws / note).write_text("# notes\n\n" + "\n".join(facts) + "\n")
        for i, fact in enumerate(facts):
            for d in range(5):
                for q in range(2):
                    record_recalls(ws, f"q{q}-{d} service {i}",
                                   [RecallHit(note, 3 + i, 3 + i, 0.9, fact)],
                                   now=today - timedelta(days=4 - d, hours=1))
        d = Daemon(root, ws, "none", "[dreaming.deep]\nlimit = 100\n"
                   "max_memory_bytes = 100000000\n")
        appended: list[str] = []
        stop = threading.Event()

        def appender() -> None:
            i = 0
            while not stop.is_set():
                line = f"- appended during the dream {i}\n"
                with open(ws / "MEMORY.md", "a", encoding="utf-8") as f:
                    f.write(line)
                appended.append(line.strip())
                i += 1
                time.sleep(0.005)

        t = threading.Thread(target=appender)
        t.start()
        t0 = time.perf_counter()
        out = subprocess.run(d.args("dream", "--json"), env=d.env, capture_output=True,
                             text=True, timeout=600)
        took = time.perf_counter() - t0
        time.sleep(0.05)
        stop.set()
        t.join()
        text = (ws / "MEMORY.md").read_text("utf-8")
        lost = [line for line in appended if line not in text]
        promoted = text.count("openclaw-memory-promotion:")
        print(f"dream-append: dream exit {out.returncode} in {took:.1f} s, {promoted} "
              f"promoted; {len(appended)} lines appended during it, {len(lost)} lost "
              f"(goal 0)")
        if out.returncode:
            print("  dream stderr:", out.stderr.strip()[-300:])


# -- stale-lock -----------------------------------------------------------------------------
def stale_lock(args: argparse.Namespace) -> None:
    with scratch() as root:
        ws = notes_workspace(root, 3)
        d = Daemon(root, ws, "none")
        holder = subprocess.Popen([sys.executable, "-c", (
            "import sys, time\n"
            "from openmemd.dreaming.lockfile import store_lock\n"
            f"with store_lock({str(ws)!r}):\n"
            "    print('held', flush=True); time.sleep(600)\n")], stdout=subprocess.PIPE,
            text=True)
        assert holder.stdout is not None
        holder.stdout.readline()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        t0 = time.perf_counter()
        out = subprocess.run(d.args("dream"), env=d.env, capture_output=True, text=True,
                             timeout=120)
        print(f"stale-lock: dream after a kill -9 of the lock holder: exit {out.returncode} "
              f"after {time.perf_counter() - t0:.2f} s (goal: at once)"
              + ("" if out.returncode == 0 else f"; {out.stderr.strip()[-200:]}"))


# -- fuzz -----------------------------------------------------------------------------------
def fuzz_messages(rng: random.Random, n: int) -> Iterator[bytes]:
    ops = ["ping", "status", "search", "get", "sync", "dream", "add", "frobnicate", "", None]
    odd: list[Any] = ["\ud800", "\udfff", "a\x00b", "é" * 5000, 1e308, -1, 0, 2**70, None,
                      True, [], {}, [1, [2, [3]]], {"a": {"b": {}}}, "../../etc/passwd",
                      "/etc/passwd", "MEMORY.md", float("nan")]
    fields = ["id", "query", "path", "from", "lines", "maxResults", "minScore", "sources",
              "explain", "agent", "deep", "phase", "dryRun", "wait", "force", "text"]
    for _ in range(n):
        kind = rng.random()
        if kind < 0.08:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        elif kind < 0.12:
            yield b'{"op": "ping", "id": "\\ud800"}'
        elif kind < 0.16:
            yield b'{"op": "get", "path": "\\udc80x.md"}'
        elif kind < 0.2:
            yield rng.choice([b"", b"[]", b"null", b"1e400", b'"x"', b"{" * 5000, b'{"op":'])
        else:
            msg: dict[str, Any] = {"op": rng.choice(ops)}
            if msg["op"] in ("sync", "dream"):  # long ops: keep them cheap and rare
                msg["dryRun"] = True
                msg["wait"] = False
                if rng.random() < 0.9:
                    msg["op"] = "ping"
            for f in rng.sample(fields, rng.randrange(0, 5)):
                msg[f] = rng.choice(odd)
            try:
                yield json.dumps(msg, allow_nan=True, ensure_ascii=True).encode()
            except (ValueError, TypeError):
                yield b'{"op": "ping"}'


def fuzz(args: argparse.Namespace) -> None:
    with scratch() as root:
        ws = notes_workspace(root, 5)
        d = Daemon(root, ws, args.provider)
        d.start()
        try:
            ctx = zmq.Context.instance()
            codes: dict[str, int] = {}
            unanswered = 0
            rng = random.Random(9)
            sock = ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.REQ_RELAXED, 1)
            sock.setsockopt(zmq.REQ_CORRELATE, 1)
            sock.setsockopt(zmq.RCVTIMEO, 10_000)
            sock.connect(d.endpoint)
            t0 = time.perf_counter()
            sent = 0
            for body in fuzz_messages(rng, args.fuzz_messages):
                sent += 1
                sock.send(body)
                try:
                    reply = json.loads(sock.recv())
                except zmq.Again:
                    unanswered += 1
                    if unanswered >= 3:  # silenced: each further message would wait 10 s
                        print(f"fuzz: the daemon stopped answering after {sent} messages")
                        break
                    continue
                code = "ok" if reply.get("ok") else reply["error"]["code"]
                codes[code] = codes.get(code, 0) + 1
            sock.close()
            took = time.perf_counter() - t0
            try:
                with d.client() as c:
                    hits = c.search("peanuts")["results"]
                    health = c.status()["health"]
            except Exception as exc:
                hits, health = [], f"no answer ({type(exc).__name__})"
            print(f"fuzz: {sent} messages in {took:.1f} s, {unanswered} "
                  f"unanswered (goal 0); replies {dict(sorted(codes.items()))}; daemon alive "
                  f"{d.alive()}, health {health}, a search afterwards found {len(hits)} hit(s)")
        finally:
            d.stop()


# -- race -----------------------------------------------------------------------------------
def race(args: argparse.Namespace) -> None:
    with scratch() as root:
        ws = notes_workspace(root, 2)
        outside = root / "outside"
        outside.mkdir()
        (outside / "x.md").write_text(OUTSIDE + "\n")
        inside = ws / "memory" / "race-real"
        inside.mkdir()
        (inside / "x.md").write_text("inside text\n")
        link = ws / "memory" / "race"
        d = Daemon(root, ws, "none")
        d.start()
        stop = threading.Event()
        flips = 0

        def flipper() -> None:
            nonlocal flips
            tmp = ws / "memory" / ".race-tmp"
            while not stop.is_set():
                for target in (inside, outside):
                    with contextlib.suppress(FileNotFoundError):
                        tmp.unlink()
                    tmp.symlink_to(target)
                    os.replace(tmp, link)  # atomic swap of the link's target
                    flips += 1
                # and the directory-vs-symlink swap the report used
                with contextlib.suppress(OSError):
                    link.unlink()
                    os.rename(inside, link)
                    os.rename(link, inside)

        t = threading.Thread(target=flipper, daemon=True)
        t.start()
        leaked = answered = errors = 0
        try:
            with d.client() as c:
                end = time.monotonic() + args.race_seconds
                while time.monotonic() < end:
                    try:
                        text = c.get("memory/race/x.md")["text"]
                    except Exception:
                        errors += 1
                        continue
                    answered += 1
                    if "OUTSIDE-SECRET" in text:
                        leaked += len(text.encode())
        finally:
            stop.set()
            t.join(5)
            d.stop()
        print(f"race: {args.race_seconds:.0f} s, {flips} flips, {answered} gets answered, "
              f"{errors} refused; outside bytes served: {leaked} (goal 0)")


# -- damage ---------------------------------------------------------------------------------
def damage(args: argparse.Namespace) -> None:
    def deleted(db: Path) -> None:
        for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()

    def truncated(db: Path) -> None:
        with open(db, "r+b") as f:
            f.truncate(db.stat().st_size // 3)

    def overwritten(db: Path) -> None:
        size = db.stat().st_size
        with open(db, "r+b") as f:
            f.seek(size // 3)
            f.write(os.urandom(size // 3))

    kinds: list[tuple[str, Callable[[Path], None]]] = [
        ("deleted", deleted), ("truncated", truncated), ("middle third overwritten", overwritten)]
    for name, hurt in kinds:
        with scratch() as root:
            ws = notes_workspace(root, args.damage_notes)
            d = Daemon(root, ws, args.provider)
            d.start()
            try:
                with d.client() as c:  # damage an index whose vectors are all written
                    while c.status()["agents"]["main"]["pendingVectors"]:
                        time.sleep(0.5)
                db = next((root / "state").rglob("*.sqlite"))
                size = db.stat().st_size
                hurt(db)
                t0 = time.perf_counter()
                healed = None
                last = ""
                with d.client(timeout=30) as c:
                    while time.perf_counter() - t0 < 120:
                        try:
                            if any("peanuts" in r["snippet"]
                                   for r in c.search("peanuts")["results"]):
                                healed = time.perf_counter() - t0
                                break
                        except Exception as exc:
                            last = f"{type(exc).__name__}: {exc}"
                        time.sleep(0.25)
                    while time.perf_counter() - t0 < 120:  # and until status is healthy again
                        st = c.status()
                        if st["health"] == "healthy":
                            break
                        time.sleep(0.25)
                    healthy = time.perf_counter() - t0
                agent = st["agents"]["main"]
                print(f"damage ({name}, {size / 1e6:.1f} MB index): "
                      + (f"searchable again after {healed:.1f} s" if healed is not None
                         else f"NOT searchable after 120 s (last: {last[:120]})")
                      + f"; health {st['health']} after {healthy:.1f} s "
                      f"{st.get('problems') or ''}; "
                      f"recovery {agent.get('recovery')}")
            finally:
                d.stop()


# -- overflow -------------------------------------------------------------------------------
def overflow(args: argparse.Namespace) -> None:
    knob = Path("/proc/sys/fs/inotify/max_queued_events")
    old = knob.read_text().strip() if knob.exists() else None
    with scratch() as root:
        ws = notes_workspace(root, args.overflow_notes)
        d = Daemon(root, ws, "none")
        d.start()
        try:
            if old is not None and os.access(knob, os.W_OK):
                knob.write_text("256\n")
            d.stop()  # the queue size is read when the watch is created
            d.start()
            files = sorted((ws / "memory").glob("*.md"))
            t0 = time.perf_counter()
            for f in files:
                f.unlink()
            converged = None
            with d.client() as c:
                while time.perf_counter() - t0 < 400:
                    st = c.status()["agents"]["main"]
                    if st["files"]["indexed"] <= 1:
                        converged = time.perf_counter() - t0
                        break
                    time.sleep(0.2)
                watcher = st.get("watcher")
            print(f"overflow: {len(files)} deletions (kernel queue "
                  f"{knob.read_text().strip() if old else '?'}): "
                  + (f"index converged after {converged:.1f} s" if converged is not None
                     else "NOT converged after 400 s")
                  + f" (goal ≤ 10 s); watcher: {watcher}")
        finally:
            if old is not None and os.access(knob, os.W_OK):
                knob.write_text(old + "\n")
            d.stop()


# -- context-bytes --------------------------------------------------------------------------
_ESCAPES = ("\x1b[31mred\x1b[0m", "\x1b[2J\x1b[H", "\x1b]0;window title\x07", "\x1b]2;st\x1b\\",
            "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", "\x1bP1$r0m\x1b\\",
            "\x1b_apc payload\x1b\\", "\x9b1;31m", "\x9d0;c1 title\x9c", "\x1b(B\x1b7\x1bc",
            "\x1b]0;never ended", "\x1b[?25l", "over\rwritten", "crlf\r\n")


def _hostile_note() -> str:
    """Every control character, then escape sequences, past a filler that keeps its NUL beyond
    the indexer's binary probe (8 KiB): a note the indexer reads, as the context must."""
    filler = "".join(f"- filler line {i:04d} of an ordinary note\n" for i in range(300))
    controls = "".join(f"control {c:02x}: a{chr(c)}b\n" for c in [*range(0x20), *range(0x7f, 0xa0)])
    return filler + controls + "".join(f"escape {i}: {e} after\n" for i, e in enumerate(_ESCAPES))


def _count_controls(value: Any) -> int:
    """Control characters (C0 but tab and newline, DEL, C1) in every string of `value`."""
    if isinstance(value, dict):
        return sum(_count_controls(k) + _count_controls(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(map(_count_controls, value))
    if isinstance(value, str):
        return sum(c not in "\t\n" and (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0) for c in value)
    return 0


def context_bytes(args: argparse.Namespace) -> None:
    today = "2026-12-01"
    with scratch() as root:
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        hostile = _hostile_note()
        (ws / "MEMORY.md").write_text("# Memory\n" + hostile, encoding="utf-8")
        (ws / "memory" / f"{today}.md").write_text(hostile, encoding="utf-8")
        (ws / "memory" / f"{today}-\x1b[31mred\x07.md").write_text("named in red\n")
        binary = ws / "memory" / "2026-11-30.md"
        binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x1b[31m pixels\n")
        written = _count_controls(hostile) * 2 + 2
        d = Daemon(root, ws, "none", "[context]\ndaily_total_max_chars = 50000\n")
        d.start()
        try:
            with d.client() as c:
                reply = c.context(today=today)
            outs = {extra or "text": subprocess.run(
                d.args("context", "--today", today, *([extra] if extra else [])), env=d.env,
                capture_output=True, text=True, timeout=60) for extra in ("", "--json")}
        finally:
            d.stop()
        named = f"memory/{binary.name}" in [s["path"] for s in reply["skipped"]] \
            and f"skipped: memory/{binary.name}" in reply["text"]
        print(f"context-bytes: {written} control characters written; in the daemon's reply "
              f"{_count_controls(reply)}, `openmemd context` "
              + ", ".join(f"{k} {_count_controls([o.stdout, o.stderr])} (exit {o.returncode})"
                          for k, o in outs.items())
              + f" (goal 0); hostile notes shown (stripped): "
              f"{'yes' if reply['text'].count('escape 13: crlf') == 2 else 'NO'}; "
              f"binary note skipped and named: {'yes' if named else 'NO'}")


# -- refill ---------------------------------------------------------------------------------
def refill(args: argparse.Namespace) -> None:
    rng = random.Random(43)
    things = ["the bike lane", "a new helmet", "the gears", "a flat tyre", "the commute",
              "the canal path", "a cargo bike", "the front light", "the bike shop", "the train"]
    with scratch() as root:
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        for i in range(64):
            (ws / "memory" / f"2026-02-{1 + i % 28:02d}-{i}.md").write_text(
                f"# ride {i}\n\n" + " ".join(  # a paragraph: embedding it takes a while
                    f"Cycled to work; thought about {rng.choice(things)} and "
                    f"{rng.choice(things)}." for _ in range(12)) + "\n")
        (ws / "memory" / "2026-01-15.md").write_text(  # the oldest: filled last
            "# party\n\nLeft the Brompton at Dana's flat after the party.\n")
        d = Daemon(root, ws, "auto")
        d.start()
        try:
            with d.client() as c:  # stopped as soon as the fill has begun: a rebuild cut short
                while not c.status()["agents"]["main"]["pendingVectors"]:
                    time.sleep(0.1)
            d.stop()
            d.start()
            t0 = time.perf_counter()
            found = None
            with d.client(timeout=30) as c:
                pending = c.status()["agents"]["main"]["pendingVectors"]
                while time.perf_counter() - t0 < 300:
                    hits = c.search("Brompton bike", explain=True)["results"]
                    hit = next((h for h in hits[:6] if "Brompton" in h["snippet"]), None)
                    if hit is not None:
                        found = (time.perf_counter() - t0, hit["explain"]["vectorScore"] is None,
                                 c.status()["agents"]["main"]["pendingVectors"])
                        break
                    time.sleep(0.25)
            print(f"refill: {pending} of 65 chunks pending after the restart; the Brompton note "
                  + (f"in the top 6 after {found[0]:.1f} s (its vector "
                     f"{'pending' if found[1] else 'filled'}, {found[2]} still pending)"
                     if found else "NOT in the top 6 after 300 s") + " (goal: at once)")
        finally:
            d.stop()


# -- secrets --------------------------------------------------------------------------------
def secrets(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.index.test_redact_chat import FORMS

    with scratch() as root:
        ws = notes_workspace(root, 2)
        (ws / "sessions").mkdir()
        (ws / "sessions" / "chat.jsonl").write_text("".join(
            json.dumps({"type": "message", "message": {"role": "user", "content": line}}) + "\n"
            for _, line, _, _ in FORMS))
        d = Daemon(root, ws, args.provider)
        d.config.write_text(f'sources = ["memory", "sessions"]\n{d.config.read_text()}')
        d.start()
        try:
            with d.client(timeout=60) as c:
                served = [json.dumps(c.search(line, max_results=20, min_score=0.0))
                          for _, line, _, _ in FORMS]
                hits = sum('"path"' in s for s in served)
                served.append(c.get("sessions/chat.jsonl")["text"])
        finally:
            d.stop()
    clear = [form for form, _, value, _ in FORMS if any(value in s for s in served)]
    print(f"secrets: {len(FORMS)} chat forms, {hits} searches with hits, get read; "
          f"forms served in clear: {len(clear)} (goal 0){' ' + str(clear) if clear else ''}")


# -- broken-index ---------------------------------------------------------------------------
def _break_index(case: str, state: Path) -> list[str] | None:
    """Break the index as `case` says; the command prefix to run under (None: cannot here)."""
    index = state / "memory" / "main.sqlite"
    if case == "garbage":
        index.write_bytes(b"\x8fnot an index\x00" * 600)
    elif case == "0 bytes":
        index.write_bytes(b"")
    elif case == "unreadable":
        index.chmod(0)
        if os.geteuid() == 0:  # root reads any file: drop the capability that lets it
            no_dac = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
            ok = subprocess.run([*no_dac, "true"], capture_output=True).returncode == 0
            return no_dac if ok else None
    elif case == "state dir a file":
        subprocess.run(["rm", "-rf", str(state)], check=True)
        state.write_text("not a folder\n")
    elif case == "fifo":
        index.unlink()
        os.mkfifo(index, 0o600)
    return []


def _verdict(prefix: list[str], args: list[str], env: dict[str, str]) -> tuple[str, str]:
    """(exit code or 'HUNG', 'traceback' or '') of one command, 30 s at most."""
    try:
        out = subprocess.run([*prefix, *args], env=env, capture_output=True, text=True,
                             timeout=30)
    except subprocess.TimeoutExpired:
        return "HUNG", ""
    return str(out.returncode), "traceback" if "Traceback" in out.stderr else ""


def broken_index(args: argparse.Namespace) -> None:
    for case in ("garbage", "0 bytes", "unreadable", "state dir a file", "fifo"):
        with scratch() as root:
            ws = notes_workspace(root, 3)
            d = Daemon(root, ws, "none")  # never started: the commands work in process
            env = {**d.env, "OPENMEMD_ENDPOINT": f"ipc://{root}/none.sock"}
            subprocess.run(d.args("index"), env=env, capture_output=True, check=True)
            prefix = _break_index(case, root / "state")
            if prefix is None:
                print(f"broken-index {case}: not measured (root without setpriv)")
                continue
            try:
                doc = subprocess.run([*prefix, *d.args("doctor")], env=env, text=True,
                                     capture_output=True, timeout=30).stdout
                marks = [ln for ln in doc.splitlines() if ln[2:].startswith(("index:",
                                                                             "state dir:"))]
                said = " / ".join(ln[:72] + "…" for ln in marks if not ln.startswith("✓")) \
                    or " / ".join(ln[:40] for ln in marks) or "no index line"
            except subprocess.TimeoutExpired:
                said = "doctor HUNG"
            search = _verdict(prefix, d.args("search", "peanuts"), env)
            status = _verdict(prefix, d.args("status"), env)
            kept = sorted(p.name for p in (root / "state" / "memory").glob("main.sqlite*")) \
                if (root / "state").is_dir() else []
            print(f"broken-index {case}: doctor {said}; search exit {search[0]}"
                  f"{' ' + search[1] if search[1] else ', no traceback'}; status exit "
                  f"{status[0]}{' ' + status[1] if status[1] else ', no traceback'}; "
                  f"files after: {', '.join(kept) or '-'}")


# -- adds-during-index ----------------------------------------------------------------------
def _timed_cli(d: Daemon, out: dict[str, Any], key: str, *extra: str) -> None:
    """Run `openmemd EXTRA...` against `d`; record (seconds, exit code, output)."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run(d.args(*extra), env=d.env, capture_output=True, text=True,
                              timeout=180)
        out[key] = (time.perf_counter() - t0, done.returncode, done.stdout + done.stderr)
    except subprocess.TimeoutExpired:
        out[key] = (time.perf_counter() - t0, None, "no answer in 180 s")


def _indexer_state(d: Daemon) -> tuple[str, int]:
    """The indexer's state (with its progress) and the chunks waiting for a vector."""
    with d.client(timeout=60) as c:
        st = c.status()["agents"]["main"]
    indexer = st.get("indexer") or {}
    step = indexer.get("progress") or {}
    state = indexer.get("state", "?") + (f" ({step['phase']} {step['done']}/{step['total']})"
                                         if step else "")
    return state, int(st.get("pendingVectors") or 0)


def _wait_for_fill(d: Daemon) -> str:
    """Wait until the first index embeds (its keyword rows written, vectors being filled)."""
    deadline = time.monotonic() + 120
    state = "?"
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            state, pending = _indexer_state(d)
            if pending and "(vectors " in state:
                return state
        time.sleep(0.2)
    raise SystemExit(f"adds-during-index: the first index never started ({state})")


def _cli_round(d: Daemon, tag: str) -> dict[str, float]:
    """8 `openmemd add` and one `openmemd status --json` at once, as processes."""
    out: dict[str, Any] = {}
    threads = [threading.Thread(target=_timed_cli, args=(
        d, out, f"add {i}", "add", f"adds-during-index note {i} tag {tag}")) for i in range(8)]
    threads.append(threading.Thread(target=_timed_cli, args=(d, out, "status", "status",
                                                               "--json")))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key, (seconds, code, text) in sorted(out.items()):
        health = ""
        if key == "status" and code is not None:
            with contextlib.suppress(ValueError):
                health = " health " + json.loads(text[text.index("{"):]).get("health")
        queued = " (reply: queued for indexing)" if "queued for indexing" in text else ""
        print(f"adds-during-index: {key}: {seconds:.2f} s, exit {code}{health}{queued}")
    return {key: value[0] for key, value in out.items()}


def _mixed_round(d: Daemon, clients: int, seconds: float) -> None:
    """`clients` connections asking add, search, status and ping in turn for `seconds`: how
    many answers, and the slowest of each op."""
    slowest: dict[str, float] = {}
    answered, failed = [0], [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    ops: list[tuple[str, Callable[[Any, int], Any]]] = [
        ("add", lambda c, n: c.add(f"mixed client note {n}", timeout=120)),
        ("search", lambda c, n: c.search("budget meeting", timeout=120)),
        ("status", lambda c, n: c.status(timeout=120)),
        ("ping", lambda c, n: c.ping(timeout=120))]

    def client(k: int) -> None:
        n = k
        with d.client(timeout=120) as c:
            while time.monotonic() < stop:
                name, call = ops[n % len(ops)]
                t0 = time.perf_counter()
                try:
                    call(c, n)
                    ok = True
                except Exception:
                    ok = False
                took = time.perf_counter() - t0
                with lock:
                    answered[0] += ok
                    failed[0] += not ok
                    slowest[name] = max(slowest.get(name, 0.0), took)
                n += clients
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"adds-during-index: {clients} mixed clients for {seconds:.0f} s: {answered[0]} "
          f"answered, {failed[0]} failed; slowest " + ", ".join(
              f"{op} {s:.2f} s" for op, s in sorted(slowest.items())))


def adds_during_index(args: argparse.Namespace) -> None:
    with scratch() as root:
        ws = notes_workspace(root, args.index_notes)
        d = Daemon(root, ws, "auto")
        # Started by hand: Daemon.start waits for a sync, and the index must still be building.
        d.proc = subprocess.Popen(d.args("run", "--foreground"), env=d.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            state = _wait_for_fill(d)
            tag = f"{os.getpid()}-{time.time_ns()}"
            took = _cli_round(d, tag)
            after, pending = _indexer_state(d)
            adds = [took[f"add {i}"] for i in range(8)]
            landed = "".join(p.read_text() for p in (ws / "memory").glob("*.md")
                             if p.stem.count("-") == 2)
            counts = [landed.count(f"adds-during-index note {i} tag {tag}\n") for i in range(8)]
            print(f"adds-during-index: {args.index_notes} notes, e5 first index "
                  f"({state} at the start, {after} with {pending} vectors pending at the end): "
                  f"adds max {max(adds):.2f} s (goal ≤ 10 s), status {took['status']:.2f} s "
                  f"(goal ≤ 3 s); notes landed {counts} (goal exactly once each)")
            if args.mixed_clients:
                _mixed_round(d, args.mixed_clients, args.mixed_seconds)
                print(f"adds-during-index: indexer after the mixed round: "
                      f"{' with '.join(map(str, _indexer_state(d)))} vectors pending")
        finally:
            d.stop()


# -- date-reader ----------------------------------------------------------------------------
def date_reader(args: argparse.Namespace) -> None:
    from openmemd.search.dates.query import understand_dates

    def reading(query: str) -> float:
        """CPU seconds, best of 3 (the other agents' load on a shared machine does not count);
        a new `today` each run, so no reading is cached from the last."""
        times = []
        for run in range(3):
            t0 = time.process_time()
            understand_dates(query, datetime(2026, 12, 1 + run).date())
            times.append(time.process_time() - t0)
        return min(times)

    def sized(unit: str, size: int) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    months = ("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    days = " ".join(f"{m} {d} {y}" for y in range(2020, 2026) for m in months for d in range(1, 29))
    # prose the pre-check lets through ("this", "one"), naming no date
    plain = "we talked about this one thing and the database schema for the migration plan "
    understand_dates("Jan 1", datetime(2026, 12, 1).date())  # dateparser's import, paid once
    cases = [(r'"Jan 1 " x 666', "Jan 1 " * 666), (r'"may 8\n" to 4 KB', sized("may 8\n", 4096)),
             ("different days to 4 KB", sized(days, 4096)),
             ('"May 8, 9, 9, ..." to 4 KB', "May 8" + sized(", 9", 4091)),
             *((f'"Jan 1 " to {k} KB', sized("Jan 1 ", 1024 * k)) for k in (1, 2, 4, 8))]
    for name, query in cases:
        heavy, base = reading(query), reading(sized(plain, len(query)))
        print(f"date-reader: {name} ({len(query)} B): {heavy:.3f} s, plain {base:.3f} s, "
              f"ratio {heavy / base:.1f} (goal ≤ 3)")


SCENARIOS: dict[str, Callable[[argparse.Namespace], None]] = {
    "dream-append": dream_append,
    "stale-lock": stale_lock,
    "fuzz": fuzz,
    "race": race,
    "damage": damage,
    "overflow": overflow,
    "context-bytes": context_bytes,
    "refill": refill,
    "secrets": secrets,
    "broken-index": broken_index,
    "adds-during-index": adds_during_index,
    "date-reader": date_reader,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", choices=sorted(SCENARIOS), default=list(SCENARIOS))
    ap.add_argument("--provider", default="none", choices=("none", "auto"))
    ap.add_argument("--fuzz-messages", type=int, default=21_000)
    ap.add_argument("--race-seconds", type=float, default=60.0)
    ap.add_argument("--damage-notes", type=int, default=200)
    ap.add_argument("--overflow-notes", type=int, default=2500)
    ap.add_argument("--index-notes", type=int, default=400)
    ap.add_argument("--mixed-clients", type=int, default=32)
    ap.add_argument("--mixed-seconds", type=float, default=30.0)
    args = ap.parse_args()
    for name in args.only:
        SCENARIOS[name](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
