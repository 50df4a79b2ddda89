// Hive's own Java metastore client (HiveMetaStoreClient 2.3, from the jars of the pyspark wheel)
// calls a running server, configured as Hive and Spark configure it (HiveConf with
// hive.metastore.uris), and prints, as one JSON object on stdout, what it read: the databases,
// a table, the partitions a filter selects (listPartitionsByFilter), the partition names, and
// distinct partition values (listPartitionValues, HMS's get_partition_values).
// tests/clients/test_java_client.py compiles it with javac, runs it and compares the output with
// what the Python client reads.
//
//   javac -cp '<pyspark>/jars/*' -d OUT tests/clients/java/HiveClientCheck.java
//   java -cp 'OUT:<pyspark>/jars/*' HiveClientCheck HOST PORT DB TABLE FILTER \
//       VALUES_KEY VALUES_KEY_TYPE VALUES_FILTER
//
// Only loopback addresses are accepted.

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.NoSuchObjectException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.PartitionValuesRequest;
import org.apache.hadoop.hive.metastore.api.PartitionValuesResponse;
import org.apache.hadoop.hive.metastore.api.PartitionValuesRow;
import org.apache.hadoop.hive.metastore.api.Table;

public final class HiveClientCheck {
    private static final String TIME_PARTCOLS = "cube.storagetable.time.partcols";
    private static final String UPDATE_PERIOD = "cube.storagetable.partition.update.period";

    private HiveClientCheck() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: HiveClientCheck HOST PORT DB TABLE FILTER"
                    + " VALUES_KEY VALUES_KEY_TYPE VALUES_FILTER");
            System.exit(2);
        }
        String host = args[0];
        if (!InetAddress.getByName(host).isLoopbackAddress()) {
            System.err.println("refusing a non-loopback host: " + host);
            System.exit(2);
        }
        String db = args[2];
        String table = args[3];

        HiveConf conf = new HiveConf();
        conf.set("hive.metastore.uris", "thrift://" + host + ":" + args[1]);
        conf.set("hive.metastore.connect.retries", "1");
        conf.set("hive.metastore.client.socket.timeout", "30s");
        HiveMetaStoreClient client = new HiveMetaStoreClient(conf);
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            List<String> databases = new ArrayList<>(client.getAllDatabases());
            Collections.sort(databases);
            out.put("databases", databases);

            Table t = client.getTable(db, table);
            Map<String, Object> tableView = new LinkedHashMap<>();
            tableView.put("dbName", t.getDbName());
            tableView.put("tableName", t.getTableName());
            tableView.put("tableType", t.getTableType());
            List<List<String>> keys = new ArrayList<>();
            for (FieldSchema key : t.getPartitionKeys()) {
                keys.add(Arrays.asList(key.getName(), key.getType()));
            }
            tableView.put("partitionKeys", keys);
            tableView.put("location", t.getSd().getLocation());
            tableView.put("timeColumns", t.getParameters().get(TIME_PARTCOLS));
            out.put("table", tableView);

            List<List<Object>> filtered = new ArrayList<>();
            for (Partition p : client.listPartitionsByFilter(db, table, args[4], (short) -1)) {
                filtered.add(Arrays.asList(
                        p.getValues(), p.getSd().getLocation(), p.getParameters().get(UPDATE_PERIOD)));
            }
            filtered.sort((a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
            out.put("filtered", filtered);

            out.put("partitionNames", client.listPartitionNames(db, table, (short) -1));

            PartitionValuesRequest request = new PartitionValuesRequest(
                    db, table, Collections.singletonList(new FieldSchema(args[5], args[6], null)));
            request.setApplyDistinct(true);
            request.setFilter(args[7]);
            request.setAscending(false);
            PartitionValuesResponse response = client.listPartitionValues(request);
            List<List<String>> rows = new ArrayList<>();
            for (PartitionValuesRow row : response.getPartitionValues()) {
                rows.add(row.getRow());
            }
            out.put("partitionValues", rows);

            // A server error reaches the caller as the IDL's exception; the client goes on.
            try {
                client.getTable(db, "no_such_table");
                out.put("missingTable", "no error");
            } catch (NoSuchObjectException e) {
                out.put("missingTable", e.getClass().getSimpleName());
            }
            out.put("afterError", client.getAllDatabases().size());
        } finally {
            client.close();
        }
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }
}
