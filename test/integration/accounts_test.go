package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
)

// Accounts and privileges through a real client (go-sql-driver): logins with both plugins, the
// errors MySQL 8 gives, and a privilege matrix that also runs against MariaDB:
//
//	ACL_MATRIX_ADDR=127.0.0.1:PORT ACL_MATRIX_FLAVOR=mariadb go test ./test/integration/ -run TestPrivilegeMatrix
//
// (root without password on that server; scripts/mariadb.sh start DIR gives one). Without
// ACL_MATRIX_ADDR the matrix runs against a kiln it starts.

func openAs(t testing.TB, addr, user, pw, db string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s?timeout=10s&multiStatements=true", user, pw, addr, db)
	d, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxIdleConns(0) // every statement on a new connection: each one logs in
	t.Cleanup(func() { d.Close() })
	return d
}

func wantErrCode(t testing.TB, err error, code uint16, what string) {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if errCode(err) != code {
		t.Fatalf("%s: got %v, want error %d", what, err, code)
	}
}

func TestAccountLogins(t *testing.T) {
	k := startKiln(t, "")
	root := k.db(t, "")
	for _, q := range []string{
		"CREATE USER 'nat'@'%' IDENTIFIED WITH mysql_native_password BY 'n-pw'",
		"CREATE USER 'sha'@'%' IDENTIFIED BY 's-pw'",
		"CREATE USER 'lk'@'%' IDENTIFIED BY 'l-pw' ACCOUNT LOCK",
		"CREATE USER 'far'@'10.9.%' IDENTIFIED BY 'f-pw'",
		"CREATE USER 'tls'@'%' IDENTIFIED BY 't-pw' REQUIRE SSL",
	} {
		mustExec(t, root, q)
	}
	cases := []struct {
		user, pw string
		code     uint16
	}{
		{"nat", "n-pw", 0},
		{"nat", "wrong", 1045},
		{"sha", "s-pw", 0}, // first login: full authentication (RSA, no TLS)
		{"sha", "s-pw", 0}, // then caching_sha2_password's fast path
		{"sha", "wrong", 1045},
		{"sha", "", 1045},
		{"lk", "l-pw", 3118},
		{"lk", "wrong", 1045},
		{"far", "f-pw", 1045}, // the host pattern does not match 127.0.0.1
		{"tls", "t-pw", 1045}, // REQUIRE SSL over a plain connection
		{"nobody", "x", 1045},
	}
	for _, c := range cases {
		err := openAs(t, k.addr, c.user, c.pw, "").Ping()
		wantErrCode(t, err, c.code, fmt.Sprintf("login %s/%q", c.user, c.pw))
	}
	var cur, usr string
	if err := openAs(t, k.addr, "sha", "s-pw", "").QueryRow("SELECT CURRENT_USER(), USER()").Scan(&cur, &usr); err != nil || cur != "sha@%" || usr != "sha@127.0.0.1" {
		t.Fatalf("CURRENT_USER %q USER %q %v", cur, usr, err)
	}
	// ALTER USER clears the cache entry: the old password no longer works, the new one does.
	mustExec(t, root, "ALTER USER 'sha'@'%' IDENTIFIED BY 's-pw2'")
	wantErrCode(t, openAs(t, k.addr, "sha", "s-pw", "").Ping(), 1045, "old password after ALTER USER")
	wantErrCode(t, openAs(t, k.addr, "sha", "s-pw2", "").Ping(), 0, "new password after ALTER USER")
	mustExec(t, root, "DROP USER 'sha'@'%'")
	wantErrCode(t, openAs(t, k.addr, "sha", "s-pw2", "").Ping(), 1045, "login after DROP USER")

	// Hardening root survives a restart (accounts are in the catalog, replayed from the log).
	mustExec(t, root, "ALTER USER 'root'@'localhost' IDENTIFIED BY 'r00t'")
	wantErrCode(t, openAs(t, k.addr, "root", "", "").Ping(), 1045, "root without password after ALTER USER")
	k.stop()
	k.start()
	wantErrCode(t, openAs(t, k.addr, "root", "", "").Ping(), 1045, "root without password after restart")
	r := openAs(t, k.addr, "root", "r00t", "")
	wantErrCode(t, r.Ping(), 0, "root with its password after restart")
	mustExec(t, r, "ALTER USER 'root'@'localhost' IDENTIFIED BY ''")
	wantErrCode(t, openAs(t, k.addr, "root", "", "").Ping(), 0, "root without password again")
}

// matrixServer is the server the privilege matrix runs against.
func matrixServer(t *testing.T) (addr string, mariadb bool) {
	if a := os.Getenv("ACL_MATRIX_ADDR"); a != "" {
		return a, os.Getenv("ACL_MATRIX_FLAVOR") == "mariadb"
	}
	return startKiln(t, "").addr, false
}

// TestPrivilegeMatrix: for each privilege, a user without it and a user with it run the statement
// that needs it: MySQL 8's error code without, success with.
func TestPrivilegeMatrix(t *testing.T) {
	addr, mariadb := matrixServer(t)
	admin := openAs(t, addr, "root", "", "")
	admin.SetMaxIdleConns(2)
	ctx := context.Background()
	cleanup := func() {
		rows, err := admin.Query("SELECT User, Host FROM mysql.user WHERE User LIKE 'kmx%'")
		if err == nil {
			var us [][2]string
			for rows.Next() {
				var u, h string
				_ = rows.Scan(&u, &h)
				us = append(us, [2]string{u, h})
			}
			rows.Close()
			for _, u := range us {
				_, _ = admin.Exec(fmt.Sprintf("DROP USER '%s'@'%s'", u[0], u[1]))
			}
		}
		_, _ = admin.Exec("DROP DATABASE IF EXISTS kmx")
		_, _ = admin.Exec("DROP DATABASE IF EXISTS kmx_new")
	}
	cleanup()
	t.Cleanup(cleanup)
	for _, q := range []string{
		"CREATE DATABASE kmx",
		"CREATE TABLE kmx.t (id INT PRIMARY KEY, n INT)",
		"INSERT INTO kmx.t VALUES (1, 1)",
		"CREATE TABLE kmx.del (id INT PRIMARY KEY)",
		"CREATE TABLE kmx.dropme (id INT PRIMARY KEY)",
		"CREATE TABLE kmx.alterme (id INT PRIMARY KEY)",
		"CREATE TABLE kmx.idx (id INT PRIMARY KEY, a INT)",
		"CREATE VIEW kmx.v AS SELECT id FROM kmx.t",
		"CREATE USER 'kmx_other'@'%' IDENTIFIED BY 'pw'",
	} {
		mustExec(t, admin, q)
	}
	// The admin's victim connection for KILL.
	victim, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var victimID int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&victimID); err != nil {
		t.Fatal(err)
	}

	type check func(db *sql.DB) error
	exec := func(q string) check { return func(db *sql.DB) error { _, err := db.Exec(q); return err } }
	// sees reports an error unless the query's first column has the value (listings).
	sees := func(q, want string, expect bool) check {
		return func(db *sql.DB) error {
			rows, err := db.Query(q)
			if err != nil {
				return err
			}
			defer rows.Close()
			found := false
			for rows.Next() {
				var v sql.NullString
				cols, _ := rows.Columns()
				dest := make([]any, len(cols))
				dest[0] = &v
				for i := 1; i < len(cols); i++ {
					dest[i] = new(sql.RawBytes)
				}
				if err := rows.Scan(dest...); err != nil {
					return err
				}
				if v.String == want {
					found = true
				}
			}
			if found != expect {
				return fmt.Errorf("%s: %q listed = %v, want %v", q, want, found, expect)
			}
			return rows.Err()
		}
	}
	cases := []struct {
		name    string
		grant   string // GRANT ... TO the user (the user name is appended)
		without check
		code    uint16 // the error without the privilege
		with    check
		skipMDB string // why MariaDB differs, if it does
	}{
		{name: "SELECT", grant: "GRANT SELECT ON kmx.t", without: exec("SELECT * FROM kmx.t"), code: 1142, with: exec("SELECT * FROM kmx.t")},
		{name: "INSERT", grant: "GRANT INSERT ON kmx.t", without: exec("INSERT INTO kmx.t VALUES (10, 1)"), code: 1142, with: exec("INSERT INTO kmx.t VALUES (10, 1)")},
		{name: "UPDATE", grant: "GRANT UPDATE ON kmx.t", without: exec("UPDATE kmx.t SET n = 2"), code: 1142, with: exec("UPDATE kmx.t SET n = 2")},
		{name: "DELETE", grant: "GRANT DELETE ON kmx.del", without: exec("DELETE FROM kmx.del"), code: 1142, with: exec("DELETE FROM kmx.del")},
		{name: "CREATE", grant: "GRANT CREATE ON kmx.*", without: exec("CREATE TABLE kmx.created (a INT)"), code: 1142, with: exec("CREATE TABLE kmx.created (a INT)")},
		{name: "CREATE DATABASE", grant: "GRANT CREATE ON kmx_new.*", without: exec("CREATE DATABASE kmx_new"), code: 1044, with: exec("CREATE DATABASE kmx_new")},
		{name: "DROP", grant: "GRANT DROP ON kmx.dropme", without: exec("DROP TABLE kmx.dropme"), code: 1142, with: exec("DROP TABLE kmx.dropme")},
		{name: "ALTER", grant: "GRANT ALTER, CREATE, INSERT ON kmx.alterme", without: exec("ALTER TABLE kmx.alterme ADD COLUMN b INT"), code: 1142, with: exec("ALTER TABLE kmx.alterme ADD COLUMN b INT")},
		{name: "INDEX", grant: "GRANT INDEX ON kmx.idx", without: exec("CREATE INDEX ia ON kmx.idx (a)"), code: 1142, with: exec("CREATE INDEX ia ON kmx.idx (a)")},
		{name: "CREATE VIEW", grant: "GRANT CREATE VIEW, SELECT ON kmx.*", without: exec("CREATE VIEW kmx.v2 AS SELECT id FROM kmx.t"), code: 1142, with: exec("CREATE VIEW kmx.v2 AS SELECT id FROM kmx.t")},
		{name: "SHOW VIEW", grant: "GRANT SHOW VIEW, SELECT ON kmx.v", without: exec("SHOW CREATE VIEW kmx.v"), code: 1142, with: exec("SHOW CREATE VIEW kmx.v")},
		{name: "LOCK TABLES", grant: "GRANT LOCK TABLES, SELECT ON kmx.*", without: exec("LOCK TABLES kmx.t READ"), code: 1044, with: exec("LOCK TABLES kmx.t READ; UNLOCK TABLES")},
		{name: "USE", grant: "GRANT SELECT ON kmx.t", without: exec("USE kmx"), code: 1044, with: exec("USE kmx")},
		{name: "SHOW TABLES", grant: "GRANT SELECT ON kmx.t", without: exec("SHOW TABLES FROM kmx"), code: 1044, with: sees("SHOW TABLES FROM kmx", "t", true)},
		{name: "SHOW TABLES lists only granted", grant: "GRANT SELECT ON kmx.t", without: sees("SHOW DATABASES", "kmx", false), with: sees("SHOW TABLES FROM kmx", "dropme", false)},
		{name: "SHOW DATABASES", grant: "GRANT SHOW DATABASES ON *.*", without: sees("SHOW DATABASES", "kmx", false), with: sees("SHOW DATABASES", "kmx", true)},
		{name: "information_schema.TABLES", grant: "GRANT SELECT ON kmx.t", without: sees("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kmx'", "t", false),
			with: sees("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'kmx'", "t", true)},
		{name: "information_schema.SCHEMATA", grant: "GRANT SELECT ON kmx.t", without: sees("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", "kmx", false),
			with: sees("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", "kmx", true)},
		{name: "PROCESS", grant: "GRANT PROCESS ON *.*", without: sees("SHOW PROCESSLIST", "root", false), with: sees("SELECT USER FROM information_schema.PROCESSLIST", "root", true)},
		{name: "SUPER", grant: "GRANT SUPER ON *.*", without: exec("SET GLOBAL max_connections = 151"), code: 1227, with: exec("SET GLOBAL max_connections = 151")},
		{name: "SYSTEM_VARIABLES_ADMIN", grant: "GRANT SYSTEM_VARIABLES_ADMIN ON *.*", without: exec("SET GLOBAL max_connections = 151"), code: 1227, with: exec("SET GLOBAL max_connections = 151"),
			skipMDB: "MariaDB has no dynamic privileges"},
		{name: "RELOAD", grant: "GRANT RELOAD ON *.*", without: exec("FLUSH PRIVILEGES"), code: 1227, with: exec("FLUSH PRIVILEGES")},
		{name: "REPLICATION CLIENT", grant: "GRANT REPLICATION CLIENT ON *.*", without: exec("SHOW MASTER STATUS"), code: 1227, with: exec("SHOW MASTER STATUS"),
			skipMDB: "MariaDB 10.5+ wants BINLOG MONITOR for SHOW MASTER STATUS"},
		{name: "CREATE USER", grant: "GRANT CREATE USER ON *.*", without: exec("CREATE USER 'kmx_made'@'%'"), code: 1227, with: exec("CREATE USER 'kmx_made'@'%'")},
		{name: "GRANT OPTION", grant: "GRANT SELECT ON kmx.t WITH GRANT OPTION", without: exec("GRANT SELECT ON kmx.t TO 'kmx_other'@'%'"), code: 1142, with: exec("GRANT SELECT ON kmx.t TO 'kmx_other'@'%'")},
		{name: "mysql.user", grant: "GRANT SELECT ON mysql.*", without: exec("SELECT User FROM mysql.user"), code: 1142, with: sees("SELECT User FROM mysql.user", "root", true)},
		{name: "SHOW GRANTS FOR", grant: "GRANT SELECT ON mysql.*", without: exec("SHOW GRANTS FOR 'kmx_other'@'%'"), code: 1044, with: exec("SHOW GRANTS FOR 'kmx_other'@'%'")},
		{name: "KILL", grant: "GRANT SUPER ON *.*", without: exec(fmt.Sprintf("KILL QUERY %d", victimID)), code: 1095, with: exec(fmt.Sprintf("KILL QUERY %d", victimID))},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if mariadb && c.skipMDB != "" {
				t.Skip(c.skipMDB)
			}
			user := fmt.Sprintf("kmx_%d", i)
			mustExec(t, admin, fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY 'pw'", user))
			db := openAs(t, addr, user, "pw", "")
			err := c.without(db)
			if c.code != 0 {
				wantErrCode(t, err, c.code, c.name+" without the privilege")
			} else if err != nil {
				t.Fatalf("%s without the privilege: %v", c.name, err)
			}
			grant, opt := strings.CutSuffix(c.grant, " WITH GRANT OPTION")
			q := fmt.Sprintf("%s TO '%s'@'%%'", grant, user)
			if opt {
				q += " WITH GRANT OPTION"
			}
			mustExec(t, admin, q)
			// A new connection: MySQL applies global and database grants at the next login.
			db = openAs(t, addr, user, "pw", "")
			if err := c.with(db); err != nil {
				t.Fatalf("%s with the privilege: %v", c.name, err)
			}
		})
	}
	// Privileges Kiln accepts and stores without a feature to check them: GRANT and SHOW GRANTS.
	mustExec(t, admin, "CREATE USER 'kmx_store'@'%'")
	mustExec(t, admin, "GRANT EXECUTE, EVENT, TRIGGER, REFERENCES, CREATE TEMPORARY TABLES ON kmx.* TO 'kmx_store'@'%'")
	mustExec(t, admin, "GRANT FILE, REPLICATION SLAVE ON *.* TO 'kmx_store'@'%'")
	var grants []string
	rows, err := admin.Query("SHOW GRANTS FOR 'kmx_store'@'%'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	rows.Close()
	// MariaDB prints the same lines.
	want := []string{"GRANT FILE, REPLICATION SLAVE ON *.* TO `kmx_store`@`%`",
		"GRANT REFERENCES, CREATE TEMPORARY TABLES, EXECUTE, EVENT, TRIGGER ON `kmx`.* TO `kmx_store`@`%`"}
	if strings.Join(grants, "\n") != strings.Join(want, "\n") {
		t.Errorf("SHOW GRANTS:\n%s\nwant\n%s", strings.Join(grants, "\n"), strings.Join(want, "\n"))
	}
}
