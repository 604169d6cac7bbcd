"""Issue 11 finding 10 (web part): the lab's JSON bodies.

A client that may reach the API (or any process on the machine, before it is refused) sent a
body nested ten thousand deep: `json.loads` raised `RecursionError`, a 500. It sent a 300 MB
PUT: the lab read all of it into memory before the 256 KiB check. Both are refused now: 400
with a message for the nesting, 413 for the size, answered before the rest of the body is read.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from justkernel.jsonsafe import loads_bounded
from tests.security.web_lab import SignedIn, signed_in_lab
from tests.support.labs import open_folder

HUGE = 300 * 1024 * 1024


@pytest.fixture(scope="module")
def lab() -> Iterator[SignedIn]:
    with signed_in_lab(open_folder("jk-sec-json-")) as running:
        yield running


def _raw(lab: SignedIn, head: str, body: bytes) -> tuple[int, bytes]:
    """Send `head` and the first part of a body, then read the answer without sending more.

    A server that waits for the whole body never answers: the read times out and the test
    fails, where a lab that checks the size first answers 413 at once."""
    with socket.create_connection(("127.0.0.1", lab.port), timeout=60) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        answer = b""
        while not _complete(answer):
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
    status = int(answer.split(b" ", 2)[1])
    return status, answer


def _complete(answer: bytes) -> bool:
    """The head has arrived and, when it declares a length, the whole body too."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return True


def _head(lab: SignedIn, *lines: str) -> str:
    return "".join(
        f"{line}\r\n"
        for line in (
            "PUT /api/config/judger HTTP/1.1",
            f"Host: 127.0.0.1:{lab.port}",
            f"Cookie: {lab.cookie_name}={lab.cookie_value}",
            "Content-Type: application/json",
            *lines,
        )
    )


def test_a_declared_huge_body_is_refused_before_it_is_read(lab: SignedIn) -> None:
    status, answer = _raw(lab, _head(lab, f"Content-Length: {HUGE}"), b"{" + b" " * 65536)
    assert status == 413, answer
    assert b"256 KiB" in answer


def test_a_chunked_body_is_counted_while_it_is_read(lab: SignedIn) -> None:
    chunk = b"x" * 65536
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(6))  # 384 KiB
    status, answer = _raw(lab, _head(lab, "Transfer-Encoding: chunked"), chunks)
    assert status == 413, answer


def test_deeply_nested_json_is_a_clear_400(lab: SignedIn) -> None:
    with lab.client() as api:
        for body in ("[" * 100_000, '{"model": ' + "[" * 200 + "]" * 200 + "}"):
            answer = api.put(
                "/api/config/judger", content=body, headers={"Content-Type": "application/json"}
            )
            assert answer.status_code == 400, answer.text
            assert "nests deeper than 64" in json.dumps(answer.json())


def test_loads_bounded_is_the_one_parser_for_untrusted_json() -> None:
    assert loads_bounded(b'{"a": [[1]]}') == {"a": [[1]]}
    assert loads_bounded("[" * 64 + "]" * 64) is not None
    for bad, message in [
        ("[" * 65 + "]" * 65, "nests deeper than 64"),
        ("[" * 100_000, "nests deeper than 64"),
        ('{"a": ' * 10 + "1" + "}" * 10, "nests deeper than 3"),
        (b"{\xff}", "not valid JSON: not utf-8"),
        ("{", "not valid JSON"),
    ]:
        with pytest.raises(ValueError, match=message):
            loads_bounded(bad, max_depth=3 if "deeper than 3" in message else 64)
