"""Found by the HTTP fuzz: a credential that is not ASCII text crashed the comparison meant to
check it. `hmac.compare_digest` refuses `str` with non-ASCII characters (TypeError), so

- `GET /auth/bootstrap?token=é` answered 500 (the one-time link's check);
- `Authorization: Bearer é`, or a session cookie whose signature is `é`, answered 500 on every
  authenticated route of the lab (the middleware's check runs before routing);
- the judge's `POST /api/login {"token": "\\ud800"}` (a lone surrogate, legal JSON escape)
  answered 500: the token cannot be encoded to compare it.

Anyone who can reach the port can send these; each must be a plain refusal (401/400)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from justkernel.web.auth import session_cookie_name
from tests.support.judge import judge_in_thread, new_judge_dir
from tests.support.server import running_server

ODD_TOKENS = ("é", "ü💥名前", "\x7f\x80")
JSON = {"content-type": "application/json"}


def test_lab_refuses_non_ascii_tokens_without_crashing(tmp_path: Path) -> None:
    with (
        running_server(tmp_path / "data", tmp_path / "config") as server,
        httpx.Client(base_url=server.base_url, timeout=30) as http,
    ):
        port = int(server.base_url.rsplit(":", 1)[1])
        for token in ODD_TOKENS:
            link = http.get("/auth/bootstrap", params={"token": token}, follow_redirects=False)
            assert link.status_code == 401, (token, link.status_code, link.text[:200])
            header = f"Bearer {token}".encode()
            api = http.get("/api/runs", headers={"authorization": header})
            assert api.status_code == 401, (token, api.status_code, api.text[:200])
            cookie = f"{session_cookie_name(port)}=00.{token}".encode()
            api = http.get("/api/runs", headers={"cookie": cookie})
            assert api.status_code == 401, (token, api.status_code, api.text[:200])
        # the real link still works once, so the check itself is intact
        assert http.get(server.link, follow_redirects=False).status_code == 303


def test_judge_refuses_a_login_token_that_is_not_text(tmp_path: Path) -> None:
    with (
        judge_in_thread(new_judge_dir(tmp_path)) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        for token in ("\ud800", "x\udfff", *ODD_TOKENS):
            body = json.dumps({"token": token}).encode()  # escaped, as JSON allows
            answer = http.post("/api/login", content=body, headers=JSON)
            assert answer.status_code in (400, 401), (token, answer.status_code, answer.text)
            assert answer.json()["error"] in ("bad_request", "invalid_token")
        header = "Bearer é".encode()
        assert http.get("/api/quota", headers={"authorization": header}).status_code == 401
