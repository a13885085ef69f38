"""The OTLP/gRPC servicers (trace, logs, metrics): how they are registered.

Each ``Export`` method is registered as *stream-unary* with no deserializer, though
exporters call it as unary (the two look the same on the wire). Stream-unary, so
that our code runs when the call opens, before its message has arrived: the
receiver can refuse the call while it is busy, and end it if the message does not
come within the receive timeout. Registered unary, gRPC would wait for the message
on our behalf, forever, holding one of its limited call slots. No deserializer, so
that malformed bytes reach the shared decoder and are counted instead of failing
inside gRPC before any code of ours runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from pygents_tui.listen.decode import Signal

if TYPE_CHECKING:
    from pygents_tui.listen.receiver import Receiver

__all__ = ["handlers"]


def handlers(receiver: Receiver) -> tuple[Any, ...]:
    """The generic handlers of the three services, calling ``receiver.export_grpc``."""
    return tuple(service(receiver).handler() for service in (_Traces, _Logs, _Metrics))


class _Service:
    """What the three servicers share: their registration, with raw-bytes requests."""

    signal: Signal
    response_type: Any
    service: str

    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def handler(self) -> Any:
        export = grpc.stream_unary_rpc_method_handler(
            self.Export,
            request_deserializer=None,  # bytes: decoding (and counting failures) is ours
            response_serializer=self.response_type.SerializeToString,
        )
        return grpc.method_handlers_generic_handler(self.service, {"Export": export})

    async def Export(self, requests: AsyncIterator[bytes], context: Any) -> Any:
        return await self.receiver.export_grpc(self.signal, requests, context)


def _service_name(module: Any, name: str) -> str:
    return str(module.DESCRIPTOR.services_by_name[name].full_name)


class _Traces(_Service, trace_service_pb2_grpc.TraceServiceServicer):
    signal = "traces"
    response_type = trace_service_pb2.ExportTraceServiceResponse
    service = _service_name(trace_service_pb2, "TraceService")


class _Logs(_Service, logs_service_pb2_grpc.LogsServiceServicer):
    signal = "logs"
    response_type = logs_service_pb2.ExportLogsServiceResponse
    service = _service_name(logs_service_pb2, "LogsService")


class _Metrics(_Service, metrics_service_pb2_grpc.MetricsServiceServicer):
    signal = "metrics"
    response_type = metrics_service_pb2.ExportMetricsServiceResponse
    service = _service_name(metrics_service_pb2, "MetricsService")
