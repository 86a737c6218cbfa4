"""API changes between two schemas: the diff and the changelog."""
