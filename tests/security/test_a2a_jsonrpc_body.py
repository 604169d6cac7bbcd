"""Found by the HTTP fuzz: an outside A2A agent with a valid team token sent a JSON-RPC body
that is not valid UTF-8, or nested ten thousand levels deep, and the SDK answered JSON-RPC
-32603 "internal error" with the decoder's own message (`'utf-8' codec can't decode…`,
`maximum recursion depth exceeded…`) and logged a traceback. A body that cannot be parsed is
the client's fault: it must be the protocol's -32700 parse error, naming what is wrong."""

from __future__ import annotations

import httpx

from justkernel.app import LabRuntime
from tests.a2a.conftest import new_run_with_teams, serve_a2a

PARSE_ERROR = -32700
DEEP = 10_000
BODIES = {
    "invalid UTF-8": b"\xc3(",
    "invalid UTF-8 in a string": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "p": "\xff"}',
    "deep array": b"[" * DEEP + b"]" * DEEP,
    "deep params": b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": '
    + b'{"a":' * DEEP
    + b"1"
    + b"}" * DEEP
    + b"}",
}


async def test_unparseable_json_rpc_bodies_are_parse_errors(runtime: LabRuntime) -> None:
    async with serve_a2a(runtime) as served:
        _run, (joined,) = await new_run_with_teams(runtime, "Prober")
        headers = {"authorization": f"Bearer {joined.token}", "content-type": "application/json"}
        async with httpx.AsyncClient(timeout=60) as http:
            for name, body in BODIES.items():
                answer = await http.post(
                    served.team_url(joined.team.id), content=body, headers=headers
                )
                assert answer.status_code == 200, (name, answer.status_code, answer.text[:300])
                reply = answer.json()
                assert reply["jsonrpc"] == "2.0" and reply["id"] is None, (name, reply)
                assert reply["error"]["code"] == PARSE_ERROR, (name, reply)
                message = reply["error"]["message"]
                assert "codec" not in message and "recursion" not in message, (name, message)
            # a well-formed call still reaches the SDK
            ok = await http.post(
                served.team_url(joined.team.id),
                json={"jsonrpc": "2.0", "id": 7, "method": "ListTasks", "params": {}},
                headers={**headers, "A2A-Version": "1.0"},
            )
            assert ok.status_code == 200 and ok.json()["id"] == 7 and "result" in ok.json(), ok.text
