// hive_metastore_2_3_wire.thrift -- the HMS 2.3 wire layouts that HMS 3/4 changed in place.
//
// hive_metastore.thrift follows HMS 4 where the two generations put different things under the
// same field id. A Hive 2.3 client still sends and reads the layouts below; the server reads
// and writes them for it (see metastore_server/server/generations.py and docs/clients.md):
//
// * AddDynamicPartitions and InsertEventRequestData (requests): which layout a message uses is
//   seen on the wire (2.3 sends a string, HMS 3+ an i64 at AddDynamicPartitions' field 2; 2.3 a
//   list, HMS 3+ a bool or nothing at InsertEventRequestData's field 1), per message.
// * GetOpenTxnsResponse (a reply): 2.3 reads a set of ids, HMS 3+ a list and abortedBits.
// * get_partition_names (a reply): 2.3 declares its MetaException at id 1, HMS 3+ at id 2.
//
// Only these declarations are here; everything else is shared with hive_metastore.thrift. The
// exceptions named below are the main file's, bound to it when the server loads this file.
// Structure and comments are our own; the ids, names and types are interface facts.

namespace java org.hbasemetastore.thrift.v2wire
namespace py hbase_metastore.hive_metastore_2_3_wire

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

exception MetaException {
  1: string message,
}

exception NoSuchTxnException {
  1: string message,
}

exception TxnAbortedException {
  1: string message,
}

struct AddDynamicPartitions {
  1: required i64 txnid,
  2: required string dbname,
  3: required string tablename,
  4: required list<string> partitionnames,
  5: optional DataOperationType operationType = DataOperationType.UNSET,
}

struct InsertEventRequestData {
  1: required list<string> filesAdded,
  2: optional list<string> filesAddedChecksum,
}

struct GetOpenTxnsResponse {
  1: required i64 txn_high_water_mark,
  2: required set<i64> open_txns,
  3: optional i64 min_open_txn,
}

// The calls whose arguments or answers hold one of the layouts above, as 2.3 declares them.
service HiveMetastore23Wire {
  void add_dynamic_partitions(1: AddDynamicPartitions rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)

  GetOpenTxnsResponse get_open_txns()

  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: MetaException o2)
}
