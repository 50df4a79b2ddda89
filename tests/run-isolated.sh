#!/bin/sh
# Run a command in a fresh network namespace whose only interface is loopback, when possible.
# Tests that need such isolation (the reference Hive Metastore binds every interface) skip
# themselves when it is absent; everything else runs the same either way.
if unshare -n true 2>/dev/null && command -v ip >/dev/null 2>&1; then
    exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
echo "run-isolated: no private network namespace available; running without isolation" >&2
exec "$@"
