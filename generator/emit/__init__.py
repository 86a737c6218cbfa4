"""Stage 3, print: IR → unformatted Python, as top-level units. What each IR kind prints
(`pytypes`, `pynamed`, `views`, `exprs`), the templates' contexts, line layout, literals,
and rendering through the top-level `templates/`. Imports `ir` (and `schema` through it)."""
