"""Stage 2, decide: the intermediate representation (`model`, `assertions`), the one place
that interprets JSON Schema (`build` and its parts) and every naming rule (`naming`).
Imports `schema` only."""
