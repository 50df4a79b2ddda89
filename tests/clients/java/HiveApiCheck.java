// Hive's own Java metastore client (HiveMetaStoreClient 2.3, from the pyspark wheel's jars)
// drives the calls Hive makes beyond reading tables: locks and transactions (as Hive's
// DbTxnManager and Iceberg's HiveCatalog take them), column statistics (as ANALYZE writes
// them), roles and privileges (as Hive's SQL-standard authorizer keeps them), and the
// notification log, whose messages it decodes with Hive's own message
// deserializer (as Hive replication and Impala read them), and whose Thrift objects
// (the *Json fields) it decodes with Thrift's own TJSONProtocol, as HMS 3+'s readers
// do (into the 2.3 structs it knows). It prints one JSON object on stdout;
// tests/clients/test_java_client.py compiles it, runs it and checks the output.
//
//   javac -cp '<pyspark>/jars/*' -d OUT tests/clients/java/HiveApiCheck.java
//   java -cp 'OUT:<pyspark>/jars/*' HiveApiCheck HOST PORT DB
//
// Only loopback addresses are accepted. DB must not exist yet.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.LockComponentBuilder;
import org.apache.hadoop.hive.metastore.LockRequestBuilder;
import org.apache.hadoop.hive.metastore.api.ColumnStatistics;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsData;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsDesc;
import org.apache.hadoop.hive.metastore.api.ColumnStatisticsObj;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.FireEventRequest;
import org.apache.hadoop.hive.metastore.api.FireEventRequestData;
import org.apache.hadoop.hive.metastore.api.HiveObjectPrivilege;
import org.apache.hadoop.hive.metastore.api.HiveObjectRef;
import org.apache.hadoop.hive.metastore.api.HiveObjectType;
import org.apache.hadoop.hive.metastore.api.InsertEventRequestData;
import org.apache.hadoop.hive.metastore.api.LockResponse;
import org.apache.hadoop.hive.metastore.api.LongColumnStatsData;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.PrincipalPrivilegeSet;
import org.apache.hadoop.hive.metastore.api.PrincipalType;
import org.apache.hadoop.hive.metastore.api.PrivilegeBag;
import org.apache.hadoop.hive.metastore.api.PrivilegeGrantInfo;
import org.apache.hadoop.hive.metastore.api.Role;
import org.apache.hadoop.hive.metastore.api.SerDeInfo;
import org.apache.hadoop.hive.metastore.api.StorageDescriptor;
import org.apache.hadoop.hive.metastore.api.StringColumnStatsData;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.api.Function;
import org.apache.hadoop.hive.metastore.api.SQLForeignKey;
import org.apache.hadoop.hive.metastore.api.SQLPrimaryKey;
import org.apache.hadoop.hive.metastore.messaging.MessageDeserializer;
import org.apache.hadoop.hive.metastore.messaging.MessageFactory;
import org.apache.thrift.TBase;
import org.apache.thrift.TDeserializer;
import org.apache.thrift.protocol.TJSONProtocol;

public final class HiveApiCheck {
    private HiveApiCheck() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: HiveApiCheck HOST PORT DB");
            System.exit(2);
        }
        if (!InetAddress.getByName(args[0]).isLoopbackAddress()) {
            System.err.println("refusing a non-loopback host: " + args[0]);
            System.exit(2);
        }
        String db = args[2];
        HiveConf conf = new HiveConf();
        conf.set("hive.metastore.uris", "thrift://" + args[0] + ":" + args[1]);
        conf.set("hive.metastore.connect.retries", "1");
        conf.set("hive.metastore.client.socket.timeout", "30s");
        HiveMetaStoreClient client = new HiveMetaStoreClient(conf);
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            long firstEvent = client.getCurrentNotificationEventId().getEventId();
            Table table = setUp(client, db);
            out.put("locks", locks(client, db));
            out.put("statistics", statistics(client, db, table));
            out.put("security", security(client, db));
            out.put("events", events(client, db, firstEvent));
        } finally {
            client.close();
        }
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    private static Table setUp(HiveMetaStoreClient client, String db) throws Exception {
        client.createDatabase(new Database(db, "", null, new HashMap<String, String>()));
        StorageDescriptor sd = new StorageDescriptor();
        sd.setCols(Arrays.asList(new FieldSchema("id", "bigint", null),
                new FieldSchema("name", "string", null)));
        sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat");
        sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat");
        sd.setSerdeInfo(new SerDeInfo(null,
                "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", new HashMap<String, String>()));
        Table table = new Table();
        table.setDbName(db);
        table.setTableName("events");
        table.setSd(sd);
        table.setPartitionKeys(Arrays.asList(new FieldSchema("ds", "string", null)));
        table.setParameters(new HashMap<String, String>());
        table.setTableType("MANAGED_TABLE");
        client.createTable(table);
        table = client.getTable(db, "events");
        for (String ds : new String[] {"2024-01-01", "2024-01-02"}) {
            Partition part = new Partition();
            part.setDbName(db);
            part.setTableName("events");
            part.setValues(Arrays.asList(ds));
            part.setSd(table.getSd().deepCopy());
            part.getSd().setLocation(null);
            part.setParameters(new HashMap<String, String>());
            client.add_partition(part);
        }
        return table;
    }

    /** An exclusive table lock, a shared read that waits for it, then gets it. */
    private static Map<String, Object> locks(HiveMetaStoreClient client, String db)
            throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        LockResponse exclusive = client.lock(new LockRequestBuilder()
                .setUser("writer")
                .addLockComponent(new LockComponentBuilder()
                        .setDbName(db).setTableName("events").setExclusive().build())
                .build());
        out.put("exclusive", exclusive.getState().toString());
        LockResponse read = client.lock(new LockRequestBuilder()
                .setUser("reader")
                .addLockComponent(new LockComponentBuilder()
                        .setDbName(db).setTableName("events").setShared().build())
                .build());
        out.put("readWhileExclusive", read.getState().toString());
        out.put("shown", client.showLocks().getLocksSize());
        client.unlock(exclusive.getLockid());
        out.put("readAfterUnlock", client.checkLock(read.getLockid()).getState().toString());
        client.unlock(read.getLockid());

        long txn = client.openTxn("writer");
        LockResponse inTxn = client.lock(new LockRequestBuilder()
                .setTransactionId(txn)
                .setUser("writer")
                .addLockComponent(new LockComponentBuilder()
                        .setDbName(db).setTableName("events").setPartitionName("ds=2024-01-01")
                        .setSemiShared().build())
                .build());
        out.put("txnLock", inTxn.getState().toString());
        out.put("openBeforeCommit", client.getValidTxns().isTxnValid(txn));
        client.heartbeat(txn, inTxn.getLockid());
        client.commitTxn(txn);
        out.put("validAfterCommit", client.getValidTxns().isTxnValid(txn));
        out.put("locksAfterCommit", client.showLocks().getLocksSize());
        return out;
    }

    /** Table and partition column statistics written and read back, and their aggregate. */
    private static Map<String, Object> statistics(HiveMetaStoreClient client, String db,
            Table table) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        ColumnStatisticsObj id = new ColumnStatisticsObj("id", "bigint",
                ColumnStatisticsData.longStats(new LongColumnStatsData(0, 42)));
        id.getStatsData().getLongStats().setLowValue(1);
        id.getStatsData().getLongStats().setHighValue(1000);
        ColumnStatisticsDesc tableDesc = new ColumnStatisticsDesc(true, db, "events");
        client.updateTableColumnStatistics(new ColumnStatistics(tableDesc, Arrays.asList(id)));
        ColumnStatisticsObj readBack = client.getTableColumnStatistics(db, "events",
                Arrays.asList("id")).get(0);
        LongColumnStatsData longs = readBack.getStatsData().getLongStats();
        out.put("table", Arrays.asList(readBack.getColName(), longs.getLowValue(),
                longs.getHighValue(), longs.getNumDVs()));

        long[] lengths = {7, 12};
        String[] days = {"2024-01-01", "2024-01-02"};
        for (int i = 0; i < days.length; i++) {
            ColumnStatisticsDesc desc = new ColumnStatisticsDesc(false, db, "events");
            desc.setPartName("ds=" + days[i]);
            ColumnStatisticsObj name = new ColumnStatisticsObj("name", "string",
                    ColumnStatisticsData.stringStats(
                            new StringColumnStatsData(lengths[i], 5.0, i, 10 + i)));
            client.updatePartitionColumnStatistics(
                    new ColumnStatistics(desc, Arrays.asList(name)));
        }
        List<String> partNames = Arrays.asList("ds=2024-01-01", "ds=2024-01-02");
        Map<String, List<ColumnStatisticsObj>> perPartition =
                client.getPartitionColumnStatistics(db, "events", partNames,
                        Arrays.asList("name"));
        List<Long> maxLengths = new ArrayList<>();
        for (String part : partNames) {
            maxLengths.add(perPartition.get(part).get(0).getStatsData().getStringStats()
                    .getMaxColLen());
        }
        out.put("partitionMaxLengths", maxLengths);
        StringColumnStatsData aggregate = client.getAggrColStatsFor(db, "events",
                Arrays.asList("name"), partNames).getColStats().get(0).getStatsData()
                .getStringStats();
        out.put("aggregate", Arrays.asList(aggregate.getMaxColLen(), aggregate.getNumNulls()));
        client.deleteTableColumnStatistics(db, "events", "id");
        out.put("afterDelete", client.getTableColumnStatistics(db, "events",
                Arrays.asList("id")).size());
        return out;
    }

    /** A role granted to a user, a table privilege granted to the role, seen through it. */
    private static Map<String, Object> security(HiveMetaStoreClient client, String db)
            throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        client.create_role(new Role("analyst", 0, "admin"));
        client.grant_role("analyst", "alice", PrincipalType.USER, "admin", PrincipalType.USER,
                false);
        List<String> roles = new ArrayList<>();
        for (Role role : client.list_roles("alice", PrincipalType.USER)) {
            roles.add(role.getRoleName());
        }
        Collections.sort(roles);
        out.put("aliceRoles", roles);
        HiveObjectRef table = new HiveObjectRef(HiveObjectType.TABLE, db, "events", null, null);
        client.grant_privileges(new PrivilegeBag(Arrays.asList(new HiveObjectPrivilege(table,
                "analyst", PrincipalType.ROLE,
                new PrivilegeGrantInfo("SELECT", 0, "admin", PrincipalType.USER, false)))));
        PrincipalPrivilegeSet set = client.get_privilege_set(table, "alice",
                Collections.<String>emptyList());
        out.put("throughRole", set.getRolePrivileges().get("analyst").get(0).getPrivilege());
        out.put("listed", client.list_privileges("analyst", PrincipalType.ROLE, table).size());
        client.drop_role("analyst");
        out.put("rolesAfterDrop", client.listRoleNames().contains("analyst"));
        return out;
    }

    /** Changes, then every event since ``firstEvent`` decoded by Hive's deserializer. */
    private static List<Object> events(HiveMetaStoreClient client, String db, long firstEvent)
            throws Exception {
        Table table = client.getTable(db, "events");
        table.getParameters().put("comment", "altered");
        client.alter_table(db, "events", table);
        Partition part = client.getPartition(db, "events", Arrays.asList("2024-01-02"));
        part.getParameters().put("checked", "yes");
        client.alter_partition(db, "events", part);
        FireEventRequest insert = new FireEventRequest(true, FireEventRequestData.insertData(
                new InsertEventRequestData(Arrays.asList("file:/tmp/part-0"))));
        insert.setDbName(db);
        insert.setTableName("events");
        insert.setPartitionVals(Arrays.asList("2024-01-01"));
        client.fireListenerEvent(insert);
        client.dropPartition(db, "events", Arrays.asList("2024-01-01"), true);
        client.dropTable(db, "events");
        client.dropDatabase(db);

        MessageDeserializer reader = MessageFactory.getInstance().getDeserializer();
        List<Object> seen = new ArrayList<>();
        long last = firstEvent;
        for (NotificationEvent event
                : client.getNextNotification(firstEvent, 0, null).getEvents()) {
            if (event.getEventId() != last + 1) {
                throw new IllegalStateException("event ids jump from " + last + " to "
                        + event.getEventId());
            }
            last = event.getEventId();
            String message = event.getMessage();
            String type = event.getEventType();
            Object detail;
            switch (type) {
                case "CREATE_DATABASE":
                    detail = reader.getCreateDatabaseMessage(message).getDB();
                    break;
                case "CREATE_TABLE":
                    Table created = reader.getCreateTableMessage(message).getTableObj();
                    detail = created.getTableName() + " " + created.getPartitionKeys().get(0)
                            .getName();
                    break;
                case "ADD_PARTITION":
                    List<String> values = new ArrayList<>();
                    for (Partition added
                            : reader.getAddPartitionMessage(message).getPartitionObjs()) {
                        values.addAll(added.getValues());
                    }
                    detail = values;
                    break;
                case "ALTER_TABLE":
                    detail = reader.getAlterTableMessage(message).getTableObjAfter()
                            .getParameters().get("comment");
                    break;
                case "ALTER_PARTITION":
                    detail = reader.getAlterPartitionMessage(message).getPtnObjAfter()
                            .getParameters().get("checked");
                    break;
                case "INSERT":
                    detail = reader.getInsertMessage(message).getPartitionKeyValues();
                    break;
                case "DROP_PARTITION":
                    detail = reader.getDropPartitionMessage(message).getPartitions();
                    break;
                case "DROP_TABLE":
                    detail = reader.getDropTableMessage(message).getTable();
                    break;
                case "DROP_DATABASE":
                    detail = reader.getDropDatabaseMessage(message).getDB();
                    break;
                default:
                    detail = null;
            }
            seen.add(Arrays.asList(type, detail, thriftObjects(message)));
        }
        if (client.getCurrentNotificationEventId().getEventId() != last) {
            throw new IllegalStateException("the current event id is not the last event's");
        }
        return seen;
    }

    /** The Thrift classes of the message fields holding Thrift JSON (HMS 3+'s *Json). */
    private static final Map<String, Class<? extends TBase>> OBJECT_FIELDS = new HashMap<>();

    static {
        for (String name : new String[] {"tableObjJson", "tableObjBeforeJson",
                "tableObjAfterJson"}) {
            OBJECT_FIELDS.put(name, Table.class);
        }
        for (String name : new String[] {"ptnObjJson", "partitionObjJson",
                "partitionObjBeforeJson", "partitionObjAfterJson", "partitionListJson"}) {
            OBJECT_FIELDS.put(name, Partition.class);
        }
        for (String name : new String[] {"dbJson", "dbObjBeforeJson", "dbObjAfterJson"}) {
            OBJECT_FIELDS.put(name, Database.class);
        }
        OBJECT_FIELDS.put("functionObjJson", Function.class);
        OBJECT_FIELDS.put("colStatsJson", ColumnStatistics.class);
        OBJECT_FIELDS.put("primaryKeyListJson", SQLPrimaryKey.class);
        OBJECT_FIELDS.put("foreignKeyListJson", SQLForeignKey.class);
    }

    /** How many Thrift objects of a message Thrift's TJSONProtocol decodes (it throws on
     *  one it cannot read or whose required fields are unset). */
    private static int thriftObjects(String message) throws Exception {
        JsonNode tree = new ObjectMapper().readTree(message);
        TDeserializer reader = new TDeserializer(new TJSONProtocol.Factory());
        int decoded = 0;
        for (Map.Entry<String, Class<? extends TBase>> field : OBJECT_FIELDS.entrySet()) {
            JsonNode value = tree.get(field.getKey());
            if (value == null || value.isNull()) {
                continue;
            }
            List<JsonNode> texts = new ArrayList<>();
            if (value.isArray()) {
                value.forEach(texts::add);
            } else {
                texts.add(value);
            }
            for (JsonNode text : texts) {
                TBase object = field.getValue().getDeclaredConstructor().newInstance();
                reader.deserialize(object, text.asText(), "UTF-8");  // read() validates
                decoded++;
            }
        }
        return decoded;
    }
}
