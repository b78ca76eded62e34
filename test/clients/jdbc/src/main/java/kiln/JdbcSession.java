package kiln;

import com.mysql.cj.jdbc.JdbcConnection;
import com.mysql.cj.jdbc.ServerPreparedStatement;
import com.mysql.cj.protocol.ServerSession;

import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A scripted MySQL Connector/J 8.x session against a MySQL-compatible server.
 *
 * <pre>usage: java kiln.JdbcSession HOST PORT</pre>
 *
 * Connects as root with an empty password with the options applications use for speed
 * (server-side prepared statements and their cache, local transaction state, affected rows,
 * multi-statements, rewritten batches, TLS preferred) and checks what the driver reads back:
 * connect-time variables and status flags, prepared statement parameters of each type through the
 * binary and the text protocol, a rewritten batch of 1,024 rows, generated keys of multi-row
 * inserts, commit and rollback seen from a second connection, statements with a trailing ';',
 * multi-statement results, long data and a value over 16 MiB, cursor fetch and streaming,
 * DatabaseMetaData (the driver's default and useInformationSchema=true) and result-set metadata,
 * 4-byte UTF-8, bytes 0x00-0xFF in a latin1 column (hex literal, setBytes), and errors
 * 1062/1064/1146/1054 with the connection staying usable. Uses its own
 * database kiln_jdbc, dropped at the end unless KILN_JDBC_KEEP is set.
 *
 * Every check has an id. A failing check prints "FAIL id: ..." and the run exits 1 at the end.
 * Against Kiln only, the checks listed in KNOWN_GAPS print "gap id: ..." and, at the end, one
 * "KNOWN GAP: description [checks: ...]" line per gap, and do not fail the run: they are SQL-layer
 * gaps waiting for a fix (remove the entries once they pass; the run prints a NOTE when a listed
 * check passes). Against MariaDB (the reference the test is validated on; scripts/test.sh with
 * TEST_SERVER=mariadb) every check counts; the few places where MariaDB's documented behaviour
 * differs from MySQL 8 are tolerated only on MariaDB and say why.
 */
public final class JdbcSession {
    static final String DB = "kiln_jdbc";

    /**
     * Checks that fail on Kiln because of a gap in its SQL layer (internal/sql, internal/server),
     * id to a one-line description. Only consulted when the server is Kiln.
     */
    static final Map<String, String> KNOWN_GAPS = new LinkedHashMap<>();

    static void gap(String description, String... ids) {
        for (String id : ids) {
            KNOWN_GAPS.put(id, description);
        }
    }

    static {
        // No known gaps at present. Add entries as gap("what Kiln does wrong", "check.id", ...).
    }

    final String host;
    final int port;
    boolean kiln;
    boolean mariadb;
    String version = "?";
    int passed;
    final List<String> failures = new ArrayList<>();
    final List<String> gaps = new ArrayList<>();
    final List<String> fixedGaps = new ArrayList<>();
    String section;

    JdbcSession(String host, int port) {
        this.host = host;
        this.port = port;
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: java kiln.JdbcSession HOST PORT");
            System.exit(2);
        }
        JdbcSession s = new JdbcSession(args[0], Integer.parseInt(args[1]));
        System.exit(s.run());
    }

    // --- checks ---------------------------------------------------------------------------

    void fail(String id, String msg) {
        if (kiln && KNOWN_GAPS.containsKey(id)) {
            gaps.add(id);
            System.out.println("gap  " + id + ": " + msg);
            return;
        }
        failures.add(id + ": " + msg);
        System.out.println("FAIL " + id + ": " + msg);
    }

    void pass(String id) {
        passed++;
        if (kiln && KNOWN_GAPS.containsKey(id)) {
            fixedGaps.add(id);
        }
    }

    boolean check(String id, boolean cond, String msg) {
        if (cond) {
            pass(id);
        } else {
            fail(id, msg);
        }
        return cond;
    }

    boolean eq(String id, Object want, Object got) {
        boolean same = want instanceof byte[] && got instanceof byte[]
                ? Arrays.equals((byte[]) want, (byte[]) got)
                : Objects.equals(want, got);
        return check(id, same, "want " + show(want) + ", got " + show(got));
    }

    static String show(Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof byte[]) {
            return "0x" + HexFormat.of().formatHex((byte[]) o);
        }
        if (o instanceof String) {
            return "\"" + o + "\"";
        }
        if (o instanceof long[]) {
            long[] a = (long[]) o;
            return a.length > 12 ? "long[" + a.length + "]" : Arrays.toString(a);
        }
        if (o instanceof int[]) {
            int[] a = (int[]) o;
            return a.length > 12 ? "int[" + a.length + "]" : Arrays.toString(a);
        }
        return o + " (" + o.getClass().getSimpleName() + ")";
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (b.length() > 0) {
                b.append(" / caused by ");
            }
            b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            if (c instanceof SQLException) {
                SQLException e = (SQLException) c;
                b.append(" [error ").append(e.getErrorCode()).append(", SQLState ").append(e.getSQLState()).append(']');
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }

    interface Body {
        void run() throws Exception;
    }

    void section(String id, Body body) {
        section = id;
        int before = failures.size();
        int gapsBefore = gaps.size();
        try {
            body.run();
        } catch (Throwable t) {
            fail(id, "exception: " + describe(t));
            if (!(t instanceof SQLException) && !(t instanceof AssertionError)) {
                t.printStackTrace(System.out);
            }
        }
        String status = failures.size() > before ? "FAIL" : gaps.size() > gapsBefore ? "gap " : "ok  ";
        System.out.println(status + " == " + id);
        System.out.flush();
    }

    /** Expects sql to fail with code/state; returns the exception (null if it did not fail). */
    SQLException expectError(String id, int code, String state, Body body) {
        try {
            body.run();
        } catch (SQLException e) {
            eq(id + ".code", code, e.getErrorCode());
            eq(id + ".sqlstate", state, e.getSQLState());
            return e;
        } catch (Exception e) {
            fail(id, "expected SQLException " + code + ", got " + describe(e));
            return null;
        }
        fail(id, "expected SQLException " + code + " (" + state + "), got success");
        return null;
    }

    // --- connections ----------------------------------------------------------------------

    /** The options of the main connection (the brief's list), plus extra ones. */
    String url(String db, String extra) {
        return "jdbc:mysql://" + host + ":" + port + "/" + db + "?user=root&password="
                + "&useServerPrepStmts=true&cachePrepStmts=true&useLocalTransactionState=true"
                + "&useAffectedRows=true&allowMultiQueries=true&rewriteBatchedStatements=true"
                + "&connectTimeout=20000&socketTimeout=120000"
                + (extra.isEmpty() ? "" : "&" + extra);
    }

    Connection open(String db, String extra) throws SQLException {
        return DriverManager.getConnection(url(db, extra));
    }

    /** A plain connection: driver defaults except TLS off (CLIENT_FOUND_ROWS, no multi-statements). */
    Connection openPlain(String extra) throws SQLException {
        return DriverManager.getConnection("jdbc:mysql://" + host + ":" + port + "/" + DB
                + "?user=root&password=&sslMode=DISABLED&connectTimeout=20000&socketTimeout=120000"
                + (extra.isEmpty() ? "" : "&" + extra));
    }

    static ServerSession serverSession(Connection c) throws SQLException {
        return c.unwrap(JdbcConnection.class).getSession().getServerSession();
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static long queryLong(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                throw new AssertionError(sql + ": no row");
            }
            return rs.getLong(1);
        }
    }

    static String queryString(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            if (!rs.next()) {
                throw new AssertionError(sql + ": no row");
            }
            return rs.getString(1);
        }
    }

    static List<String> column(Connection c, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /** Prepares sql and checks that the driver really prepared it on the server. */
    PreparedStatement serverPrepare(String id, Connection c, String sql, int keys) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql, keys);
        check(id + ".server-prepared", ps.isWrapperFor(ServerPreparedStatement.class),
                "the driver fell back to a client-side statement (COM_STMT_PREPARE failed?) for: " + sql);
        return ps;
    }

    PreparedStatement serverPrepare(String id, Connection c, String sql) throws SQLException {
        return serverPrepare(id, c, sql, Statement.NO_GENERATED_KEYS);
    }

    // --- the session ----------------------------------------------------------------------

    int run() {
        Connection[] main = new Connection[1];
        section("connect", () -> {
            // TLS preferred: the driver asks for TLS only when the server offers it; a server
            // without TLS is used in plaintext.
            try (Connection c = DriverManager.getConnection(url("", "sslMode=PREFERRED"))) {
                version = queryString(c, "SELECT VERSION()");
                kiln = version.toLowerCase().contains("kiln");
                mariadb = version.toLowerCase().contains("mariadb");
                eq("connect.preferred.select", 2L, queryLong(c, "SELECT 1 + 1"));
                System.out.println("     server " + version + "; TLS with sslMode=PREFERRED: "
                        + c.unwrap(JdbcConnection.class).getSession().isSSLEstablished());
                exec(c, "DROP DATABASE IF EXISTS " + DB);
                exec(c, "CREATE DATABASE " + DB + " CHARACTER SET utf8mb4");
            }
            try (Connection c = open(DB, "sslMode=DISABLED")) {
                eq("connect.disabled.select", "kiln_jdbc", queryString(c, "SELECT DATABASE()"));
            }
            // sslMode=REQUIRED must fail cleanly (not hang) when the server has no TLS.
            try (Connection c = open(DB, "sslMode=REQUIRED")) {
                check("connect.required", c.unwrap(JdbcConnection.class).getSession().isSSLEstablished(), "sslMode=REQUIRED connected without TLS");
            } catch (SQLException e) {
                check("connect.required", e.getErrorCode() == 0 && String.valueOf(e.getMessage()).contains("SSL"),
                        "sslMode=REQUIRED against a server without TLS: want the driver's 'server does not support SSL' error, got "
                                + describe(e));
            }
            main[0] = open(DB, "sslMode=PREFERRED");
        });
        if (main[0] == null) {
            return finish();
        }
        try (Connection a = main[0]) {
            session(a);
            if (System.getenv("KILN_JDBC_KEEP") == null) {
                section("cleanup", () -> exec(a, "DROP DATABASE " + DB));
            }
        } catch (SQLException e) {
            fail("close", describe(e));
        }
        return finish();
    }

    int finish() {
        System.out.println();
        System.out.println("server " + version + ": " + passed + " checks passed, " + failures.size() + " failed, "
                + gaps.size() + " known gaps");
        for (String id : fixedGaps) {
            if (!gaps.contains(id)) {
                System.out.println("NOTE: known gap " + id + " passes now: remove it from KNOWN_GAPS");
            }
        }
        // One line per gap, with the checks it fails (their details are in the "gap" lines above).
        Map<String, List<String>> byGap = new LinkedHashMap<>();
        for (String id : gaps) {
            byGap.computeIfAbsent(KNOWN_GAPS.get(id), k -> new ArrayList<>()).add(id);
        }
        byGap.forEach((desc, ids) -> System.out.println("KNOWN GAP: " + desc + " [checks: " + String.join(", ", ids) + "]"));
        for (String f : failures) {
            System.out.println("FAILED: " + f);
        }
        return failures.isEmpty() ? 0 : 1;
    }

    void session(Connection a) {
        section("connect.variables", () -> connectVariables(a));
        section("session.set", () -> sessionSet(a));
        section("prepared.types", () -> preparedTypes(a));
        section("longdata", () -> longData(a));
        section("bigpacket", () -> bigPacket(a));
        section("batch", () -> batch(a));
        section("fetch", () -> fetch(a));
        section("keys", () -> generatedKeys(a));
        section("txn", () -> transactions(a));
        section("txn.snapshot", () -> transactionSnapshot(a));
        section("semicolon", () -> trailingSemicolon(a));
        section("multi", () -> multiStatements(a));
        section("affected", () -> affectedRows(a));
        section("meta.setup", () -> metaSetup(a));
        // Connector/J asks information_schema when the server says 8.0.3 or later (Kiln, MySQL),
        // and uses SHOW FULL TABLES / SHOW FULL COLUMNS / SHOW INDEX otherwise (MariaDB's 5.5.5-).
        section("meta.default", () -> metadata("meta.default", a));
        section("meta.is", () -> {
            try (Connection c = open(DB, "sslMode=DISABLED&useInformationSchema=true")) {
                metadata("meta.is", c);
            }
        });
        section("meta.rs", () -> resultSetMetadata(a));
        section("unicode", () -> unicode(a));
        section("latin1", () -> latin1(a));
        section("errors", () -> errors(a));
        if (kiln) {
            // MariaDB has neither session_track_gtids nor WAIT_FOR_EXECUTED_GTID_SET.
            section("gtid", this::gtids);
        }
        String trustStore = System.getenv("KILN_JDBC_TRUSTSTORE");
        if (trustStore != null && !trustStore.isEmpty()) {
            section("tls", () -> tls(trustStore));
        } else {
            System.out.println("skip == tls (KILN_JDBC_TRUSTSTORE not set)");
        }
    }

    /**
     * TLS, given a PKCS #12 trust store holding the server's CA (test/clients/jdbc.sh builds it from
     * $KILN_TLS_CA): sslMode=REQUIRED, VERIFY_CA and VERIFY_IDENTITY connect encrypted, and
     * require_secure_transport refuses sslMode=DISABLED with 3159 while TLS still connects.
     */
    void tls(String trustStore) throws Exception {
        String verify = "trustCertificateKeyStoreUrl=file:" + trustStore
                + "&trustCertificateKeyStoreType=PKCS12&trustCertificateKeyStorePassword=kiln-test";
        String[][] modes = {
            {"required", "sslMode=REQUIRED"},
            {"verify_ca", "sslMode=VERIFY_CA&" + verify},
            {"verify_identity", "sslMode=VERIFY_IDENTITY&" + verify},
        };
        for (String[] m : modes) {
            try (Connection c = open(DB, m[1])) {
                check("tls." + m[0] + ".established", c.unwrap(JdbcConnection.class).getSession().isSSLEstablished(),
                        m[1] + " connected without TLS");
                String v = "";
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW STATUS LIKE 'Ssl_version'")) {
                    if (rs.next()) {
                        v = rs.getString(2);
                    }
                }
                check("tls." + m[0] + ".version", v.equals("TLSv1.2") || v.equals("TLSv1.3"), "Ssl_version " + v);
                eq("tls." + m[0] + ".select", "kiln_jdbc", queryString(c, "SELECT DATABASE()"));
            }
        }
        try (Connection admin = open(DB, "sslMode=REQUIRED")) {
            exec(admin, "SET GLOBAL require_secure_transport = ON");
            try {
                expectError("tls.require.plain", 3159, "HY000", () -> {
                    try (Connection c = open(DB, "sslMode=DISABLED")) {
                        queryString(c, "SELECT 1");
                    }
                });
                try (Connection c = open(DB, "sslMode=VERIFY_CA&" + verify)) {
                    eq("tls.require.tls", "1", queryString(c, "SELECT @@global.require_secure_transport"));
                }
            } finally {
                exec(admin, "SET GLOBAL require_secure_transport = OFF");
            }
        }
    }

    /** Restores autocommit on a connection a failed section may have left in a transaction. */
    static void reset(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.rollback();
            c.setAutoCommit(true);
        }
    }

    // The driver's connect-time SELECT @@session.auto_increment_increment, @@character_set_client,
    // ..., @@transaction_isolation: what it stored.
    void connectVariables(Connection a) throws Exception {
        ServerSession ss = serverSession(a);
        eq("connect.var.auto_increment_increment", "1", ss.getServerVariable("auto_increment_increment"));
        eq("connect.var.transaction_isolation", "REPEATABLE-READ", ss.getServerVariable("transaction_isolation"));
        String mp = ss.getServerVariable("max_allowed_packet");
        check("connect.var.max_allowed_packet", mp != null && mp.matches("[0-9]+") && Long.parseLong(mp) >= 1 << 20,
                "max_allowed_packet " + show(mp));
        for (String v : new String[] {"character_set_client", "character_set_connection", "character_set_server",
                "collation_server", "collation_connection", "sql_mode", "time_zone", "wait_timeout"}) {
            check("connect.var." + v, ss.getServerVariables().containsKey(v),
                    "the connect-time query did not return " + v);
        }
        check("connect.var.character_set_client.utf8mb4",
                String.valueOf(ss.getServerVariable("character_set_client")).startsWith("utf8"),
                "character_set_client " + show(ss.getServerVariable("character_set_client")));
        eq("connect.catalog", DB, a.getCatalog());
        eq("connect.autocommit", true, a.getAutoCommit());
        check("connect.status.autocommit", ss.isAutocommit(), "the OK packets lack SERVER_STATUS_AUTOCOMMIT");
        check("connect.status.not-in-trans", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS set on a fresh connection");
        // getTransactionIsolation asks the server (SELECT @@session.transaction_isolation).
        eq("connect.isolation", Connection.TRANSACTION_REPEATABLE_READ, a.getTransactionIsolation());
        DatabaseMetaData md = a.getMetaData();
        // MariaDB's handshake says "5.5.5-" before its version (a documented prefix).
        String pv = md.getDatabaseProductVersion();
        check("connect.product", pv.equals(version) || mariadb && pv.equals("5.5.5-" + version), "product version " + pv);
        if (kiln) {
            eq("connect.major", 8, md.getDatabaseMajorVersion());
        }
        eq("connect.ping", true, a.isValid(5));
    }

    void sessionSet(Connection a) throws Exception {
        try (Statement st = a.createStatement()) {
            eq("set.names.count", 0, st.executeUpdate("SET NAMES utf8mb4"));
            try (ResultSet rs = st.executeQuery("SELECT @@character_set_client, @@character_set_connection, @@character_set_results")) {
                check("set.names.row", rs.next(), "no row");
                eq("set.names.client", "utf8mb4", rs.getString(1));
                eq("set.names.connection", "utf8mb4", rs.getString(2));
                eq("set.names.results", "utf8mb4", rs.getString(3));
            }
            st.execute("SET character_set_results = NULL");
            try (ResultSet rs = st.executeQuery("SELECT @@character_set_results, @@character_set_client")) {
                check("set.results-null.row", rs.next(), "no row");
                eq("set.results-null.value", null, rs.getString(1));
                eq("set.results-null.wasNull", true, rs.wasNull());
                eq("set.results-null.client", "utf8mb4", rs.getString(2));
            }
            exec(a, "CREATE TABLE ac (id INT PRIMARY KEY, v VARCHAR(10))");
            // An explicit SET autocommit=0: the server's status flags say so, the driver follows.
            st.execute("SET autocommit=0");
            ServerSession ss = serverSession(a);
            check("set.autocommit0.flag", !ss.isAutocommit(), "OK packet after SET autocommit=0 still has SERVER_STATUS_AUTOCOMMIT");
            eq("set.autocommit0.var", 0L, queryLong(a, "SELECT @@autocommit"));
            eq("set.autocommit0.insert", 1, st.executeUpdate("INSERT INTO ac VALUES (1, 'x')"));
            check("set.autocommit0.in-trans", ss.inTransactionOnServer(),
                    "OK packet of an INSERT with autocommit=0 lacks SERVER_STATUS_IN_TRANS");
            st.execute("ROLLBACK");
            check("set.autocommit0.rolled-back", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS still set after ROLLBACK");
            eq("set.autocommit0.rollback", 0L, queryLong(a, "SELECT COUNT(*) FROM ac"));
            st.execute("COMMIT"); // end the read's transaction
            st.execute("SET autocommit=1");
            check("set.autocommit1.flag", ss.isAutocommit(), "OK packet after SET autocommit=1 lacks SERVER_STATUS_AUTOCOMMIT");
            eq("set.autocommit1.var", 1L, queryLong(a, "SELECT @@autocommit"));
            // With autocommit on, an explicit transaction sets and clears SERVER_STATUS_IN_TRANS.
            st.execute("START TRANSACTION");
            check("set.start-transaction.in-trans", ss.inTransactionOnServer(),
                    "OK packet of START TRANSACTION lacks SERVER_STATUS_IN_TRANS");
            st.executeUpdate("INSERT INTO ac VALUES (2, 'y')");
            check("set.start-transaction.in-trans2", ss.inTransactionOnServer(), "IN_TRANS lost after an INSERT");
            st.execute("COMMIT");
            check("set.commit.not-in-trans", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS still set after COMMIT");
            eq("set.commit.rows", List.of("2"), column(a, "SELECT id FROM ac"));
        } finally {
            exec(a, "SET autocommit=1");
        }
    }

    static final byte[] BIN1 = {0, 1, (byte) 0xff, 0x7f, '\'', '\\', (byte) 0x80};
    static final String STR1 = "it's \"quoted\" \\ back`tick";
    static final BigDecimal DEC1 = new BigDecimal("-123456789012345678.123456");
    static final BigDecimal DEC2 = new BigDecimal("0.000001");
    static final Timestamp TS1 = Timestamp.valueOf("2024-02-29 23:59:58.123456");
    static final Timestamp TS2 = Timestamp.valueOf("2001-02-03 04:05:06");
    static final Date DT1 = Date.valueOf("1999-12-31");
    static final Date DT2 = Date.valueOf("9999-12-31");

    /**
     * TS1 as stored. MariaDB announces itself as "5.5.5-10.11..." in the handshake (its documented
     * replication-compatibility prefix), so the driver takes it for a server without fractional
     * seconds (MySQL < 5.6.4) and drops them from Timestamp parameters.
     */
    Timestamp ts1() {
        if (!mariadb) {
            return TS1;
        }
        Timestamp t = new Timestamp(TS1.getTime());
        t.setNanos(0);
        return t;
    }

    void preparedTypes(Connection a) throws Exception {
        exec(a, "CREATE TABLE types_t (id BIGINT NOT NULL PRIMARY KEY, i INT NULL, b TINYINT NULL, "
                + "bin VARBINARY(16) NULL, s VARCHAR(64) NULL, n INT NULL, d DECIMAL(24,6) NULL, "
                + "ts DATETIME(6) NULL, dt DATE NULL, f DOUBLE NULL, bl BLOB NULL)");
        String ins = "INSERT INTO types_t (id, i, b, bin, s, n, d, ts, dt, f, bl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement ps = serverPrepare("types.insert", a, ins)) {
            eq("types.param-count", 11, ps.getParameterMetaData().getParameterCount());
            ps.setLong(1, Long.MAX_VALUE);
            ps.setInt(2, Integer.MIN_VALUE);
            ps.setByte(3, (byte) -128);
            ps.setBytes(4, BIN1);
            ps.setString(5, STR1);
            ps.setNull(6, Types.INTEGER);
            ps.setBigDecimal(7, DEC1);
            ps.setTimestamp(8, TS1);
            ps.setDate(9, DT1);
            ps.setDouble(10, -1.5e-300);
            ps.setBytes(11, new byte[0]);
            eq("types.insert1", 1, ps.executeUpdate());
            // Same statement, other values (the driver re-sends parameter types only when they change).
            ps.setLong(1, Long.MIN_VALUE);
            ps.setInt(2, Integer.MAX_VALUE);
            ps.setByte(3, (byte) 127);
            ps.setBytes(4, new byte[0]);
            ps.setString(5, "");
            ps.setInt(6, 42);
            ps.setBigDecimal(7, DEC2);
            ps.setTimestamp(8, TS2);
            ps.setDate(9, DT2);
            ps.setDouble(10, 0.1);
            ps.setBytes(11, new byte[] {1, 2, 3});
            eq("types.insert2", 1, ps.executeUpdate());
            // Every parameter NULL, bound with different setNull types.
            ps.setLong(1, 7);
            ps.setNull(2, Types.INTEGER);
            ps.setNull(3, Types.TINYINT);
            ps.setNull(4, Types.VARBINARY);
            ps.setNull(5, Types.VARCHAR);
            ps.setNull(6, Types.BIGINT);
            ps.setNull(7, Types.DECIMAL);
            ps.setNull(8, Types.TIMESTAMP);
            ps.setNull(9, Types.DATE);
            ps.setNull(10, Types.DOUBLE);
            ps.setNull(11, Types.BLOB);
            eq("types.insert3", 1, ps.executeUpdate());
        }
        String sel = "SELECT id, i, b, bin, s, n, d, ts, dt, f, bl FROM types_t WHERE id = ?";
        try (PreparedStatement ps = serverPrepare("types.select", a, sel)) {
            ps.setLong(1, Long.MAX_VALUE);
            try (ResultSet rs = ps.executeQuery()) {
                checkRow1("types.bin.row1", rs);
            }
            ps.setLong(1, Long.MIN_VALUE);
            try (ResultSet rs = ps.executeQuery()) {
                checkRow2("types.bin.row2", rs);
            }
            ps.setLong(1, 7);
            try (ResultSet rs = ps.executeQuery()) {
                checkNullRow("types.bin.row3", rs);
            }
        }
        // The cache hands the same server statement back for the same SQL.
        try (PreparedStatement ps = serverPrepare("types.cached", a, sel)) {
            ps.setString(1, "7"); // a string parameter compared with a BIGINT column
            try (ResultSet rs = ps.executeQuery()) {
                check("types.cached.row", rs.next() && rs.getLong(1) == 7 && !rs.next(), "id = '7' did not find exactly row 7");
            }
        }
        // The text protocol (Statement) must read the same values.
        try (Statement st = a.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, i, b, bin, s, n, d, ts, dt, f, bl FROM types_t ORDER BY id DESC")) {
            checkRow1("types.text.row1", rs);
            checkNullRow("types.text.row3", rs);
            checkRow2("types.text.row2", rs);
        }
        // Parameters in the select list.
        try (PreparedStatement ps = serverPrepare("types.select-params", a, "SELECT ? AS a, ? AS b, ? + 1 AS c")) {
            ps.setInt(1, 5);
            ps.setString(2, "x😀");
            ps.setLong(3, 41);
            try (ResultSet rs = ps.executeQuery()) {
                check("types.select-params.row", rs.next(), "no row");
                eq("types.select-params.a", 5, rs.getInt(1));
                eq("types.select-params.b", "x😀", rs.getString(2));
                eq("types.select-params.c", 42L, rs.getLong(3));
            }
        }
        // Parameters in expressions and comparisons.
        try (PreparedStatement ps = serverPrepare("types.where", a,
                "SELECT COUNT(*) FROM types_t WHERE i = ? OR b = ? OR d = ? OR dt = ? OR ts = ? OR bin = ? OR s = ?")) {
            ps.setInt(1, Integer.MIN_VALUE);
            ps.setByte(2, (byte) 127);
            ps.setBigDecimal(3, new BigDecimal("0.000001"));
            ps.setDate(4, DT1);
            ps.setTimestamp(5, ts1());
            ps.setBytes(6, BIN1);
            ps.setString(7, STR1);
            try (ResultSet rs = ps.executeQuery()) {
                check("types.where.row", rs.next(), "no row");
                eq("types.where.count", 2L, rs.getLong(1));
            }
            for (int k = 1; k <= 7; k++) {
                ps.setNull(k, Types.NULL);
            }
            try (ResultSet rs = ps.executeQuery()) {
                check("types.where-null.row", rs.next(), "no row");
                eq("types.where-null.count", 0L, rs.getLong(1));
            }
        }
    }

    void checkRow1(String id, ResultSet rs) throws SQLException {
        if (!check(id, rs.next(), "row missing")) {
            return;
        }
        eq(id + ".long", Long.MAX_VALUE, rs.getLong("id"));
        eq(id + ".int", Integer.MIN_VALUE, rs.getInt("i"));
        eq(id + ".byte", (byte) -128, rs.getByte("b"));
        eq(id + ".bytes", BIN1, rs.getBytes("bin"));
        eq(id + ".string", STR1, rs.getString("s"));
        eq(id + ".null", 0, rs.getInt("n"));
        eq(id + ".null.wasNull", true, rs.wasNull());
        eq(id + ".null.object", null, rs.getObject("n"));
        eq(id + ".decimal", DEC1, rs.getBigDecimal("d"));
        eq(id + ".timestamp", ts1(), rs.getTimestamp("ts"));
        // As many digits as the column's decimals (6) in its column definition.
        eq(id + ".timestamp-string", mariadb ? "2024-02-29 23:59:58" : "2024-02-29 23:59:58.123456", rs.getString("ts"));
        eq(id + ".date", DT1.toString(), String.valueOf(rs.getDate("dt")));
        eq(id + ".double", -1.5e-300, rs.getDouble("f"));
        eq(id + ".blob-empty", new byte[0], rs.getBytes("bl"));
        eq(id + ".blob-empty.wasNull", false, rs.wasNull());
        // getObject: the Java types the driver picks from the column types.
        eq(id + ".object.bigint", Long.MAX_VALUE, rs.getObject("id"));
        eq(id + ".object.int", Integer.MIN_VALUE, rs.getObject("i"));
        eq(id + ".object.tinyint", -128, rs.getObject("b"));
        eq(id + ".object.decimal", DEC1, rs.getObject("d"));
        eq(id + ".object.datetime", ts1().toLocalDateTime(), rs.getObject("ts"));
        eq(id + ".object.datetime-ldt", ts1().toLocalDateTime(), rs.getObject("ts", LocalDateTime.class));
        eq(id + ".object.date", DT1, rs.getObject("dt"));
        eq(id + ".object.double", -1.5e-300, rs.getObject("f"));
        eq(id + ".object.varbinary", BIN1, rs.getObject("bin"));
    }

    void checkRow2(String id, ResultSet rs) throws SQLException {
        if (!check(id, rs.next(), "row missing")) {
            return;
        }
        eq(id + ".long", Long.MIN_VALUE, rs.getLong(1));
        eq(id + ".int", Integer.MAX_VALUE, rs.getInt(2));
        eq(id + ".byte", (byte) 127, rs.getByte(3));
        eq(id + ".bytes", new byte[0], rs.getBytes(4));
        eq(id + ".bytes.wasNull", false, rs.wasNull());
        eq(id + ".string", "", rs.getString(5));
        eq(id + ".string.wasNull", false, rs.wasNull());
        eq(id + ".int2", 42, rs.getInt(6));
        eq(id + ".decimal", DEC2, rs.getBigDecimal(7));
        eq(id + ".decimal-string", "0.000001", rs.getString(7));
        eq(id + ".timestamp", TS2, rs.getTimestamp(8));
        // The driver prints fractional digits only when there are some.
        eq(id + ".timestamp-string", "2001-02-03 04:05:06", rs.getString(8));
        eq(id + ".date", DT2.toString(), String.valueOf(rs.getDate(9)));
        eq(id + ".double", 0.1, rs.getDouble(10));
        eq(id + ".blob", new byte[] {1, 2, 3}, rs.getBytes(11));
    }

    void checkNullRow(String id, ResultSet rs) throws SQLException {
        if (!check(id, rs.next(), "row missing")) {
            return;
        }
        eq(id + ".id", 7L, rs.getLong(1));
        for (int k = 2; k <= 11; k++) {
            Object o = rs.getObject(k);
            check(id + ".null" + k, o == null && rs.wasNull(), "column " + k + " is " + show(o) + ", want NULL");
        }
        eq(id + ".getInt", 0, rs.getInt(2));
        eq(id + ".getBytes", null, rs.getBytes(4));
        eq(id + ".getString", null, rs.getString(5));
        eq(id + ".getBigDecimal", null, rs.getBigDecimal(7));
        eq(id + ".getTimestamp", null, rs.getTimestamp(8));
        eq(id + ".getDate", null, rs.getDate(9));
    }

    static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int k = 0; k < n; k++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[k] = (byte) x;
        }
        return b;
    }

    static String unicodeText(int n) {
        StringBuilder b = new StringBuilder(n);
        String[] parts = {"a", "é", "中", "😀", "\n", "'", "\\"};
        for (int k = 0; b.length() < n; k++) {
            b.append(parts[k % parts.length]);
        }
        return b.toString();
    }

    // Stream parameters go out as COM_STMT_SEND_LONG_DATA chunks (1 MiB each by default) before
    // COM_STMT_EXECUTE; long data serves one execution only.
    void longData(Connection a) throws Exception {
        exec(a, "CREATE TABLE ld (id INT NOT NULL PRIMARY KEY, b LONGBLOB NULL, t LONGTEXT NULL)");
        byte[] big = pattern(2_500_000, 1);
        String text = unicodeText(300_000);
        byte[] small = pattern(10, 2);
        try (PreparedStatement ps = serverPrepare("longdata.insert", a, "INSERT INTO ld VALUES (?, ?, ?)")) {
            ps.setInt(1, 1);
            ps.setBinaryStream(2, new ByteArrayInputStream(big), big.length);
            ps.setCharacterStream(3, new StringReader(text), text.length());
            eq("longdata.insert1", 1, ps.executeUpdate());
            ps.setInt(1, 2);
            ps.setBinaryStream(2, new ByteArrayInputStream(small), small.length);
            ps.setString(3, "short");
            eq("longdata.insert2", 1, ps.executeUpdate());
            ps.setInt(1, 3);
            ps.setBytes(2, null);
            ps.setNull(3, Types.VARCHAR);
            eq("longdata.insert3", 1, ps.executeUpdate());
        }
        try (PreparedStatement ps = serverPrepare("longdata.select", a, "SELECT b, t, LENGTH(b), CHAR_LENGTH(t) FROM ld WHERE id = ?")) {
            ps.setInt(1, 1);
            try (ResultSet rs = ps.executeQuery()) {
                check("longdata.row1", rs.next(), "row 1 missing");
                eq("longdata.row1.blob", big, rs.getBytes(1));
                eq("longdata.row1.text", text, rs.getString(2));
                eq("longdata.row1.length", (long) big.length, rs.getLong(3));
                eq("longdata.row1.char_length", (long) text.codePointCount(0, text.length()), rs.getLong(4));
            }
            ps.setInt(1, 2);
            try (ResultSet rs = ps.executeQuery()) {
                check("longdata.row2", rs.next(), "row 2 missing");
                eq("longdata.row2.blob", small, rs.getBytes(1));
                eq("longdata.row2.text", "short", rs.getString(2));
            }
            ps.setInt(1, 3);
            try (ResultSet rs = ps.executeQuery()) {
                check("longdata.row3", rs.next(), "row 3 missing");
                eq("longdata.row3.blob", null, rs.getBytes(1));
                eq("longdata.row3.text", null, rs.getString(2));
            }
        }
        try (Statement st = a.createStatement(); ResultSet rs = st.executeQuery("SELECT b, t FROM ld WHERE id = 1")) {
            check("longdata.text-protocol", rs.next(), "row 1 missing");
            eq("longdata.text-protocol.blob", big, rs.getBytes(1));
            eq("longdata.text-protocol.text", text, rs.getString(2));
        }
    }

    // A value over 16 MiB: the COM_STMT_EXECUTE that carries it and the row that returns it are
    // split into several protocol packets (0xffffff-byte payloads and a final shorter one).
    void bigPacket(Connection a) throws Exception {
        long max = queryLong(a, "SELECT @@max_allowed_packet");
        if (max < 40L << 20) {
            System.out.println("     skipped: max_allowed_packet is " + max + " (< 40 MiB); "
                    + "for MariaDB start it with MARIADB_EXTRA_CNF=max_allowed_packet=64M");
            return;
        }
        int n = (16 << 20) + 12345;
        byte[] big = pattern(n, 3);
        exec(a, "CREATE TABLE bigp (id INT NOT NULL PRIMARY KEY, b LONGBLOB NOT NULL)");
        try (PreparedStatement ps = serverPrepare("bigpacket.insert", a, "INSERT INTO bigp VALUES (?, ?)")) {
            ps.setInt(1, 1);
            ps.setBytes(2, big);
            eq("bigpacket.insert.count", 1, ps.executeUpdate());
        }
        try (PreparedStatement ps = serverPrepare("bigpacket.select", a, "SELECT b, LENGTH(b) FROM bigp WHERE id = ?")) {
            ps.setInt(1, 1);
            try (ResultSet rs = ps.executeQuery()) {
                check("bigpacket.binary.row", rs.next(), "row missing");
                eq("bigpacket.binary.length", (long) n, rs.getLong(2));
                eq("bigpacket.binary.value", big, rs.getBytes(1));
            }
        }
        try (Statement st = a.createStatement(); ResultSet rs = st.executeQuery("SELECT id, b FROM bigp")) {
            check("bigpacket.text.row", rs.next(), "row missing");
            eq("bigpacket.text.value", big, rs.getBytes(2));
        }
        eq("bigpacket.after", 1L, queryLong(a, "SELECT COUNT(*) FROM bigp"));
        exec(a, "DROP TABLE bigp");
    }

    // Fetch sizes: a cursor request (useCursorFetch) that the server may answer with the whole
    // result (no SERVER_STATUS_CURSOR_EXISTS) or with a cursor, and row streaming.
    void fetch(Connection a) throws Exception {
        try (Connection c = openPlain("useServerPrepStmts=true&useCursorFetch=true");
                PreparedStatement ps = serverPrepare("fetch.cursor", c, "SELECT id, c FROM batch_t WHERE id >= ? ORDER BY id")) {
            ps.setFetchSize(100);
            ps.setInt(1, 0);
            long n = 0;
            long sum = 0;
            boolean okc = true;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    okc &= rs.getString(2).startsWith("row-" + rs.getInt(1) + "-") || rs.getInt(1) >= 5000;
                    n++;
                    sum += rs.getInt(1);
                }
            }
            long wantN = queryLong(a, "SELECT COUNT(*) FROM batch_t");
            eq("fetch.cursor.rows", wantN, n);
            eq("fetch.cursor.sum", queryLong(a, "SELECT SUM(id) FROM batch_t"), sum);
            check("fetch.cursor.values", okc, "a row's c does not match its id");
            eq("fetch.cursor.usable", 1L, queryLong(c, "SELECT 1"));
        }
        try (Statement st = a.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
            st.setFetchSize(Integer.MIN_VALUE); // streaming
            long n = 0;
            try (ResultSet rs = st.executeQuery("SELECT id FROM batch_t")) {
                while (rs.next()) {
                    n++;
                }
            }
            eq("fetch.streaming.rows", queryLong(a, "SELECT COUNT(*) FROM batch_t"), n);
        }
    }

    static final int BATCH_ROWS = 1024;

    void batch(Connection a) throws Exception {
        exec(a, "CREATE TABLE batch_t (id INT NOT NULL PRIMARY KEY, a BIGINT NOT NULL, b INT NULL, "
                + "c VARCHAR(32) NOT NULL, d DECIMAL(10,2) NOT NULL, e DATETIME NOT NULL, f DOUBLE NOT NULL)");
        long sumA = 0;
        BigDecimal sumD = BigDecimal.ZERO;
        int nullB = 0;
        try (PreparedStatement ps = serverPrepare("batch.insert", a,
                "INSERT INTO batch_t (id, a, b, c, d, e, f) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            for (int k = 0; k < BATCH_ROWS; k++) {
                long av = (long) k * 1_000_000_007L;
                BigDecimal dv = BigDecimal.valueOf(k * 7 + 1, 2); // k*7+1 hundredths
                ps.setInt(1, k);
                ps.setLong(2, av);
                if (k % 10 == 0) {
                    ps.setNull(3, Types.INTEGER);
                    nullB++;
                } else {
                    ps.setInt(3, -k);
                }
                ps.setString(4, "row-" + k + "-é");
                ps.setBigDecimal(5, dv);
                ps.setTimestamp(6, Timestamp.valueOf(LocalDateTime.of(2020, 1, 1, 0, 0).plusMinutes(k)));
                ps.setDouble(7, k / 4.0);
                ps.addBatch();
                sumA += av;
                sumD = sumD.add(dv);
            }
            int[] counts = ps.executeBatch();
            eq("batch.counts.length", BATCH_ROWS, counts.length);
            // Rewritten into multi-row INSERTs, the driver reports SUCCESS_NO_INFO for each row
            // (when the server reported rows affected).
            int[] want = new int[BATCH_ROWS];
            Arrays.fill(want, Statement.SUCCESS_NO_INFO);
            check("batch.counts", Arrays.equals(want, counts), "want all SUCCESS_NO_INFO (-2), got " + summarize(counts));
        }
        try (Statement st = a.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*), SUM(id), SUM(a), SUM(d), COUNT(b), SUM(b), "
                        + "COUNT(DISTINCT c), MIN(e), MAX(e), SUM(f) FROM batch_t")) {
            check("batch.sum.row", rs.next(), "no row");
            eq("batch.count", (long) BATCH_ROWS, rs.getLong(1));
            eq("batch.sum.id", (long) BATCH_ROWS * (BATCH_ROWS - 1) / 2, rs.getLong(2));
            eq("batch.sum.a", new BigDecimal(sumA), rs.getBigDecimal(3));
            eq("batch.sum.d", sumD, rs.getBigDecimal(4));
            eq("batch.count.b", (long) BATCH_ROWS - nullB, rs.getLong(5));
            long sumB = 0;
            for (int k = 0; k < BATCH_ROWS; k++) {
                sumB -= k % 10 == 0 ? 0 : k;
            }
            eq("batch.sum.b", sumB, rs.getLong(6));
            eq("batch.distinct.c", (long) BATCH_ROWS, rs.getLong(7));
            eq("batch.min.e", Timestamp.valueOf("2020-01-01 00:00:00"), rs.getTimestamp(8));
            eq("batch.max.e", Timestamp.valueOf(LocalDateTime.of(2020, 1, 1, 0, 0).plusMinutes(BATCH_ROWS - 1)), rs.getTimestamp(9));
            eq("batch.sum.f", (double) BATCH_ROWS * (BATCH_ROWS - 1) / 2 / 4, rs.getDouble(10));
        }
        eq("batch.row.513", "row-513-é|-513|35.92",
                queryString(a, "SELECT CONCAT(c, '|', b, '|', d) FROM batch_t WHERE id = 513"));
        // A Statement batch goes out as one multi-statement query (allowMultiQueries): one update
        // count per statement.
        try (Statement st = a.createStatement()) {
            st.addBatch("UPDATE batch_t SET b = 0 WHERE id < 10");
            st.addBatch("DELETE FROM batch_t WHERE id = 1023");
            st.addBatch("UPDATE batch_t SET b = 1 WHERE id = -1");
            st.addBatch("INSERT INTO batch_t VALUES (5000, 1, 1, 'x', 1, '2021-01-01', 1), (5001, 1, 1, 'y', 1, '2021-01-01', 1)");
            st.addBatch("UPDATE batch_t SET b = 0 WHERE id < 10");
            int[] counts = st.executeBatch();
            // The second UPDATE changes nothing: 0 with useAffectedRows=true.
            eq("batch.statement.counts", Arrays.toString(new int[] {10, 1, 0, 2, 0}), Arrays.toString(counts));
        }
        eq("batch.after.count", (long) BATCH_ROWS + 1, queryLong(a, "SELECT COUNT(*) FROM batch_t"));
    }

    static String summarize(int[] counts) {
        Map<Integer, Integer> hist = new LinkedHashMap<>();
        for (int c : counts) {
            hist.merge(c, 1, Integer::sum);
        }
        return "length " + counts.length + ", value->count " + hist;
    }

    static List<Long> keys(Statement st) throws SQLException {
        List<Long> out = new ArrayList<>();
        try (ResultSet rs = st.getGeneratedKeys()) {
            while (rs.next()) {
                out.add(rs.getLong(1));
            }
        }
        return out;
    }

    void generatedKeys(Connection a) throws Exception {
        exec(a, "CREATE TABLE ai (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10) NOT NULL)");
        try (Statement st = a.createStatement()) {
            eq("keys.stmt.count", 3, st.executeUpdate("INSERT INTO ai (v) VALUES ('a'), ('b'), ('c')", Statement.RETURN_GENERATED_KEYS));
            eq("keys.stmt", List.of(1L, 2L, 3L), keys(st));
        }
        try (PreparedStatement ps = serverPrepare("keys.ps", a, "INSERT INTO ai (v) VALUES (?), (?)", Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, "d");
            ps.setString(2, "e");
            eq("keys.ps.count", 2, ps.executeUpdate());
            eq("keys.ps", List.of(4L, 5L), keys(ps));
        }
        eq("keys.last_insert_id", 4L, queryLong(a, "SELECT LAST_INSERT_ID()"));
        // A rewritten batch: keys of every row, in order.
        try (PreparedStatement ps = serverPrepare("keys.batch", a, "INSERT INTO ai (v) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
            for (String v : new String[] {"f", "g", "h", "i", "j"}) {
                ps.setString(1, v);
                ps.addBatch();
            }
            ps.executeBatch();
            eq("keys.batch", List.of(6L, 7L, 8L, 9L, 10L), keys(ps));
        }
        try (Statement st = a.createStatement()) {
            st.executeUpdate("INSERT INTO ai (id, v) VALUES (100, 'x')");
            st.executeUpdate("INSERT INTO ai (v) VALUES ('y')", Statement.RETURN_GENERATED_KEYS);
            eq("keys.after-explicit", List.of(101L), keys(st));
        }
        eq("keys.rows", List.of("1a", "2b", "3c", "4d", "5e", "6f", "7g", "8h", "9i", "10j", "100x", "101y"),
                column(a, "SELECT CONCAT(id, v) FROM ai ORDER BY id"));
    }

    void transactions(Connection a) throws Exception {
        exec(a, "CREATE TABLE tx (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL)");
        ServerSession ss = serverSession(a);
        try (Connection b = openPlain("")) {
            a.setAutoCommit(false);
            try {
                eq("txn.getAutoCommit", false, a.getAutoCommit());
                check("txn.status.autocommit-off", !ss.isAutocommit(), "status after SET autocommit=0 has SERVER_STATUS_AUTOCOMMIT");
                try (PreparedStatement ins = serverPrepare("txn.insert", a, "INSERT INTO tx VALUES (?, ?)")) {
                    ins.setInt(1, 1);
                    ins.setString(2, "rolled");
                    eq("txn.insert1", 1, ins.executeUpdate());
                    check("txn.in-trans", ss.inTransactionOnServer(),
                            "OK packet of an INSERT in a transaction lacks SERVER_STATUS_IN_TRANS: "
                                    + "with useLocalTransactionState=true the driver will not send ROLLBACK/COMMIT");
                    eq("txn.own-view", 1L, queryLong(a, "SELECT COUNT(*) FROM tx"));
                    eq("txn.uncommitted-invisible", 0L, queryLong(b, "SELECT COUNT(*) FROM tx"));
                    a.rollback();
                    check("txn.rollback.not-in-trans", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS still set after rollback()");
                    eq("txn.rollback.own", 0L, queryLong(a, "SELECT COUNT(*) FROM tx"));
                    eq("txn.rollback.other", 0L, queryLong(b, "SELECT COUNT(*) FROM tx"));

                    ins.setInt(1, 2);
                    ins.setString(2, "kept");
                    ins.executeUpdate();
                    ins.setInt(1, 3);
                    ins.setString(2, "kept");
                    ins.executeUpdate();
                    a.commit();
                    check("txn.commit.not-in-trans", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS still set after commit()");
                    eq("txn.commit.other", List.of("2", "3"), column(b, "SELECT id FROM tx ORDER BY id"));

                    // Savepoints.
                    ins.setInt(1, 4);
                    ins.setString(2, "sp-kept");
                    ins.executeUpdate();
                    Savepoint sp = a.setSavepoint("sp1");
                    ins.setInt(1, 5);
                    ins.setString(2, "sp-undone");
                    ins.executeUpdate();
                    a.rollback(sp);
                    check("txn.savepoint.in-trans", ss.inTransactionOnServer(), "IN_TRANS cleared by ROLLBACK TO SAVEPOINT");
                    a.commit();
                    eq("txn.savepoint.other", List.of("2", "3", "4"), column(b, "SELECT id FROM tx ORDER BY id"));

                    // setAutoCommit(true) commits the open transaction.
                    ins.setInt(1, 6);
                    ins.setString(2, "auto");
                    ins.executeUpdate();
                }
                a.setAutoCommit(true);
                eq("txn.setAutoCommit-true.commits", List.of("2", "3", "4", "6"), column(b, "SELECT id FROM tx ORDER BY id"));
                check("txn.status.autocommit-on", ss.isAutocommit(), "status after SET autocommit=1 lacks SERVER_STATUS_AUTOCOMMIT");
                check("txn.status.done", !ss.inTransactionOnServer(), "SERVER_STATUS_IN_TRANS set after setAutoCommit(true)");
                // In autocommit mode a statement commits on its own.
                exec(a, "INSERT INTO tx VALUES (8, 'auto')");
                check("txn.autocommit.not-in-trans", !ss.inTransactionOnServer(), "IN_TRANS set after an autocommitted INSERT");
                eq("txn.autocommit.other", 5L, queryLong(b, "SELECT COUNT(*) FROM tx"));
            } finally {
                reset(a);
            }
        }
    }

    // A read-only transaction: the first SELECT opens the transaction (its snapshot), so the OK/EOF
    // status must say IN_TRANS; otherwise commit() sends nothing under useLocalTransactionState and
    // the next "transaction" still reads the old snapshot.
    void transactionSnapshot(Connection a) throws Exception {
        ServerSession ss = serverSession(a);
        try (Connection b = openPlain("")) {
            a.setAutoCommit(false);
            try {
                long before = queryLong(a, "SELECT COUNT(*) FROM tx");
                check("txn.snapshot.select-in-trans", ss.inTransactionOnServer(),
                        "EOF/OK after a SELECT with autocommit=0 lacks SERVER_STATUS_IN_TRANS");
                exec(b, "INSERT INTO tx VALUES (20, 'other')");
                eq("txn.snapshot.repeatable", before, queryLong(a, "SELECT COUNT(*) FROM tx"));
                a.commit();
                eq("txn.snapshot.after-commit", before + 1, queryLong(a, "SELECT COUNT(*) FROM tx"));
                a.commit();
            } finally {
                reset(a);
            }
        }
    }

    void trailingSemicolon(Connection a) throws Exception {
        exec(a, "CREATE TABLE semi (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NULL);");
        try (Statement st = a.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT 41 + 1;")) {
                check("semicolon.stmt.select", rs.next() && rs.getInt(1) == 42 && !rs.next(), "SELECT 41 + 1; did not return one row 42");
            }
            eq("semicolon.stmt.insert", 1, st.executeUpdate("INSERT INTO semi VALUES (1, 'a');"));
            try (ResultSet rs = st.executeQuery("SELECT v FROM semi WHERE id = 1 ;  ")) {
                check("semicolon.stmt.select-space", rs.next() && "a".equals(rs.getString(1)) && !rs.next(), "wrong result");
            }
            check("semicolon.stmt.no-more", !st.getMoreResults() && st.getUpdateCount() == -1, "a trailing ';' produced another result");
        }
        // With allowMultiQueries=true the driver prepares SQL holding ';' on the client side.
        try (PreparedStatement ps = a.prepareStatement("SELECT v FROM semi WHERE id = ?;")) {
            ps.setInt(1, 1);
            try (ResultSet rs = ps.executeQuery()) {
                check("semicolon.client-ps", rs.next() && "a".equals(rs.getString(1)), "wrong result");
            }
        }
        // Without it, server-side: COM_STMT_PREPARE of text ending in ';'.
        try (Connection c = openPlain("useServerPrepStmts=true")) {
            try (PreparedStatement ps = serverPrepare("semicolon.server-ps.insert", c, "INSERT INTO semi VALUES (?, ?);")) {
                ps.setInt(1, 2);
                ps.setString(2, "b");
                eq("semicolon.server-ps.insert.count", 1, ps.executeUpdate());
            }
            try (PreparedStatement ps = serverPrepare("semicolon.server-ps.select", c, "SELECT v FROM semi WHERE id = ? ;")) {
                ps.setInt(1, 2);
                try (ResultSet rs = ps.executeQuery()) {
                    check("semicolon.server-ps.select.row", rs.next() && "b".equals(rs.getString(1)) && !rs.next(), "wrong result");
                }
            }
        }
    }

    void multiStatements(Connection a) throws Exception {
        try (Statement st = a.createStatement()) {
            boolean isRs = st.execute("SELECT 1 AS one; INSERT INTO semi VALUES (3, 'c'), (4, 'd'); SELECT id FROM semi ORDER BY id; "
                    + "UPDATE semi SET v = 'z' WHERE id >= 3; DELETE FROM semi WHERE id = 4");
            check("multi.1.is-rs", isRs, "first result is not a result set");
            try (ResultSet rs = st.getResultSet()) {
                check("multi.1.value", rs.next() && rs.getInt("one") == 1 && !rs.next(), "SELECT 1 result wrong");
            }
            check("multi.2.is-count", !st.getMoreResults(), "second result is a result set");
            eq("multi.2.count", 2, st.getUpdateCount());
            check("multi.3.is-rs", st.getMoreResults(), "third result is not a result set");
            List<Integer> ids = new ArrayList<>();
            try (ResultSet rs = st.getResultSet()) {
                while (rs.next()) {
                    ids.add(rs.getInt(1));
                }
            }
            eq("multi.3.rows", List.of(1, 2, 3, 4), ids);
            check("multi.4.is-count", !st.getMoreResults(), "fourth result is a result set");
            eq("multi.4.count", 2, st.getUpdateCount());
            check("multi.5.is-count", !st.getMoreResults(), "fifth result is a result set");
            eq("multi.5.count", 1, st.getUpdateCount());
            check("multi.end", !st.getMoreResults() && st.getUpdateCount() == -1, "more results after the last statement");
        }
        // Two SELECTs and a trailing ';'.
        try (Statement st = a.createStatement()) {
            check("multi.trailing.rs1", st.execute("SELECT 'x'; SELECT 'y';"), "first result not a result set");
            try (ResultSet rs = st.getResultSet()) {
                check("multi.trailing.rs1.value", rs.next() && "x".equals(rs.getString(1)), "wrong");
            }
            check("multi.trailing.rs2", st.getMoreResults(), "second result not a result set");
            try (ResultSet rs = st.getResultSet()) {
                check("multi.trailing.rs2.value", rs.next() && "y".equals(rs.getString(1)), "wrong");
            }
            check("multi.trailing.end", !st.getMoreResults() && st.getUpdateCount() == -1, "a result for the empty statement after ';'");
        }
        // An error in the middle ends the statements (the driver reads every result at once, so
        // execute throws); what ran before it stays done, what follows does not run; the
        // connection stays usable.
        try (Statement st = a.createStatement()) {
            expectError("multi.error", 1146, "42S02",
                    () -> st.execute("UPDATE semi SET v = 'e' WHERE id = 1; SELECT * FROM no_such_table_x; UPDATE semi SET v = 'f' WHERE id = 2"));
        }
        eq("multi.error.before", "e", queryString(a, "SELECT v FROM semi WHERE id = 1"));
        eq("multi.error.after", "b", queryString(a, "SELECT v FROM semi WHERE id = 2"));
        eq("multi.error.usable", List.of("1", "2", "3"), column(a, "SELECT id FROM semi ORDER BY id"));
        eq("multi.error.usable.v", "z", queryString(a, "SELECT v FROM semi WHERE id = 3"));
        // SET and SELECT of a user variable in one round trip.
        try (Statement st = a.createStatement()) {
            check("multi.set-select", !st.execute("SET @kx = 5; SELECT @kx * 2"), "SET gave a result set");
            check("multi.set-select.rs", st.getMoreResults(), "no second result");
            try (ResultSet rs = st.getResultSet()) {
                check("multi.set-select.value", rs.next() && rs.getLong(1) == 10, "wrong");
            }
        }
    }

    // useAffectedRows=true: the client does not send CLIENT_FOUND_ROWS, so an UPDATE that changes
    // nothing reports 0; by default (found rows) it reports the rows matched.
    void affectedRows(Connection a) throws Exception {
        exec(a, "CREATE TABLE aff (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)");
        exec(a, "INSERT INTO aff VALUES (1, 1), (2, 2), (3, 3)");
        try (Statement st = a.createStatement()) {
            eq("affected.update-same", 0, st.executeUpdate("UPDATE aff SET v = v"));
            eq("affected.update-some", 2, st.executeUpdate("UPDATE aff SET v = 2 WHERE id <> 2"));
            eq("affected.iodku-changed", 2, st.executeUpdate("INSERT INTO aff VALUES (1, 9) ON DUPLICATE KEY UPDATE v = VALUES(v)"));
            eq("affected.iodku-same", 0, st.executeUpdate("INSERT INTO aff VALUES (1, 9) ON DUPLICATE KEY UPDATE v = VALUES(v)"));
            eq("affected.iodku-insert", 1, st.executeUpdate("INSERT INTO aff VALUES (4, 4) ON DUPLICATE KEY UPDATE v = VALUES(v)"));
        }
        try (Connection b = openPlain(""); Statement st = b.createStatement()) {
            eq("affected.found.update-same", 4, st.executeUpdate("UPDATE aff SET v = v"));
            eq("affected.found.iodku-same", 1, st.executeUpdate("INSERT INTO aff VALUES (1, 9) ON DUPLICATE KEY UPDATE v = VALUES(v)"));
        }
    }

    void metaSetup(Connection a) throws Exception {
        exec(a, "CREATE TABLE meta_t (\n"
                + "  id BIGINT NOT NULL AUTO_INCREMENT,\n"
                + "  code VARCHAR(40) NOT NULL,\n"
                + "  price DECIMAL(12,3) NULL DEFAULT NULL,\n"
                + "  qty INT NOT NULL DEFAULT 7,\n"
                + "  created DATETIME NULL,\n"
                + "  note TEXT,\n"
                + "  PRIMARY KEY (id),\n"
                + "  UNIQUE KEY uk_code (code),\n"
                + "  KEY k_qty_price (qty, price)\n"
                + ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
        exec(a, "CREATE TABLE meta_pk2 (a INT NOT NULL, b VARCHAR(8) NOT NULL, c INT NULL, PRIMARY KEY (a, b))");
    }

    /** One expected getColumns row. */
    record Col(String name, int dataType, String typeName, int size, Integer digits, boolean nullable, boolean autoInc, String def) {
    }

    static final Col[] META_T_COLS = {
        new Col("id", Types.BIGINT, "BIGINT", 19, 0, false, true, null),
        new Col("code", Types.VARCHAR, "VARCHAR", 40, null, false, false, null),
        new Col("price", Types.DECIMAL, "DECIMAL", 12, 3, true, false, null),
        new Col("qty", Types.INTEGER, "INT", 10, 0, false, false, "7"),
        new Col("created", Types.TIMESTAMP, "DATETIME", 19, null, true, false, null),
        new Col("note", Types.LONGVARCHAR, "TEXT", 65535, null, true, false, null),
    };

    void metadata(String id, Connection c) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        List<String> tables = new ArrayList<>();
        try (ResultSet rs = md.getTables(DB, null, "meta%", new String[] {"TABLE"})) {
            while (rs.next()) {
                tables.add(rs.getString("TABLE_CAT") + "." + rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
            }
        }
        eq(id + ".tables", List.of(DB + ".meta_pk2:TABLE", DB + ".meta_t:TABLE"), tables);

        List<String> all = new ArrayList<>();
        try (ResultSet rs = md.getTables(DB, null, "%", null)) {
            while (rs.next()) {
                all.add(rs.getString("TABLE_NAME"));
            }
        }
        check(id + ".tables.all", all.containsAll(List.of("types_t", "batch_t", "ai", "tx", "semi", "meta_t", "meta_pk2")),
                "getTables(%) = " + all);

        try (ResultSet rs = md.getColumns(DB, null, "meta_t", "%")) {
            int k = 0;
            while (rs.next()) {
                if (k >= META_T_COLS.length) {
                    fail(id + ".columns.extra", "unexpected column " + rs.getString("COLUMN_NAME"));
                    break;
                }
                Col want = META_T_COLS[k++];
                String p = id + ".columns." + want.name;
                eq(p + ".name", want.name, rs.getString("COLUMN_NAME"));
                eq(p + ".table", "meta_t", rs.getString("TABLE_NAME"));
                eq(p + ".position", k, rs.getInt("ORDINAL_POSITION"));
                eq(p + ".data_type", want.dataType, rs.getInt("DATA_TYPE"));
                eq(p + ".type_name", want.typeName, rs.getString("TYPE_NAME"));
                eq(p + ".size", want.size, rs.getInt("COLUMN_SIZE"));
                if (want.digits != null) {
                    eq(p + ".digits", want.digits, rs.getInt("DECIMAL_DIGITS"));
                }
                eq(p + ".nullable", want.nullable ? DatabaseMetaData.columnNullable : DatabaseMetaData.columnNoNulls,
                        rs.getInt("NULLABLE"));
                eq(p + ".is_nullable", want.nullable ? "YES" : "NO", rs.getString("IS_NULLABLE"));
                eq(p + ".autoincrement", want.autoInc ? "YES" : "NO", rs.getString("IS_AUTOINCREMENT"));
                String def = rs.getString("COLUMN_DEF");
                if (want.def != null || !mariadb) {
                    // MariaDB (since 10.2.7) reports a column's default as an expression: 'NULL'
                    // for DEFAULT NULL or for a nullable column without one, where MySQL has NULL.
                    eq(p + ".default", want.def, def);
                } else {
                    check(p + ".default", def == null || def.equals("NULL"), "default " + show(def));
                }
            }
            eq(id + ".columns.count", META_T_COLS.length, k);
        }

        // getIndexInfo, all and unique only: (NON_UNIQUE, INDEX_NAME, ORDINAL_POSITION, COLUMN_NAME).
        eq(id + ".index", List.of("false PRIMARY 1 id", "false uk_code 1 code", "true k_qty_price 1 qty", "true k_qty_price 2 price"),
                indexRows(md, "meta_t", false));
        eq(id + ".index.unique", List.of("false PRIMARY 1 id", "false uk_code 1 code"), indexRows(md, "meta_t", true));
        eq(id + ".index.pk2", List.of("false PRIMARY 1 a", "false PRIMARY 2 b"), indexRows(md, "meta_pk2", false));

        eq(id + ".pk", List.of("meta_t id 1 PRIMARY"), pkRows(md, "meta_t"));
        eq(id + ".pk2", List.of("meta_pk2 a 1 PRIMARY", "meta_pk2 b 2 PRIMARY"), pkRows(md, "meta_pk2"));
    }

    static List<String> indexRows(DatabaseMetaData md, String table, boolean unique) throws SQLException {
        TreeSet<String> rows = new TreeSet<>();
        try (ResultSet rs = md.getIndexInfo(DB, null, table, unique, false)) {
            while (rs.next()) {
                rows.add(rs.getBoolean("NON_UNIQUE") + " " + rs.getString("INDEX_NAME") + " " + rs.getShort("ORDINAL_POSITION") + " "
                        + rs.getString("COLUMN_NAME"));
            }
        }
        return new ArrayList<>(rows);
    }

    static List<String> pkRows(DatabaseMetaData md, String table) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (ResultSet rs = md.getPrimaryKeys(DB, null, table)) {
            while (rs.next()) {
                rows.add(rs.getString("TABLE_NAME") + " " + rs.getString("COLUMN_NAME") + " " + rs.getShort("KEY_SEQ") + " "
                        + rs.getString("PK_NAME"));
            }
        }
        rows.sort(null);
        return rows;
    }

    // Column definitions as the protocol sends them (types, flags, precision), for a text result
    // and for a server-prepared statement (at prepare time and with its result).
    void resultSetMetadata(Connection a) throws Exception {
        exec(a, "INSERT INTO meta_t (code, price, created, note) VALUES ('c1', 12.5, '2024-01-02 03:04:05', 'n')");
        String sql = "SELECT id, code, price, qty, created, note FROM meta_t";
        try (Statement st = a.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            checkRsMeta("meta.rs.text", rs.getMetaData());
            check("meta.rs.text.row", rs.next() && rs.getLong(1) == 1 && rs.getBigDecimal(3).compareTo(new BigDecimal("12.5")) == 0,
                    "row wrong");
        }
        try (PreparedStatement ps = serverPrepare("meta.rs.ps", a, sql + " WHERE id > ?")) {
            checkRsMeta("meta.rs.prepare", ps.getMetaData());
            ParameterMetaData pm = ps.getParameterMetaData();
            eq("meta.rs.ps.params", 1, pm.getParameterCount());
            ps.setInt(1, 0);
            try (ResultSet rs = ps.executeQuery()) {
                checkRsMeta("meta.rs.binary", rs.getMetaData());
                check("meta.rs.binary.row", rs.next() && "c1".equals(rs.getString(2)) && rs.getInt(4) == 7
                        && Timestamp.valueOf("2024-01-02 03:04:05").equals(rs.getTimestamp(5)), "row wrong");
            }
        }
    }

    void checkRsMeta(String id, ResultSetMetaData m) throws SQLException {
        if (!eq(id + ".count", 6, m.getColumnCount())) {
            return;
        }
        String[] names = {"id", "code", "price", "qty", "created", "note"};
        int[] types = {Types.BIGINT, Types.VARCHAR, Types.DECIMAL, Types.INTEGER, Types.TIMESTAMP, Types.LONGVARCHAR};
        int[] nullable = {ResultSetMetaData.columnNoNulls, ResultSetMetaData.columnNoNulls, ResultSetMetaData.columnNullable,
            ResultSetMetaData.columnNoNulls, ResultSetMetaData.columnNullable, ResultSetMetaData.columnNullable};
        for (int k = 0; k < 6; k++) {
            String p = id + "." + names[k];
            eq(p + ".label", names[k], m.getColumnLabel(k + 1));
            eq(p + ".table", "meta_t", m.getTableName(k + 1));
            eq(p + ".catalog", DB, m.getCatalogName(k + 1));
            eq(p + ".type", types[k], m.getColumnType(k + 1));
            eq(p + ".nullable", nullable[k], m.isNullable(k + 1));
            eq(p + ".autoincrement", k == 0, m.isAutoIncrement(k + 1));
        }
        eq(id + ".code.precision", 40, m.getPrecision(2));
        eq(id + ".price.precision", 12, m.getPrecision(3));
        eq(id + ".price.scale", 3, m.getScale(3));
        eq(id + ".id.signed", true, m.isSigned(1));
    }

    static final String[] UNICODE = {
        "😀", "𝄞 clef", "中文字符", "Ünïcödé ñ", "👨‍👩‍👧‍👦 family", "mixed a😀b𝄞c", "ελληνικά", "עִבְרִית", "🀄🃏",
    };

    /**
     * Bytes in a latin1 column, as LinkBench stores its payloads: a hex literal (LinkStoreMysql's
     * stringLiteral) and setBytes on a latin1 connection keep every byte 0x00-0xFF, read back
     * with getBytes (Connector/J sets character_set_results = NULL: the column's own charset);
     * setBytes of bytes that are not UTF-8 on a utf8mb4 connection is 1366, on MySQL and MariaDB.
     */
    void latin1(Connection a) throws Exception {
        exec(a, "CREATE TABLE lat (id INT NOT NULL PRIMARY KEY, d MEDIUMTEXT NOT NULL) DEFAULT CHARSET=latin1");
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        exec(a, "INSERT INTO lat VALUES (1, x'" + HexFormat.of().formatHex(all) + "')");
        try (Connection l = open(DB, "characterEncoding=latin1")) {
            try (PreparedStatement ps = serverPrepare("latin1.setbytes", l, "INSERT INTO lat VALUES (?, ?)")) {
                ps.setInt(1, 2);
                ps.setBytes(2, all);
                eq("latin1.setbytes.affected", 1, ps.executeUpdate());
            }
        }
        try (Statement st = a.createStatement(); ResultSet rs = st.executeQuery("SELECT id, d FROM lat ORDER BY id")) {
            for (int id = 1; id <= 2; id++) {
                String p = "latin1.read." + id;
                if (!check(p, rs.next(), "row missing")) {
                    break;
                }
                check(p + ".bytes", Arrays.equals(all, rs.getBytes(2)), "bytes 0x00-0xFF not read back unchanged");
            }
        }
        try (PreparedStatement ps = serverPrepare("latin1.utf8mb4", a, "INSERT INTO lat VALUES (?, ?)")) {
            ps.setInt(1, 3);
            ps.setBytes(2, new byte[] {(byte) 0x80, (byte) 0x81, (byte) 0xff});
            try {
                ps.executeUpdate();
                fail("latin1.utf8mb4", "bytes that are not UTF-8 accepted from a utf8mb4 connection");
            } catch (SQLException e) {
                eq("latin1.utf8mb4.code", 1366, e.getErrorCode());
            }
        }
    }

    void unicode(Connection a) throws Exception {
        exec(a, "CREATE TABLE uni (id INT NOT NULL PRIMARY KEY, s VARCHAR(100) CHARACTER SET utf8mb4 NOT NULL)");
        try (PreparedStatement ps = serverPrepare("unicode.insert", a, "INSERT INTO uni VALUES (?, ?)")) {
            for (int k = 0; k < UNICODE.length; k++) {
                ps.setInt(1, k);
                ps.setString(2, UNICODE[k]);
                ps.executeUpdate();
            }
        }
        try (Statement st = a.createStatement()) {
            st.executeUpdate("INSERT INTO uni VALUES (100, '" + UNICODE[0] + UNICODE[1] + "')");
        }
        try (Statement st = a.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, s, CHAR_LENGTH(s), LENGTH(s), HEX(s) FROM uni ORDER BY id")) {
            for (int k = 0; k <= UNICODE.length; k++) {
                String want = k < UNICODE.length ? UNICODE[k] : UNICODE[0] + UNICODE[1];
                String p = "unicode.text." + k;
                if (!check(p, rs.next(), "row missing")) {
                    break;
                }
                byte[] utf8 = want.getBytes(StandardCharsets.UTF_8);
                eq(p + ".value", want, rs.getString(2));
                eq(p + ".char_length", (long) want.codePointCount(0, want.length()), rs.getLong(3));
                eq(p + ".length", (long) utf8.length, rs.getLong(4));
                eq(p + ".hex", HexFormat.of().withUpperCase().formatHex(utf8), rs.getString(5));
            }
        }
        try (PreparedStatement ps = serverPrepare("unicode.select", a, "SELECT id, s FROM uni WHERE s = ?")) {
            for (int k = 0; k < UNICODE.length; k++) {
                ps.setString(1, UNICODE[k]);
                try (ResultSet rs = ps.executeQuery()) {
                    check("unicode.binary." + k, rs.next() && rs.getInt(1) == k && UNICODE[k].equals(rs.getString(2)) && !rs.next(),
                            "WHERE s = '" + UNICODE[k] + "' did not read back row " + k);
                }
            }
        }
        // A non-ASCII alias (identifiers are limited to the BMP, in MySQL 8 as in MariaDB) and a
        // 4-byte literal.
        try (Statement st = a.createStatement(); ResultSet rs = st.executeQuery("SELECT '😀' AS `列ñ`")) {
            eq("unicode.label", "列ñ", rs.getMetaData().getColumnLabel(1));
            check("unicode.literal", rs.next() && "😀".equals(rs.getString(1)), "literal not read back");
        }
    }

    /**
     * GTIDs (Kiln's log positions): with trackSessionState=true and session_track_gtids = OWN_GTID,
     * the driver parses SESSION_TRACK_GTIDS from the OK packet of each commit (a text statement
     * and a server-prepared one) into uuid:index; the index grows, @@gtid_executed (uuid:1-n)
     * covers it, and WAIT_FOR_EXECUTED_GTID_SET(gtid, 1) returns 0 for it.
     */
    void gtids() throws Exception {
        try (Connection c = open(DB, "sslMode=DISABLED&trackSessionState=true")) {
            ServerSession ss = c.unwrap(JdbcConnection.class).getSession().getServerSession();
            check("gtid.tracking", ss.isSessionStateTrackingEnabled(), "the driver did not enable session state tracking");
            exec(c, "SET session_track_gtids = OWN_GTID");
            exec(c, "CREATE TABLE gtid_t (id INT PRIMARY KEY)");
            String executed = queryString(c, "SELECT @@gtid_executed");
            check("gtid.executed", executed.matches("[0-9a-f-]{36}:1-[0-9]+"), "@@gtid_executed " + executed);
            String uuid = executed.substring(0, 36);
            long last = 0;
            for (int i = 1; i <= 2; i++) {
                if (i == 1) {
                    exec(c, "INSERT INTO gtid_t VALUES (1)");
                } else {
                    try (PreparedStatement ps = serverPrepare("gtid.prepared", c, "INSERT INTO gtid_t VALUES (?)")) {
                        ps.setInt(1, 2);
                        ps.executeUpdate();
                    }
                }
                String got = null;
                var changes = ss.getServerSessionStateController().getSessionStateChanges();
                if (changes != null) {
                    for (var ch : changes.getSessionStateChangesList()) {
                        if (ch.getType() == com.mysql.cj.protocol.ServerSessionStateController.SESSION_TRACK_GTIDS) {
                            got = ch.getValues().get(0);
                        }
                    }
                }
                if (!check("gtid.own." + i, got != null && got.matches(uuid + ":[0-9]+"), "SESSION_TRACK_GTIDS after a commit: " + got)) {
                    continue;
                }
                long idx = Long.parseLong(got.substring(37));
                check("gtid.own." + i + ".grows", idx > last, "GTID index " + idx + " after " + last);
                last = idx;
                long upTo = Long.parseLong(queryString(c, "SELECT @@gtid_executed").substring(39));
                check("gtid.own." + i + ".executed", upTo >= idx, "@@gtid_executed up to " + upTo + " < " + idx);
                try (PreparedStatement ps = c.prepareStatement("SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 1)")) {
                    ps.setString(1, got);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        eq("gtid.own." + i + ".wait", 0L, rs.getLong(1));
                    }
                }
            }
            expectError("gtid.malformed", 1772, "HY000", () -> queryLong(c, "SELECT WAIT_FOR_EXECUTED_GTID_SET('not a set')"));
        }
    }

    void errors(Connection a) throws Exception {
        exec(a, "CREATE TABLE err_t (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) NOT NULL, UNIQUE KEY uk_v (v))");
        exec(a, "INSERT INTO err_t VALUES (1, 'a')");
        SQLException e = expectError("errors.dup.stmt", 1062, "23000", () -> exec(a, "INSERT INTO err_t VALUES (1, 'b')"));
        check("errors.dup.class", e instanceof java.sql.SQLIntegrityConstraintViolationException,
                "duplicate key should map to SQLIntegrityConstraintViolationException, got " + (e == null ? null : e.getClass().getName()));
        eq("errors.dup.usable", 1L, queryLong(a, "SELECT COUNT(*) FROM err_t"));
        try (PreparedStatement ps = serverPrepare("errors.dup.ps", a, "INSERT INTO err_t VALUES (?, ?)")) {
            ps.setInt(1, 2);
            ps.setString(2, "a"); // duplicate on the unique key
            expectError("errors.dup.ps.unique", 1062, "23000", ps::executeUpdate);
            ps.setInt(1, 2);
            ps.setString(2, "b");
            eq("errors.dup.ps.after", 1, ps.executeUpdate());
        }
        // In a transaction, a failed statement is undone alone; the transaction goes on.
        ServerSession ss = serverSession(a);
        a.setAutoCommit(false);
        try {
            exec(a, "INSERT INTO err_t VALUES (3, 'c')");
            expectError("errors.dup.txn", 1062, "23000", () -> exec(a, "INSERT INTO err_t VALUES (1, 'x')"));
            check("errors.dup.txn.in-trans", ss.inTransactionOnServer(), "IN_TRANS lost after an error in a transaction");
            a.commit();
        } finally {
            reset(a);
        }
        try (Connection b = openPlain("")) {
            eq("errors.dup.txn.committed", List.of("1", "2", "3"), column(b, "SELECT id FROM err_t ORDER BY id"));
        }
        // A rewritten batch that hits a duplicate.
        try (PreparedStatement ps = a.prepareStatement("INSERT INTO err_t VALUES (?, ?)")) {
            for (int k = 10; k < 15; k++) {
                ps.setInt(1, k == 13 ? 1 : k);
                ps.setString(2, "v" + k);
                ps.addBatch();
            }
            try {
                ps.executeBatch();
                fail("errors.batch", "a batch with a duplicate key succeeded");
            } catch (BatchUpdateException be) {
                eq("errors.batch.code", 1062, be.getErrorCode());
                eq("errors.batch.sqlstate", "23000", be.getSQLState());
            }
        }
        eq("errors.batch.nothing", 3L, queryLong(a, "SELECT COUNT(*) FROM err_t"));
        expectError("errors.syntax", 1064, "42000", () -> exec(a, "SELEC 1"));
        expectError("errors.no-table", 1146, "42S02", () -> exec(a, "SELECT * FROM no_such_table_y"));
        expectError("errors.no-table.prepare", 1146, "42S02", () -> {
            try (Connection c = openPlain("useServerPrepStmts=true&emulateUnsupportedPstmts=false");
                    PreparedStatement ps = c.prepareStatement("SELECT * FROM no_such_table_y WHERE id = ?")) {
                ps.setInt(1, 1);
                ps.executeQuery().close();
            }
        });
        expectError("errors.bad-column", 1054, "42S22", () -> exec(a, "SELECT no_such_column FROM err_t"));
        eq("errors.usable", 42L, queryLong(a, "SELECT 42"));
        eq("errors.valid", true, a.isValid(5));
    }
}
