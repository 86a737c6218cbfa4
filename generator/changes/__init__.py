"""Beside the flow: the changelog of the generated Python API between two IRs (`diff`) and
its text, Markdown and JSON forms (`changelog`). Imports `ir` and `emit` only."""
