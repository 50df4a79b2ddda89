"""Assemble a flat stream of conditions, AND, OR and parentheses into an And/Or tree.

An explicit stack of open parentheses replaces recursion, so thousands of nested parentheses or a
10,000-term OR cost O(n) time and no Python stack. AND binds tighter than OR; both are
left-associative (the tree is n-ary, so associativity does not show). Redundant parentheses leave
no trace in the tree; real nesting deeper than ``MAX_DEPTH`` And/Or levels is refused, which keeps
every recursive consumer of the tree (printing, planning, evaluation) far from the stack limit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from metastore_server.planner.ast import And, Expr, Or, depth

#: The deepest And/Or nesting a filter may have.
MAX_DEPTH = 100


class TokenKind(enum.Enum):
    """What a stream token is."""

    CONDITION = "a condition"
    AND = "AND"
    OR = "OR"
    OPEN = "'('"
    CLOSE = "')'"
    END = "end of filter"
    JUNK = "text that is not a token"


@dataclass(frozen=True, slots=True)
class Token:
    """One stream token at ``position`` in the filter text; conditions carry their expression."""

    kind: TokenKind
    position: int
    expr: Expr | None = None


class StructureError(Exception):
    """The stream is not a well-formed AND/OR expression.

    ``wants_condition`` says the parser stopped where a condition or '(' had to start, so the
    caller can explain why the text there is not a condition.
    """

    def __init__(self, reason: str, position: int, *, wants_condition: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position
        self.wants_condition = wants_condition


@dataclass(slots=True)
class _Operand:
    """A subexpression and its And/Or depth: a built tree, or an And/Or not built yet.

    Building waits until the operand lands under the other connective (or is the result), so a
    chain of same-kind groups such as ``((a or b) or c) or ...`` is spliced once, in O(n), instead
    of being rebuilt at every level.
    """

    depth: int
    expr: Expr | None = None
    kind: type[And] | type[Or] | None = None
    parts: list[_Operand] = field(default_factory=list)

    def is_a(self, kind: type[And] | type[Or]) -> bool:
        """Whether this operand is an And (or an Or), built or not."""
        return self.kind is kind if self.expr is None else isinstance(self.expr, kind)

    def build(self) -> Expr:
        """The tree of this operand. O(its size); recursion only across And/Or alternations."""
        if self.expr is not None:
            return self.expr
        assert self.kind is not None
        children: list[Expr] = []
        pending = list(reversed(self.parts))
        while pending:
            part = pending.pop()
            if part.expr is None and part.kind is self.kind:
                pending.extend(reversed(part.parts))
            else:
                children.append(part.build())
        self.expr = self.kind(tuple(children))
        return self.expr


@dataclass(slots=True)
class _Group:
    """An open parenthesis (or the whole filter): finished OR terms and the AND term being built."""

    position: int
    terms: list[_Operand] = field(default_factory=list)
    factors: list[_Operand] = field(default_factory=list)


def assemble(tokens: list[Token]) -> Expr:
    """The tree of a token stream that ends with an END or JUNK token. O(len(tokens)).

    Raises StructureError at the first token that cannot continue the expression.
    """
    groups = [_Group(position=0)]
    want_operand = True
    for token in tokens:
        kind = token.kind
        if want_operand:
            if kind is TokenKind.CONDITION:
                assert token.expr is not None
                groups[-1].factors.append(_Operand(depth(token.expr), expr=token.expr))
                want_operand = False
            elif kind is TokenKind.OPEN:
                groups.append(_Group(position=token.position))
            else:
                raise StructureError(
                    "expected a condition or '('", token.position, wants_condition=True
                )
        elif kind is TokenKind.AND:
            want_operand = True
        elif kind is TokenKind.OR:
            group = groups[-1]
            group.terms.append(_combine(And, group.factors, token.position))
            group.factors = []
            want_operand = True
        elif kind is TokenKind.CLOSE:
            if len(groups) == 1:
                raise StructureError("')' without a matching '('", token.position)
            inner = _close(groups.pop(), token.position)
            groups[-1].factors.append(inner)
        elif kind is TokenKind.END and len(groups) > 1:
            raise StructureError(
                f"missing ')' for the '(' at position {groups[-1].position}", token.position
            )
        elif kind is TokenKind.END:
            return _close(groups[0], token.position).build()
        else:
            raise StructureError("expected AND, OR or ')'", token.position)
    raise StructureError("unexpected end of filter", tokens[-1].position if tokens else 0)


def _close(group: _Group, position: int) -> _Operand:
    """The OR of a group's terms, its last AND term included."""
    group.terms.append(_combine(And, group.factors, position))
    return _combine(Or, group.terms, position)


def _combine(kind: type[And] | type[Or], operands: list[_Operand], position: int) -> _Operand:
    """One operand as is, or several joined by ``kind`` (built later, see _Operand). O(operands)."""
    if len(operands) == 1:
        return operands[0]
    level = max(op.depth if op.is_a(kind) else op.depth + 1 for op in operands)
    if level > MAX_DEPTH:
        raise StructureError(f"AND/OR nested deeper than {MAX_DEPTH} levels", position)
    return _Operand(level, kind=kind, parts=operands)
