package sql

import (
	"context"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/auth"
	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/sql/rowenc"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

func openACLTestDB(t *testing.T) (*DB, *txn.Manager) {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return db, txm
}

func runQ(s *Session, q string) (string, error) {
	w := &textWriter{}
	err := s.Query(context.Background(), q, w)
	return w.b.String(), err
}

func mustQ(t *testing.T, s *Session, q string) string {
	t.Helper()
	out, err := runQ(s, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func wantCode(t *testing.T, s *Session, q string, code uint16, msg string) {
	t.Helper()
	_, err := runQ(s, q)
	if !sqlerr.Is(err, code) || (msg != "" && !strings.Contains(err.Error(), msg)) {
		t.Fatalf("%s: got %v, want %d %q", q, err, code, msg)
	}
}

// A new data directory has root@localhost, no password, every privilege WITH GRANT OPTION, and
// SHOW GRANTS says so in MySQL 8's format.
func TestBootstrapRoot(t *testing.T) {
	db, _ := openACLTestDB(t)
	a, ok := db.LookupAccount("root", "127.0.0.1")
	if !ok || a.User != "root" || a.Host != "localhost" || a.AuthString != "" || a.Plugin != auth.CachingSHA2Password {
		t.Fatalf("root: %+v %v", a, ok)
	}
	if _, ok := db.LookupAccount("root", "10.0.0.5"); ok {
		t.Fatal("root@localhost matched a remote address")
	}
	s := db.NewSession(1, "root", "127.0.0.1", "")
	out := mustQ(t, s, "SHOW GRANTS")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 ||
		lines[0] != "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, SHUTDOWN, PROCESS, FILE, REFERENCES, INDEX, ALTER, SHOW DATABASES, SUPER, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, REPLICATION SLAVE, REPLICATION CLIENT, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, CREATE USER, EVENT, TRIGGER, CREATE TABLESPACE, CREATE ROLE, DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION" ||
		!strings.HasPrefix(lines[1], "GRANT APPLICATION_PASSWORD_ADMIN,AUDIT_ADMIN,") || !strings.HasSuffix(lines[1], "XA_RECOVER_ADMIN ON *.* TO `root`@`localhost` WITH GRANT OPTION") {
		t.Fatalf("SHOW GRANTS:\n%s", out)
	}
	if got := mustQ(t, s, "SELECT CURRENT_USER(), USER()"); got != "root@localhost\troot@127.0.0.1\n" {
		t.Fatalf("CURRENT_USER, USER: %q", got)
	}
}

// A data directory from before accounts existed (no marker, no account records) gets root on
// open, written through the log.
func TestAccountsUpgrade(t *testing.T) {
	db, txm := openACLTestDB(t)
	tx := txm.Begin(txn.RepeatableRead, false)
	tx.Delete(rowenc.ACLInitKey())
	tx.Delete(rowenc.AccountKey("root", "localhost"))
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = db
	if _, ok, _ := txm.Engine().Get(rowenc.ACLInitKey()); ok {
		t.Fatal("marker still there: the test tests nothing")
	}
	db2, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := txm.Engine().Get(rowenc.ACLInitKey()); !ok {
		t.Fatal("the upgrade did not write the accounts marker")
	}
	if _, ok, _ := txm.Engine().Get(rowenc.AccountKey("root", "localhost")); !ok {
		t.Fatal("the upgrade did not write root@localhost")
	}
	if _, ok := db2.LookupAccount("root", "::1"); !ok {
		t.Fatal("root cannot log in after the upgrade")
	}
}

func TestAccountStatements(t *testing.T) {
	db, _ := openACLTestDB(t)
	s := db.NewSession(1, "root", "127.0.0.1", "")
	mustQ(t, s, "CREATE USER 'app'@'10.0.%' IDENTIFIED BY 'password'")
	mustQ(t, s, "CREATE USER nat@'%' IDENTIFIED WITH mysql_native_password BY 'password' REQUIRE SSL ACCOUNT LOCK")
	wantCode(t, s, "CREATE USER 'app'@'10.0.%'", sqlerr.ErrCannotUser, "Operation CREATE USER failed for 'app'@'10.0.%'")
	mustQ(t, s, "CREATE USER IF NOT EXISTS 'app'@'10.0.%'")
	if len(s.warnings) != 1 || s.warnings[0].Code != sqlerr.ErrUserAlreadyExists {
		t.Fatalf("IF NOT EXISTS warnings %+v", s.warnings)
	}
	// Stored hashes, never the password: mysql.user as MySQL shows it.
	out := mustQ(t, s, "SELECT User, Host, plugin, authentication_string, ssl_type, account_locked, Select_priv FROM mysql.user ORDER BY User")
	if !strings.Contains(out, "nat\t%\tmysql_native_password\t*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19\tANY\tY\tN\n") {
		t.Fatalf("mysql.user:\n%s", out)
	}
	a, ok := db.LookupAccount("app", "10.0.3.4")
	if !ok || a.Plugin != auth.CachingSHA2Password || !strings.HasPrefix(a.AuthString, "$A$005$") || len(a.AuthString) != 70 ||
		!auth.CheckCachingSHA2Password(a.AuthString, "password") || strings.Contains(out, "\tpassword") {
		t.Fatalf("app: %+v", a)
	}
	if _, ok := db.LookupAccount("app", "10.1.0.1"); ok {
		t.Fatal("host pattern 10.0.% matched 10.1.0.1")
	}
	if a, _ := db.LookupAccount("nat", "10.1.0.1"); !a.Locked || !a.RequireSSL {
		t.Fatalf("nat flags %+v", a)
	}
	mustQ(t, s, "ALTER USER nat@'%' REQUIRE NONE ACCOUNT UNLOCK")
	if a, _ := db.LookupAccount("nat", "10.1.0.1"); a.Locked || a.RequireSSL {
		t.Fatalf("nat flags after ALTER %+v", a)
	}
	if out := mustQ(t, s, "SHOW CREATE USER nat@'%'"); out != "CREATE USER `nat`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19' REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT\n" {
		t.Fatalf("SHOW CREATE USER: %q", out)
	}
	mustQ(t, s, "SET PASSWORD FOR nat@'%' = 'other'")
	if a, _ := db.LookupAccount("nat", "1.2.3.4"); a.AuthString != auth.NativeHash("other") {
		t.Fatalf("SET PASSWORD: %+v", a)
	}
	wantCode(t, s, "SET PASSWORD FOR nobody@'%' = 'x'", sqlerr.ErrPasswordNoMatch, "")
	mustQ(t, s, "ALTER USER nat@'%' IDENTIFIED WITH caching_sha2_password AS '"+auth.CachingSHA2HashWithSalt("pw", []byte("abcdefghijklmnopqrst"), 5000)+"'")
	wantCode(t, s, "ALTER USER nat@'%' IDENTIFIED WITH caching_sha2_password AS 'nope'", sqlerr.ErrPasswordFormat, "")
	wantCode(t, s, "ALTER USER nat@'%' IDENTIFIED WITH sha256_password BY 'x'", sqlerr.ErrPluginIsNotLoaded, "")
	wantCode(t, s, "ALTER USER ghost@'%' IDENTIFIED BY 'x'", sqlerr.ErrCannotUser, "Operation ALTER USER failed for 'ghost'@'%'")

	// Grants and SHOW GRANTS in MySQL 8's format.
	mustQ(t, s, "CREATE DATABASE shop")
	mustQ(t, s, "CREATE TABLE shop.orders (id INT PRIMARY KEY)")
	mustQ(t, s, "GRANT SELECT, INSERT ON shop.* TO 'app'@'10.0.%'")
	mustQ(t, s, "GRANT UPDATE ON shop.orders TO 'app'@'10.0.%' WITH GRANT OPTION")
	mustQ(t, s, "GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'app'@'10.0.%'")
	mustQ(t, s, "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'10.0.%'")
	mustQ(t, s, "GRANT ALL ON shop2.* TO 'app'@'10.0.%'")
	got := mustQ(t, s, "SHOW GRANTS FOR 'app'@'10.0.%'")
	want := "GRANT PROCESS, REPLICATION CLIENT ON *.* TO `app`@`10.0.%`\n" +
		"GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO `app`@`10.0.%`\n" +
		"GRANT SELECT, INSERT ON `shop`.* TO `app`@`10.0.%`\n" +
		"GRANT ALL PRIVILEGES ON `shop2`.* TO `app`@`10.0.%`\n" +
		"GRANT UPDATE ON `shop`.`orders` TO `app`@`10.0.%` WITH GRANT OPTION\n"
	if got != want {
		t.Fatalf("SHOW GRANTS:\n%s\nwant\n%s", got, want)
	}
	mustQ(t, s, "REVOKE INSERT ON shop.* FROM 'app'@'10.0.%'")
	mustQ(t, s, "REVOKE ALL ON shop2.* FROM 'app'@'10.0.%'")
	wantCode(t, s, "REVOKE SELECT ON nodb.* FROM 'app'@'10.0.%'", sqlerr.ErrNonexistingGrant, "There is no such grant defined for user 'app' on host '10.0.%'")
	wantCode(t, s, "REVOKE SELECT ON shop.nothere FROM 'app'@'10.0.%'", sqlerr.ErrNonexistingTableGrant, "on table 'nothere'")
	wantCode(t, s, "GRANT SELECT ON *.* TO ghost@'%'", sqlerr.ErrCantCreateUserWithGrant, "")
	wantCode(t, s, "GRANT SUPER ON shop.* TO 'app'@'10.0.%'", sqlerr.ErrWrongUsage, "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES")
	wantCode(t, s, "GRANT PROCESS ON shop.orders TO 'app'@'10.0.%'", sqlerr.ErrIllegalGrantForTable, "")
	wantCode(t, s, "GRANT SELECT (id) ON shop.orders TO 'app'@'10.0.%'", sqlerr.ErrNotSupportedYet, "column privileges")
	wantCode(t, s, "GRANT SELECT ON shop.nope TO 'app'@'10.0.%'", sqlerr.ErrNoSuchTable, "")
	wantCode(t, s, "CREATE ROLE r1", sqlerr.ErrNotSupportedYet, "CREATE ROLE")
	wantCode(t, s, "GRANT r1 TO 'app'@'10.0.%'", sqlerr.ErrNotSupportedYet, "roles")
	wantCode(t, s, "CREATE USER lim@'%' WITH MAX_QUERIES_PER_HOUR 5", sqlerr.ErrNotSupportedYet, "resource limits")
	wantCode(t, s, "CREATE USER exp@'%' PASSWORD EXPIRE", sqlerr.ErrNotSupportedYet, "password expiry")
	got = mustQ(t, s, "SHOW GRANTS FOR 'app'@'10.0.%'")
	if !strings.Contains(got, "GRANT SELECT ON `shop`.* TO") || strings.Contains(got, "shop2") {
		t.Fatalf("after REVOKE:\n%s", got)
	}
	out = mustQ(t, s, "SELECT Db, User, Select_priv, Insert_priv FROM mysql.db")
	if out != "shop\tapp\tY\tN\n" {
		t.Fatalf("mysql.db: %q", out)
	}
	out = mustQ(t, s, "SELECT Db, Table_name, Table_priv FROM mysql.tables_priv")
	if out != "shop\torders\tUpdate,Grant\n" {
		t.Fatalf("mysql.tables_priv: %q", out)
	}
	wantCode(t, s, "DELETE FROM mysql.user WHERE User = 'app'", sqlerr.ErrNotSupportedYet, "grant table")
	wantCode(t, s, "INSERT INTO mysql.db (Host) VALUES ('x')", sqlerr.ErrNotSupportedYet, "grant table")

	mustQ(t, s, "RENAME USER 'app'@'10.0.%' TO 'app2'@'%'")
	if _, ok := db.LookupAccount("app2", "192.168.1.1"); !ok {
		t.Fatal("RENAME USER")
	}
	wantCode(t, s, "RENAME USER 'app'@'10.0.%' TO 'x'@'%'", sqlerr.ErrCannotUser, "Operation RENAME USER failed for 'app'@'10.0.%'")
	mustQ(t, s, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'app2'@'%'")
	if got := mustQ(t, s, "SHOW GRANTS FOR 'app2'@'%'"); got != "GRANT USAGE ON *.* TO `app2`@`%`\n" {
		t.Fatalf("after REVOKE ALL: %q", got)
	}
	mustQ(t, s, "DROP USER 'app2'@'%', nat@'%'")
	wantCode(t, s, "DROP USER nat@'%'", sqlerr.ErrCannotUser, "Operation DROP USER failed for 'nat'@'%'")
	mustQ(t, s, "DROP USER IF EXISTS nat@'%'")
	wantCode(t, s, "SHOW GRANTS FOR nat@'%'", sqlerr.ErrNonexistingGrant, "")
}

// Host patterns match in MySQL's order: the most specific host first, a named user before the
// anonymous one.
func TestAccountMatchOrder(t *testing.T) {
	db, _ := openACLTestDB(t)
	s := db.NewSession(1, "root", "127.0.0.1", "")
	mustQ(t, s, "CREATE USER 'u'@'%', 'u'@'10.0.%', 'u'@'10.0.0.7', ''@'10.0.0.%', 'v'@'10.0.0._'")
	for _, tt := range []struct{ user, host, want string }{
		{"u", "10.0.0.7", "u@10.0.0.7"},
		{"u", "10.0.0.8", "@10.0.0.%"}, // a longer host prefix beats the named user's pattern
		{"u", "10.0.5.1", "u@10.0.%"},
		{"u", "192.168.0.1", "u@%"},
		{"v", "10.0.0.9", "v@10.0.0._"},
		{"v", "10.0.0.10", "@10.0.0.%"},
		{"w", "10.0.0.10", "@10.0.0.%"},
		{"w", "10.1.0.10", ""},
	} {
		a, ok := db.LookupAccount(tt.user, tt.host)
		got := ""
		if ok {
			got = a.User + "@" + a.Host
		}
		if got != tt.want {
			t.Errorf("%s from %s matched %q, want %q", tt.user, tt.host, got, tt.want)
		}
	}
}

// Privileges are checked on every statement and apply to open sessions at their next statement.
func TestPrivilegeChecks(t *testing.T) {
	db, _ := openACLTestDB(t)
	root := db.NewSession(1, "root", "127.0.0.1", "")
	mustQ(t, root, "CREATE DATABASE shop")
	mustQ(t, root, "CREATE TABLE shop.t (id INT PRIMARY KEY, n INT)")
	mustQ(t, root, "CREATE TABLE shop.secret (id INT PRIMARY KEY)")
	mustQ(t, root, "INSERT INTO shop.t VALUES (1, 1)")
	mustQ(t, root, "CREATE VIEW shop.v AS SELECT id FROM shop.secret")
	mustQ(t, root, "CREATE USER 'app'@'localhost' IDENTIFIED BY 'x'")
	u := db.NewSession(2, "app", "127.0.0.1", "")
	if au, ah := u.Account(); au != "app" || ah != "localhost" {
		t.Fatalf("account %s@%s", au, ah)
	}
	wantCode(t, u, "SELECT * FROM shop.t", sqlerr.ErrTableAccessDenied, "SELECT command denied to user 'app'@'127.0.0.1' for table 't'")
	wantCode(t, u, "USE shop", sqlerr.ErrDBAccessDenied, "Access denied for user 'app'@'127.0.0.1' to database 'shop'")
	if err := u.UseDB("shop"); !sqlerr.Is(err, sqlerr.ErrDBAccessDenied) {
		t.Fatalf("COM_INIT_DB: %v", err)
	}
	if out := mustQ(t, u, "SHOW DATABASES"); out != "information_schema\n" {
		t.Fatalf("SHOW DATABASES: %q", out)
	}
	mustQ(t, root, "GRANT SELECT ON shop.t TO 'app'@'localhost'")
	// A prepared statement is checked at each execution, not only when prepared.
	ps, err := u.Prepare(context.Background(), "SELECT n FROM shop.t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	execPS := func() error {
		return u.Execute(context.Background(), ps.ID, []types.Value{types.NewInt(1)}, &textWriter{})
	}
	if err := execPS(); err != nil {
		t.Fatalf("prepared SELECT with the grant: %v", err)
	}
	mustQ(t, root, "REVOKE SELECT ON shop.t FROM 'app'@'localhost'")
	if err := execPS(); !sqlerr.Is(err, sqlerr.ErrTableAccessDenied) {
		t.Fatalf("prepared SELECT after REVOKE: %v, want 1142", err)
	}
	mustQ(t, root, "GRANT SELECT ON shop.t TO 'app'@'localhost'")
	if err := execPS(); err != nil {
		t.Fatalf("prepared SELECT after GRANT again: %v", err)
	}
	if out := mustQ(t, u, "SELECT n FROM shop.t"); out != "1\n" {
		t.Fatalf("after GRANT: %q", out)
	}
	mustQ(t, u, "USE shop")
	if out := mustQ(t, u, "SHOW TABLES"); out != "t\n" {
		t.Fatalf("SHOW TABLES: %q", out)
	}
	if out := mustQ(t, u, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop'"); out != "t\n" {
		t.Fatalf("information_schema.TABLES: %q", out)
	}
	wantCode(t, u, "SELECT * FROM t WHERE id IN (SELECT id FROM secret)", sqlerr.ErrTableAccessDenied, "for table 'secret'")
	wantCode(t, u, "SELECT * FROM t JOIN secret USING (id)", sqlerr.ErrTableAccessDenied, "for table 'secret'")
	mustQ(t, root, "GRANT SELECT ON shop.v TO 'app'@'localhost'")
	// Views run with the invoker's rights (documented simplification): the base table is checked too.
	wantCode(t, u, "SELECT * FROM v", sqlerr.ErrTableAccessDenied, "for table 'secret'")
	if out := mustQ(t, root, "SHOW CREATE VIEW shop.v"); !strings.Contains(out, "DEFINER=`root`@`localhost`") {
		t.Fatalf("a view's default definer is its creator: %q", out)
	}
	mustQ(t, root, "GRANT CREATE VIEW ON shop.* TO 'app'@'localhost'")
	wantCode(t, u, "CREATE DEFINER=`root`@`localhost` VIEW v3 AS SELECT 1", sqlerr.ErrSpecificAccessDenied, "SUPER or SET_USER_ID")
	mustQ(t, u, "CREATE VIEW v3 AS SELECT 1")
	if out := mustQ(t, u, "SELECT DEFINER FROM information_schema.VIEWS WHERE TABLE_NAME = 'v3'"); out != "app@localhost\n" && !strings.Contains(out, "app") {
		t.Fatalf("v3 definer: %q", out)
	}
	wantCode(t, u, "INSERT INTO t VALUES (2, 2)", sqlerr.ErrTableAccessDenied, "INSERT command denied")
	wantCode(t, u, "UPDATE t SET n = 5", sqlerr.ErrTableAccessDenied, "UPDATE command denied")
	wantCode(t, u, "DELETE FROM t WHERE id = 1", sqlerr.ErrTableAccessDenied, "DELETE command denied")
	wantCode(t, u, "REPLACE INTO t VALUES (1, 3)", sqlerr.ErrTableAccessDenied, "INSERT command denied")
	wantCode(t, u, "CREATE TABLE t2 (a INT)", sqlerr.ErrTableAccessDenied, "CREATE command denied")
	wantCode(t, u, "DROP TABLE t", sqlerr.ErrTableAccessDenied, "DROP command denied")
	wantCode(t, u, "CREATE DATABASE d9", sqlerr.ErrDBAccessDenied, "to database 'd9'")
	wantCode(t, u, "SET GLOBAL max_connections = 10", sqlerr.ErrSpecificAccessDenied, "SUPER or SYSTEM_VARIABLES_ADMIN")
	wantCode(t, u, "FLUSH PRIVILEGES", sqlerr.ErrSpecificAccessDenied, "RELOAD")
	wantCode(t, u, "CREATE USER x@'%'", sqlerr.ErrSpecificAccessDenied, "CREATE USER")
	wantCode(t, u, "GRANT SELECT ON shop.t TO 'app'@'localhost'", sqlerr.ErrTableAccessDenied, "GRANT command denied")
	wantCode(t, u, "GRANT ALL ON *.* TO 'app'@'localhost'", sqlerr.ErrAccessDenied, "")
	wantCode(t, u, "SHOW GRANTS FOR root@localhost", sqlerr.ErrDBAccessDenied, "to database 'mysql'")
	wantCode(t, u, "SELECT * FROM mysql.user", sqlerr.ErrTableAccessDenied, "for table 'user'")
	mustQ(t, u, "SHOW GRANTS")
	mustQ(t, u, "SET PASSWORD = 'newpw'") // one's own password needs nothing
	mustQ(t, u, "ALTER USER USER() IDENTIFIED BY 'newpw2'")

	mustQ(t, root, "GRANT INSERT, UPDATE, DELETE ON shop.t TO 'app'@'localhost'")
	mustQ(t, u, "INSERT INTO t VALUES (2, 2)")
	mustQ(t, u, "UPDATE t SET n = n + 1 WHERE id = 2")
	mustQ(t, u, "DELETE FROM t WHERE id = 2")
	wantCode(t, u, "INSERT INTO t SELECT * FROM secret", sqlerr.ErrTableAccessDenied, "for table 'secret'")

	mustQ(t, root, "REVOKE SELECT ON shop.t FROM 'app'@'localhost'")
	wantCode(t, u, "SELECT * FROM t", sqlerr.ErrTableAccessDenied, "")
	wantCode(t, u, "UPDATE t SET n = 1 WHERE id = 1", sqlerr.ErrTableAccessDenied, "SELECT command denied")
	mustQ(t, u, "UPDATE t SET n = 1") // no column read: UPDATE alone, as MySQL

	// A dropped account's open session has no privileges left.
	mustQ(t, root, "DROP USER 'app'@'localhost'")
	wantCode(t, u, "INSERT INTO t VALUES (3, 3)", sqlerr.ErrTableAccessDenied, "")
}

// Accounts replicate through the log: a user created on the leader can log in on a replica (its
// stored hash is there, and verifies the password).
func TestAccountsReplicate(t *testing.T) {
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	leader, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeCluster{}
	replica, err := Open(context.Background(), txm, Config{Version: "test", Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	ls := leader.NewSession(1, "root", "localhost", "")
	mustQ(t, ls, "CREATE USER 'rep'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'")
	if _, ok := replica.LookupAccount("rep", "10.1.1.1"); ok {
		t.Fatal("the replica knew the account before the log moved: the test tests nothing")
	}
	fc.gen.Add(1) // the record was applied on the replica
	a, ok := replica.LookupAccount("rep", "10.1.1.1")
	if !ok || a.AuthString != auth.NativeHash("pw") {
		t.Fatalf("replica account %+v %v", a, ok)
	}
	rs := replica.NewSession(2, "root", "localhost", "")
	wantCode(t, rs, "CREATE USER 'x'@'%'", sqlerr.ErrOptionPreventsStatement, "")
	wantCode(t, rs, "GRANT SELECT ON *.* TO 'rep'@'%'", sqlerr.ErrOptionPreventsStatement, "")
}

// BenchmarkAuthorize is the per-statement cost of the privilege check: root (every privilege,
// no walk) and an account with table grants (the statement is walked).
func BenchmarkAuthorize(b *testing.B) {
	st := repltest.Start(b, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "test"})
	if err != nil {
		b.Fatal(err)
	}
	root := db.NewSession(1, "root", "127.0.0.1", "")
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, n INT)",
		"CREATE USER 'u'@'localhost'", "GRANT SELECT ON d.t TO 'u'@'localhost'"} {
		if _, err := runQ(root, q); err != nil {
			b.Fatal(err)
		}
	}
	u := db.NewSession(2, "u", "127.0.0.1", "d")
	stmts, err := u.parse("SELECT n FROM t WHERE id = 1")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    *Session
	}{{"root", root}, {"grantee", u}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.s.authorize(stmts[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
