"""The kept names listings (``api/listing_replies.py``): kept per arguments and change token,
never without a token, bounded in memory, lists of names kept as their encoded form."""

from __future__ import annotations

from metastore_server.api import listing_replies
from metastore_server.api.listing_replies import ListingReplies
from metastore_server.wire.encoded import EncodedNames


class _Maker:
    """Counts how often an answer was made."""

    def __init__(self, answer: object) -> None:
        self.answer, self.made = answer, 0

    def __call__(self) -> object:
        self.made += 1
        return self.answer


def test_kept_per_arguments_until_the_token_changes() -> None:
    token = [1]
    replies = ListingReplies(lambda: token[0])
    make = _Maker(["b", "a"])
    first = replies.answer("get_all_tables", ("db",), make)
    assert isinstance(first, EncodedNames) and first.decode() == ["b", "a"]
    assert replies.answer("get_all_tables", ("db",), make) is first
    assert make.made == 1
    replies.answer("get_all_tables", ("other",), make)
    assert make.made == 2  # other arguments: made anew
    token[0] = 2
    replies.answer("get_all_tables", ("db",), make)
    assert make.made == 3  # the store changed
    replies.answer("get_table_meta", ("db", "*", ["a"]), make)  # a list argument is a key too
    replies.answer("get_table_meta", ("db", "*", ["a"]), make)
    assert make.made == 4


def test_nothing_kept_without_a_token_or_for_other_answers() -> None:
    replies = ListingReplies(lambda: None)
    make = _Maker(["a"])
    assert replies.answer("get_all_tables", ("db",), make) == ["a"]
    replies.answer("get_all_tables", ("db",), make)
    assert make.made == 2
    kept = ListingReplies(lambda: 1)
    other = _Maker({"not": "names"})
    assert kept.answer("get_all_tables", ("db",), other) == {"not": "names"}
    kept.answer("get_all_tables", ("db",), other)
    assert other.made == 2


def test_memory_is_bounded() -> None:
    replies = ListingReplies(lambda: 1, max_bytes=10_000)
    names = [f"name_{i:04d}" for i in range(100)]  # ~ 3 KiB an answer as kept
    for db in range(20):
        replies.answer("get_all_tables", (f"db{db}",), _Maker(names))
    assert replies.held <= 10_000
    make = _Maker(names)
    replies.answer("get_all_tables", ("db19",), make)  # the newest is still kept
    replies.answer("get_all_tables", ("db0",), make)  # the oldest went first
    assert make.made == 1
    huge = _Maker(["x" * 1000] * (listing_replies._LARGEST // 1000 + 1))
    big = ListingReplies(lambda: 1)
    big.answer("get_all_tables", ("big",), huge)
    big.answer("get_all_tables", ("big",), huge)
    assert huge.made == 2  # too large to keep
