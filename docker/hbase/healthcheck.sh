#!/usr/bin/env bash
# The HBase container's health check. Healthy when the Thrift 1 gateway answers getTableNames
# with a table list: the gateway is up *and* the master behind it serves (while HBase starts,
# the same call answers an IOError). A closed port fails at once. bash, not sh: the socket is
# bash's /dev/tcp, which dash and busybox sh do not have.
set -euo pipefail

exec 3<>"/dev/tcp/127.0.0.1/${HBASE_THRIFT_PORT:-9090}"
# The call in TBinaryProtocol (strict), unframed as the gateway serves by default:
# version|CALL, the name's length and bytes, seqid 1, no arguments (a field stop).
printf '\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x01\x00' >&3
# The reply's first 28 bytes: version|REPLY, the same name, seqid 1, then the first field's
# type and id: a list (0f) as field 0 (the result), where an IOError is a struct as field 1.
reply="$(timeout 5 head -c 28 <&3 | od -An -v -tx1 | tr -d ' \n')"
name="$(printf getTableNames | od -An -v -tx1 | tr -d ' \n')"
[[ "$reply" == "80010002""0000000d${name}""00000001""0f0000" ]]
