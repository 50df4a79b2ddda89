"""The REST catalog's errors: the spec's error model (``{"error": {"message", "type",
"code"}}``), the exception type names clients map to their own exceptions, and the HMS
exceptions of the handler turned into them."""

from __future__ import annotations

from typing import Any

from metastore_server.thrift_api import hms


class RestError(Exception):
    """An error answered as the spec's error model with HTTP status ``code``."""

    def __init__(self, code: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind
        self.message = message

    def body(self) -> dict[str, Any]:
        """The JSON body of the answer."""
        return {"error": {"message": self.message, "type": self.kind, "code": self.code}}


def bad_request(message: str) -> RestError:
    """400: the request cannot be read or is not allowed as sent."""
    return RestError(400, "BadRequestException", message)


def no_such_namespace(namespace: str) -> RestError:
    """404: the namespace does not exist."""
    return RestError(404, "NoSuchNamespaceException", f"Namespace does not exist: {namespace}")


def no_such_table(name: str) -> RestError:
    """404: the table does not exist (or is not an Iceberg table)."""
    return RestError(404, "NoSuchTableException", f"Table does not exist: {name}")


def already_exists(what: str, name: str) -> RestError:
    """409: a namespace or table of that name exists already."""
    return RestError(409, "AlreadyExistsException", f"{what} already exists: {name}")


def commit_failed(message: str) -> RestError:
    """409: a requirement of the commit does not hold, or another commit won."""
    return RestError(409, "CommitFailedException", message)


def not_found(path: str) -> RestError:
    """404: no endpoint at that path."""
    return RestError(404, "NotFoundException", f"No such endpoint: {path}")


def from_metastore(exc: Exception) -> RestError:
    """The REST error of an HMS exception raised by the handler (a MetaException is the
    server's failure: 500)."""
    message = getattr(exc, "message", None) or str(exc)
    if isinstance(exc, hms.NoSuchObjectException):
        return RestError(404, "NoSuchObjectException", message)
    if isinstance(exc, hms.AlreadyExistsException):
        return RestError(409, "AlreadyExistsException", message)
    if isinstance(exc, hms.InvalidOperationException | hms.InvalidObjectException):
        return bad_request(message)
    return RestError(500, "ServerErrorException", message)


def forbidden(message: str) -> RestError:
    """403: the caller may not make the call (the authorizer's refusal)."""
    return RestError(403, "ForbiddenException", message)


def unauthorized(message: str) -> RestError:
    """401: no valid credentials."""
    return RestError(401, "NotAuthorizedException", message)
