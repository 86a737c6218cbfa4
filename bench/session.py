"""SessionState benchmark: µs per chunk to fold one message streamed as n chunks, at n = 1,000,
10,000 and 100,000, for acp_v1 (chunks joined into a `ChunkedMessage`) and acp_v2 (chunks
appended to the `agent_message`'s content), in one process. Each size is folded into a new
state several times (fewer for the bigger sizes); the table gives the median µs per chunk and
its spread (lowest to highest run). Linear folding is flat across the sizes.

    .venv/bin/python bench/session.py [--generated DIR] [--sizes 1000,10000] [--repeats N]

`--generated` times the packages of another checkout (`/work/main/generated`: before a change)."""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1_000, 10_000, 100_000)
REPEATS = {1_000: 21, 10_000: 9, 100_000: 5}


def v1_stream(acp_v1: Any, n: int) -> list[Any]:
    """n agent_message_chunks of one v1 message (named by none, as most v1 agents send them)."""
    return [
        acp_v1.SessionNotification(
            session_id="s",
            update=acp_v1.SessionUpdateAgentMessageChunk(content=acp_v1.ContentBlockText(text=f"w{i} ")),
        )
        for i in range(n)
    ]


def v2_stream(acp_v2: Any, n: int) -> list[Any]:
    """n agent_message_chunks of one v2 message (`messageId` m)."""
    return [
        acp_v2.UpdateSessionNotification(
            session_id="s",
            update=acp_v2.SessionUpdateAgentMessageChunk(
                message_id="m", content=acp_v2.ContentBlockText(text=f"w{i} ")
            ),
        )
        for i in range(n)
    ]


def per_chunk(state_type: Callable[[], Any], stream: list[Any]) -> float:
    """µs per chunk to fold `stream` into a new state (garbage collection off while timing)."""
    state = state_type()
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for update in stream:
            state.apply(update)
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    assert len(state) == 1, "the chunks must fold into one message"
    return elapsed / len(stream) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=Path, default=ROOT / "generated")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeats", type=int, help="runs per size (default: 21, 9, 5 by size)")
    arguments = parser.parse_args()
    sys.path.insert(0, str(arguments.generated.resolve()))
    import acp_v1
    import acp_v2

    sizes = [int(size) for size in arguments.sizes.split(",")]
    print(f"SessionState: µs per chunk folding one message of n chunks ({arguments.generated})\n")
    print("| package | chunks | runs | median µs/chunk | spread (min to max) |")
    print("|---|---:|---:|---:|---:|")
    for name, package, stream_of in (("acp_v1", acp_v1, v1_stream), ("acp_v2", acp_v2, v2_stream)):
        for n in sizes:
            stream = stream_of(package, n)
            runs = [per_chunk(package.SessionState, stream) for _ in range(arguments.repeats or REPEATS.get(n, 5))]
            spread = f"{min(runs):.2f} to {max(runs):.2f}"
            print(f"| {name} | {n:,} | {len(runs)} | {statistics.median(runs):.2f} | {spread} |", flush=True)


if __name__ == "__main__":
    main()
