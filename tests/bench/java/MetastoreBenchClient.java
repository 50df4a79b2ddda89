// Benchmark client in Java: times metastore calls the way Spark's bundled Hive client makes
// them (the generated ThriftHiveMetastore client over a plain socket, binary protocol), so
// that a reply is decoded at Java speed rather than at the speed of a Python client.
//
// Run with the jars of the pyspark wheel on the class path (Java's source launcher compiles
// this file on the fly):
//
//   java -cp '<pyspark>/jars/*' tests/bench/java/MetastoreBenchClient.java 127.0.0.1 9083 MODE
//
// MODE "decode": the generated client's call over a plain TSocket, as Hive's metastore client
// opens it, the reply decoded into Java objects as Spark gets them. MODE "skip": the same
// requests over a socket with 1 MiB buffers, the reply walked field by field with
// TProtocolUtil.skip (every byte read, no partition object built), which measures how fast the
// server answers rather than how fast a client decodes.
//
// It reads one call per line on stdin, tab-separated:
//   get_partitions            DB TABLE MAX
//   get_partitions_by_filter  DB TABLE FILTER MAX
//   get_num_partitions_by_filter DB TABLE FILTER
//   get_partition_names       DB TABLE MAX
// Each call is answered on one stdout line: "ok <TAB> size <TAB> nanoseconds" (size: partitions
// or names returned, or the count) or "error <TAB> message". The time covers sending the call
// and receiving the whole reply; nothing else. Only loopback addresses are accepted.

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TIOStreamTransport;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;

public final class MetastoreBenchClient {
    private MetastoreBenchClient() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !(args[2].equals("decode") || args[2].equals("skip"))) {
            System.err.println("usage: MetastoreBenchClient HOST PORT decode|skip");
            System.exit(2);
        }
        boolean skip = args[2].equals("skip");
        if (!InetAddress.getByName(args[0]).isLoopbackAddress()) {
            System.err.println("refusing a non-loopback host: " + args[0]);
            System.exit(2);
        }
        TSocket socket = new TSocket(args[0], Integer.parseInt(args[1]), 600_000);
        socket.open();
        TTransport transport = socket;
        if (skip) {
            int buffer = 1 << 20;
            transport = new TIOStreamTransport(
                    new BufferedInputStream(socket.getSocket().getInputStream(), buffer),
                    new BufferedOutputStream(socket.getSocket().getOutputStream(), buffer));
        }
        TProtocol protocol = new TBinaryProtocol(transport);
        ThriftHiveMetastore.Client client = new ThriftHiveMetastore.Client(protocol);
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        out.println("ready");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            try {
                long started = System.nanoTime();
                long size;
                if (skip) {
                    send(client, f);
                    size = skipReply(protocol);
                } else {
                    size = call(client, f);
                }
                long elapsed = System.nanoTime() - started;
                out.println("ok\t" + size + "\t" + elapsed);
            } catch (Exception e) {
                String message = String.valueOf(e.getMessage()).replace('\n', ' ');
                out.println("error\t" + e.getClass().getSimpleName() + ": " + message);
            }
        }
        socket.close();
    }

    /** The call of line {@code f} through the generated client; the size of its result. */
    private static long call(ThriftHiveMetastore.Client client, String[] f) throws Exception {
        switch (f[0]) {
            case "get_partitions":
                return client.get_partitions(f[1], f[2], Short.parseShort(f[3])).size();
            case "get_partitions_by_filter":
                return client.get_partitions_by_filter(
                        f[1], f[2], f[3], Short.parseShort(f[4])).size();
            case "get_num_partitions_by_filter":
                return client.get_num_partitions_by_filter(f[1], f[2], f[3]);
            case "get_partition_names":
                return client.get_partition_names(f[1], f[2], Short.parseShort(f[3])).size();
            default:
                throw new IllegalArgumentException("unknown call " + f[0]);
        }
    }

    /** Sends the request of line {@code f} without reading the reply. */
    private static void send(ThriftHiveMetastore.Client client, String[] f) throws Exception {
        switch (f[0]) {
            case "get_partitions":
                client.send_get_partitions(f[1], f[2], Short.parseShort(f[3]));
                break;
            case "get_partitions_by_filter":
                client.send_get_partitions_by_filter(f[1], f[2], f[3], Short.parseShort(f[4]));
                break;
            case "get_num_partitions_by_filter":
                client.send_get_num_partitions_by_filter(f[1], f[2], f[3]);
                break;
            case "get_partition_names":
                client.send_get_partition_names(f[1], f[2], Short.parseShort(f[3]));
                break;
            default:
                throw new IllegalArgumentException("unknown call " + f[0]);
        }
    }

    /**
     * Reads one reply without building its result: the size of a list result (its header) or
     * an i32 result; a declared exception (any other field) is skipped and reported.
     */
    private static long skipReply(TProtocol p) throws Exception {
        TMessage message = p.readMessageBegin();
        if (message.type == TMessageType.EXCEPTION) {
            TApplicationException error = TApplicationException.readFrom(p);
            p.readMessageEnd();
            throw error;
        }
        long size = -1;
        short errorField = 0;
        p.readStructBegin();
        while (true) {
            TField field = p.readFieldBegin();
            if (field.type == TType.STOP) {
                break;
            }
            if (field.id == 0 && field.type == TType.LIST) {
                TList list = p.readListBegin();
                size = list.size;
                for (int i = 0; i < list.size; i++) {
                    TProtocolUtil.skip(p, list.elemType);
                }
                p.readListEnd();
            } else if (field.id == 0 && field.type == TType.I32) {
                size = p.readI32();
            } else {
                errorField = field.id;
                TProtocolUtil.skip(p, field.type);
            }
            p.readFieldEnd();
        }
        p.readStructEnd();
        p.readMessageEnd();
        if (errorField != 0) {
            throw new IllegalStateException("declared exception in result field " + errorField);
        }
        return size;
    }
}
