// fb303.thrift -- the generic service-status interface that ThriftHiveMetastore extends.
//
// Method names, argument ids and types are the interface facts every Hive Metastore client
// expects. The two fire-and-forget calls are declared `oneway` (the current Thrift keyword);
// thriftpy2 does not accept the older `async` spelling.

namespace java org.hbasemetastore.fb303
namespace py hbase_metastore.fb303
namespace cpp hbase_metastore.fb303

// Lifecycle state reported by getStatus().
enum fb_status {
  DEAD = 0,
  STARTING = 1,
  ALIVE = 2,
  STOPPING = 3,
  STOPPED = 4,
  WARNING = 5,
}

service FacebookService {
  // descriptive name of the service
  string getName()

  // version string of the service
  string getVersion()

  fb_status getStatus()

  // human-readable explanation of the current status
  string getStatusDetails()

  map<string, i64> getCounters()

  i64 getCounter(1: string key)

  void setOption(1: string key, 2: string value)

  string getOption(1: string key)

  map<string, string> getOptions()

  string getCpuProfile(1: i32 profileDurationInSec)

  // unix time (seconds) at which the server started
  i64 aliveSince()

  oneway void reinitialize()

  oneway void shutdown()
}
