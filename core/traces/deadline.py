"""A deadline for slow clients of the OTLP receiver: uvicorn's HTTP/1.1 protocol (h11) waits for a request's
headers and body as long as the client takes, so a client that sends a byte now and then (or nothing) holds its
connection open for ever. :func:`deadline_protocol` makes the protocol that gives each request ``seconds`` from
its first byte (or from the connection) to the last byte of its body, then closes the connection; the
application reading the body sees the client gone (a disconnect), stores nothing and answers nothing.

Once a request is wholly received the application answers it with no deadline, and between requests uvicorn's
keep-alive timeout (5 s) closes an idle connection, as before.
"""

from __future__ import annotations

#: Seconds a client has to send a request (headers and body). OpenTelemetry exporters give up on their own after
#: 10 s (``OTEL_EXPORTER_OTLP_TIMEOUT``), so an exporter never meets it.
REQUEST_DEADLINE_S = 30.0


def deadline_protocol(seconds: float = REQUEST_DEADLINE_S) -> type:
    """uvicorn's h11 protocol with a deadline of ``seconds`` per request (give it as ``uvicorn.Config(http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class DeadlineProtocol(H11Protocol):
        _deadline = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._deadline is None:  # the first bytes of a request after an answer
                self._arm()
            super().data_received(data)
            if self._answering():
                self._disarm()

        def on_response_complete(self) -> None:
            self._disarm()
            super().on_response_complete()
            if self._receiving():  # a pipelined request already started
                self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _answering(self) -> bool:
            """The current request is wholly received: the application answers it."""
            cycle = self.cycle
            return cycle is not None and not cycle.response_complete and not cycle.more_body

        def _receiving(self) -> bool:
            cycle = self.cycle
            return cycle is not None and not cycle.response_complete and cycle.more_body

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return DeadlineProtocol
