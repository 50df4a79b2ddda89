"""Who is calling: one :class:`Session` per connection, current while the connection's calls
are served.

A connection that authenticated (SASL: Kerberos, PLAIN, a delegation token) is its
authenticated user, and nothing the client says changes that, except that a proxy user may
log in acting for another user (``--proxy-user``): the connection is then that user, and
``real_user`` the one who authenticated. A connection without
authentication is whoever it claims with ``set_ugi`` (HMS's ``hive.metastore.execute.setugi``),
or nobody (``user`` None) before it claims. The processor makes the connection's session
current around each call (:func:`serving`); the code serving the call reads it with
:func:`current_session`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Session:
    """One connection's caller: the SASL identity it authenticated as (if any) and what it
    claimed with ``set_ugi``."""

    #: The user the connection authenticated as, or acts for as a proxy user (None: no
    #: authentication).
    authenticated_user: str | None = None
    #: The SASL mechanism that authenticated it (GSSAPI, PLAIN, DIGEST-MD5).
    mechanism: str | None = None
    #: The proxy user who authenticated and acts for ``authenticated_user`` (on a token login:
    #: the one who got the token for its owner); None when the user acts for itself.
    real_user: str | None = None
    #: The client's IP address (None: not known).
    address: str | None = None
    #: The user and groups named by ``set_ugi`` (only believed without authentication).
    claimed_user: str | None = None
    claimed_groups: tuple[str, ...] = field(default_factory=tuple)
    #: The groups an identity provider vouched for in the token that authenticated the user
    #: (a signed claim, unlike ``set_ugi``'s): the REST catalog's bearer JWTs.
    proven_groups: tuple[str, ...] = field(default_factory=tuple)

    @property
    def authenticated(self) -> bool:
        """Whether the user was proven (SASL), not claimed."""
        return self.authenticated_user is not None

    @property
    def user(self) -> str | None:
        """Who the calls are made as: the authenticated user, else the ``set_ugi`` claim."""
        return self.authenticated_user if self.authenticated else self.claimed_user

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups ``set_ugi`` named (none once authenticated: a client cannot add itself
        to a group; the authorizer looks groups up itself)."""
        return () if self.authenticated else self.claimed_groups

    def claim(self, user: str | None, groups: list[str] | None) -> None:
        """Record ``set_ugi``'s claim (kept, but not believed, on an authenticated connection)."""
        self.claimed_user = user or None
        self.claimed_groups = tuple(g for g in groups or () if g)


_current: ContextVar[Session | None] = ContextVar("metastore_session", default=None)


def current_session() -> Session:
    """The session of the call being served (an anonymous one outside a call)."""
    session = _current.get()
    return session if session is not None else Session()


def current_user() -> str | None:
    """Who the current call is made as (None: nobody said)."""
    return current_session().user


class serving:  # noqa: N801 - used as a function: ``with serving(session):``
    """Make ``session`` current for the code run inside (a class, not a generator: it is
    entered on every call)."""

    __slots__ = ("_session", "_token")

    def __init__(self, session: Session) -> None:
        self._session = session

    def __enter__(self) -> Session:
        self._token = _current.set(self._session)
        return self._session

    def __exit__(self, *_exc: object) -> None:
        _current.reset(self._token)
