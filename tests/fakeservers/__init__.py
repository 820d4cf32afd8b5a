"""Local HTTP servers that speak the wire formats of model vendors.

Each server runs on 127.0.0.1 on a free port in a thread, parses and records every
request, answers in the vendor's shape (streaming included) and can inject faults:
error statuses with headers, malformed bodies and connections that never answer.
"""

from fakeservers.base import FakeServer, Fault, Recorded, Reply, Response

__all__ = ["FakeServer", "Fault", "Recorded", "Reply", "Response"]
