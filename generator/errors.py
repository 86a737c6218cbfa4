"""The one exception the generator raises for bad input."""


class GenerationError(Exception):
    """A schema (or configuration) the generator cannot turn into code.

    `pointer` is a JSON pointer into the schema (``#/$defs/Foo/properties/bar``)
    or a file path, so the message always says where the problem is.
    """

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(_one_line(f"{pointer}: {message}"))
        self.pointer = pointer
        self.message = message


def _one_line(text: str) -> str:
    """`text` with line breaks and other unprintable characters (from schema names) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
