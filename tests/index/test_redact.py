"""Every secret format we know is masked in transcripts before it reaches the index, and normal
text is left alone. One table: (kind, text as an agent would see it, the secret in it)."""

from __future__ import annotations

import json

import pytest

from openmemd.api import MemoryIndex
from openmemd.index.redact import mask, redact
from openmemd.store.sqlite import db

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
       ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")

SECRETS = [
    # the eleven-odd formats OpenClaw masks (src/logging/redact.ts)
    ("env assignment", "export OPENAI_API_KEY=q8Zt3vLm0pXr7sWc2yNb", "q8Zt3vLm0pXr7sWc2yNb"),
    ("env password", "DB_PASSWORD: 'hunter22hunter22'", "hunter22hunter22"),
    ("json field", '{"apiKey": "AbCdEfGhIjKlMnOpQrSt1234"}', "AbCdEfGhIjKlMnOpQrSt1234"),
    ("cli flag", "tool --api-key zyxwvutsrqponmlk9876 --verbose", "zyxwvutsrqponmlk9876"),
    ("bearer", "Authorization: Bearer abc123def456ghi789jkl0", "abc123def456ghi789jkl0"),
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA7x\\n"
            "-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7x"),
    ("openai sk-", "my key is sk-proj-abcdefghijklmnopqrstuv123456",
     "sk-proj-abcdefghijklmnopqrstuv123456"),
    ("github ghp_", "token ghp_1234567890abcdefghijABCDEFGHIJ123456",
     "ghp_1234567890abcdefghijABCDEFGHIJ123456"),
    ("github_pat_", "use github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ("slack xox", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
     "xoxb-123456789012-1234567890123-AbCdEfGhIjKl"),
    ("slack xapp", "app token xapp-1-A0123456789-0123456789012-abcdef",
     "xapp-1-A0123456789-0123456789012-abcdef"),
    ("groq gsk_", "groq gsk_abcdefghijklmnopqrstuvwxyz0123",
     "gsk_abcdefghijklmnopqrstuvwxyz0123"),
    ("google AIza", "maps AIzaSyA1234567890abcdefghijklmnopqrstu",
     "AIzaSyA1234567890abcdefghijklmnopqrstu"),
    ("perplexity pplx-", "pplx-abcdefghijklmnopqrstuvwxyz012345",
     "pplx-abcdefghijklmnopqrstuvwxyz012345"),
    ("npm_", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
     "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("telegram", "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ",
     "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"),
    # the formats that were stored in clear
    ("aws access key id", "the key id is AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE"),
    ("aws session key id", "ASIAY34FZKBOKMUTVV7A expires soon", "ASIAY34FZKBOKMUTVV7A"),
    ("aws secret (ini)", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws secret (cli json)", f'{{"AccessKeyId": "x", "SecretAccessKey": "{AWS_SECRET}"}}',
     AWS_SECRET),
    ("aws secret (prose)", f"and the secret key is {AWS_SECRET}.", AWS_SECRET),
    ("jwt", f"cookie session={JWT}; Path=/", JWT),
    ("url password", "connect to postgres://admin:s3cr3tpw@db.internal:5432/app", "s3cr3tpw"),
    ("url long password", "https://bob:Xk9mQ2vL7pR4tW8zY1nB@git.example.com/repo.git",
     "Xk9mQ2vL7pR4tW8zY1nB"),
    ("stripe sk_live_", "stripe sk_live_51H8abcdefghijklmnopqrstuv",
     "sk_live_51H8abcdefghijklmnopqrstuv"),
    ("stripe rk_live_", "restricted rk_live_51H8abcdefghijklmnopqrstuv",
     "rk_live_51H8abcdefghijklmnopqrstuv"),
    ("slack webhook", "post to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/"
                      "aBcDeFgHiJkLmNoPqRsTuVwX please", "aBcDeFgHiJkLmNoPqRsTuVwX"),
    ("my password is", "btw my password is Tr0ub4dor&3 don't tell", "Tr0ub4dor&3"),
    ("password was", "The wifi password was: correcthorse!", "correcthorse!"),
    ("aws secret (bare)", f"here are the creds: AKIA… and {AWS_SECRET}.", AWS_SECRET),
    ("aws secret (bare, alone)", AWS_SECRET, AWS_SECRET),
    ("password label", "password: hunter2", "hunter2"),
    ("password arrow", "config password => hunter2", "hunter2"),
    ("password quoted label", "{'password': 'hunter2'}", "hunter2"),
    ("password bold label", "**password**: hunter2", "hunter2"),
]

NORMAL = [
    "Deploy the penguin service to staging on Friday.",
    "The password is required for the admin page.",
    "We use Postgres at postgres://db.internal:5432/app and https://example.com/docs.",
    "The tokenizer splits on whitespace; see section 4.2 of the design.",
    "Stripe webhooks retry for three days.",
    "Call me at 555-0100 after 10:30, version 1.2.3-beta.",
    "def keyboard_layout(): return 'qwerty'",
    # 40 characters like a bare AWS secret, but not one (see redact._looks_like_aws_secret)
    "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday.",
    "SHA-256 n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg= matches.",
    "Open Users/Documents/Projects/Memory/Notes/Daily now.",
    "See https://example.com/aB3dEfGhIjKlMnOpQrStUvWxYz0123456789ABCD/x for it.",
    "The key -> value map and monkey -> banana.",
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[k for k, _, _ in SECRETS])
def test_secret_is_masked(kind, text, secret):
    out = redact(text)
    assert secret not in out, out
    # OpenClaw's shape, first 6 … last 4, where the secret is the whole masked token
    if len(secret) >= 18 and kind not in ("pem", "slack webhook"):
        assert mask(secret) in out, out


@pytest.mark.parametrize("text", NORMAL)
def test_normal_text_is_untouched(text):
    assert redact(text) == text


def test_no_secret_reaches_the_index(make_settings, workspace):
    sessions = workspace / "sessions"
    sessions.mkdir()
    lines = [json.dumps({"type": "message", "message": {"role": "user", "content": text}})
             for _, text, _ in SECRETS]
    lines += [json.dumps({"type": "message", "message": {"role": "assistant", "content": t}})
              for t in NORMAL]
    (sessions / "s.jsonl").write_text("\n".join(lines) + "\n")
    with MemoryIndex.open(workspace, config=make_settings(
            'sources = ["memory", "sessions"]\n')) as index:
        index.sync()
        conn, _ = db.connect(index.db_path)
        stored = "\n".join(r[0] for r in conn.execute(
            "SELECT text FROM chunks UNION ALL SELECT text FROM chunks_fts"))
        conn.close()
    leaked = [kind for kind, _, secret in SECRETS if secret in stored]
    assert leaked == []
    for text in NORMAL:
        assert text in stored
