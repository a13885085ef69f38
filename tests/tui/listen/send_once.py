"""Send one agent's run and a running turn to a listener, as a separate process:
``python send_once.py HOST:PORT`` (OTLP/gRPC, through the real SDK and exporter).
The real-terminal test runs it against ``pygents-tui listen``."""

from __future__ import annotations

import asyncio
import sys

from otlp_sender import Sender


async def send(endpoint: str) -> None:
    sender = Sender("grpc", endpoint, service="tmux-svc", instance="t-1")
    agent = sender.agent("tmux-agent")
    run = sender.run_start(agent)
    sender.turn_start(agent, run, "wave", timeout=60.0)
    await sender.sent()  # exported and answered: the listener has it
    await sender.close()


if __name__ == "__main__":
    asyncio.run(send(sys.argv[1]))
