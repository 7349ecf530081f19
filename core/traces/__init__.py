"""Production traces: ingestion, mapping and what a run scored from traces gives back (docs/traces.md)."""
