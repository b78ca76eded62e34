package sql

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kiln-db/kiln/internal/repl/repltest"
	"github.com/kiln-db/kiln/internal/txn"
)

func fileTestSession(t *testing.T, secureDir string) lockSess {
	t.Helper()
	st := repltest.Start(t, nil, NewApplier(), nil)
	txm := txn.NewManager(st.Engine, txn.NewLockManager(txn.DefaultLockConfig()), st.Node)
	db, err := Open(context.Background(), txm, Config{Version: "8.0.40-kiln-test", SecureFilePriv: secureDir})
	if err != nil {
		t.Fatal(err)
	}
	s := lockSess{t: t, s: db.NewSession(1, "root", "localhost", "")}
	t.Cleanup(s.s.Close)
	for _, q := range []string{"CREATE DATABASE d", "USE d",
		"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), d DECIMAL(5,2), f FLOAT)",
		"INSERT INTO t VALUES (1, 'plain', 1.5, 0.1), (2, 'tab\\there', NULL, NULL), (3, 'quote\"comma,nl\\nbs\\\\', -2, 3), (4, NULL, 0, 1e10)"} {
		if out := s.run(q); len(out) > 5 && out[:5] == "error" {
			t.Fatalf("%s: %s", q, out)
		}
	}
	return s
}

// With secure_file_priv = NULL (the default) the server reads and writes no files of its own.
func TestServerFilesRefusedByDefault(t *testing.T) {
	s := fileTestSession(t, "")
	dir := t.TempDir()
	out := filepath.Join(dir, "x.txt")
	for _, q := range []string{
		"SELECT * FROM t INTO OUTFILE '" + out + "'",
		"SELECT s FROM t WHERE id = 1 INTO DUMPFILE '" + out + "'",
		"SELECT 1 UNION SELECT 2 INTO OUTFILE '" + out + "'",
		"LOAD DATA INFILE '" + out + "' INTO TABLE t",
	} {
		s.expect(q, "error 1290")
	}
	s.expect("PREPARE p FROM 'SELECT * FROM t INTO OUTFILE ''"+out+"'''", "ok affected=0")
	s.expect("EXECUTE p", "error 1290")
	s.expect("SELECT @@secure_file_priv", "NULL")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused statement created %s (%v)", out, err)
	}
}

func TestSelectIntoOutfile(t *testing.T) {
	dir := t.TempDir()
	s := fileTestSession(t, dir)
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s.expect("SELECT @@secure_file_priv = '"+dir+"/'", "1")

	// MySQL's defaults: tab-separated, backslash escapes, \N for NULL.
	s.expect("SELECT * FROM t ORDER BY id INTO OUTFILE 'plain.txt'", "ok affected=4")
	want := "1\tplain\t1.50\t0.1\n2\ttab\\\there\t\\N\t\\N\n3\tquote\"comma,nl\\\nbs\\\\\t-2.00\t3\n4\t\\N\t0.00\t10000000000\n"
	if got := read("plain.txt"); got != want {
		t.Errorf("default format:\ngot  %q\nwant %q", got, want)
	}
	s.expect("SELECT ROW_COUNT()", "4")
	s.expect("SELECT 1 INTO OUTFILE 'plain.txt'", "error 1086")
	s.expect("SELECT 1 INTO OUTFILE '"+filepath.Join(dir, "..", "escape.txt")+"'", "error 1290")
	s.expect("SELECT 1 INTO OUTFILE '../escape2.txt'", "error 1290")
	s.expect("SELECT 1 INTO OUTFILE '/tmp/kiln-outfile-test-outside.txt'", "error 1290")

	// CSV with optional quoting: numbers bare, strings quoted, the quote escaped.
	s.expect(`SELECT id, s, d FROM t ORDER BY id INTO OUTFILE 'csv.txt' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\r\n'`, "ok affected=4")
	want = "1,\"plain\",1.50\r\n2,\"tab\there\",\\N\r\n3,\"quote\\\"comma,nl\nbs\\\\\",-2.00\r\n4,\\N,0.00\r\n"
	if got := read("csv.txt"); got != want {
		t.Errorf("csv format:\ngot  %q\nwant %q", got, want)
	}

	// Round trip: what INTO OUTFILE writes, LOAD DATA INFILE reads back unchanged.
	s.expect("CREATE TABLE t2 LIKE t", "ok affected=0")
	s.expect("LOAD DATA INFILE 'plain.txt' INTO TABLE t2", "ok affected=4")
	s.expect("SELECT COUNT(*) FROM t JOIN t2 USING (id) WHERE t.s <=> t2.s AND t.d <=> t2.d AND t.f <=> t2.f", "4")
	s.expect("CREATE TABLE t3 LIKE t", "ok affected=0")
	s.expect(`LOAD DATA INFILE 'csv.txt' INTO TABLE t3 FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\r\n' (id, s, d)`, "ok affected=4")
	s.expect("SELECT COUNT(*) FROM t JOIN t3 USING (id) WHERE t.s <=> t3.s AND t.d <=> t3.d", "4")
	s.expect("LOAD DATA INFILE 'missing.txt' INTO TABLE t2", "error 29")

	// DUMPFILE: one row, raw bytes.
	s.expect("SELECT s FROM t WHERE id = 3 INTO DUMPFILE 'one.bin'", "ok affected=1")
	if got := read("one.bin"); got != "quote\"comma,nl\nbs\\" {
		t.Errorf("dumpfile: got %q", got)
	}
	s.expect("SELECT s FROM t INTO DUMPFILE 'many.bin'", "error 1172")
	if _, err := os.Stat(filepath.Join(dir, "many.bin")); !os.IsNotExist(err) {
		t.Errorf("a failed DUMPFILE left its file behind (%v)", err)
	}

	// A statement failing after some rows removes its file.
	s.expect("SELECT id, (SELECT id FROM t WHERE id > x.id - 2) FROM t x ORDER BY id INTO OUTFILE 'fail.txt'", "error 1242")
	if _, err := os.Stat(filepath.Join(dir, "fail.txt")); !os.IsNotExist(err) {
		t.Errorf("a failed OUTFILE left its file behind (%v)", err)
	}

	// Prepared statements write the file too (no result set).
	s.expect("PREPARE p FROM 'SELECT id FROM t WHERE id = ? INTO OUTFILE ''prep.txt'''", "ok affected=0")
	s.expect("SET @x = 2", "ok affected=0")
	s.expect("EXECUTE p USING @x", "ok affected=1")
	if got := read("prep.txt"); got != "2\n" {
		t.Errorf("prepared: got %q", got)
	}
}
