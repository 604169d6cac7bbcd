"""The blob store under concurrent writers of the same bytes (two teams adopting one
candidate in one process): every put succeeds, the blob is whole, no temp file is left."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from justkernel.store.blobs import BlobStore


def test_concurrent_puts_of_the_same_bytes_all_succeed(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = os.urandom(4 * 1024 * 1024)
    for _round in range(3):
        with ThreadPoolExecutor(8) as pool:
            digests = list(pool.map(lambda _n: store.put(data), range(8)))
        assert len(set(digests)) == 1
        assert store.get(digests[0]) == data
        store.path(digests[0]).unlink()  # the next round races on a missing blob again
    leftovers = [p.name for p in (tmp_path / "blobs").rglob("*.tmp")]
    assert leftovers == []
