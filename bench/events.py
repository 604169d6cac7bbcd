"""Event log throughput: append (1 and 8 concurrent writers) and SSE fan-out to 20 subscribers.

Run: uv run python bench/events.py [--events N] [--database-url URL]
Prints events/s figures; uses a temporary SQLite file unless a URL is given.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx
import uvicorn

from justkernel.events import NewEvent
from justkernel.lab import Lab, open_lab
from justkernel.settings.config import Settings
from justkernel.web.app import create_app
from justkernel.web.auth import AuthState
from justkernel.web.server import bind_socket


async def bench_append(lab: Lab, total: int, writers: int) -> float:
    run = await lab.runs.create(f"append x{writers}")
    per_writer = total // writers

    async def writer(n: int) -> None:
        for i in range(per_writer):
            await lab.events.append(run.id, "bench.tick", {"w": n, "i": i})

    start = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    return per_writer * writers / (time.perf_counter() - start)


async def bench_batch(lab: Lab, total: int, batch: int) -> float:
    run = await lab.runs.create(f"append batch {batch}")
    start = time.perf_counter()
    for first in range(0, total, batch):
        await lab.events.append_many(
            run.id, [NewEvent("bench.tick", {"i": i}) for i in range(first, first + batch)]
        )
    return total / (time.perf_counter() - start)


async def bench_fanout(lab: Lab, total: int, subscribers: int) -> tuple[float, float]:
    """Events delivered per second to all subscribers over real SSE, and the wall time."""
    run = await lab.runs.create("fanout")
    token = "b" * 32
    auth = AuthState.create(
        lab.settings.config_dir, lab.settings.resolved_data_dir, api_token=token
    )
    app = create_app(lab, auth)
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None))
    serve_task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # noqa: ASYNC110 (uvicorn offers no event for this)
        await asyncio.sleep(0.01)
    received = [0] * subscribers
    ready = asyncio.Event()
    connected = 0

    async def subscriber(k: int, client: httpx.AsyncClient) -> None:
        nonlocal connected
        url = f"http://127.0.0.1:{port}/api/runs/{run.id}/stream"
        headers = {"Authorization": f"Bearer {token}"}
        async with client.stream("GET", url, headers=headers, timeout=120) as response:
            async for line in response.aiter_lines():
                if line.startswith("retry:"):
                    connected += 1
                    if connected == subscribers:
                        ready.set()
                if line.startswith("data: "):
                    received[k] += 1
                    if received[k] == total:
                        return

    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=subscribers + 5)) as client:
        tasks = [asyncio.create_task(subscriber(k, client)) for k in range(subscribers)]
        await asyncio.wait_for(ready.wait(), 30)
        start = time.perf_counter()
        for first in range(0, total, 50):
            await lab.events.append_many(
                run.id, [NewEvent("bench.tick", {"i": i}) for i in range(first, first + 50)]
            )
        await asyncio.wait_for(asyncio.gather(*tasks), 300)
        elapsed = time.perf_counter() - start
    server.should_exit = True
    await serve_task
    return total * subscribers / elapsed, elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp) / "data",
            config_dir=Path(tmp) / "config",
            database_url=args.database_url,
        )
        lab = await open_lab(settings)
        backend = "postgresql" if args.database_url else "sqlite"
        try:
            print(f"backend: {backend}, events per measurement: {args.events}")
            one = await bench_append(lab, args.events, 1)
            print(f"append, 1 writer:            {one:10.0f} events/s")
            eight = await bench_append(lab, args.events, 8)
            print(f"append, 8 writers:           {eight:10.0f} events/s")
            batched = await bench_batch(lab, args.events, 100)
            print(f"append_many, batches of 100: {batched:10.0f} events/s")
            rate, elapsed = await bench_fanout(lab, args.events, 20)
            print(
                f"SSE fan-out to 20 subscribers: {rate:10.0f} deliveries/s "
                f"({args.events} events each in {elapsed:.2f} s)"
            )
        finally:
            await lab.close()


if __name__ == "__main__":
    asyncio.run(main())
