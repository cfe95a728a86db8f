"""One process of the concurrent eviction test: builds and reads cache entries of 64 KiB under a
small size limit, checking that every entry it is handed is whole. Prints a JSON summary."""

from __future__ import annotations

import json
import sys
import time

from stencilkit.toolchain import cache

PAYLOAD = 64 * 1024


def payload(key: str) -> bytes:
    return (key.encode() * (PAYLOAD // len(key) + 1))[:PAYLOAD]


def main(seed: int, rounds: int) -> None:
    cache.EVICT_GRACE_S = 0.3  # short, so that the test evicts within a few seconds
    builds = hits = 0
    for r in range(rounds):
        # round r uses entries r .. r+3 (both processes, in different orders): older rounds'
        # entries become least recently used and are evicted while the other process reads
        for i in range(4):
            key = cache.cache_key([("test", f"entry-{r + (i + seed) % 4}")])

            def build(tmp, key=key):  # type: ignore[no-untyped-def]
                (tmp / "data.bin").write_bytes(payload(key))

            entry = cache.get_or_build(key, build, {"program": f"entry-{r + i}", "target": "test"})
            data = (entry.path / "data.bin").read_bytes()  # must be there, and whole
            assert data == payload(key), f"round {r}: entry {key[:12]} is not whole"
            builds += entry.built
            hits += not entry.built
        time.sleep(0.35)
    print(json.dumps({"builds": builds, "hits": hits}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
