#!/usr/bin/env bash
# The HBase container's entry point: standalone HBase (`hbase master start`: master, region
# server and ZooKeeper in one JVM) and the Thrift 1 gateway (`hbase thrift start`: buffered
# transport, binary protocol, as happybase connects by default). The container ends when
# either process ends, so a dead HBase shows as a stopped container, not as a gateway that
# answers errors forever.
set -euo pipefail

mkdir -p "${HBASE_LOG_DIR:-/var/lib/hbase/logs}"
hbase master start &
master=$!
# The gateway reaches ZooKeeper and the master when called, so it may start alongside.
hbase thrift start -p "${HBASE_THRIFT_PORT:-9090}" &
thrift=$!
# docker stop sends SIGTERM to this script (PID 1): pass it on so HBase shuts down cleanly.
trap 'kill -TERM "$master" "$thrift" 2>/dev/null || true' TERM INT

status=0
wait -n "$master" "$thrift" || status=$?
kill -TERM "$master" "$thrift" 2>/dev/null || true
wait || true
exit "$status"
