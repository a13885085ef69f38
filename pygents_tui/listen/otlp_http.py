"""The OTLP/HTTP side's byte-level helpers: bounded gzip inflation, and error
answers as ``google.rpc.Status`` messages in the request's own encoding."""

from __future__ import annotations

import json
import zlib
from typing import Final

from aiohttp import web

from pygents_tui.listen.decode import Malformed

__all__ = ["JSON", "PROTOBUF", "gunzip", "status"]

PROTOBUF: Final = "application/x-protobuf"
JSON: Final = "application/json"


def gunzip(body: bytes, limit: int) -> bytes:
    """Inflate at most ``limit`` bytes: a small bomb cannot take more memory than a
    plain body could."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error:
        raise Malformed("the gzip body is corrupt") from None
    if len(data) > limit:
        raise Malformed(f"the gzip body inflates beyond the {limit:,}-byte limit", "too_large")
    if not inflater.eof:
        raise Malformed("the gzip body is truncated")
    return data


# google.rpc.Code of each HTTP status answered: INVALID_ARGUMENT, DEADLINE_EXCEEDED,
# RESOURCE_EXHAUSTED, UNAVAILABLE.
_RPC_CODES: Final = {400: 3, 408: 4, 413: 8, 503: 14}


def status(
    code: int, message: str, json_body: bool, retry_after: int | None = None
) -> web.Response:
    """An OTLP error answer: a ``google.rpc.Status`` (code and message) in the
    request's encoding. Its two fields are written by hand rather than pulling in
    the googleapis protos for them. The connection is closed after it: the body
    may not have been read, and a refused sender should come back afresh."""
    rpc_code = _RPC_CODES.get(code, 3)
    headers = {"Connection": "close"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    if json_body:
        text = json.dumps({"code": rpc_code, "message": message})
        return web.Response(status=code, body=text.encode(), content_type=JSON, headers=headers)
    raw = message.encode()
    body = b"\x08" + varint(rpc_code) + b"\x12" + varint(len(raw)) + raw
    return web.Response(status=code, body=body, content_type=PROTOBUF, headers=headers)


def varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        if number:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
