"""The one exception the generator raises for bad input."""


class GenerationError(Exception):
    """A schema (or configuration) the generator cannot turn into code.

    `pointer` is a JSON pointer into the schema (``#/$defs/Foo/properties/bar``)
    or a file path, so the message always says where the problem is.
    """

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer}: {message}")
        self.pointer = pointer
        self.message = message
