"""Behaviour of generated packages: codec, builders, upserts, routing, connection, JSON Schema suite."""
