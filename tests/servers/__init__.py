"""Local HTTP servers (127.0.0.1 only) that speak the wire protocols of external services, for tests and
benchmarks. They are the far side of a boundary: the real client libraries talk to them."""
