// Package gosql_test is a scripted go-sql-driver/mysql session against a
// MySQL-compatible server: DDL, DML (rows, affected rows, last insert id),
// transactions, server-side prepared statements (binary protocol) with NULL
// and several types, error codes, and LOAD DATA LOCAL INFILE. It runs only
// when KILN_ADDR is set:
//
//	KILN_ADDR=127.0.0.1:PORT go test ./test/clients/gosql/
//
// It connects as root with an empty password, uses its own database
// kiln_gosql and only SQL that MySQL 8 and MariaDB both accept (MariaDB is
// the reference it must pass on).
package gosql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

const dbName = "kiln_gosql"

func addr(t *testing.T) string {
	t.Helper()
	a := os.Getenv("KILN_ADDR")
	if a == "" {
		t.Skip("KILN_ADDR not set: no server to run the go-sql-driver session against")
	}
	return a
}

func dsn(addr, db string, params string) string {
	// interpolateParams=false (the default): placeholders go through
	// COM_STMT_PREPARE / COM_STMT_EXECUTE.
	s := fmt.Sprintf("root:@tcp(%s)/%s?timeout=10s&readTimeout=60s&writeTimeout=60s&parseTime=true&loc=UTC", addr, db)
	if params != "" {
		s += "&" + params
	}
	return s
}

// setup creates the test database afresh and returns a pool on it.
func setup(t *testing.T, params string) *sql.DB {
	t.Helper()
	a := addr(t)
	admin, err := sql.Open("mysql", dsn(a, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	mustExec(t, admin, "DROP DATABASE IF EXISTS "+dbName)
	mustExec(t, admin, "CREATE DATABASE "+dbName+" CHARACTER SET utf8mb4")
	db, err := sql.Open("mysql", dsn(a, dbName, params))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + dbName)
		db.Close()
	})
	return db
}

type execer interface {
	Exec(string, ...any) (sql.Result, error)
}

func mustExec(t *testing.T, db execer, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

func affected(t *testing.T, res sql.Result, want int64) {
	t.Helper()
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("rows affected = %d, want %d", n, want)
	}
}

func lastID(t *testing.T, res sql.Result, want int64) {
	t.Helper()
	n, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("last insert id = %d, want %d", n, want)
	}
}

func wantErr(t *testing.T, err error, code uint16, sqlState string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected error %d, got success", code)
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("expected MySQL error %d, got %T %v", code, err, err)
	}
	if me.Number != code {
		t.Fatalf("expected error %d, got %d: %v", code, me.Number, err)
	}
	if sqlState != "" && string(me.SQLState[:]) != sqlState {
		t.Fatalf("error %d: SQLSTATE %s, want %s", code, me.SQLState[:], sqlState)
	}
}

// queryInts returns the first column of every row as int64.
func queryInts(t *testing.T, q interface {
	Query(string, ...any) (*sql.Rows, error)
}, query string, args ...any) []int64 {
	t.Helper()
	rows, err := q.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDDLAndDML(t *testing.T) {
	db := setup(t, "")
	mustExec(t, db, `CREATE TABLE t (
		id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		name VARCHAR(40) NOT NULL,
		grp INT NOT NULL,
		v INT NULL,
		UNIQUE KEY uk_name (name),
		KEY k_grp (grp, v)
	) DEFAULT CHARSET=utf8mb4`)

	// Text protocol (no arguments).
	res := mustExec(t, db, "INSERT INTO t (name, grp, v) VALUES ('a', 1, 10)")
	affected(t, res, 1)
	lastID(t, res, 1)
	res = mustExec(t, db, "INSERT INTO t (name, grp, v) VALUES ('b', 1, 20), ('c', 2, NULL), ('d', 2, 40)")
	affected(t, res, 3)
	lastID(t, res, 2) // the first id of a multi-row insert

	// Binary protocol (prepared) insert.
	res = mustExec(t, db, "INSERT INTO t (name, grp, v) VALUES (?, ?, ?)", "e", 3, nil)
	affected(t, res, 1)
	lastID(t, res, 5)

	if got := queryInts(t, db, "SELECT id FROM t WHERE grp = 2 ORDER BY id"); !reflect.DeepEqual(got, []int64{3, 4}) {
		t.Fatalf("grp 2 ids = %v", got)
	}
	if got := queryInts(t, db, "SELECT id FROM t WHERE grp = ? ORDER BY id DESC", 1); !reflect.DeepEqual(got, []int64{2, 1}) {
		t.Fatalf("grp 1 ids desc = %v", got)
	}
	if got := queryInts(t, db, "SELECT COUNT(*) FROM t WHERE v IS NULL"); !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("null count = %v", got)
	}

	// Rows: names and NULLs.
	rows, err := db.Query("SELECT id, name, v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if !reflect.DeepEqual(cols, []string{"id", "name", "v"}) {
		t.Fatalf("columns = %v", cols)
	}
	type row struct {
		id   int64
		name string
		v    sql.NullInt64
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.name, &r.v); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	rows.Close()
	want := []row{
		{1, "a", sql.NullInt64{Int64: 10, Valid: true}},
		{2, "b", sql.NullInt64{Int64: 20, Valid: true}},
		{3, "c", sql.NullInt64{}},
		{4, "d", sql.NullInt64{Int64: 40, Valid: true}},
		{5, "e", sql.NullInt64{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows = %v, want %v", got, want)
	}

	// UPDATE counts changed rows; DELETE counts deleted rows.
	affected(t, mustExec(t, db, "UPDATE t SET v = 0 WHERE grp = 2"), 2)
	affected(t, mustExec(t, db, "UPDATE t SET v = 0 WHERE grp = ?", 2), 0) // unchanged
	affected(t, mustExec(t, db, "UPDATE t SET v = v + 1 WHERE id IN (?, ?, ?)", 1, 2, 999), 2)
	affected(t, mustExec(t, db, "DELETE FROM t WHERE id = ?", 999), 0)
	affected(t, mustExec(t, db, "DELETE FROM t WHERE grp = 2"), 2)
	// ON DUPLICATE KEY UPDATE: 1 inserted, 2 updated.
	affected(t, mustExec(t, db, "INSERT INTO t (name, grp) VALUES ('z', 9) ON DUPLICATE KEY UPDATE grp = grp + 1"), 1)
	affected(t, mustExec(t, db, "INSERT INTO t (name, grp) VALUES ('z', 9) ON DUPLICATE KEY UPDATE grp = grp + 1"), 2)
	if got := queryInts(t, db, "SELECT grp FROM t WHERE name = 'z'"); !reflect.DeepEqual(got, []int64{10}) {
		t.Fatalf("odku grp = %v", got)
	}
	// ALTER TABLE on a table with data, then the new column.
	mustExec(t, db, "ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 7")
	if got := queryInts(t, db, "SELECT SUM(extra) FROM t"); !reflect.DeepEqual(got, []int64{7 * 4}) {
		t.Fatalf("sum(extra) = %v", got)
	}
	mustExec(t, db, "CREATE INDEX k_extra ON t (extra)")
	mustExec(t, db, "DROP INDEX k_extra ON t")
	mustExec(t, db, "DROP TABLE t")
	_, err = db.Exec("SELECT * FROM t")
	wantErr(t, err, 1146, "42S02")
}

func TestFoundRows(t *testing.T) {
	db := setup(t, "clientFoundRows=true")
	mustExec(t, db, "CREATE TABLE f (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO f VALUES (1, 1), (2, 2)")
	// With CLIENT_FOUND_ROWS an UPDATE reports matched rows.
	affected(t, mustExec(t, db, "UPDATE f SET v = v"), 2)
}

func TestErrors(t *testing.T) {
	db := setup(t, "")
	mustExec(t, db, "CREATE TABLE e (id INT PRIMARY KEY, u VARCHAR(10), UNIQUE KEY uk (u))")
	mustExec(t, db, "INSERT INTO e VALUES (1, 'x')")

	_, err := db.Exec("INSERT INTO e VALUES (1, 'y')")
	wantErr(t, err, 1062, "23000")
	_, err = db.Exec("INSERT INTO e VALUES (?, ?)", 2, "x") // unique secondary key, prepared
	wantErr(t, err, 1062, "23000")
	_, err = db.Exec("SELECT * FROM no_such_table")
	wantErr(t, err, 1146, "42S02")
	_, err = db.Query("SELECT * FROM no_such_table WHERE id = ?", 1) // at prepare
	wantErr(t, err, 1146, "42S02")
	_, err = db.Exec("SELEC 1")
	wantErr(t, err, 1064, "42000")
	_, err = db.Query("SELECT * FROM e WHERE id = ? AND", 1)
	wantErr(t, err, 1064, "42000")

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "USE kiln_no_such_db")
	wantErr(t, err, 1049, "42000")
	// The session goes on, on its database.
	var cur string
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&cur); err != nil || cur != dbName {
		t.Fatalf("after failed USE: database %q, %v", cur, err)
	}
	conn.Close()

	bad, err := sql.Open("mysql", dsn(addr(t), "kiln_no_such_db", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	err = bad.Ping()
	wantErr(t, err, 1049, "42000")
}

func TestTransactions(t *testing.T) {
	db := setup(t, "")
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
	mustExec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 100)")
	sum := func() []int64 { return queryInts(t, db, "SELECT SUM(bal) FROM acct") }

	// Commit: invisible to others before, visible after.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE acct SET bal = bal - ? WHERE id = ?", 30, 1)
	mustExec(t, tx, "UPDATE acct SET bal = bal + ? WHERE id = ?", 30, 2)
	mustExec(t, tx, "INSERT INTO acct VALUES (3, 5)")
	if got := queryInts(t, tx, "SELECT bal FROM acct ORDER BY id"); !reflect.DeepEqual(got, []int64{70, 130, 5}) {
		t.Fatalf("own writes = %v", got)
	}
	if got := queryInts(t, db, "SELECT bal FROM acct ORDER BY id"); !reflect.DeepEqual(got, []int64{100, 100}) {
		t.Fatalf("uncommitted writes visible: %v", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, db, "SELECT bal FROM acct ORDER BY id"); !reflect.DeepEqual(got, []int64{70, 130, 5}) {
		t.Fatalf("after commit = %v", got)
	}

	// Rollback: nothing remains.
	tx, err = db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "DELETE FROM acct")
	mustExec(t, tx, "INSERT INTO acct VALUES (9, 9)")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := sum(); !reflect.DeepEqual(got, []int64{205}) {
		t.Fatalf("after rollback sum = %v", got)
	}

	// A failed statement inside a transaction rolls back only itself.
	tx, err = db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO acct VALUES (4, 4)")
	_, err = tx.Exec("INSERT INTO acct VALUES (1, 1)")
	wantErr(t, err, 1062, "23000")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, db, "SELECT id FROM acct ORDER BY id"); !reflect.DeepEqual(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("ids = %v", got)
	}

	// Savepoints, and a repeatable-read snapshot on one connection.
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	for _, q := range []string{"START TRANSACTION", "INSERT INTO acct VALUES (5, 5)", "SAVEPOINT s1",
		"INSERT INTO acct VALUES (6, 6)", "ROLLBACK TO SAVEPOINT s1", "COMMIT"} {
		if _, err := c1.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := queryInts(t, db, "SELECT id FROM acct WHERE id >= 5"); !reflect.DeepEqual(got, []int64{5}) {
		t.Fatalf("savepoint: ids >= 5 = %v", got)
	}
	if _, err := c1.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		t.Fatal(err)
	}
	var before, after int64
	if err := c1.QueryRowContext(ctx, "SELECT bal FROM acct WHERE id = 5").Scan(&before); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "UPDATE acct SET bal = 500 WHERE id = 5")
	if err := c1.QueryRowContext(ctx, "SELECT bal FROM acct WHERE id = 5").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if before != 5 || after != 5 {
		t.Fatalf("snapshot read %d then %d, want 5 and 5", before, after)
	}
	if _, err := c1.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := c1.QueryRowContext(ctx, "SELECT bal FROM acct WHERE id = 5").Scan(&after); err != nil || after != 500 {
		t.Fatalf("after commit read %d, %v", after, err)
	}
}

func TestPreparedTypes(t *testing.T) {
	db := setup(t, "")
	mustExec(t, db, `CREATE TABLE typed (
		id BIGINT NOT NULL PRIMARY KEY,
		i INT NULL, u BIGINT UNSIGNED NULL, ti TINYINT NULL, d DECIMAL(20,6) NULL,
		f DOUBLE NULL, s VARCHAR(100) NULL, b VARBINARY(100) NULL, txt TEXT NULL,
		dt DATETIME NULL, dd DATE NULL, flag BOOL NULL
	) DEFAULT CHARSET=utf8mb4`)

	ins, err := db.Prepare("INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	ts := time.Date(2024, 2, 29, 23, 59, 58, 0, time.UTC)
	day := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)
	type rec struct {
		id   int64
		i    sql.NullInt64
		u    any // uint64 or nil
		ti   sql.NullInt64
		d    sql.NullString
		f    sql.NullFloat64
		s    sql.NullString
		b    []byte
		txt  sql.NullString
		dt   sql.NullTime
		dd   sql.NullTime
		flag sql.NullBool
	}
	recs := []rec{
		{1, sql.NullInt64{Int64: math.MinInt32, Valid: true}, uint64(math.MaxUint64), sql.NullInt64{Int64: -128, Valid: true},
			sql.NullString{String: "-12345678901234.123456", Valid: true}, sql.NullFloat64{Float64: 1.5, Valid: true},
			sql.NullString{String: "it's \"quoted\" \\ café ☃", Valid: true}, []byte{0, 1, 0xff, '\''},
			sql.NullString{String: "long text", Valid: true}, sql.NullTime{Time: ts, Valid: true}, sql.NullTime{Time: day, Valid: true},
			sql.NullBool{Bool: true, Valid: true}},
		{2, sql.NullInt64{}, nil, sql.NullInt64{}, sql.NullString{}, sql.NullFloat64{}, sql.NullString{}, nil,
			sql.NullString{}, sql.NullTime{}, sql.NullTime{}, sql.NullBool{}},
		{3, sql.NullInt64{Int64: 0, Valid: true}, uint64(0), sql.NullInt64{Int64: 127, Valid: true},
			sql.NullString{String: "0.000001", Valid: true}, sql.NullFloat64{Float64: -0.25, Valid: true},
			sql.NullString{String: "", Valid: true}, []byte{}, sql.NullString{String: "", Valid: true},
			sql.NullTime{Time: time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC), Valid: true},
			sql.NullTime{Time: time.Date(2038, 1, 19, 0, 0, 0, 0, time.UTC), Valid: true}, sql.NullBool{Bool: false, Valid: true}},
	}
	for _, r := range recs {
		var b any = r.b
		if r.b == nil {
			b = nil
		}
		res, err := ins.Exec(r.id, r.i, r.u, r.ti, r.d, r.f, r.s, b, r.txt, r.dt, r.dd, r.flag)
		if err != nil {
			t.Fatalf("insert %d: %v", r.id, err)
		}
		affected(t, res, 1)
	}

	sel, err := db.Prepare("SELECT id, i, u, ti, d, f, s, b, txt, dt, dd, flag FROM typed WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	for round := 0; round < 3; round++ { // the same statement executed again and again
		for _, want := range recs {
			var got rec
			var u sql.NullString
			var b []byte
			err := sel.QueryRow(want.id).Scan(&got.id, &got.i, &u, &got.ti, &got.d, &got.f, &got.s, &b, &got.txt, &got.dt, &got.dd, &got.flag)
			if err != nil {
				t.Fatalf("select %d: %v", want.id, err)
			}
			if u.Valid {
				var x uint64
				if _, err := fmt.Sscan(u.String, &x); err != nil {
					t.Fatalf("u %q: %v", u.String, err)
				}
				got.u = x
			}
			got.b = b // NULL versus empty is checked in SQL below
			if !reflect.DeepEqual(got.u, want.u) || got.i != want.i || got.ti != want.ti || got.d != want.d ||
				got.f != want.f || got.s != want.s || string(got.b) != string(want.b) || got.txt != want.txt ||
				!got.dt.Time.Equal(want.dt.Time) || got.dt.Valid != want.dt.Valid ||
				!got.dd.Time.Equal(want.dd.Time) || got.dd.Valid != want.dd.Valid || got.flag != want.flag {
				t.Fatalf("row %d:\n got %+v\nwant %+v", want.id, got, want)
			}
		}
	}
	// NULL vs empty for binary and text, decided by the server.
	if got := queryInts(t, db, "SELECT id FROM typed WHERE b IS NULL"); !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("b IS NULL ids = %v", got)
	}
	if got := queryInts(t, db, "SELECT id FROM typed WHERE b = ?", []byte{}); !reflect.DeepEqual(got, []int64{3}) {
		t.Fatalf("b = '' ids = %v", got)
	}
	// Placeholders in LIMIT, IN lists and expressions; NULL parameters.
	if got := queryInts(t, db, "SELECT id FROM typed WHERE id IN (?, ?, ?) ORDER BY id DESC LIMIT ?", 1, 2, 3, 2); !reflect.DeepEqual(got, []int64{3, 2}) {
		t.Fatalf("IN + LIMIT ? = %v", got)
	}
	if got := queryInts(t, db, "SELECT id FROM typed ORDER BY id LIMIT ? OFFSET ?", 1, 1); !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("LIMIT ? OFFSET ? = %v", got)
	}
	if got := queryInts(t, db, "SELECT COUNT(*) FROM typed WHERE i = ?", nil); !reflect.DeepEqual(got, []int64{0}) {
		t.Fatalf("= NULL matched %v", got)
	}
	var isNull sql.NullInt64
	if err := db.QueryRow("SELECT ? + 1", nil).Scan(&isNull); err != nil || isNull.Valid {
		t.Fatalf("NULL + 1 = %v, %v", isNull, err)
	}
	affected(t, mustExec(t, db, "UPDATE typed SET s = ?, f = ? WHERE id = ?", nil, 2.5, 1), 1)
	var s sql.NullString
	var f float64
	if err := db.QueryRow("SELECT s, f FROM typed WHERE id = ?", 1).Scan(&s, &f); err != nil || s.Valid || f != 2.5 {
		t.Fatalf("after update: s=%v f=%v err=%v", s, f, err)
	}
	// A statement prepared on a connection, reused many times.
	stmt, err := db.Prepare("SELECT COUNT(*) FROM typed WHERE id <= ?")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 50; i++ {
		var n int64
		if err := stmt.QueryRow(i % 4).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := min(i%4, 3); n != want {
			t.Fatalf("count(id <= %d) = %d, want %d", i%4, n, want)
		}
	}
	stmt.Close()
}

// LOAD DATA LOCAL INFILE through the driver's reader handlers and registered
// files: the driver streams the data in packets; LOCAL skips duplicate keys.
func TestLoadDataLocal(t *testing.T) {
	db := setup(t, "")
	mustExec(t, db, "CREATE TABLE ld (id INT PRIMARY KEY, name VARCHAR(30), qty INT NULL) DEFAULT CHARSET=utf8mb4")

	var b strings.Builder
	b.WriteString("1\tfirst\t\\N\n1\tduplicate\t0\n")
	for i := 2; i <= 5000; i++ {
		fmt.Fprintf(&b, "%d\tname %d\t%d\n", i, i, i%10)
	}
	data := b.String()
	mysql.RegisterReaderHandler("kiln_ld", func() io.Reader { return strings.NewReader(data) })
	defer mysql.DeregisterReaderHandler("kiln_ld")
	res := mustExec(t, db, "LOAD DATA LOCAL INFILE 'Reader::kiln_ld' INTO TABLE ld")
	affected(t, res, 5000)
	if got := queryInts(t, db, "SELECT COUNT(*) FROM ld WHERE qty IS NULL"); !reflect.DeepEqual(got, []int64{1}) {
		t.Fatalf("rows with NULL qty: %v", got)
	}
	if got := queryInts(t, db, "SELECT SUM(qty) FROM ld"); !reflect.DeepEqual(got, []int64{22499}) {
		t.Fatalf("SUM(qty) = %v", got)
	}

	// A file on disk, with REPLACE and a column list.
	path := filepath.Join(t.TempDir(), "ld.csv")
	if err := os.WriteFile(path, []byte("1,\"replaced, quoted\"\n6000,new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(path)
	defer mysql.DeregisterLocalFile(path)
	res = mustExec(t, db, "LOAD DATA LOCAL INFILE '"+path+"' REPLACE INTO TABLE ld FIELDS TERMINATED BY ',' ENCLOSED BY '\"' (id, name)")
	affected(t, res, 3) // one row replaced (deleted and written), one new
	var name string
	if err := db.QueryRow("SELECT name FROM ld WHERE id = 1").Scan(&name); err != nil || name != "replaced, quoted" {
		t.Fatalf("replaced row: %q %v", name, err)
	}
}
