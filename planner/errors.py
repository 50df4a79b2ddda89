"""Errors of the filter planner. Each one's ``str()`` is the message sent as MetaException."""

from __future__ import annotations

_SNIPPET_LENGTH = 24


class FilterError(Exception):
    """A partition filter the metastore refuses; ``message`` is the text for MetaException."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class FilterSyntaxError(FilterError):
    """Filter text that does not parse: says what was expected, where, and what was found.

    ``position`` is moved past blanks to the first character the parser could not use.
    """

    def __init__(
        self, reason: str, *, text: str | None = None, position: int | None = None
    ) -> None:
        if position is not None and text is not None:
            position += len(text[position:]) - len(text[position:].lstrip(" \t\n\r"))
        self.reason = reason
        self.position = position
        if position is None:
            message = f"Error parsing partition filter: {reason}"
        else:
            message = f"Error parsing partition filter at position {position}: {reason}"
            if text is not None:
                message += f", found {_found(text, position)}"
        super().__init__(message)


class UnknownKeyError(FilterError):
    """The filter names a column that is not a partition key of the table."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"Specified key <{key}> is not a partitioning key for the table")


class UnsupportedFilterError(FilterError):
    """A well-formed filter that HMS refuses to evaluate (reversed LIKE, say)."""


def _found(text: str, position: int) -> str:
    """A short quotation of the text at ``position`` for an error message."""
    rest = text[position:]
    if not rest.strip(" \t\n\r"):
        return "end of filter"
    if len(rest) > _SNIPPET_LENGTH:
        rest = rest[:_SNIPPET_LENGTH] + "..."
    return repr(rest)
