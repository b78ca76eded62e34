#!/usr/bin/python3
"""A scripted pymysql session against a MySQL-compatible server.

usage: test/clients/pymysql_session.py HOST PORT

Connects as root with an empty password and exercises DDL, DML (rows,
affected rows, last insert id), transactions (commit and rollback seen from a
second session, savepoints, a failed statement inside a transaction),
parameterised statements with NULL and several types, error codes (1062,
1146, 1064, 1049), and LOAD DATA LOCAL INFILE (local_infile=True). With
$KILN_TLS_CA (the server's CA file), also TLS: ssl={'ca': ...} (VERIFY_CA),
an unverified context (REQUIRED), Ssl_version/Ssl_cipher, another CA refused,
and require_secure_transport (3159). Uses only SQL that MySQL 8 and MariaDB both accept;
MariaDB is the reference it must pass on. Plain asserts: the first failure
prints a traceback and exits 1. Uses its own database kiln_pymysql.
"""
import datetime
import decimal
import os
import shutil
import ssl
import sys
import tempfile

import pymysql
from pymysql.constants import CLIENT

DB = "kiln_pymysql"


def connect(host, port, **kw):
    return pymysql.connect(host=host, port=port, user="root", password="",
                           charset="utf8mb4", autocommit=True, **kw)


def q(conn, sql, args=None):
    with conn.cursor() as c:
        c.execute(sql, args)
        return c.fetchall()


def expect_error(conn, code, sql, args=None):
    try:
        with conn.cursor() as c:
            c.execute(sql, args)
    except pymysql.err.MySQLError as e:
        assert e.args[0] == code, "%r: expected error %d, got %r" % (sql, code, e.args)
        return
    raise AssertionError("%r: expected error %d, got success" % (sql, code))


def section(name):
    print("ok   " + name, flush=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    host, port = sys.argv[1], int(sys.argv[2])

    a = connect(host, port)
    ver = q(a, "SELECT VERSION()")[0][0]
    assert isinstance(ver, str) and ver, ver
    assert q(a, "SELECT 1 + 1") == ((2,),)
    section("connect: server %s" % ver)

    # --- DDL -----------------------------------------------------------
    q(a, "DROP DATABASE IF EXISTS " + DB)
    q(a, "CREATE DATABASE " + DB + " CHARACTER SET utf8mb4")
    q(a, "USE " + DB)
    assert q(a, "SELECT DATABASE()") == ((DB,),)
    q(a, """CREATE TABLE t (
              id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
              name VARCHAR(32) NOT NULL,
              score DECIMAL(10,2) NULL,
              note TEXT NULL,
              qty INT NOT NULL DEFAULT 0,
              UNIQUE KEY uk_name (name),
              KEY k_score (score, qty)
            ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""")
    q(a, "CREATE TABLE tmp (x INT)")
    q(a, "DROP TABLE tmp")
    expect_error(a, 1146, "SELECT * FROM tmp")
    section("DDL")

    # --- DML: affected rows, last insert id, rows ------------------------
    with a.cursor() as c:
        n = c.execute("INSERT INTO t (name, score, qty) VALUES ('alpha', 1.50, 1)")
        assert n == 1 and c.rowcount == 1, n
        assert c.lastrowid == 1, c.lastrowid
        n = c.execute("INSERT INTO t (name, score, qty) VALUES ('beta', 2.25, 2), ('gamma', NULL, 3), ('delta', 10, 4)")
        assert n == 3, n
        # A multi-row insert reports the first id it generated.
        assert c.lastrowid == 2, c.lastrowid
        c.execute("SELECT LAST_INSERT_ID()")
        assert c.fetchone() == (2,)
        c.execute("SELECT id, name, score, note, qty FROM t ORDER BY id")
        rows = c.fetchall()
        assert rows == (
            (1, "alpha", decimal.Decimal("1.50"), None, 1),
            (2, "beta", decimal.Decimal("2.25"), None, 2),
            (3, "gamma", None, None, 3),
            (4, "delta", decimal.Decimal("10.00"), None, 4),
        ), rows
        assert [d[0] for d in c.description] == ["id", "name", "score", "note", "qty"]
        # Explicit id, then the counter continues after it.
        c.execute("INSERT INTO t (id, name) VALUES (10, 'ten')")
        assert c.lastrowid == 10, c.lastrowid
        c.execute("INSERT INTO t (name) VALUES ('eleven')")
        assert c.lastrowid == 11, c.lastrowid
        # UPDATE counts changed rows (no CLIENT_FOUND_ROWS).
        n = c.execute("UPDATE t SET qty = qty + 10 WHERE id IN (1, 2, 99)")
        assert n == 2, n
        n = c.execute("UPDATE t SET qty = 0 WHERE id = 10")  # already 0
        assert n == 0, n
        # ON DUPLICATE KEY UPDATE: 1 for an insert, 2 for an update.
        n = c.execute("INSERT INTO t (name, qty) VALUES ('zeta', 1) ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty)")
        assert n == 1, n
        n = c.execute("INSERT INTO t (name, qty) VALUES ('zeta', 5) ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty)")
        assert n == 2, n
        c.execute("SELECT qty FROM t WHERE name = 'zeta'")
        assert c.fetchone() == (6,)
        n = c.execute("DELETE FROM t WHERE qty >= 11")
        assert n == 2, n
        c.execute("SELECT COUNT(*), SUM(qty) FROM t")
        cnt, total = c.fetchone()
        assert cnt == 5 and total == 13, (cnt, total)
        c.execute("SELECT name FROM t WHERE score IS NULL ORDER BY name")
        assert c.fetchall() == (("eleven",), ("gamma",), ("ten",), ("zeta",))
        c.execute("SELECT name FROM t WHERE id > 100")
        assert c.fetchall() == () and c.rowcount == 0
    section("DML, affected rows, last insert id")

    # With CLIENT_FOUND_ROWS an UPDATE counts matched rows.
    f = connect(host, port, database=DB, client_flag=CLIENT.FOUND_ROWS)
    with f.cursor() as c:
        n = c.execute("UPDATE t SET qty = qty WHERE id IN (3, 4)")
        assert n == 2, n
    f.close()
    section("CLIENT_FOUND_ROWS")

    # --- errors ----------------------------------------------------------
    expect_error(a, 1062, "INSERT INTO t (name) VALUES ('gamma')")
    expect_error(a, 1062, "UPDATE t SET name = 'gamma' WHERE name = 'delta'")
    expect_error(a, 1146, "SELECT * FROM no_such_table")
    expect_error(a, 1064, "SELEC 1")
    expect_error(a, 1064, "SELECT * FROM t WHERE")
    expect_error(a, 1049, "USE kiln_no_such_db")
    try:
        connect(host, port, database="kiln_no_such_db")
        raise AssertionError("connecting to a missing database succeeded")
    except pymysql.err.MySQLError as e:
        assert e.args[0] == 1049, e.args
    # The session is still usable and still on its database.
    assert q(a, "SELECT DATABASE(), COUNT(*) FROM t") == ((DB, 5),)
    section("errors 1062 1146 1064 1049")

    # --- transactions seen from another session --------------------------
    b = connect(host, port, database=DB)
    q(a, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
    q(a, "INSERT INTO acct VALUES (1, 100), (2, 100)")
    a.begin()
    q(a, "UPDATE acct SET bal = bal - 30 WHERE id = 1")
    q(a, "UPDATE acct SET bal = bal + 30 WHERE id = 2")
    q(a, "INSERT INTO acct VALUES (3, 0)")
    assert q(a, "SELECT id, bal FROM acct ORDER BY id") == ((1, 70), (2, 130), (3, 0))  # own writes
    assert q(b, "SELECT id, bal FROM acct ORDER BY id") == ((1, 100), (2, 100))  # not yet committed
    a.commit()
    assert q(b, "SELECT id, bal FROM acct ORDER BY id") == ((1, 70), (2, 130), (3, 0))
    a.begin()
    q(a, "DELETE FROM acct WHERE id = 3")
    q(a, "UPDATE acct SET bal = 0")
    a.rollback()
    assert q(a, "SELECT id, bal FROM acct ORDER BY id") == ((1, 70), (2, 130), (3, 0))
    assert q(b, "SELECT SUM(bal) FROM acct") == ((decimal.Decimal(200),),)
    # START TRANSACTION / SAVEPOINT / ROLLBACK TO / RELEASE, in SQL.
    q(a, "START TRANSACTION")
    q(a, "INSERT INTO acct VALUES (4, 4)")
    q(a, "SAVEPOINT s1")
    q(a, "INSERT INTO acct VALUES (5, 5)")
    q(a, "ROLLBACK TO SAVEPOINT s1")
    q(a, "SAVEPOINT s2")
    q(a, "RELEASE SAVEPOINT s2")
    q(a, "COMMIT")
    assert q(b, "SELECT id FROM acct WHERE id >= 4 ORDER BY id") == ((4,),)
    # A failed statement inside a transaction rolls back only itself.
    q(a, "BEGIN")
    q(a, "INSERT INTO acct VALUES (6, 6)")
    expect_error(a, 1062, "INSERT INTO acct VALUES (1, 1)")
    q(a, "COMMIT")
    assert q(b, "SELECT id, bal FROM acct WHERE id IN (1, 6) ORDER BY id") == ((1, 70), (6, 6))
    # autocommit off: nothing is visible until COMMIT.
    a.autocommit(False)
    q(a, "UPDATE acct SET bal = bal + 1 WHERE id = 6")
    assert q(b, "SELECT bal FROM acct WHERE id = 6") == ((6,),)
    a.commit()
    assert q(b, "SELECT bal FROM acct WHERE id = 6") == ((7,),)
    a.autocommit(True)
    # Repeatable read: a snapshot does not see later commits.
    q(b, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    assert q(b, "SELECT bal FROM acct WHERE id = 6") == ((7,),)
    q(a, "UPDATE acct SET bal = 70 WHERE id = 6")
    assert q(b, "SELECT bal FROM acct WHERE id = 6") == ((7,),)
    q(b, "COMMIT")
    assert q(b, "SELECT bal FROM acct WHERE id = 6") == ((70,),)
    b.close()
    section("transactions: commit, rollback, savepoints, isolation")

    # --- parameterised statements, NULL and several types ----------------
    q(a, """CREATE TABLE typed (
              id BIGINT NOT NULL PRIMARY KEY,
              i INT NULL, u BIGINT UNSIGNED NULL, d DECIMAL(20,6) NULL,
              f DOUBLE NULL, s VARCHAR(100) NULL, b VARBINARY(100) NULL,
              dt DATETIME NULL, dd DATE NULL, flag BOOL NULL
            ) DEFAULT CHARSET=utf8mb4""")
    rows = [
        (1, -2147483648, 18446744073709551615, decimal.Decimal("-12345678901234.123456"), 1.5,
         "it's \"quoted\" \\ and caf\u00e9 \u2603", b"\x00\x01\xff'", datetime.datetime(2024, 2, 29, 23, 59, 58),
         datetime.date(1999, 12, 31), True),
        (2, None, None, None, None, None, None, None, None, None),
        (3, 0, 0, decimal.Decimal("0.000001"), -0.25, "", b"", datetime.datetime(1970, 1, 2, 0, 0, 0),
         datetime.date(2038, 1, 19), False),
    ]
    with a.cursor() as c:
        n = c.executemany("INSERT INTO typed VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", rows)
        assert n == 3, n
        for r in rows:
            c.execute("SELECT id, i, u, d, f, s, b, dt, dd, flag FROM typed WHERE id = %s", (r[0],))
            got = c.fetchone()
            want = r[:9] + (None if r[9] is None else int(r[9]),)
            assert got == want, (got, want)
        c.execute("SELECT id FROM typed WHERE s IS NULL AND b IS NULL")
        assert c.fetchall() == ((2,),)
        c.execute("SELECT id FROM typed WHERE s = %s", ("",))
        assert c.fetchall() == ((3,),)
        c.execute("SELECT COUNT(*) FROM typed WHERE i = %s", (None,))  # = NULL matches nothing
        assert c.fetchone() == (0,)
        c.execute("SELECT id FROM typed WHERE id IN (%s, %s) ORDER BY id DESC LIMIT %s", (1, 3, 1))
        assert c.fetchall() == ((3,),)
        c.execute("UPDATE typed SET s = %s, f = %s WHERE id = %s", (None, 2.5, 1))
        assert c.rowcount == 1
        c.execute("SELECT s, f FROM typed WHERE id = 1")
        assert c.fetchone() == (None, 2.5)
    section("parameterised statements with NULL and several types")

    # latin1 connection and column: every byte 0x01-0xFF goes in and comes back unchanged, and a
    # utf8mb4 client reads the same characters as UTF-8 (0x80 is the euro sign, as in MySQL).
    lc = pymysql.connect(host=host, port=port, user="root", password="", charset="latin1",
                         use_unicode=False, autocommit=True)
    with lc.cursor() as c:
        c.execute("USE " + DB)
        c.execute("CREATE TABLE l1 (id INT PRIMARY KEY, v VARCHAR(300) CHARACTER SET latin1, u VARCHAR(300))")
        raw = bytes(range(1, 256))
        esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
        lc.query(b"INSERT INTO l1 VALUES (1, '" + esc + b"', '" + esc + b"')")
        c.execute("SELECT v, u, CHAR_LENGTH(v) FROM l1")
        got = c.fetchone()
        assert got[0] == raw and got[1] == raw and got[2] == 255, got
    lc.close()
    with a.cursor() as c:
        c.execute("SELECT v FROM " + DB + ".l1")
        v = c.fetchone()[0]
        assert v[127] == "\u20ac" and v[0xE9 - 1] == "\u00e9", repr(v[126:130])
    section("latin1 connection and column round-trip bytes 0x01-0xFF")

    load_data_local(host, port)
    section("LOAD DATA LOCAL INFILE")

    ca = os.environ.get("KILN_TLS_CA", "")
    if ca and os.path.exists(ca):
        tls_checks(host, port, ca)
        section("TLS: REQUIRED, VERIFY_CA, require_secure_transport")
    else:
        print("skip TLS (KILN_TLS_CA not set)", flush=True)

    q(a, "DROP DATABASE " + DB)
    expect_error(a, 1049, "USE " + DB)
    a.close()
    section("cleanup")
    print("pymysql session: all checks passed")
    return 0


def tls_checks(host, port, ca):
    """TLS with the server's CA (VERIFY_CA) and without verification (REQUIRED)."""
    v = connect(host, port, ssl={"ca": ca})
    status = dict(q(v, "SHOW STATUS LIKE 'Ssl_%'"))
    assert status.get("Ssl_version") in ("TLSv1.2", "TLSv1.3"), status
    assert status.get("Ssl_cipher"), status
    assert v._sock.version() == status["Ssl_version"], (v._sock.version(), status)

    required = ssl.create_default_context()
    required.check_hostname = False
    required.verify_mode = ssl.CERT_NONE
    r = connect(host, port, ssl=required)
    assert dict(q(r, "SHOW STATUS LIKE 'Ssl_version'"))["Ssl_version"] in ("TLSv1.2", "TLSv1.3")
    r.close()

    # Another CA (the system's bundle never signed the server's certificate) is refused.
    bundle = "/etc/ssl/certs/ca-certificates.crt"
    if os.path.exists(bundle):
        try:
            connect(host, port, ssl={"ca": bundle}).close()
        except pymysql.err.OperationalError:
            pass
        else:
            raise AssertionError("VERIFY_CA accepted the server against another CA")

    q(v, "SET GLOBAL require_secure_transport = ON")
    try:
        try:
            connect(host, port).close()
        except pymysql.err.OperationalError as e:
            assert e.args[0] == 3159, e.args
        else:
            raise AssertionError("a plain connection under require_secure_transport succeeded")
        s = connect(host, port, ssl={"ca": ca})
        assert q(s, "SELECT @@global.require_secure_transport") == ((1,),)
        s.close()
    finally:
        q(v, "SET GLOBAL require_secure_transport = OFF")
    v.close()


def load_data_local(host, port):
    """LOAD DATA LOCAL INFILE with a client that sends files (local_infile=True)."""
    d = connect(host, port, database=DB, local_infile=True)
    tmp = tempfile.mkdtemp(prefix="kiln-pymysql-")
    try:
        q(d, "CREATE TABLE ld (id INT PRIMARY KEY, name VARCHAR(20), qty INT NULL)"
             " DEFAULT CHARSET=utf8mb4")
        csv = os.path.join(tmp, "ld.csv")
        with open(csv, "wb") as f:
            f.write(b'id,name,qty\n1,"Smith, John",10\n2,"say ""hi""",\\N\n'
                    b'3,caf\xc3\xa9,7\n1,dup,0\n')
        with d.cursor() as c:
            c.execute("LOAD DATA LOCAL INFILE %s INTO TABLE ld FIELDS TERMINATED BY ','"
                      " OPTIONALLY ENCLOSED BY '\"' IGNORE 1 LINES", (csv,))
            # LOCAL: the duplicate line is skipped with a warning, as with IGNORE.
            assert c.rowcount == 3, c.rowcount
            # (pymysql keeps the info string's length prefix under CLIENT_SESSION_TRACK.)
            assert c._result.message.endswith(b"Records: 4  Deleted: 0  Skipped: 1  Warnings: 1"), \
                c._result.message
            c.execute("SHOW WARNINGS")
            assert [w[1] for w in c.fetchall()] == [1062]
        assert q(d, "SELECT id, name, qty FROM ld ORDER BY id") == (
            (1, "Smith, John", 10), (2, 'say "hi"', None), (3, "caf\u00e9", 7)), \
            q(d, "SELECT * FROM ld")

        # Tab-separated (the defaults), many packets, REPLACE, a column list and SET.
        tsv = os.path.join(tmp, "ld.tsv")
        with open(tsv, "w") as f:
            for i in range(1, 20001):
                f.write("%d\tname %d\n" % (i, i))
        with d.cursor() as c:
            c.execute("LOAD DATA LOCAL INFILE %s REPLACE INTO TABLE ld (id, @n)"
                      " SET name = UPPER(@n), qty = id %% 10", (tsv,))
            # Three rows replaced (deleted and written again), 19997 new ones.
            assert c.rowcount == 20003, c.rowcount
            assert c._result.message.endswith(b"Records: 20000  Deleted: 3  Skipped: 0  Warnings: 0"), \
                c._result.message
        assert q(d, "SELECT COUNT(*), SUM(qty), MAX(name) FROM ld") == ((20000, 90000, "NAME 9999"),)

        # A file the client cannot read: it sends an empty one and reports its own error; the
        # connection stays in sync.
        try:
            with d.cursor() as c:
                c.execute("LOAD DATA LOCAL INFILE %s INTO TABLE ld", (os.path.join(tmp, "missing"),))
        except pymysql.err.OperationalError as e:
            assert e.args[0] == 1017, e.args
        else:
            raise AssertionError("LOAD DATA of a missing file succeeded")
        assert q(d, "SELECT COUNT(*) FROM ld") == ((20000,),)
        d.close()

        # A client that does not enable local files is refused before any transfer (MySQL 8:
        # 3948; MariaDB: 4166; older servers: 1148).
        n = connect(host, port, database=DB)
        try:
            with n.cursor() as c:
                c.execute("LOAD DATA LOCAL INFILE %s INTO TABLE ld", (csv,))
        except pymysql.err.MySQLError as e:
            assert e.args[0] in (1148, 3948, 4166), e.args
        else:
            raise AssertionError("LOAD DATA LOCAL without CLIENT_LOCAL_FILES succeeded")
        assert q(n, "SELECT 1") == ((1,),)
        n.close()
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
