"""Trace continuity across processes: the worker's turn span links to the producer's span.

Two real processes, the real OTLP/HTTP exporter and the test receiver of
``tests/otel/otlp_receiver.py`` on loopback. The turn carries the W3C ``traceparent``
of the span it was created in (``turn.metadata``); the worker's ``turn`` span gets
a *link* to that span, and starts a trace of its own under the worker's
``invoke_agent`` span (a link, not a parent: a turn can wait long in its mailbox and
be delivered more than once, and each delivery is a run of its own).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from pygents.redis import RedisServer

HERE = Path(__file__).resolve().parent


def _receiver_module() -> ModuleType:
    """``tests/otel/otlp_receiver.py``, imported by path (it is not a package)."""
    found = sys.modules.get("otlp_receiver")
    if found is None:
        spec = importlib.util.spec_from_file_location(
            "otlp_receiver", HERE.parent / "otel" / "otlp_receiver.py"
        )
        assert spec is not None
        assert spec.loader is not None
        found = importlib.util.module_from_spec(spec)
        sys.modules["otlp_receiver"] = found
        spec.loader.exec_module(found)
    return found


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYGENTS_"))}
    env["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # export spans promptly
    return env


def test_the_workers_turn_span_links_to_the_span_that_put_the_turn(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    receivers = _receiver_module()
    with receivers.OTLPHttpReceiver() as receiver:
        endpoint = f"http://127.0.0.1:{receiver.port}"
        args = [redis_server.url, endpoint]
        log = (tmp_path / "worker.log").open("wb")
        worker = subprocess.Popen(
            [sys.executable, str(HERE / "traced_worker.py"), *args],
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            done = subprocess.run(
                [sys.executable, str(HERE / "traced_producer.py"), *args],
                env=_env(),
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
            log.close()
        assert done.returncode == 0, done.stderr
        assert worker.returncode == 0, (tmp_path / "worker.log").read_text()[-2000:]
        made = json.loads(done.stdout)
        assert made["result"] == "hello, world"
        version, trace_id, span_id, _ = made["traceparent"].split("-")
        assert (version, trace_id, span_id) == ("00", made["trace_id"], made["span_id"])

        wanted = {"handle request", "invoke_agent courier", "turn greet", "execute_tool greet"}
        spans = receiver.wait_for_spans(lambda got: wanted <= receivers.span_names(got))

    by_name = {span.name: span for span in spans if span.name in wanted}
    request, run = by_name["handle request"], by_name["invoke_agent courier"]
    turn, tool_span = by_name["turn greet"], by_name["execute_tool greet"]
    assert request.resource["service.name"] == "mailbox-producer"
    for span in (run, turn, tool_span):
        assert span.resource["service.name"] == "mailbox-worker"
    assert (request.trace_id, request.span_id) == (made["trace_id"], made["span_id"])
    # The worker's spans: a trace of their own, the turn inside its agent run.
    assert run.parent_span_id == ""
    assert (turn.trace_id, turn.parent_span_id) == (run.trace_id, run.span_id)
    assert (tool_span.trace_id, tool_span.parent_span_id) == (turn.trace_id, turn.span_id)
    assert turn.trace_id != request.trace_id
    assert turn.attributes["pygents.turn.uuid"] == made["uuid"]
    # ... linked to the producer's span, where the turn was put.
    assert [(link.trace_id, link.span_id) for link in turn.links] == [
        (request.trace_id, request.span_id)
    ]
    assert turn.links[0].attributes == {"pygents.link.type": "queued_from"}
