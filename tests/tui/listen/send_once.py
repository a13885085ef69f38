"""Send one agent's run and a running turn to a listener, as a separate process:
``python send_once.py HOST:PORT [SERVICE]`` (OTLP/gRPC, through the real SDK and
exporter). The real-terminal tests run it against ``pygents-tui listen``."""

from __future__ import annotations

import asyncio
import sys

from otlp_sender import Sender


async def send(endpoint: str, service: str = "tmux-svc") -> None:
    sender = Sender("grpc", endpoint, service=service, instance="t-1")
    agent = sender.agent("tmux-agent")
    run = sender.run_start(agent)
    sender.turn_start(agent, run, "wave", timeout=60.0)
    await sender.sent()  # exported and answered: the listener has it
    await sender.close()


if __name__ == "__main__":
    asyncio.run(send(*sys.argv[1:3]))
