// hive_metastore.thrift -- wire contract of the hbase-metastore server.
//
// Field ids, types, requiredness and method signatures follow Hive Metastore 2.3.10 so that
// Hive 2.3 clients and clients generated from this file talk to each other. Fields and calls that
// newer Hive clients (3.x, 4.x) send are appended as optional members with the ids those clients
// use; each such group is marked below. Structure and comments are our own; the ids, names and
// types are interface facts.
//
// Written for both thriftpy2 (loaded at runtime) and the Apache Thrift compiler.

include "fb303.thrift"

namespace java org.hbasemetastore.thrift
namespace py hbase_metastore.hive_metastore
namespace cpp hbase_metastore

// ---------------------------------------------------------------- constants

const string DDL_TIME = "transient_lastDdlTime"
const string HIVE_FILTER_FIELD_OWNER = "hive_filter_field_owner__"
const string HIVE_FILTER_FIELD_PARAMS = "hive_filter_field_params__"
const string HIVE_FILTER_FIELD_LAST_ACCESS = "hive_filter_field_last_access__"
const string IS_ARCHIVED = "is_archived"
const string ORIGINAL_LOCATION = "original_location"
const string IS_IMMUTABLE = "immutable"
const string META_TABLE_COLUMNS = "columns"
const string META_TABLE_COLUMN_TYPES = "columns.types"
const string BUCKET_FIELD_NAME = "bucket_field_name"
const string BUCKET_COUNT = "bucket_count"
const string FIELD_TO_DIMENSION = "field_to_dimension"
const string META_TABLE_NAME = "name"
const string META_TABLE_DB = "db"
const string META_TABLE_LOCATION = "location"
const string META_TABLE_SERDE = "serde"
const string META_TABLE_PARTITION_COLUMNS = "partition_columns"
const string META_TABLE_PARTITION_COLUMN_TYPES = "partition_columns.types"
const string FILE_INPUT_FORMAT = "file.inputformat"
const string FILE_OUTPUT_FORMAT = "file.outputformat"
const string META_TABLE_STORAGE = "storage_handler"
const string TABLE_IS_TRANSACTIONAL = "transactional"
const string TABLE_NO_AUTO_COMPACT = "no_auto_compaction"
const string TABLE_TRANSACTIONAL_PROPERTIES = "transactional_properties"
const string EXPECTED_PARAMETER_KEY = "expected_parameter_key"
const string EXPECTED_PARAMETER_VALUE = "expected_parameter_value"

// ---------------------------------------------------------------- enums

// INSERT_ONLY_TABLES: Hive 3.x+
enum ClientCapability {
  TEST_CAPABILITY = 1,
  INSERT_ONLY_TABLES = 2,
}

enum CompactionType {
  MINOR = 1,
  MAJOR = 2,
  REBALANCE = 3,
  ABORT_TXN_CLEANUP = 4,
}

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

// Hive 4.x
enum DatabaseType {
  NATIVE = 1,
  REMOTE = 2,
}

// declared by the 2.3 IDL, not used by any call
enum EventRequestType {
  INSERT = 1,
  UPDATE = 2,
  DELETE = 3,
}

enum FileMetadataExprType {
  ORC_SARG = 1,
}

enum FunctionType {
  JAVA = 1,
}

enum GrantRevokeType {
  GRANT = 1,
  REVOKE = 2,
}

enum HiveObjectType {
  GLOBAL = 1,
  DATABASE = 2,
  TABLE = 3,
  PARTITION = 4,
  COLUMN = 5,
  DATACONNECTOR = 6,
}

enum LockLevel {
  DB = 1,
  TABLE = 2,
  PARTITION = 3,
}

enum LockState {
  ACQUIRED = 1,
  WAITING = 2,
  ABORT = 3,
  NOT_ACQUIRED = 4,
}

enum LockType {
  SHARED_READ = 1,
  SHARED_WRITE = 2,
  EXCLUSIVE = 3,
  EXCL_WRITE = 4,
}

enum PartitionEventType {
  LOAD_DONE = 1,
}

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

enum ResourceType {
  JAR = 1,
  FILE = 2,
  ARCHIVE = 3,
}

// Hive 3.x+
enum SerdeType {
  HIVE = 1,
  SCHEMA_REGISTRY = 2,
}

enum TxnState {
  COMMITTED = 1,
  ABORTED = 2,
  OPEN = 3,
}

// Hive 3.x/4.x
enum CompactionMetricsMetricType {
  NUM_OBSOLETE_DELTAS = 0,
  NUM_DELTAS = 1,
  NUM_SMALL_DELTAS = 2,
}

enum GetTablesExtRequestFields {
  ACCESS_TYPE = 1,
  PROCESSOR_CAPABILITIES = 2,
  ALL = 2147483647,
}

enum PartitionFilterMode {
  BY_NAMES = 0,
  BY_VALUES = 1,
  BY_EXPR = 2,
}

enum QueryState {
  INITED = 0,
  EXECUTING = 1,
  FAILED = 2,
  FINISHED = 3,
  TIMED_OUT = 4,
  AUTO_DISABLED = 5,
}

enum ScheduledQueryMaintenanceRequestType {
  CREATE = 1,
  ALTER = 2,
  DROP = 3,
}

enum SchemaCompatibility {
  NONE = 1,
  BACKWARD = 2,
  FORWARD = 3,
  BOTH = 4,
}

enum SchemaType {
  HIVE = 1,
  AVRO = 2,
}

enum SchemaValidation {
  LATEST = 1,
  ALL = 2,
}

enum SchemaVersionState {
  INITIATED = 1,
  START_REVIEW = 2,
  CHANGES_REQUIRED = 3,
  REVIEWED = 4,
  ENABLED = 5,
  DISABLED = 6,
  ARCHIVED = 7,
  DELETED = 8,
}

enum TxnType {
  DEFAULT = 0,
  REPL_CREATED = 1,
  READ_ONLY = 2,
  COMPACTION = 3,
  MATER_VIEW_REBUILD = 4,
  SOFT_DELETE = 5,
  REBALANCE_COMPACTION = 6,
}

enum WMPoolSchedulingPolicy {
  FAIR = 1,
  FIFO = 2,
}

enum WMResourcePlanStatus {
  ACTIVE = 1,
  ENABLED = 2,
  DISABLED = 3,
}

// ---------------------------------------------------------------- structs
// (ordered so that every type is declared before it is used)

struct AbortTxnRequest {
  1: required i64 txnid,
  // Hive 3.x/4.x
  2: optional string replPolicy,
  3: optional TxnType txn_type,
  4: optional i64 errorCode,
}

struct AbortTxnsRequest {
  1: required list<i64> txn_ids,
  // Hive 3.x/4.x
  2: optional i64 errorCode,
}

// HMS 3+ layout (writeid at 2, the rest one id later). A 2.3 client's layout (dbname at 2)
// is told apart on the wire and read through hive_metastore_2_3_wire.thrift.
struct AddDynamicPartitions {
  1: required i64 txnid,
  2: required i64 writeid,
  3: required string dbname,
  4: required string tablename,
  5: required list<string> partitionnames,
  6: optional DataOperationType operationType,
}

struct SQLForeignKey {
  1: string pktable_db,
  2: string pktable_name,
  3: string pkcolumn_name,
  4: string fktable_db,
  5: string fktable_name,
  6: string fkcolumn_name,
  7: i32 key_seq,
  8: i32 update_rule,
  9: i32 delete_rule,
  10: string fk_name,
  11: string pk_name,
  12: bool enable_cstr,
  13: bool validate_cstr,
  14: bool rely_cstr,
  // Hive 3.x/4.x
  15: optional string catName,
}

struct AddForeignKeyRequest {
  1: required list<SQLForeignKey> foreignKeyCols,
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment,
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string, string> parameters,
  // Hive 3.x+
  4: optional string description,
  5: optional string serializerClass,
  6: optional string deserializerClass,
  7: optional SerdeType serdeType,
}

struct Order {
  1: string col,
  2: i32 order,
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>, string> skewedColValueLocationMaps,
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string, string> parameters,
  11: optional SkewedInfo skewedInfo,
  12: optional bool storedAsSubDirectories,
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: PrincipalType grantorType,
  5: bool grantOption,
}

struct PrincipalPrivilegeSet {
  1: map<string, list<PrivilegeGrantInfo>> userPrivileges,
  2: map<string, list<PrivilegeGrantInfo>> groupPrivileges,
  3: map<string, list<PrivilegeGrantInfo>> rolePrivileges,
}

struct ColumnStatisticsDesc {
  1: required bool isTblLevel,
  2: required string dbName,
  3: required string tableName,
  4: optional string partName,
  5: optional i64 lastAnalyzed,
  6: optional string catName,
}

struct BooleanColumnStatsData {
  1: required i64 numTrues,
  2: required i64 numFalses,
  3: required i64 numNulls,
  4: optional string bitVectors,
}

struct LongColumnStatsData {
  1: optional i64 lowValue,
  2: optional i64 highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
  // Hive 3.x/4.x
  6: optional binary histogram,
}

struct DoubleColumnStatsData {
  1: optional double lowValue,
  2: optional double highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
  // Hive 3.x/4.x
  6: optional binary histogram,
}

struct StringColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

struct BinaryColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: optional string bitVectors,
}

struct Decimal {
  1: required binary unscaled,
  3: required i16 scale,
}

struct DecimalColumnStatsData {
  1: optional Decimal lowValue,
  2: optional Decimal highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
  // Hive 3.x/4.x
  6: optional binary histogram,
}

struct Date {
  1: required i64 daysSinceEpoch,
}

struct DateColumnStatsData {
  1: optional Date lowValue,
  2: optional Date highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
  // Hive 3.x/4.x
  6: optional binary histogram,
}

union ColumnStatisticsData {
  1: BooleanColumnStatsData booleanStats,
  2: LongColumnStatsData longStats,
  3: DoubleColumnStatsData doubleStats,
  4: StringColumnStatsData stringStats,
  5: BinaryColumnStatsData binaryStats,
  6: DecimalColumnStatsData decimalStats,
  7: DateColumnStatsData dateStats,
  // Hive 3.x/4.x
  8: optional TimestampColumnStatsData timestampStats,
}

struct ColumnStatisticsObj {
  1: required string colName,
  2: required string colType,
  3: required ColumnStatisticsData statsData,
}

struct ColumnStatistics {
  1: required ColumnStatisticsDesc statsDesc,
  2: required list<ColumnStatisticsObj> statsObj,
  // Hive 3.x/4.x
  3: optional bool isStatsCompliant,
  4: optional string engine,
}

struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string, string> parameters,
  8: optional PrincipalPrivilegeSet privileges,
  9: optional string catName,
  // Hive 4.x (id 13, fileMetadata, is not declared here)
  10: optional i64 writeId = -1,
  11: optional bool isStatsCompliant,
  12: optional ColumnStatistics colStats,
  // Hive 3.x/4.x
  13: optional FileMetadata fileMetadata,
}

struct EnvironmentContext {
  1: map<string, string> properties,
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult = true,
  6: optional string catName,
  // Hive 4.x
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition,
  9: optional list<FieldSchema> partitionColSchema,
  10: optional EnvironmentContext environmentContext,
}

struct AddPartitionsResult {
  1: optional list<Partition> partitions,
  // Hive 4.x
  2: optional bool isStatsCompliant,
  3: optional list<FieldSchema> partitionColSchema,
}

struct SQLPrimaryKey {
  1: string table_db,
  2: string table_name,
  3: string column_name,
  4: i32 key_seq,
  5: string pk_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
  // Hive 3.x/4.x
  9: optional string catName,
}

struct AddPrimaryKeyRequest {
  1: required list<SQLPrimaryKey> primaryKeyCols,
}

struct AggrStats {
  1: required list<ColumnStatisticsObj> colStats,
  2: required i64 partsFound,
  // Hive 3.x/4.x
  3: optional bool isStatsCompliant,
}

struct CacheFileMetadataRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional string partName,
  4: optional bool isAllParts,
}

struct CacheFileMetadataResult {
  1: required bool isSupported,
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: optional i64 txnid,
  3: optional i64 elapsed_ms,
}

struct ClearFileMetadataRequest {
  1: required list<i64> fileIds,
}

struct ClearFileMetadataResult {
}

struct ClientCapabilities {
  1: required list<ClientCapability> values,
}

struct CommitTxnRequest {
  1: required i64 txnid,
  // Hive 3.x/4.x
  2: optional string replPolicy,
  3: optional list<WriteEventInfo> writeEventInfos,
  4: optional ReplLastIdInfo replLastIdInfo,
  5: optional CommitTxnKeyValue keyValue,
  6: optional bool exclWriteEnabled,
  7: optional TxnType txn_type,
}

struct CompactionRequest {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: optional string runas,
  6: optional map<string, string> properties,
  // Hive 3.x/4.x
  7: optional string initiatorId,
  8: optional string initiatorVersion,
  9: optional string poolName,
  10: optional i32 numberOfBuckets,
  11: optional string orderByClause,
}

struct CompactionResponse {
  1: required i64 id,
  2: required string state,
  3: required bool accepted,
  // Hive 3.x/4.x
  4: optional string errormessage,
}

struct CurrentNotificationEventId {
  1: required i64 eventId,
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string, string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
  // Hive 4.x
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional DatabaseType type,
  12: optional string connector_name,
  13: optional string remote_dbname,
}

struct DropConstraintRequest {
  1: required string dbname,
  2: required string tablename,
  3: required string constraintname,
  // Hive 3.x/4.x
  4: optional string catName,
}

struct DropPartitionsExpr {
  1: required binary expr,
  2: optional i32 partArchiveLevel,
}

union RequestPartsSpec {
  1: list<string> names,
  2: list<DropPartitionsExpr> exprs,
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: optional bool deleteData,
  5: optional bool ifExists = true,
  6: optional bool ignoreProtection,
  7: optional EnvironmentContext environmentContext,
  8: optional bool needResult = true,
  9: optional string catName,
  // Hive 4.x
  10: optional bool skipColumnSchemaForPartition,
}

struct DropPartitionsResult {
  1: optional list<Partition> partitions,
}

// HMS 3+ layout (replace at 1, files at 2). A 2.3 client's layout (files at 1) is told apart
// on the wire and read through hive_metastore_2_3_wire.thrift.
struct InsertEventRequestData {
  1: optional bool replace,
  2: required list<string> filesAdded,
  3: optional list<string> filesAddedChecksum,
  4: optional list<string> subDirectoryList,
  5: optional list<string> partitionVal,
}

union FireEventRequestData {
  1: InsertEventRequestData insertData,
  // Hive 3.x/4.x
  2: optional list<InsertEventRequestData> insertDatas,
  3: optional bool refreshEvent,
}

struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: optional string dbName,
  4: optional string tableName,
  5: optional list<string> partitionVals,
  // Hive 3.x/4.x
  6: optional string catName,
  7: optional map<string, string> tblParams,
}

struct FireEventResponse {
  1: list<i64> eventIds,  // 4.x: the ids of the events recorded
}

struct ForeignKeysRequest {
  1: string parent_db_name,
  2: string parent_tbl_name,
  3: string foreign_db_name,
  4: string foreign_tbl_name,
  // Hive 3.x/4.x
  5: optional string catName,
  6: optional string validWriteIdList,
  7: optional i64 tableId,
}

struct ForeignKeysResponse {
  1: required list<SQLForeignKey> foreignKeys,
}

struct ResourceUri {
  1: ResourceType resourceType,
  2: string uri,
}

struct Function {
  1: string functionName,
  2: string dbName,
  3: string className,
  4: string ownerName,
  5: PrincipalType ownerType,
  6: i32 createTime,
  7: FunctionType functionType,
  8: list<ResourceUri> resourceUris,
  9: optional string catName,
}

struct GetAllFunctionsResponse {
  1: optional list<Function> functions,
}

// Hive 4.x
struct GetDatabaseRequest {
  1: optional string name,
  2: optional string catalogName,
  3: optional list<string> processorCapabilities,
  4: optional string processorIdentifier,
}

struct GetFileMetadataByExprRequest {
  1: required list<i64> fileIds,
  2: required binary expr,
  3: optional bool doGetFooters,
  4: optional FileMetadataExprType type,
}

struct MetadataPpdResult {
  1: optional binary metadata,
  2: optional binary includeBitset,
}

struct GetFileMetadataByExprResult {
  1: required map<i64, MetadataPpdResult> metadata,
  2: required bool isSupported,
}

struct GetFileMetadataRequest {
  1: required list<i64> fileIds,
}

struct GetFileMetadataResult {
  1: required map<i64, binary> metadata,
  2: required bool isSupported,
}

struct TxnInfo {
  1: required i64 id,
  2: required TxnState state,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo = "Unknown",
  6: optional i32 heartbeatCount = 0,
  7: optional string metaInfo,
  8: optional i64 startedTime,
  9: optional i64 lastHeartbeatTime,
}

struct GetOpenTxnsInfoResponse {
  1: required i64 txn_high_water_mark,
  2: required list<TxnInfo> open_txns,
}

// HMS 3+ layout (a list, and abortedBits). A 2.3 client reads a set and no abortedBits: see
// hive_metastore_2_3_wire.thrift and docs/clients.md for how each connection gets its shape.
struct GetOpenTxnsResponse {
  1: required i64 txn_high_water_mark,
  2: required list<i64> open_txns,
  3: optional i64 min_open_txn,
  4: required binary abortedBits,
}

// Hive 4.x
struct GetPartitionNamesPsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional list<string> partValues,
  5: optional i16 maxParts = -1,
  6: optional string validWriteIdList,
  7: optional i64 id = -1,
}

// Hive 4.x
struct GetPartitionNamesPsResponse {
  1: required list<string> names,
}

// Hive 4.x
struct GetPartitionsByFilterRequest {
  1: optional string catName,
  2: string dbName,
  3: string tblName,
  4: string filter,
  5: optional i16 maxParts = -1,
  6: optional bool skipColumnSchemaForPartition,
  7: optional string includeParamKeyPattern,
  8: optional string excludeParamKeyPattern,
}

// Hive 4.x
struct GetPartitionsByNamesRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: optional list<string> names,
  4: optional bool get_col_stats,
  5: optional list<string> processorCapabilities,
  6: optional string processorIdentifier,
  7: optional string engine,
  8: optional string validWriteIdList,
  9: optional bool getFileMetadata,
  10: optional i64 id = -1,
  11: optional bool skipColumnSchemaForPartition,
  12: optional string includeParamKeyPattern,
  13: optional string excludeParamKeyPattern,
}

// Hive 4.x (field 2, dictionary, is not declared here)
struct GetPartitionsByNamesResult {
  1: required list<Partition> partitions,
  // Hive 3.x/4.x
  2: optional ObjectDictionary dictionary,
}

// Hive 4.x
struct GetPartitionsPsWithAuthRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional list<string> partVals,
  5: optional i16 maxParts = -1,
  6: optional string userName,
  7: optional list<string> groupNames,
  8: optional string validWriteIdList,
  9: optional i64 id = -1,
  10: optional bool skipColumnSchemaForPartition,
  11: optional string includeParamKeyPattern,
  12: optional string excludeParamKeyPattern,
  13: optional list<string> partNames,
}

// Hive 4.x
struct GetPartitionsPsWithAuthResponse {
  1: required list<Partition> partitions,
}

struct GetPrincipalsInRoleRequest {
  1: required string roleName,
}

struct RolePrincipalGrant {
  1: string roleName,
  2: string principalName,
  3: PrincipalType principalType,
  4: bool grantOption,
  5: i32 grantTime,
  6: string grantorName,
  7: PrincipalType grantorPrincipalType,
}

struct GetPrincipalsInRoleResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GetRoleGrantsForPrincipalRequest {
  1: required string principal_name,
  2: required PrincipalType principal_type,
}

struct GetRoleGrantsForPrincipalResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional ClientCapabilities capabilities,
  // Hive 3.x/4.x (id 5 is unused)
  4: optional string catName,
  6: optional string validWriteIdList,
  7: optional bool getColumnStats,
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string engine = "hive",
  11: optional i64 id = -1,
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string, string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  13: optional PrincipalPrivilegeSet privileges,
  14: optional bool temporary = false,
  15: optional bool rewriteEnabled,
  // Id 16 is HMS 4's creationMetadata (a materialized view's), a struct. HMS 2.3.10 has a
  // catName string there: a 2.3.10 client's is skipped (its catalog is named by the call or
  // is hive), and ours, absent from every table but a materialized view, is skipped by it.
  16: optional CreationMetadata creationMetadata,
  // Hive 3.x/4.x
  17: optional string catName,
  18: optional PrincipalType ownerType = PrincipalType.USER,
  19: optional i64 writeId = -1,
  20: optional bool isStatsCompliant,
  21: optional ColumnStatistics colStats,
  22: optional i8 accessType,
  23: optional list<string> requiredReadCapabilities,
  24: optional list<string> requiredWriteCapabilities,
  25: optional i64 id,
  28: optional i64 txnId,
  // Hive 3.x/4.x
  26: optional FileMetadata fileMetadata,
  27: optional ObjectDictionary dictionary,
}

struct GetTableResult {
  1: required Table table,
  // Hive 4.x
  2: optional bool isStatsCompliant,
}

struct GetTablesRequest {
  1: required string dbName,
  2: optional list<string> tblNames,
  3: optional ClientCapabilities capabilities,
  // Hive 3.x/4.x
  4: optional string catName,
  5: optional list<string> processorCapabilities,
  6: optional string processorIdentifier,
  7: optional GetProjectionsSpec projectionSpec,
  8: optional string tablesPattern,
}

struct GetTablesResult {
  1: required list<Table> tables,
}

struct HiveObjectRef {
  1: HiveObjectType objectType,
  2: string dbName,
  3: string objectName,
  4: list<string> partValues,
  5: string columnName,
  6: optional string catName,
}

struct HiveObjectPrivilege {
  1: HiveObjectRef hiveObject,
  2: string principalName,
  3: PrincipalType principalType,
  4: PrivilegeGrantInfo grantInfo,
  // Hive 3.x/4.x
  5: string authorizer,
}

struct PrivilegeBag {
  1: list<HiveObjectPrivilege> privileges,
}

struct GrantRevokePrivilegeRequest {
  1: GrantRevokeType requestType,
  2: PrivilegeBag privileges,
  3: optional bool revokeGrantOption,
}

struct GrantRevokePrivilegeResponse {
  1: optional bool success,
}

struct GrantRevokeRoleRequest {
  1: GrantRevokeType requestType,
  2: string roleName,
  3: string principalName,
  4: PrincipalType principalType,
  5: optional string grantor,
  6: optional PrincipalType grantorType,
  7: optional bool grantOption,
}

struct GrantRevokeRoleResponse {
  1: optional bool success,
}

struct HeartbeatRequest {
  1: optional i64 lockid,
  2: optional i64 txnid,
}

struct HeartbeatTxnRangeRequest {
  1: required i64 min,
  2: required i64 max,
}

struct HeartbeatTxnRangeResponse {
  1: required set<i64> aborted,
  2: required set<i64> nosuch,
}

struct Index {
  1: string indexName,
  2: string indexHandlerClass,
  3: string dbName,
  4: string origTableName,
  5: i32 createTime,
  6: i32 lastAccessTime,
  7: string indexTableName,
  8: StorageDescriptor sd,
  9: map<string, string> parameters,
  10: bool deferredRebuild,
}

struct LockComponent {
  1: required LockType type,
  2: required LockLevel level,
  3: required string dbname,
  4: optional string tablename,
  5: optional string partitionname,
  6: optional DataOperationType operationType = DataOperationType.UNSET,
  7: optional bool isAcid = false,
  8: optional bool isDynamicPartitionWrite = false,
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: optional i64 txnid,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo = "Unknown",
  // Hive 3.x/4.x
  6: optional bool zeroWaitReadEnabled,
  7: optional bool exclusiveCTAS,
  8: optional bool locklessReadsEnabled,
}

struct LockResponse {
  1: required i64 lockid,
  2: required LockState state,
  // Hive 3.x/4.x
  3: optional string errorMessage,
}

struct NotificationEvent {
  1: required i64 eventId,
  2: required i32 eventTime,
  3: required string eventType,
  4: optional string dbName,
  5: optional string tableName,
  6: required string message,
  7: optional string messageFormat,
  8: optional string catName,  // 3.x+
}

struct NotificationEventRequest {
  1: required i64 lastEvent,
  2: optional i32 maxEvents,
  // 4.x: filters a replication client applies on the server.
  3: optional list<string> eventTypeSkipList,
  4: optional string catName,
  5: optional string dbName,
  6: optional list<string> tableNames,
}

// 3.x+: how many events of a database lie in an id range.
struct NotificationEventsCountRequest {
  1: required i64 fromEventId,
  2: required string dbName,
  3: optional string catName,
  4: optional i64 toEventId,
  5: optional i64 limit,
  6: optional list<string> tableNames,
}

struct NotificationEventsCountResponse {
  1: required i64 eventsCount,
}

struct NotificationEventResponse {
  1: required list<NotificationEvent> events,
}

struct OpenTxnRequest {
  1: required i32 num_txns,
  2: required string user,
  3: required string hostname,
  4: optional string agentInfo = "Unknown",
  // Hive 3.x/4.x
  5: optional string replPolicy,
  6: optional list<i64> replSrcTxnIds,
  7: optional TxnType txn_type,
}

struct OpenTxnsResponse {
  1: required list<i64> txn_ids,
}

struct PartitionListComposingSpec {
  1: list<Partition> partitions,
}

struct PartitionWithoutSD {
  1: list<string> values,
  2: i32 createTime,
  3: i32 lastAccessTime,
  4: string relativePath,
  5: map<string, string> parameters,
  6: optional PrincipalPrivilegeSet privileges,
}

struct PartitionSpecWithSharedSD {
  1: list<PartitionWithoutSD> partitions,
  2: StorageDescriptor sd,
}

struct PartitionSpec {
  1: string dbName,
  2: string tableName,
  3: string rootPath,
  4: optional PartitionSpecWithSharedSD sharedSDPartitionSpec,
  5: optional PartitionListComposingSpec partitionList,
  6: optional string catName,
  // Hive 3.x/4.x
  7: optional i64 writeId,
  8: optional bool isStatsCompliant,
}

struct PartitionValuesRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<FieldSchema> partitionKeys,
  4: optional bool applyDistinct = true,
  5: optional string filter,
  6: optional list<FieldSchema> partitionOrder,
  7: optional bool ascending = true,
  8: optional i64 maxParts = -1,
  9: optional string catName,
  // Hive 4.x
  10: optional string validWriteIdList,
}

struct PartitionValuesRow {
  1: required list<string> row,
}

struct PartitionValuesResponse {
  1: required list<PartitionValuesRow> partitionValues,
}

struct PartitionsByExprRequest {
  1: required string dbName,
  2: required string tblName,
  3: required binary expr,
  4: optional string defaultPartitionName,
  5: optional i16 maxParts = -1,
  6: optional string catName,
  // Hive 4.x
  7: optional string order,
  8: optional string validWriteIdList,
  9: optional i64 id = -1,
  10: optional bool skipColumnSchemaForPartition,
  11: optional string includeParamKeyPattern,
  12: optional string excludeParamKeyPattern,
}

struct PartitionsByExprResult {
  1: required list<Partition> partitions,
  2: required bool hasUnknownPartitions,
}

// Hive 4.x
struct PartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional i16 maxParts = -1,
  5: optional string validWriteIdList,
  6: optional i64 id = -1,
  7: optional bool skipColumnSchemaForPartition,
  8: optional string includeParamKeyPattern,
  9: optional string excludeParamKeyPattern,
}

// Hive 4.x
struct PartitionsResponse {
  1: required list<Partition> partitions,
}

// Hive 4.x
struct PartitionsSpecByExprResult {
  1: required list<PartitionSpec> partitionsSpec,
  2: required bool hasUnknownPartitions,
}

struct PartitionsStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: required list<string> partNames,
  5: optional string catName,
  // Hive 3.x/4.x
  6: optional string validWriteIdList,
  7: optional string engine,
}

struct PartitionsStatsResult {
  1: required map<string, list<ColumnStatisticsObj>> partStats,
  // Hive 3.x/4.x
  2: optional bool isStatsCompliant,
}

struct PrimaryKeysRequest {
  1: required string db_name,
  2: required string tbl_name,
  // Hive 3.x/4.x
  3: optional string catName,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct PrimaryKeysResponse {
  1: required list<SQLPrimaryKey> primaryKeys,
}

struct PutFileMetadataRequest {
  1: required list<i64> fileIds,
  2: required list<binary> metadata,
  3: optional FileMetadataExprType type,
}

struct PutFileMetadataResult {
}

struct Role {
  1: string roleName,
  2: i32 createTime,
  3: string ownerName,
}

// declared by the 2.3 IDL, not used by any call
struct Schema {
  1: list<FieldSchema> fieldSchemas,
  2: map<string,string> properties,
}

struct SetPartitionsStatsRequest {
  1: required list<ColumnStatistics> colStats,
  2: optional bool needMerge,
  // Hive 3.x/4.x
  3: optional i64 writeId,
  4: optional string validWriteIdList,
  5: optional string engine,
}

struct ShowCompactRequest {
  // Hive 3.x/4.x
  1: optional i64 id,
  2: optional string poolName,
  3: optional string dbName,
  4: optional string tbName,
  5: optional string partName,
  6: optional CompactionType type,
  7: optional string state,
  8: optional i64 limit,
  9: optional string order,
}

struct ShowCompactResponseElement {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: required string state,
  6: optional string workerid,
  7: optional i64 start,
  8: optional string runAs,
  9: optional i64 hightestTxnId,
  10: optional string metaInfo,
  11: optional i64 endTime,
  12: optional string hadoopJobId = "None",
  13: optional i64 id,
  // Hive 3.x/4.x
  14: optional string errorMessage,
  15: optional i64 enqueueTime,
  16: optional string workerVersion,
  17: optional string initiatorId,
  18: optional string initiatorVersion,
  19: optional i64 cleanerStart,
  20: optional string poolName,
  21: optional i64 nextTxnId,
  22: optional i64 txnId,
  23: optional i64 commitTime,
  24: optional i64 hightestWriteId,
}

struct ShowCompactResponse {
  1: required list<ShowCompactResponseElement> compacts,
}

struct ShowLocksRequest {
  1: optional string dbname,
  2: optional string tablename,
  3: optional string partname,
  4: optional bool isExtended = false,
  // Hive 3.x/4.x
  5: optional i64 txnid,
}

struct ShowLocksResponseElement {
  1: required i64 lockid,
  2: required string dbname,
  3: optional string tablename,
  4: optional string partname,
  5: required LockState state,
  6: required LockType type,
  7: optional i64 txnid,
  8: required i64 lastheartbeat,
  9: optional i64 acquiredat,
  10: required string user,
  11: required string hostname,
  12: optional i32 heartbeatCount = 0,
  13: optional string agentInfo,
  14: optional i64 blockedByExtId,
  15: optional i64 blockedByIntId,
  16: optional i64 lockIdInternal,
}

struct ShowLocksResponse {
  1: list<ShowLocksResponseElement> locks,
}

struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: optional string comments,
  // Hive 3.x/4.x
  5: optional string catName,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
}

struct TableStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  // Hive 3.x/4.x
  4: optional string catName,
  5: optional string validWriteIdList,
  6: optional string engine,
  7: optional i64 id,
}

struct TableStatsResult {
  1: required list<ColumnStatisticsObj> tableStats,
  // Hive 3.x/4.x
  2: optional bool isStatsCompliant,
}

struct Type {
  1: string name,
  2: optional string type1,
  3: optional string type2,
  4: optional list<FieldSchema> fields,
}

struct UnlockRequest {
  1: required i64 lockid,
}

// declared by the 2.3 IDL, not used by any call
struct Version {
  1: string version,
  2: string comments,
}

exception AlreadyExistsException {
  1: string message,
}

exception ConfigValSecurityException {
  1: string message,
}

// declared by the 2.3 IDL, not thrown by any call
exception IndexAlreadyExistsException {
  1: string message,
}

exception InvalidInputException {
  1: string message,
}

exception InvalidObjectException {
  1: string message,
}

exception InvalidOperationException {
  1: string message,
}

exception InvalidPartitionException {
  1: string message,
}

exception MetaException {
  1: string message,
}

exception NoSuchLockException {
  1: string message,
}

exception NoSuchObjectException {
  1: string message,
}

exception NoSuchTxnException {
  1: string message,
}

exception TxnAbortedException {
  1: string message,
}

exception TxnOpenException {
  1: string message,
}

exception UnknownDBException {
  1: string message,
}

exception UnknownPartitionException {
  1: string message,
}

exception UnknownTableException {
  1: string message,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: catalogs

struct Catalog {
  1: string name,
  2: optional string description,
  3: string locationUri,
  4: optional i32 createTime,
}

struct AlterCatalogRequest {
  1: string name,
  2: Catalog newCat,
}

struct CreateCatalogRequest {
  1: Catalog catalog,
}

struct DropCatalogRequest {
  1: string name,
}

struct GetCatalogRequest {
  1: string name,
}

struct GetCatalogResponse {
  1: Catalog catalog,
}

struct GetCatalogsResponse {
  1: list<string> names,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: data connectors

struct DataConnector {
  1: string name,
  2: string type,
  3: string url,
  4: optional string description,
  5: optional map<string, string> parameters,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional i32 createTime,
}

struct AlterDataConnectorRequest {
  1: required string connectorName,
  2: required DataConnector newConnector,
}

struct CreateDataConnectorRequest {
  1: required DataConnector connector,
}

struct DropDataConnectorRequest {
  1: required string connectorName,
  2: optional bool ifNotExists,
  3: optional bool checkReferences,
}

struct GetDataConnectorRequest {
  1: required string connectorName,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: compactions

struct AbortCompactionResponseElement {
  1: required i64 compactionId,
  2: optional string status,
  3: optional string message,
}

struct AbortCompactResponse {
  1: required map<i64, AbortCompactionResponseElement> abortedcompacts,
}

struct AbortCompactionRequest {
  1: required list<i64> compactionIds,
  2: optional string type,
  3: optional string poolName,
}

exception CompactionAbortedException {
  1: string message,
}

struct CompactionInfoStruct {
  1: required i64 id,
  2: required string dbname,
  3: required string tablename,
  4: optional string partitionname,
  5: required CompactionType type,
  6: optional string runas,
  7: optional string properties,
  8: optional bool toomanyaborts,
  9: optional string state,
  10: optional string workerId,
  11: optional i64 start,
  12: optional i64 highestWriteId,
  13: optional string errorMessage,
  14: optional bool hasoldabort,
  15: optional i64 enqueueTime,
  16: optional i64 retryRetention,
  17: optional string poolname,
  18: optional i32 numberOfBuckets,
  19: optional string orderByClause,
}

struct CompactionMetricsDataRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional string partitionName,
  4: required CompactionMetricsMetricType type,
}

struct CompactionMetricsDataStruct {
  1: required string dbname,
  2: required string tblname,
  3: optional string partitionname,
  4: required CompactionMetricsMetricType type,
  5: required i32 metricvalue,
  6: required i32 version,
  7: required i32 threshold,
}

struct CompactionMetricsDataResponse {
  1: optional CompactionMetricsDataStruct data,
}

struct FindNextCompactRequest {
  1: optional string workerId,
  2: optional string workerVersion,
  3: optional string poolName,
}

struct GetLatestCommittedCompactionInfoRequest {
  1: required string dbname,
  2: required string tablename,
  3: optional list<string> partitionnames,
  4: optional i64 lastCompactionId,
}

struct GetLatestCommittedCompactionInfoResponse {
  1: required list<CompactionInfoStruct> compactions,
}

exception NoSuchCompactionException {
  1: string message,
}

struct OptionalCompactionInfoStruct {
  1: optional CompactionInfoStruct ci,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: write ids, transactions and the write notification log

struct TxnToWriteId {
  1: required i64 txnId,
  2: required i64 writeId,
}

struct AllocateTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: optional list<i64> txnIds,
  4: optional string replPolicy,
  5: optional list<TxnToWriteId> srcTxnToWriteIdList,
  6: optional bool reallocate,
}

struct AllocateTableWriteIdsResponse {
  1: required list<TxnToWriteId> txnToWriteIds,
}

struct BasicTxnInfo {
  1: required bool isnull,
  2: optional i64 time,
  3: optional i64 txnid,
  4: optional string dbname,
  5: optional string tablename,
  6: optional string partitionname,
}

struct CommitTxnKeyValue {
  1: required i64 tableId,
  2: required string key,
  3: required string value,
}

struct GetAllWriteEventInfoRequest {
  1: required i64 txnId,
  2: optional string dbName,
  3: optional string tableName,
}

struct GetOpenTxnsRequest {
  1: optional list<TxnType> excludeTxnTypes,
}

struct GetValidWriteIdsRequest {
  1: required list<string> fullTableNames,
  2: optional string validTxnList,
  3: optional i64 writeId,
}

struct TableValidWriteIds {
  1: required string fullTableName,
  2: required i64 writeIdHighWaterMark,
  3: required list<i64> invalidWriteIds,
  4: optional i64 minOpenWriteId,
  5: required binary abortedBits,
}

struct GetValidWriteIdsResponse {
  1: required list<TableValidWriteIds> tblValidWriteIds,
}

struct MaxAllocatedTableWriteIdRequest {
  1: required string dbName,
  2: required string tableName,
}

struct MaxAllocatedTableWriteIdResponse {
  1: required i64 maxWriteId,
}

struct ReplLastIdInfo {
  1: required string database,
  2: required i64 lastReplId,
  3: optional string table,
  4: optional string catalog,
  5: optional list<string> partitionList,
}

struct ReplTblWriteIdStateRequest {
  1: required string validWriteIdlist,
  2: required string user,
  3: required string hostName,
  4: required string dbName,
  5: required string tableName,
  6: optional list<string> partNames,
}

struct SeedTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: required i64 seedWriteId,
}

struct SeedTxnIdRequest {
  1: required i64 seedTxnId,
}

struct UpdateTransactionalStatsRequest {
  1: required i64 tableId,
  2: required i64 insertCount,
  3: required i64 updatedCount,
  4: required i64 deletedCount,
}

struct WriteEventInfo {
  1: required i64 writeId,
  2: required string database,
  3: required string table,
  4: required string files,
  5: optional string partition,
  6: optional string tableObj,
  7: optional string partitionObj,
}

struct WriteNotificationLogRequest {
  1: required i64 txnId,
  2: required i64 writeId,
  3: required string db,
  4: required string table,
  5: required InsertEventRequestData fileInfo,
  6: optional list<string> partitionVals,
}

struct WriteNotificationLogBatchRequest {
  1: required string catalog,
  2: required string db,
  3: required string table,
  4: required list<WriteNotificationLogRequest> requestList,
}

struct WriteNotificationLogBatchResponse {

}

struct WriteNotificationLogResponse {

}

// ---------------------------------------------------------------- Hive 3.x/4.x: constraints

struct SQLCheckConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string check_expression,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct AddCheckConstraintRequest {
  1: required list<SQLCheckConstraint> checkConstraintCols,
}

struct SQLDefaultConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string default_value,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct AddDefaultConstraintRequest {
  1: required list<SQLDefaultConstraint> defaultConstraintCols,
}

struct SQLNotNullConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string nn_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
}

struct AddNotNullConstraintRequest {
  1: required list<SQLNotNullConstraint> notNullConstraintCols,
}

struct SQLUniqueConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: i32 key_seq,
  6: string uk_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct AddUniqueConstraintRequest {
  1: required list<SQLUniqueConstraint> uniqueConstraintCols,
}

struct AllTableConstraintsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required string catName,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct SQLAllTableConstraints {
  1: optional list<SQLPrimaryKey> primaryKeys,
  2: optional list<SQLForeignKey> foreignKeys,
  3: optional list<SQLUniqueConstraint> uniqueConstraints,
  4: optional list<SQLNotNullConstraint> notNullConstraints,
  5: optional list<SQLDefaultConstraint> defaultConstraints,
  6: optional list<SQLCheckConstraint> checkConstraints,
}

struct AllTableConstraintsResponse {
  1: required SQLAllTableConstraints allTableConstraints,
}

struct CheckConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct CheckConstraintsResponse {
  1: required list<SQLCheckConstraint> checkConstraints,
}

struct DefaultConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct DefaultConstraintsResponse {
  1: required list<SQLDefaultConstraint> defaultConstraints,
}

struct NotNullConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct NotNullConstraintsResponse {
  1: required list<SQLNotNullConstraint> notNullConstraints,
}

struct UniqueConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId,
}

struct UniqueConstraintsResponse {
  1: required list<SQLUniqueConstraint> uniqueConstraints,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: schema registry (ISchema), schema versions and serdes

struct ISchema {
  1: SchemaType schemaType,
  2: string name,
  3: string catName,
  4: string dbName,
  5: SchemaCompatibility compatibility,
  6: SchemaValidation validationLevel,
  7: bool canEvolve,
  8: optional string schemaGroup,
  9: optional string description,
}

struct ISchemaName {
  1: string catName,
  2: string dbName,
  3: string schemaName,
}

struct AlterISchemaRequest {
  1: ISchemaName name,
  3: ISchema newSchema,
}

struct SchemaVersionDescriptor {
  1: ISchemaName schema,
  2: i32 version,
}

struct FindSchemasByColsResp {
  1: list<SchemaVersionDescriptor> schemaVersions,
}

struct FindSchemasByColsRqst {
  1: optional string colName,
  2: optional string colNamespace,
  3: optional string type,
}

struct GetSerdeRequest {
  1: string serdeName,
}

struct MapSchemaVersionToSerdeRequest {
  1: SchemaVersionDescriptor schemaVersion,
  2: string serdeName,
}

struct SchemaVersion {
  1: ISchemaName schema,
  2: i32 version,
  3: i64 createdAt,
  4: list<FieldSchema> cols,
  5: optional SchemaVersionState state,
  6: optional string description,
  7: optional string schemaText,
  8: optional string fingerprint,
  9: optional string name,
  10: optional SerDeInfo serDe,
}

struct SetSchemaVersionStateRequest {
  1: SchemaVersionDescriptor schemaVersion,
  2: SchemaVersionState state,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: workload management

struct WMNullablePool {
  1: required string resourcePlanName,
  2: required string poolPath,
  3: optional double allocFraction,
  4: optional i32 queryParallelism,
  5: optional string schedulingPolicy,
  6: optional bool isSetSchedulingPolicy,
  7: optional string ns,
}

struct WMAlterPoolRequest {
  1: optional WMNullablePool pool,
  2: optional string poolPath,
}

struct WMAlterPoolResponse {

}

struct WMNullableResourcePlan {
  1: optional string name,
  2: optional WMResourcePlanStatus status,
  4: optional i32 queryParallelism,
  5: optional bool isSetQueryParallelism,
  6: optional string defaultPoolPath,
  7: optional bool isSetDefaultPoolPath,
  8: optional string ns,
}

struct WMAlterResourcePlanRequest {
  1: optional string resourcePlanName,
  2: optional WMNullableResourcePlan resourcePlan,
  3: optional bool isEnableAndActivate,
  4: optional bool isForceDeactivate,
  5: optional bool isReplace,
  6: optional string ns,
}

struct WMMapping {
  1: required string resourcePlanName,
  2: required string entityType,
  3: required string entityName,
  4: optional string poolPath,
  5: optional i32 ordering,
  6: optional string ns,
}

struct WMPool {
  1: required string resourcePlanName,
  2: required string poolPath,
  3: optional double allocFraction,
  4: optional i32 queryParallelism,
  5: optional string schedulingPolicy,
  6: optional string ns,
}

struct WMPoolTrigger {
  1: required string pool,
  2: required string trigger,
  3: optional string ns,
}

struct WMResourcePlan {
  1: required string name,
  2: optional WMResourcePlanStatus status,
  3: optional i32 queryParallelism,
  4: optional string defaultPoolPath,
  5: optional string ns,
}

struct WMTrigger {
  1: required string resourcePlanName,
  2: required string triggerName,
  3: optional string triggerExpression,
  4: optional string actionExpression,
  5: optional bool isInUnmanaged,
  6: optional string ns,
}

struct WMFullResourcePlan {
  1: required WMResourcePlan plan,
  2: required list<WMPool> pools,
  3: optional list<WMMapping> mappings,
  4: optional list<WMTrigger> triggers,
  5: optional list<WMPoolTrigger> poolTriggers,
}

struct WMAlterResourcePlanResponse {
  1: optional WMFullResourcePlan fullResourcePlan,
}

struct WMAlterTriggerRequest {
  1: optional WMTrigger trigger,
}

struct WMAlterTriggerResponse {

}

struct WMCreateOrDropTriggerToPoolMappingRequest {
  1: optional string resourcePlanName,
  2: optional string triggerName,
  3: optional string poolPath,
  4: optional bool drop,
  5: optional string ns,
}

struct WMCreateOrDropTriggerToPoolMappingResponse {

}

struct WMCreateOrUpdateMappingRequest {
  1: optional WMMapping mapping,
  2: optional bool update,
}

struct WMCreateOrUpdateMappingResponse {

}

struct WMCreatePoolRequest {
  1: optional WMPool pool,
}

struct WMCreatePoolResponse {

}

struct WMCreateResourcePlanRequest {
  1: optional WMResourcePlan resourcePlan,
  2: optional string copyFrom,
}

struct WMCreateResourcePlanResponse {

}

struct WMCreateTriggerRequest {
  1: optional WMTrigger trigger,
}

struct WMCreateTriggerResponse {

}

struct WMDropMappingRequest {
  1: optional WMMapping mapping,
}

struct WMDropMappingResponse {

}

struct WMDropPoolRequest {
  1: optional string resourcePlanName,
  2: optional string poolPath,
  3: optional string ns,
}

struct WMDropPoolResponse {

}

struct WMDropResourcePlanRequest {
  1: optional string resourcePlanName,
  2: optional string ns,
}

struct WMDropResourcePlanResponse {

}

struct WMDropTriggerRequest {
  1: optional string resourcePlanName,
  2: optional string triggerName,
  3: optional string ns,
}

struct WMDropTriggerResponse {

}

struct WMGetActiveResourcePlanRequest {
  1: optional string ns,
}

struct WMGetActiveResourcePlanResponse {
  1: optional WMFullResourcePlan resourcePlan,
}

struct WMGetAllResourcePlanRequest {
  1: optional string ns,
}

struct WMGetAllResourcePlanResponse {
  1: optional list<WMResourcePlan> resourcePlans,
}

struct WMGetResourcePlanRequest {
  1: optional string resourcePlanName,
  2: optional string ns,
}

struct WMGetResourcePlanResponse {
  1: optional WMFullResourcePlan resourcePlan,
}

struct WMGetTriggersForResourePlanRequest {
  1: optional string resourcePlanName,
  2: optional string ns,
}

struct WMGetTriggersForResourePlanResponse {
  1: optional list<WMTrigger> triggers,
}

struct WMValidateResourcePlanRequest {
  1: optional string resourcePlanName,
  2: optional string ns,
}

struct WMValidateResourcePlanResponse {
  1: optional list<string> errors,
  2: optional list<string> warnings,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: scheduled queries

struct ScheduledQueryKey {
  1: required string scheduleName,
  2: required string clusterNamespace,
}

struct ScheduledQuery {
  1: required ScheduledQueryKey scheduleKey,
  2: optional bool enabled,
  4: optional string schedule,
  5: optional string user,
  6: optional string query,
  7: optional i32 nextExecution,
}

struct ScheduledQueryMaintenanceRequest {
  1: required ScheduledQueryMaintenanceRequestType type,
  2: required ScheduledQuery scheduledQuery,
}

struct ScheduledQueryPollRequest {
  1: required string clusterNamespace,
}

struct ScheduledQueryPollResponse {
  1: optional ScheduledQueryKey scheduleKey,
  2: optional i64 executionId,
  3: optional string query,
  4: optional string user,
}

struct ScheduledQueryProgressInfo {
  1: required i64 scheduledExecutionId,
  2: required QueryState state,
  3: required string executorQueryId,
  4: optional string errorMessage,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: stored procedures and packages

struct AddPackageRequest {
  1: string catName,
  2: string dbName,
  3: string packageName,
  4: string ownerName,
  5: string header,
  6: string body,
}

struct DropPackageRequest {
  1: required string catName,
  2: required string dbName,
  3: required string packageName,
}

struct GetPackageRequest {
  1: required string catName,
  2: required string dbName,
  3: required string packageName,
}

struct ListPackageRequest {
  1: required string catName,
  2: optional string dbName,
}

struct ListStoredProcedureRequest {
  1: required string catName,
  2: optional string dbName,
}

struct Package {
  1: string catName,
  2: string dbName,
  3: string packageName,
  4: string ownerName,
  5: string header,
  6: string body,
}

struct StoredProcedure {
  1: string name,
  2: string dbName,
  3: string catName,
  4: string ownerName,
  5: string source,
}

struct StoredProcedureRequest {
  1: required string catName,
  2: required string dbName,
  3: required string procName,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: replication metrics

struct GetReplicationMetricsRequest {
  1: optional i64 scheduledExecutionId,
  2: optional string policy,
  3: optional i64 dumpExecutionId,
}

struct ReplicationMetrics {
  1: required i64 scheduledExecutionId,
  2: required string policy,
  3: required i64 dumpExecutionId,
  4: optional string metadata,
  5: optional string progress,
  6: optional string messageFormat,
}

struct ReplicationMetricList {
  1: required list<ReplicationMetrics> replicationMetricList,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: runtime statistics

struct GetRuntimeStatsRequest {
  1: required i32 maxWeight,
  2: required i32 maxCreateTime,
}

struct RuntimeStat {
  1: optional i32 createTime,
  2: required i32 weight,
  3: required binary payload,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: properties

struct PropertyGetRequest {
  1: required string nameSpace,
  2: string mapPrefix,
  3: optional string mapPredicate,
  4: optional list<string> mapSelection,
}

struct PropertyGetResponse {
  1: map<string, map<string, string>> properties,
}

struct PropertySetRequest {
  1: required string nameSpace,
  2: map<string, string> propertyMap,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: materialized views

struct SourceTable {
  1: required Table table,
  2: required i64 insertedCount,
  3: required i64 updatedCount,
  4: required i64 deletedCount,
}

struct CreationMetadata {
  1: required string catName,
  2: required string dbName,
  3: required string tblName,
  4: required set<string> tablesUsed,
  5: optional string validTxnList,
  6: optional i64 materializationTime,
  7: optional list<SourceTable> sourceTables,
}

struct Materialization {
  1: required bool sourceTablesUpdateDeleteModified,
  2: required bool sourceTablesCompacted,
}

// ---------------------------------------------------------------- Hive 3.x/4.x: requests and responses of the newer calls

struct AlterDatabaseRequest {
  1: required string oldDbName,
  2: required Database newDb,
}

struct AlterPartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<Partition> partitions,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId,
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition,
  9: optional list<FieldSchema> partitionColSchema,
}

struct AlterPartitionsResponse {

}

struct AlterTableRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required Table table,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId,
  7: optional string validWriteIdList,
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string expectedParameterKey,
  11: optional string expectedParameterValue,
}

struct AlterTableResponse {

}

struct AppendPartitionsRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional string name,
  5: optional list<string> partVals,
  6: optional EnvironmentContext environmentContext,
}

struct CmRecycleRequest {
  1: required string dataPath,
  2: required bool purge,
}

struct CmRecycleResponse {

}

struct CreateDatabaseRequest {
  1: required string databaseName,
  2: optional string description,
  3: optional string locationUri,
  4: optional map<string, string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional DatabaseType type,
  12: optional string dataConnectorName,
  13: optional string remote_dbname,
}

struct CreateTableRequest {
  1: required Table table,
  2: optional EnvironmentContext envContext,
  3: optional list<SQLPrimaryKey> primaryKeys,
  4: optional list<SQLForeignKey> foreignKeys,
  5: optional list<SQLUniqueConstraint> uniqueConstraints,
  6: optional list<SQLNotNullConstraint> notNullConstraints,
  7: optional list<SQLDefaultConstraint> defaultConstraints,
  8: optional list<SQLCheckConstraint> checkConstraints,
  9: optional list<string> processorCapabilities,
  10: optional string processorIdentifier,
}

struct DropDatabaseRequest {
  1: required string name,
  2: optional string catalogName,
  3: required bool ignoreUnknownDb,
  4: required bool deleteData,
  5: required bool cascade,
  6: optional bool softDelete,
  7: optional i64 txnId,
  8: optional bool deleteManagedDir,
}

struct DropPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional string partName,
  5: optional list<string> partVals,
  6: optional bool deleteData,
  7: optional EnvironmentContext environmentContext,
}

struct DropTableRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional bool deleteData,
  5: optional EnvironmentContext envContext,
  6: optional bool dropPartitions,
}

struct ExtendedTableInfo {
  1: required string tblName,
  2: optional i32 accessType,
  3: optional list<string> requiredReadCapabilities,
  4: optional list<string> requiredWriteCapabilities,
}

struct FileMetadata {
  1: byte type,
  2: byte version,
  3: list<binary> data,
}

struct GetFieldsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetFieldsResponse {
  1: required list<FieldSchema> fields,
}

struct GetPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: required list<string> partVals,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetPartitionResponse {
  1: required Partition partition,
}

struct GetPartitionsFilterSpec {
  7: optional PartitionFilterMode filterMode,
  8: optional list<string> filters,
}

struct GetProjectionsSpec {
  1: list<string> fieldList,
  2: string includeParamKeyPattern,
  3: string excludeParamKeyPattern,
}

struct GetPartitionsRequest {
  1: optional string catName,
  2: string dbName,
  3: string tblName,
  4: optional bool withAuth,
  5: optional string user,
  6: optional list<string> groupNames,
  7: GetProjectionsSpec projectionSpec,
  8: GetPartitionsFilterSpec filterSpec,
  9: optional list<string> processorCapabilities,
  10: optional string processorIdentifier,
  11: optional string validWriteIdList,
}

struct GetPartitionsResponse {
  1: list<PartitionSpec> partitionSpec,
}

struct GetSchemaRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetSchemaResponse {
  1: required list<FieldSchema> fields,
}

struct GetTablesExtRequest {
  1: required string catalog,
  2: required string database,
  3: required string tableNamePattern,
  4: required i32 requestedFields,
  5: optional i32 limit,
  6: optional list<string> processorCapabilities,
  7: optional string processorIdentifier,
}

struct ObjectDictionary {
  1: required map<string, list<binary>> values,
}

struct RenamePartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<string> partVals,
  5: required Partition newPart,
  6: optional string validWriteIdList,
  7: optional i64 txnId,
  8: optional bool clonePart,
}

struct RenamePartitionResponse {

}

struct SetPartitionsStatsResponse {
  1: required bool result,
}

struct Timestamp {
  1: required i64 secondsSinceEpoch,
}

struct TimestampColumnStatsData {
  1: optional Timestamp lowValue,
  2: optional Timestamp highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

struct TruncateTableRequest {
  1: required string dbName,
  2: required string tableName,
  3: optional list<string> partNames,
  4: optional i64 writeId,
  5: optional string validWriteIdList,
  6: optional EnvironmentContext environmentContext,
}

struct TruncateTableResponse {

}

// ---------------------------------------------------------------- service

// ---------------------------------------------------------------------------------------------
// Extensions of this metastore. Their names are not HMS's, so HMS clients never meet them.
// ---------------------------------------------------------------------------------------------

// Which rows a partition filter reads: the plan, and with analyze the rows it read.
struct ExplainFilterRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional string filter,
  4: optional bool analyze = false,
}

struct ExplainedScan {
  1: string kind,                 // "get" or "scan"
  2: string start,                // readable lower bound, e.g. [ds="a", hr=3]
  3: string stop,                 // readable upper bound, e.g. [ds="a", hr=7)
  4: optional string residual,    // filter text still checked on each row of the range
  5: optional string hbaseFilter, // the residual as an HBase filter-language string
  6: optional i64 rowsScanned,
  7: optional i64 rowsReturned,
}

struct ExplainFilterResult {
  1: string normalizedFilter,
  2: list<ExplainedScan> scans,
  3: string text,                 // the whole plan, as `metastore-server explain` prints it
  4: optional i64 rowsScanned,
  5: optional i64 rowsReturned,
}

// Our extension: how get_partition_values would read a request (its strategy), and with
// analyze, what running it read.
struct ExplainValuesRequest {
  1: required PartitionValuesRequest request,
  2: optional bool analyze = false,
}

struct ExplainValuesResult {
  1: string strategy,             // e.g. "stream in key order, descending; seek past each ds"
  2: string text,                 // the whole plan, as `metastore-server values --explain` prints it
  3: optional ExplainFilterResult filterPlan,
  4: optional i64 rowsScanned,
  5: optional i64 rowsReturned,
  6: optional i64 seeks,
}

// Our extension (partition timelines, issue 6): the timelines the server keeps for a table that
// opts in with the table parameter cube.storagetable.time.partcols, one per (update period, time
// partition column), as Apache Lens keeps them in the table's parameters.
struct GetPartitionTimelinesRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional string updatePeriod,  // e.g. "HOURLY" (case-insensitive); all periods when absent
  4: optional string column,        // one time partition column; all of them when absent
}

struct PartitionTimelineInfo {
  1: string storageTable,
  2: string updatePeriod,           // the enum name, e.g. "HOURLY"
  3: string column,
  4: string implementation,         // the Lens class name, e.g. ...EndsAndHolesPartitionTimeline
  5: optional string first,         // partition names (Lens's date strings); absent when empty
  6: optional string latest,
  7: i64 count,                     // partitions present
  8: list<string> ranges,           // the partitions present as maximal ranges "[b, e)"
  9: map<string, string> properties, // the timeline's table parameters (Lens keys as stored)
}

struct GetPartitionTimelinesResult {
  1: list<PartitionTimelineInfo> timelines,
  2: list<string> timeColumns,      // the table's time partition columns (empty: not opted in)
}

struct RebuildTimelinesRequest {
  1: required string dbName,
  2: required string tblName,
}

// Our extension: the partitions of a fact's storage tables that best cover [startTime, endTime):
// coarsest periods first, finer ones for the remainders and gaps, the first table in the given
// order for each unit. Times are UTC, written yyyy-MM-dd[-HH[-mm[-ss]]]; the end is exclusive.
struct CoverTimeRangeRequest {
  1: required string dbName,
  2: required list<string> tables,  // storage tables of one fact, in preference order (opted in)
  3: required string column,        // the time partition column
  4: required string startTime,
  5: required string endTime,       // exclusive
  6: optional list<string> updatePeriods, // only these periods (enum names); all when absent
}

struct CoveredPartition {
  1: string storageTable,
  2: string updatePeriod,
  3: string partition,              // the partition name (Lens's date string), e.g. 2024-01-02
  4: string startTime,              // the unit it covers, [startTime, endTime), as in the request
  5: string endTime,
}

struct UncoveredRange {
  1: string startTime,
  2: string endTime,
}

struct CoverTimeRangeResult {
  1: list<CoveredPartition> parts,  // sorted by startTime
  2: list<UncoveredRange> uncovered, // maximal sub-ranges no partition covers, sorted
  3: bool complete,                 // no uncovered range
  4: i64 lookups,                   // questions asked of the in-memory timelines
}


// Our extension (dependent tables, seed 004): a dependent table depends on a base table, has its
// base's columns and is partitioned by a prefix of the base's keys. Its table parameters
// metastore.dependent.* declare it (any HMS client can set them); each of its partitions depends
// on a partial spec of a base partition set (partition parameter metastore.dependent.depends.on).
struct DependentTableInfo {
  1: string dbName,
  2: string tblName,
  3: string base,                   // the current base, db.table
  4: list<string> bases,            // every base a partition depends on, and the current one
  5: string onBaseDrop,             // refuse | allow | mark_incomplete
  6: string onBaseSchemaChange,     // refuse | propagate
  7: optional string completenessPeriod,   // e.g. HOURLY
  8: optional list<string> completenessColumns, // the base's time keys, e.g. [ds, hr]
}

struct DependencyCompleteness {
  1: string period,                 // the unit the base is expected in, e.g. HOURLY
  2: string window,                 // the time the dependent partition covers, e.g. 2024-01-01
  3: string startTime,              // [startTime, endTime), yyyy-MM-dd[-HH[-mm[-ss]]]
  4: string endTime,
  5: i64 expected,                  // units of period in the window
  6: list<string> missing,          // the missing units (timeline partition names), in order
  7: bool complete,
}

struct ResolvedDependency {
  1: string partName,               // the dependent partition
  2: string dependsOn,              // db.table@k=v/..., as stored
  3: string baseDbName,
  4: string baseTblName,
  5: string baseSpec,               // the partial spec, k=v/...
  6: bool baseExists,
  7: list<string> basePartNames,    // the base partitions matching the spec now, sorted
  8: i64 basePartCount,             // all of them, even when basePartNames is cut at maxParts
  9: bool markedIncomplete,         // a base partition it depended on was dropped (policy)
  10: optional DependencyCompleteness completeness, // with a completeness rule
  11: optional string completenessUnknown, // with a rule, why completeness cannot be judged
}

struct ResolveDependenciesRequest {
  1: required string dbName,
  2: required string tblName,       // the dependent table
  3: optional string partName,      // one partition (k=v/...); every partition when absent
  4: optional i32 maxParts = -1,    // base partition names per dependent partition; -1: all
}

struct ResolveDependenciesResult {
  1: DependentTableInfo table,
  2: list<ResolvedDependency> partitions, // sorted by partName
}

struct DependentPartitionRef {
  1: string dbName,
  2: string tblName,
  3: string partName,
  4: string dependsOn,
  5: bool markedIncomplete,
}

// Reverse lookup: which tables depend on a base table, and which of their partitions depend on
// one of its partitions (or on any, without partName).
struct GetDependentsRequest {
  1: required string dbName,
  2: required string tblName,       // the base table
  3: optional string partName,      // a base partition (k=v/...)
}

struct GetDependentsResult {
  1: list<string> tables,           // db.table of the dependent tables, sorted
  2: list<DependentPartitionRef> partitions, // sorted by table, then partName
}

// Declares a dependent table: its columns, storage format and keys come from the base (keys: the
// first keyCount base keys); external unless external = false.
struct CreateDependentTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: required string baseDbName,
  4: required string baseTblName,
  5: optional i32 keyCount = 1,
  6: optional string onBaseDrop,
  7: optional string onBaseSchemaChange,
  8: optional string completenessPeriod,
  9: optional list<string> completenessColumns,
  10: optional string location,
  11: optional bool external = true,
  12: optional string owner,
}

// Re-points a dependent table (new partitions depend on the new base), or one of its partitions
// (partName: that partition now depends on the same spec of the new base).
struct AlterDependencyRequest {
  1: required string dbName,
  2: required string tblName,
  3: required string baseDbName,
  4: required string baseTblName,
  5: optional string partName,
}


service ThriftHiveMetastore extends fb303.FacebookService {
  void abort_txn(1: AbortTxnRequest rqst)
      throws (1: NoSuchTxnException o1)

  void abort_txns(1: AbortTxnsRequest rqst)
      throws (1: NoSuchTxnException o1)

  void add_dynamic_partitions(1: AddDynamicPartitions rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)

  void add_foreign_key(1: AddForeignKeyRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  Index add_index(1: Index new_index, 2: Table index_table)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  i32 add_master_key(1: string key)
      throws (1: MetaException o1)

  Partition add_partition(1: Partition new_part)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  Partition add_partition_with_environment_context(1: Partition new_part, 2: EnvironmentContext environment_context)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  i32 add_partitions(1: list<Partition> new_parts)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  i32 add_partitions_pspec(1: list<PartitionSpec> new_parts)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  void add_primary_key(1: AddPrimaryKeyRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool add_token(1: string token_identifier, 2: string delegation_token)

  void alter_database(1: string dbname, 2: Database db)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  void alter_function(1: string dbName, 2: string funcName, 3: Function newFunc)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_index(1: string dbname, 2: string base_tbl_name, 3: string idx_name, 4: Index new_idx)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: Partition new_part, 4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts, 4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_table_with_cascade(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: bool cascade)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: EnvironmentContext environment_context)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  Partition append_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  Partition append_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  Partition append_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: EnvironmentContext environment_context)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  Partition append_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: EnvironmentContext environment_context)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  CacheFileMetadataResult cache_file_metadata(1: CacheFileMetadataRequest req)

  void cancel_delegation_token(1: string token_str_form)
      throws (1: MetaException o1)

  LockResponse check_lock(1: CheckLockRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3)

  ClearFileMetadataResult clear_file_metadata(1: ClearFileMetadataRequest req)

  void commit_txn(1: CommitTxnRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)

  void compact(1: CompactionRequest rqst)

  CompactionResponse compact2(1: CompactionRequest rqst)

  void create_database(1: Database database)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  void create_function(1: Function func)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  bool create_role(1: Role role)
      throws (1: MetaException o1)

  void create_table(1: Table tbl)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  void create_table_with_constraints(1: Table tbl, 2: list<SQLPrimaryKey> primaryKeys, 3: list<SQLForeignKey> foreignKeys,
      4: list<SQLUniqueConstraint> uniqueConstraints, 5: list<SQLNotNullConstraint> notNullConstraints,
      6: list<SQLDefaultConstraint> defaultConstraints, 7: list<SQLCheckConstraint> checkConstraints)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  void create_table_with_environment_context(1: Table tbl, 2: EnvironmentContext environment_context)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  bool create_type(1: Type type)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  bool delete_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name, 5: string engine)
      throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4)

  bool delete_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name, 4: string engine)
      throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4)

  void drop_constraint(1: DropConstraintRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)

  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  void drop_function(1: string dbName, 2: string funcName)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)

  bool drop_index_by_name(1: string db_name, 2: string tbl_name, 3: string index_name, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool drop_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData, 5: EnvironmentContext environment_context)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData, 5: EnvironmentContext environment_context)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool drop_role(1: string role_name)
      throws (1: MetaException o1)

  void drop_table(1: string dbname, 2: string name, 3: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)

  void drop_table_with_environment_context(1: string dbname, 2: string name, 3: bool deleteData, 4: EnvironmentContext environment_context)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)

  bool drop_type(1: string type)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Partition exchange_partition(1: map<string, string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4)

  list<Partition> exchange_partitions(1: map<string, string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4)

  FireEventResponse fire_listener_event(1: FireEventRequest rqst)

  void flushCache()

  string getMetaConf(1: string key)
      throws (1: MetaException o1)

  AggrStats get_aggr_stats_for(1: PartitionsStatsRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_all_databases()
      throws (1: MetaException o1)

  GetAllFunctionsResponse get_all_functions()
      throws (1: MetaException o1)

  list<string> get_all_tables(1: string db_name)
      throws (1: MetaException o1)

  list<string> get_all_token_identifiers()

  string get_config_value(1: string name, 2: string defaultValue)
      throws (1: ConfigValSecurityException o1)

  CurrentNotificationEventId get_current_notificationEventId()
  NotificationEventsCountResponse get_notification_events_count(1: NotificationEventsCountRequest rqst)

  Database get_database(1: string name)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_databases(1: string pattern)
      throws (1: MetaException o1)

  string get_delegation_token(1: string token_owner, 2: string renewer_kerberos_principal_name)
      throws (1: MetaException o1)

  list<FieldSchema> get_fields(1: string db_name, 2: string table_name)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  list<FieldSchema> get_fields_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  GetFileMetadataResult get_file_metadata(1: GetFileMetadataRequest req)

  GetFileMetadataByExprResult get_file_metadata_by_expr(1: GetFileMetadataByExprRequest req)

  ForeignKeysResponse get_foreign_keys(1: ForeignKeysRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Function get_function(1: string dbName, 2: string funcName)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<string> get_functions(1: string dbName, 2: string pattern)
      throws (1: MetaException o1)

  Index get_index_by_name(1: string db_name, 2: string tbl_name, 3: string index_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<string> get_index_names(1: string db_name, 2: string tbl_name, 3: i16 max_indexes = -1)
      throws (1: MetaException o2)

  list<Index> get_indexes(1: string db_name, 2: string tbl_name, 3: i16 max_indexes = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_master_keys()

  NotificationEventResponse get_next_notification(1: NotificationEventRequest rqst)

  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetOpenTxnsResponse get_open_txns()

  GetOpenTxnsInfoResponse get_open_txns_info()

  list<PartitionSpec> get_part_specs_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i32 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  ColumnStatistics get_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name)
      throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4)

  // 2.3 declares only (1: MetaException o2): a 2.3 connection gets that layout (see
  // hive_metastore_2_3_wire.thrift).
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  PartitionValuesResponse get_partition_values(1: PartitionValuesRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: string user_name, 5: list<string> group_names)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  PartitionsByExprResult get_partitions_by_expr(1: PartitionsByExprRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name, 3: list<string> names)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3)

  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1, 5: string user_name, 6: list<string> group_names)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<PartitionSpec> get_partitions_pspec(1: string db_name, 2: string tbl_name, 3: i32 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  PartitionsStatsResult get_partitions_statistics_req(1: PartitionsStatsRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<Partition> get_partitions_with_auth(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1, 4: string user_name, 5: list<string> group_names)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  PrimaryKeysResponse get_primary_keys(1: PrimaryKeysRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPrincipalsInRoleResponse get_principals_in_role(1: GetPrincipalsInRoleRequest request)
      throws (1: MetaException o1)

  PrincipalPrivilegeSet get_privilege_set(1: HiveObjectRef hiveObject, 2: string user_name, 3: list<string> group_names)
      throws (1: MetaException o1)

  GetRoleGrantsForPrincipalResponse get_role_grants_for_principal(1: GetRoleGrantsForPrincipalRequest request)
      throws (1: MetaException o1)

  list<string> get_role_names()
      throws (1: MetaException o1)

  list<FieldSchema> get_schema(1: string db_name, 2: string table_name)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  list<FieldSchema> get_schema_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  Table get_table(1: string dbname, 2: string tbl_name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  ColumnStatistics get_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name)
      throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4)

  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns, 3: list<string> tbl_types)
      throws (1: MetaException o1)

  list<string> get_table_names_by_filter(1: string dbname, 2: string filter, 3: i16 max_tables = -1)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)

  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)

  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)

  GetTableResult get_table_req(1: GetTableRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  TableStatsResult get_table_statistics_req(1: TableStatsRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_tables(1: string db_name, 2: string pattern)
      throws (1: MetaException o1)

  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType)
      throws (1: MetaException o1)

  string get_token(1: string token_identifier)

  Type get_type(1: string name)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  map<string, Type> get_type_all(1: string name)
      throws (1: MetaException o2)

  bool grant_privileges(1: PrivilegeBag privileges)
      throws (1: MetaException o1)

  GrantRevokePrivilegeResponse grant_revoke_privileges(1: GrantRevokePrivilegeRequest request)
      throws (1: MetaException o1)

  GrantRevokeRoleResponse grant_revoke_role(1: GrantRevokeRoleRequest request)
      throws (1: MetaException o1)

  bool grant_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type, 4: string grantor, 5: PrincipalType grantorType, 6: bool grant_option)
      throws (1: MetaException o1)

  void heartbeat(1: HeartbeatRequest ids)
      throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3)

  HeartbeatTxnRangeResponse heartbeat_txn_range(1: HeartbeatTxnRangeRequest txns)

  bool isPartitionMarkedForEvent(1: string db_name, 2: string tbl_name, 3: map<string, string> part_vals, 4: PartitionEventType eventType)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6)

  list<HiveObjectPrivilege> list_privileges(1: string principal_name, 2: PrincipalType principal_type, 3: HiveObjectRef hiveObject)
      throws (1: MetaException o1)

  list<Role> list_roles(1: string principal_name, 2: PrincipalType principal_type)
      throws (1: MetaException o1)

  LockResponse lock(1: LockRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2)

  void markPartitionForEvent(1: string db_name, 2: string tbl_name, 3: map<string, string> part_vals, 4: PartitionEventType eventType)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6)

  OpenTxnsResponse open_txns(1: OpenTxnRequest rqst)

  bool partition_name_has_valid_characters(1: list<string> part_vals, 2: bool throw_exception)
      throws (1: MetaException o1)

  map<string, string> partition_name_to_spec(1: string part_name)
      throws (1: MetaException o1)

  list<string> partition_name_to_vals(1: string part_name)
      throws (1: MetaException o1)

  PutFileMetadataResult put_file_metadata(1: PutFileMetadataRequest req)

  bool remove_master_key(1: i32 key_seq)

  bool remove_token(1: string token_identifier)

  void rename_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: Partition new_part)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  i64 renew_delegation_token(1: string token_str_form)
      throws (1: MetaException o1)

  bool revoke_privileges(1: PrivilegeBag privileges)
      throws (1: MetaException o1)

  bool revoke_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type)
      throws (1: MetaException o1)

  void setMetaConf(1: string key, 2: string value)
      throws (1: MetaException o1)

  bool set_aggr_stats_for(1: SetPartitionsStatsRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4)

  list<string> set_ugi(1: string user_name, 2: list<string> group_names)
      throws (1: MetaException o1)

  ShowCompactResponse show_compact(1: ShowCompactRequest rqst)

  ShowLocksResponse show_locks(1: ShowLocksRequest rqst)

  void unlock(1: UnlockRequest rqst)
      throws (1: NoSuchLockException o1, 2: TxnOpenException o2)

  void update_master_key(1: i32 seq_number, 2: string key)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  bool update_partition_column_statistics(1: ColumnStatistics stats_obj)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4)

  bool update_table_column_statistics(1: ColumnStatistics stats_obj)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4)

  // Hive 4.x request-object calls

  list<Partition> get_partitions_by_filter_req(1: GetPartitionsByFilterRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  PartitionsSpecByExprResult get_partitions_spec_by_expr(1: PartitionsByExprRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<string> get_partition_names_req(1: PartitionsByExprRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPartitionNamesPsResponse get_partition_names_ps_req(1: GetPartitionNamesPsRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  PartitionsResponse get_partitions_req(1: PartitionsRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  GetPartitionsPsWithAuthResponse get_partitions_ps_with_auth_req(1: GetPartitionsPsWithAuthRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPartitionsByNamesResult get_partitions_by_names_req(1: GetPartitionsByNamesRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3)

  Database get_database_req(1: GetDatabaseRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  // Hive 3.x/4.x: catalogs

  void alter_catalog(1: AlterCatalogRequest rqst)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  void create_catalog(1: CreateCatalogRequest catalog)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  void drop_catalog(1: DropCatalogRequest catName)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  GetCatalogResponse get_catalog(1: GetCatalogRequest catName)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  GetCatalogsResponse get_catalogs()
      throws (1: MetaException o1)

  // Hive 3.x/4.x: data connectors

  void alter_dataconnector_req(1: AlterDataConnectorRequest alterReq)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  void create_dataconnector_req(1: CreateDataConnectorRequest connectorReq)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  void drop_dataconnector_req(1: DropDataConnectorRequest dropDcReq)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  DataConnector get_dataconnector_req(1: GetDataConnectorRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> get_dataconnectors()
      throws (1: MetaException o1)

  // Hive 3.x/4.x: compactions

  OptionalCompactionInfoStruct find_next_compact(1: string workerId)
      throws (1: MetaException o1)

  OptionalCompactionInfoStruct find_next_compact2(1: FindNextCompactRequest rqst)
      throws (1: MetaException o1)

  GetLatestCommittedCompactionInfoResponse get_latest_committed_compaction_info(1: GetLatestCommittedCompactionInfoRequest rqst)

  void mark_cleaned(1: CompactionInfoStruct cr)
      throws (1: MetaException o1)

  void mark_compacted(1: CompactionInfoStruct cr)
      throws (1: MetaException o1)

  void mark_failed(1: CompactionInfoStruct cr)
      throws (1: MetaException o1)

  void mark_refused(1: CompactionInfoStruct cr)
      throws (1: MetaException o1)

  void remove_compaction_metrics_data(1: CompactionMetricsDataRequest request)
      throws (1: MetaException o1)

  void set_hadoop_jobid(1: string jobId, 2: i64 cq_id)

  bool submit_for_cleanup(1: CompactionRequest o1, 2: i64 o2, 3: i64 o3)
      throws (1: MetaException o1)

  bool update_compaction_metrics_data(1: CompactionMetricsDataStruct data)
      throws (1: MetaException o1)

  void update_compactor_state(1: CompactionInfoStruct cr, 2: i64 txn_id)

  // Hive 3.x/4.x: write ids, transactions and the write notification log

  void add_write_ids_to_min_history(1: i64 txnId, 2: map<string, i64> writeIds)
      throws (1: MetaException o2)

  WriteNotificationLogResponse add_write_notification_log(1: WriteNotificationLogRequest rqst)

  WriteNotificationLogBatchResponse add_write_notification_log_in_batch(1: WriteNotificationLogBatchRequest rqst)

  AllocateTableWriteIdsResponse allocate_table_write_ids(1: AllocateTableWriteIdsRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: MetaException o3)

  list<WriteEventInfo> get_all_write_event_info(1: GetAllWriteEventInfoRequest request)
      throws (1: MetaException o1)

  i64 get_latest_txnid_in_conflict(1: i64 txnId)
      throws (1: MetaException o1)

  MaxAllocatedTableWriteIdResponse get_max_allocated_table_write_id(1: MaxAllocatedTableWriteIdRequest rqst)
      throws (1: MetaException o1)

  GetOpenTxnsResponse get_open_txns_req(1: GetOpenTxnsRequest getOpenTxnsRequest)

  GetValidWriteIdsResponse get_valid_write_ids(1: GetValidWriteIdsRequest rqst)
      throws (1: NoSuchTxnException o1, 2: MetaException o2)

  void repl_tbl_writeid_state(1: ReplTblWriteIdStateRequest rqst)

  void seed_txn_id(1: SeedTxnIdRequest rqst)
      throws (1: MetaException o1)

  void seed_write_id(1: SeedTableWriteIdsRequest rqst)
      throws (1: MetaException o1)

  void update_transaction_statistics(1: UpdateTransactionalStatsRequest req)
      throws (1: MetaException o1)

  // Hive 3.x/4.x: constraints

  void add_check_constraint(1: AddCheckConstraintRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void add_default_constraint(1: AddDefaultConstraintRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void add_not_null_constraint(1: AddNotNullConstraintRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void add_unique_constraint(1: AddUniqueConstraintRequest req)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  AllTableConstraintsResponse get_all_table_constraints(1: AllTableConstraintsRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  CheckConstraintsResponse get_check_constraints(1: CheckConstraintsRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  DefaultConstraintsResponse get_default_constraints(1: DefaultConstraintsRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  NotNullConstraintsResponse get_not_null_constraints(1: NotNullConstraintsRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  UniqueConstraintsResponse get_unique_constraints(1: UniqueConstraintsRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  // Hive 3.x/4.x: schema registry (ISchema), schema versions and serdes

  void add_schema_version(1: SchemaVersion schemaVersion)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: MetaException o3)

  void add_serde(1: SerDeInfo serde)
      throws (1: AlreadyExistsException o1, 2: MetaException o2)

  void alter_ischema(1: AlterISchemaRequest rqst)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void create_ischema(1: ISchema schema)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: MetaException o3)

  void drop_ischema(1: ISchemaName name)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  void drop_schema_version(1: SchemaVersionDescriptor schemaVersion)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  ISchema get_ischema(1: ISchemaName name)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<SchemaVersion> get_schema_all_versions(1: ISchemaName schemaName)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  SchemaVersion get_schema_latest_version(1: ISchemaName schemaName)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  SchemaVersion get_schema_version(1: SchemaVersionDescriptor schemaVersion)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  FindSchemasByColsResp get_schemas_by_cols(1: FindSchemasByColsRqst rqst)
      throws (1: MetaException o1)

  SerDeInfo get_serde(1: GetSerdeRequest rqst)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void map_schema_version_to_serde(1: MapSchemaVersionToSerdeRequest rqst)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void set_schema_version_state(1: SetSchemaVersionStateRequest rqst)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  // Hive 3.x/4.x: workload management

  WMAlterResourcePlanResponse alter_resource_plan(1: WMAlterResourcePlanRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  WMAlterPoolResponse alter_wm_pool(1: WMAlterPoolRequest request)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: MetaException o4)

  WMAlterTriggerResponse alter_wm_trigger(1: WMAlterTriggerRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  WMCreateOrDropTriggerToPoolMappingResponse create_or_drop_wm_trigger_to_pool_mapping(1: WMCreateOrDropTriggerToPoolMappingRequest request)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: MetaException o4)

  WMCreateOrUpdateMappingResponse create_or_update_wm_mapping(1: WMCreateOrUpdateMappingRequest request)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: MetaException o4)

  WMCreateResourcePlanResponse create_resource_plan(1: WMCreateResourcePlanRequest request)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  WMCreatePoolResponse create_wm_pool(1: WMCreatePoolRequest request)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: MetaException o4)

  WMCreateTriggerResponse create_wm_trigger(1: WMCreateTriggerRequest request)
      throws (1: AlreadyExistsException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: MetaException o4)

  WMDropResourcePlanResponse drop_resource_plan(1: WMDropResourcePlanRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  WMDropMappingResponse drop_wm_mapping(1: WMDropMappingRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  WMDropPoolResponse drop_wm_pool(1: WMDropPoolRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  WMDropTriggerResponse drop_wm_trigger(1: WMDropTriggerRequest request)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  WMGetActiveResourcePlanResponse get_active_resource_plan(1: WMGetActiveResourcePlanRequest request)
      throws (1: MetaException o2)

  WMGetAllResourcePlanResponse get_all_resource_plans(1: WMGetAllResourcePlanRequest request)
      throws (1: MetaException o1)

  WMGetResourcePlanResponse get_resource_plan(1: WMGetResourcePlanRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  WMGetTriggersForResourePlanResponse get_triggers_for_resourceplan(1: WMGetTriggersForResourePlanRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  WMValidateResourcePlanResponse validate_resource_plan(1: WMValidateResourcePlanRequest request)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  // Hive 3.x/4.x: scheduled queries

  ScheduledQuery get_scheduled_query(1: ScheduledQueryKey scheduleKey)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  void scheduled_query_maintenance(1: ScheduledQueryMaintenanceRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: AlreadyExistsException o3, 4: InvalidInputException o4)

  ScheduledQueryPollResponse scheduled_query_poll(1: ScheduledQueryPollRequest request)
      throws (1: MetaException o1)

  void scheduled_query_progress(1: ScheduledQueryProgressInfo info)
      throws (1: MetaException o1, 2: InvalidOperationException o2)

  // Hive 3.x/4.x: stored procedures and packages

  void add_package(1: AddPackageRequest request)
      throws (1: MetaException o1)

  void create_stored_procedure(1: StoredProcedure proc)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void drop_package(1: DropPackageRequest request)
      throws (1: MetaException o1)

  void drop_stored_procedure(1: StoredProcedureRequest request)
      throws (1: MetaException o1)

  Package find_package(1: GetPackageRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  list<string> get_all_packages(1: ListPackageRequest request)
      throws (1: MetaException o1)

  list<string> get_all_stored_procedures(1: ListStoredProcedureRequest request)
      throws (1: MetaException o1)

  StoredProcedure get_stored_procedure(1: StoredProcedureRequest request)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  // Hive 3.x/4.x: replication metrics

  void add_replication_metrics(1: ReplicationMetricList replicationMetricList)
      throws (1: MetaException o1)

  ReplicationMetricList get_replication_metrics(1: GetReplicationMetricsRequest rqst)
      throws (1: MetaException o1)

  // Hive 3.x/4.x: runtime statistics

  void add_runtime_stats(1: RuntimeStat stat)
      throws (1: MetaException o1)

  list<RuntimeStat> get_runtime_stats(1: GetRuntimeStatsRequest rqst)
      throws (1: MetaException o1)

  // Hive 3.x/4.x: properties

  PropertyGetResponse get_properties(1: PropertyGetRequest req)
      throws (1: MetaException e1, 2: NoSuchObjectException e2)

  bool set_properties(1: PropertySetRequest req)
      throws (1: MetaException e1, 2: NoSuchObjectException e2)

  // Hive 3.x/4.x: materialized views

  list<Table> get_all_materialized_view_objects_for_rewriting()
      throws (1: MetaException o1)

  LockResponse get_lock_materialization_rebuild(1: string dbName, 2: string tableName, 3: i64 txnId)

  Materialization get_materialization_invalidation_info(1: CreationMetadata creation_metadata, 2: string validTxnList)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)

  list<string> get_materialized_views_for_rewriting(1: string db_name)
      throws (1: MetaException o1)

  bool heartbeat_lock_materialization_rebuild(1: string dbName, 2: string tableName, 3: i64 txnId)

  void update_creation_metadata(1: string catName, 2: string dbname, 3: string tbl_name, 4: CreationMetadata creation_metadata)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3)

  // Hive 3.x/4.x: request forms of older calls and the rest

  AbortCompactResponse abort_Compactions(1: AbortCompactionRequest rqst)

  void alter_database_req(1: AlterDatabaseRequest alterDbReq)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  AlterPartitionsResponse alter_partitions_req(1: AlterPartitionsRequest req)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  AlterTableResponse alter_table_req(1: AlterTableRequest req)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  Partition append_partition_req(1: AppendPartitionsRequest appendPartitionsReq)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3)

  CmRecycleResponse cm_recycle(1: CmRecycleRequest request)
      throws (1: MetaException o1)

  void create_database_req(1: CreateDatabaseRequest createDatabaseRequest)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3)

  void create_table_req(1: CreateTableRequest request)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  void drop_database_req(1: DropDatabaseRequest req)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3)

  bool drop_partition_req(1: DropPartitionRequest dropPartitionReq)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  void drop_table_req(1: DropTableRequest dropTableReq)
      throws (1: NoSuchObjectException o1, 2: MetaException o3)

  list<string> fetch_partition_names_req(1: PartitionsRequest partitionReq)
      throws (1: NoSuchObjectException o1, 2: MetaException o2)

  list<string> find_columns_with_stats(1: CompactionInfoStruct cr)

  GetFieldsResponse get_fields_req(1: GetFieldsRequest req)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  string get_metastore_db_uuid()
      throws (1: MetaException o1)

  GetPartitionResponse get_partition_req(1: GetPartitionRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPartitionsResponse get_partitions_with_specs(1: GetPartitionsRequest request)
      throws (1: MetaException o1)

  GetSchemaResponse get_schema_req(1: GetSchemaRequest req)
      throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3)

  list<ExtendedTableInfo> get_tables_ext(1: GetTablesExtRequest req)
      throws (1: MetaException o1)

  GrantRevokePrivilegeResponse refresh_privileges(1: HiveObjectRef objToRefresh, 2: string authorizer, 3: GrantRevokePrivilegeRequest grantRequest)
      throws (1: MetaException o1)

  RenamePartitionResponse rename_partition_req(1: RenamePartitionRequest req)
      throws (1: InvalidOperationException o1, 2: MetaException o2)

  Table translate_table_dryrun(1: CreateTableRequest request)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4)

  void truncate_table(1: string dbName, 2: string tableName, 3: list<string> partNames)
      throws (1: MetaException o1)

  TruncateTableResponse truncate_table_req(1: TruncateTableRequest req)
      throws (1: MetaException o1)

  SetPartitionsStatsResponse update_partition_column_statistics_req(1: SetPartitionsStatsRequest req)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4)

  SetPartitionsStatsResponse update_table_column_statistics_req(1: SetPartitionsStatsRequest req)
      throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4)

  // Extensions (see the structs above)

  ExplainFilterResult explain_partition_filter(1: ExplainFilterRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  ExplainValuesResult explain_partition_values(1: ExplainValuesRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPartitionTimelinesResult get_partition_timelines(1: GetPartitionTimelinesRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  CoverTimeRangeResult cover_time_range(1: CoverTimeRangeRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetPartitionTimelinesResult rebuild_partition_timelines(1: RebuildTimelinesRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  ResolveDependenciesResult resolve_dependencies(1: ResolveDependenciesRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  GetDependentsResult get_dependents(1: GetDependentsRequest req)
      throws (1: MetaException o1, 2: NoSuchObjectException o2)

  Table create_dependent_table(1: CreateDependentTableRequest req)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3,
              4: NoSuchObjectException o4)

  ResolveDependenciesResult alter_dependency(1: AlterDependencyRequest req)
      throws (1: InvalidOperationException o1, 2: MetaException o2, 3: NoSuchObjectException o3)
}
