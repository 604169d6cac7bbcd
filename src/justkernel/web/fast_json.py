"""JSON answers of the dashboard's big read endpoints, encoded with orjson.

The Judger table of a run with 2,000 candidates is a megabyte of JSON: the standard encoder
took 18 ms of the server's one event loop for it, orjson 2 ms, and every new event of a live
run invalidates the cached answer (`response_cache`). Same output as Starlette's
`JSONResponse` for the data these endpoints return (non-string keys become strings, as
`json.dumps` does).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse


class FastJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
