#!/bin/sh
# `make test`'s two passes, side by side: the whole suite, and the integration suite again on
# the HBase backend (against the HBase test double). Each mostly waits on the servers it
# starts, so together they take about as long as the longer one, not the sum. Each runs in a
# network namespace of its own when it can (tests/run-isolated.sh), so their ports never meet.
# A test file the store does not change (marked any_store: authentication, transports, the CLI)
# runs in the first pass only; one that starts an HBase double of its own whatever the pass
# (marked own_double) runs in the HBase pass only. A -m of the caller's own comes later and wins.
# The HBase pass's output is printed after the first pass's; the exit status is the first
# pass's failure, else the HBase pass's.
# Usage: sh tests/run-both-passes.sh PYTHON [PYTEST ARGS...]
python="$1"; shift
here=$(dirname "$0")
log=$(mktemp "${TMPDIR:-/tmp}/hbase-pass.XXXXXX")
METASTORE_TEST_STORAGE=hbase-double sh "$here/run-isolated.sh" "$python" -m pytest \
    -p no:cacheprovider -m "not any_store" tests/integration "$@" >"$log" 2>&1 &
hbase=$!
sh "$here/run-isolated.sh" "$python" -m pytest -m "not own_double" "$@"
first=$?
wait "$hbase"
second=$?
echo "==> The integration suite on the HBase backend (METASTORE_TEST_STORAGE=hbase-double):"
cat "$log"
rm -f "$log"
if [ "$first" -ne 0 ]; then
    exit "$first"
fi
exit "$second"
