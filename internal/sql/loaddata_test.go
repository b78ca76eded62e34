package sql

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// fileWriter is a textWriter whose connection serves LOCAL INFILE requests from files, recording
// how much of each file was read.
type fileWriter struct {
	*textWriter
	files    map[string]string
	noLocal  bool
	opened   []string
	lastFile *trackedFile
	info     string
}

func (w *fileWriter) LocalFilesEnabled() bool { return !w.noLocal }

func (w *fileWriter) OpenLocalFile(name string) (io.ReadCloser, error) {
	w.opened = append(w.opened, name)
	data, ok := w.files[name]
	if !ok {
		data = "" // a client that cannot open the file sends an empty one
	}
	w.lastFile = &trackedFile{r: strings.NewReader(data)}
	return w.lastFile, nil
}

func (w *fileWriter) OK(ok proto.OK, more bool) error {
	w.info = ok.Info
	return w.textWriter.OK(ok, more)
}

type trackedFile struct {
	r      *strings.Reader
	closed bool
}

func (f *trackedFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *trackedFile) Close() error {
	_, _ = io.Copy(io.Discard, f.r) // drain, as the protocol does
	f.closed = true
	return nil
}

// loadSession runs statements on one session of a fresh database, with files for LOCAL INFILE.
type loadSession struct {
	t     *testing.T
	s     *Session
	files map[string]string
}

func newLoadSession(t *testing.T) *loadSession {
	db := testDB(t)
	ls := &loadSession{t: t, s: db.NewSession(1, "root", "localhost", ""), files: map[string]string{}}
	ls.exec("CREATE DATABASE d")
	ls.exec("USE d")
	return ls
}

// run executes one statement and returns its OK line (with the info string), rows, or error.
func (ls *loadSession) run(stmt string) string {
	ls.t.Helper()
	w := &fileWriter{textWriter: &textWriter{}, files: ls.files}
	return ls.runWith(w, stmt)
}

func (ls *loadSession) runWith(w *fileWriter, stmt string) string {
	ls.t.Helper()
	if err := ls.s.Query(context.Background(), stmt, w); err != nil {
		e := sqlerr.As(err)
		return fmt.Sprintf("error %d (%s): %s", e.Code, e.State, e.Message)
	}
	out := strings.TrimSuffix(w.b.String(), "\n")
	if w.info != "" {
		out += " | " + w.info
	}
	return out
}

func (ls *loadSession) exec(stmt string) {
	ls.t.Helper()
	if out := ls.run(stmt); strings.HasPrefix(out, "error") {
		ls.t.Fatalf("%s: %s", stmt, out)
	}
}

func (ls *loadSession) expect(stmt, want string) {
	ls.t.Helper()
	if got := ls.run(stmt); got != want {
		ls.t.Errorf("%s\ngot:\n%s\nwant:\n%s", stmt, got, want)
	}
}

// warnings renders the last statement's warnings, one per line.
func (ls *loadSession) warnings() string {
	var b []string
	for _, w := range ls.s.warnings {
		b = append(b, fmt.Sprintf("%s %d %s", w.Level, w.Code, w.Message))
	}
	return strings.Join(b, "\n")
}

func (ls *loadSession) expectWarnings(want string) {
	ls.t.Helper()
	if got := ls.warnings(); got != want {
		ls.t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}

// The expected results below are MariaDB 10.11's on the same files, except where MySQL 8 differs
// (noted): MariaDB is the reference the client suites run against.
func TestLoadDataLocal(t *testing.T) {
	ls := newLoadSession(t)
	ls.files["a.txt"] = "1\tabc\n2\t\\N\n3\tx\\ty\\nz\n4\n5\tq\textra\n\n6\t\n"
	ls.exec("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10) DEFAULT 'dflt')")
	ls.expect("LOAD DATA LOCAL INFILE 'a.txt' INTO TABLE t",
		"ok affected=7 warnings=4 | Records: 7  Deleted: 0  Skipped: 0  Warnings: 4")
	ls.expectWarnings("Warning 1261 Row 4 doesn't contain data for all columns\n" +
		"Warning 1262 Row 5 was truncated; it contained more data than there were input columns\n" +
		"Warning 1366 Incorrect integer value: '' for column 'a' at row 6\n" +
		"Warning 1261 Row 6 doesn't contain data for all columns")
	// A missing field is the type's zero value, not the column's default.
	ls.expect("SELECT a, b, HEX(b) FROM t ORDER BY a",
		"0\t\t\n1\tabc\t616263\n2\tNULL\tNULL\n3\tx\ty\nz\t7809790A7A\n4\t\t\n5\tq\t71\n6\t\t")

	// Duplicates: skipped with LOCAL, replaced with REPLACE (an identical row under the last
	// unique key counts once, as in MySQL).
	ls.files["dup.txt"] = "1\tx\n2\ty\n1\tz\n3\tw\n"
	ls.exec("CREATE TABLE u (a INT PRIMARY KEY, b VARCHAR(10))")
	ls.exec("INSERT INTO u VALUES (2, 'old')")
	ls.expect("LOAD DATA LOCAL INFILE 'dup.txt' INTO TABLE u",
		"ok affected=2 warnings=2 | Records: 4  Deleted: 0  Skipped: 2  Warnings: 2")
	ls.expectWarnings("Warning 1062 Duplicate entry '2' for key 'u.PRIMARY'\nWarning 1062 Duplicate entry '1' for key 'u.PRIMARY'")
	ls.expect("LOAD DATA LOCAL INFILE 'dup.txt' REPLACE INTO TABLE u",
		"ok affected=6 | Records: 4  Deleted: 2  Skipped: 0  Warnings: 0")
	ls.expect("SELECT ROW_COUNT()", "6")
	ls.expect("SELECT * FROM u ORDER BY a", "1\tz\n2\ty\n3\tw")
	ls.expect("LOAD DATA LOCAL INFILE 'dup.txt' IGNORE INTO TABLE u",
		"ok affected=0 warnings=4 | Records: 4  Deleted: 0  Skipped: 4  Warnings: 4")

	// AUTO_INCREMENT: \N, 0 and '' ask for a value; LAST_INSERT_ID is the first one, the OK
	// packet carries none (as MySQL's).
	ls.files["ai.txt"] = "\\N\tauto1\n0\tauto2\n10\tex\n\tempty\n\\N\tlast\n"
	ls.exec("CREATE TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10) NOT NULL)")
	ls.expect("LOAD DATA LOCAL INFILE 'ai.txt' INTO TABLE ai",
		"ok affected=5 warnings=1 | Records: 5  Deleted: 0  Skipped: 0  Warnings: 1")
	ls.expectWarnings("Warning 1366 Incorrect integer value: '' for column 'id' at row 4")
	ls.expect("SELECT LAST_INSERT_ID()", "1")
	ls.expect("SELECT * FROM ai", "1\tauto1\n2\tauto2\n10\tex\n11\tempty\n12\tlast")
}

func TestLoadDataCSVAndClauses(t *testing.T) {
	ls := newLoadSession(t)
	ls.files["b.csv"] = "id,name,qty\n1,\"Smith, John\",10\n2,\"say \"\"hi\"\"\",\\N\n3,NULL,\"NULL\"\n" +
		"4,\"multi\nline\",7\n5,\"esc\\\"aped\",8\n\"6\",plain\"quote,9\n7,\"unterminated,10\r\n"
	ls.exec("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), qty INT)")
	ls.expect(`LOAD DATA LOCAL INFILE 'b.csv' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES`,
		"ok affected=7 warnings=2 | Records: 7  Deleted: 0  Skipped: 0  Warnings: 2")
	ls.expectWarnings("Warning 1366 Incorrect integer value: 'NULL' for column 'qty' at row 3\n" +
		"Warning 1261 Row 7 doesn't contain data for all columns")
	ls.expect("SELECT id, name, HEX(name), qty FROM t",
		"1\tSmith, John\t536D6974682C204A6F686E\t10\n"+
			"2\tsay \"hi\"\t7361792022686922\tNULL\n"+
			"3\tNULL\tNULL\t0\n"+
			"4\tmulti\nline\t6D756C74690A6C696E65\t7\n"+
			"5\tesc\"aped\t6573632261706564\t8\n"+
			"6\tplain\"quote\t706C61696E2271756F7465\t9\n"+
			"7\t\"unterminated,10\r\n\t22756E7465726D696E617465642C31300D0A\tNULL")

	// IGNORE n ROWS is MySQL's synonym; an enclosed line break counts as one.
	ls.exec("DELETE FROM t")
	ls.expect(`LOAD DATA LOCAL INFILE 'b.csv' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '"' IGNORE 4 ROWS`,
		"ok affected=4 warnings=1 | Records: 4  Deleted: 0  Skipped: 0  Warnings: 1")
	ls.expect("SELECT id FROM t", "4\n5\n6\n7")

	// Column list with user variables and SET; a NOT NULL column without default the statement
	// leaves out gets one warning and its implicit default.
	ls.files["v.csv"] = "1,a,10\n2,b,20\n"
	ls.exec("CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(10), total INT, note VARCHAR(20) NOT NULL)")
	ls.expect("LOAD DATA LOCAL INFILE 'v.csv' INTO TABLE u FIELDS TERMINATED BY ',' (id, @n, @q) SET name = UPPER(@n), total = @q * 2",
		"ok affected=2 warnings=1 | Records: 2  Deleted: 0  Skipped: 0  Warnings: 1")
	ls.expectWarnings("Warning 1364 Field 'note' doesn't have a default value")
	ls.expect("SELECT * FROM u", "1\tA\t20\t\n2\tB\t40\t")
	ls.expect("SELECT @n, @q", "b\t20")
	// REPLACE is strict: the lines must hold as many fields as the list.
	ls.expect("LOAD DATA LOCAL INFILE 'v.csv' REPLACE INTO TABLE u FIELDS TERMINATED BY ',' (id, @n) SET note = CONCAT(@n, '!'), total = DEFAULT",
		"error 1262 (01000): Row 1 was truncated; it contained more data than there were input columns")
	ls.expect("LOAD DATA LOCAL INFILE 'v.csv' REPLACE INTO TABLE u FIELDS TERMINATED BY ',' (id, @n, @skip) SET note = CONCAT(@n, '!'), total = DEFAULT",
		"ok affected=4 | Records: 2  Deleted: 2  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM u", "1\tNULL\tNULL\ta!\n2\tNULL\tNULL\tb!")

	// LINES STARTING BY and TERMINATED BY, CHARACTER SET.
	ls.files["st.txt"] = "junk\nxx1\tone\r\nnoprefix\r\n  xx2\ttwo\r\n"
	ls.exec("CREATE TABLE e (a INT PRIMARY KEY, b VARCHAR(20))")
	ls.expect(`LOAD DATA LOCAL INFILE 'st.txt' INTO TABLE e LINES STARTING BY 'xx' TERMINATED BY '\r\n'`,
		"ok affected=2 | Records: 2  Deleted: 0  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM e", "1\tone\n2\ttwo")
	ls.files["l1.txt"] = "3\tcaf\xe9\n4\t\x80\x81\n"
	ls.expect("LOAD DATA LOCAL INFILE 'l1.txt' INTO TABLE e CHARACTER SET latin1",
		"ok affected=2 | Records: 2  Deleted: 0  Skipped: 0  Warnings: 0")
	ls.expect("SELECT HEX(b) FROM e WHERE a > 2", "636166C3A9\nE282ACC281")
	// Invalid in the file's character set: an error even under IGNORE (MySQL 8; MariaDB warns).
	ls.files["bad.txt"] = "5\tok\n6\t\"bad\xff\xfeyes\n7\tmore\n"
	ls.expect("LOAD DATA LOCAL INFILE 'bad.txt' INTO TABLE e",
		"error 1300 (HY000): Invalid utf8mb4 character string: '\"bad'")
	ls.expect("SELECT COUNT(*) FROM e", "4")
	ls.expect("LOAD DATA LOCAL INFILE 'bad.txt' INTO TABLE e CHARACTER SET binary",
		"ok affected=3 warnings=1 | Records: 3  Deleted: 0  Skipped: 0  Warnings: 1")
	ls.expect("LOAD DATA LOCAL INFILE 'l1.txt' INTO TABLE e CHARACTER SET gbk", "error 1115 (42000): Unknown character set: 'gbk'")
}

func TestLoadDataStrictAndErrors(t *testing.T) {
	ls := newLoadSession(t)
	ls.exec("CREATE TABLE nn (a INT PRIMARY KEY, b VARCHAR(3) NOT NULL)")
	ls.files["few.txt"] = "1\tx\n2\n"
	ls.files["many.txt"] = "1\tx\textra\n"
	ls.files["long.txt"] = "1\tabc\n2\t12345\n"
	ls.files["null.txt"] = "1\t\\N\n"
	// REPLACE keeps strict mode: the statement fails, changes nothing, and the file is read to
	// its end.
	for _, c := range []struct{ file, err string }{
		{"few.txt", "error 1261 (01000): Row 2 doesn't contain data for all columns"},
		{"many.txt", "error 1262 (01000): Row 1 was truncated; it contained more data than there were input columns"},
		{"long.txt", "error 1406 (22001): Data too long for column 'b' at row 2"},
		{"null.txt", "error 1263 (22004): Column set to default value; NULL supplied to NOT NULL column 'b' at row 1"},
	} {
		w := &fileWriter{textWriter: &textWriter{}, files: ls.files}
		if got := ls.runWith(w, "LOAD DATA LOCAL INFILE '"+c.file+"' REPLACE INTO TABLE nn"); got != c.err {
			t.Errorf("%s: got %s, want %s", c.file, got, c.err)
		}
		if f := w.lastFile; f == nil || !f.closed || f.r.Len() != 0 {
			t.Errorf("%s: file not drained and closed", c.file)
		}
		ls.expect("SELECT COUNT(*) FROM nn", "0")
	}
	// Without strict mode, or with LOCAL alone (IGNORE), they are warnings.
	ls.expect("LOAD DATA LOCAL INFILE 'null.txt' INTO TABLE nn",
		"ok affected=1 warnings=1 | Records: 1  Deleted: 0  Skipped: 0  Warnings: 1")
	ls.expectWarnings("Warning 1263 Column set to default value; NULL supplied to NOT NULL column 'b' at row 1")
	ls.exec("SET sql_mode = ''")
	ls.expect("LOAD DATA LOCAL INFILE 'long.txt' REPLACE INTO TABLE nn",
		"ok affected=3 warnings=1 | Records: 2  Deleted: 1  Skipped: 0  Warnings: 1")
	ls.expectWarnings("Warning 1265 Data truncated for column 'b' at row 2")
	ls.exec("SET sql_mode = DEFAULT")

	// Inside a transaction: the rows are the transaction's.
	ls.exec("BEGIN")
	ls.files["tx.txt"] = "1\tnew\n9\tni\n"
	ls.expect("LOAD DATA LOCAL INFILE 'tx.txt' REPLACE INTO TABLE nn",
		"ok affected=3 | Records: 2  Deleted: 1  Skipped: 0  Warnings: 0")
	ls.expect("SELECT * FROM nn", "1\tnew\n2\t123\n9\tni")
	ls.exec("ROLLBACK")
	ls.expect("SELECT * FROM nn", "1\tabc\n2\t123")

	// Errors before the file is requested.
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nope", "error 1146 (42S02): Table 'd.nope' doesn't exist")
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nn (a, zz)", "error 1054 (42S22): Unknown column 'zz' in 'field list'")
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nn SET zz = 1", "error 1054 (42S22): Unknown column 'zz' in 'field list'")
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' REPLACE INTO TABLE nn (a)", "error 1364 (HY000): Field 'b' doesn't have a default value")
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nn FIELDS TERMINATED BY '' ENCLOSED BY ''",
		"error 1235 (42000): This version of Kiln doesn't yet support 'LOAD DATA with fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY '')'")
	ls.expect("LOAD DATA INFILE '/etc/passwd' INTO TABLE nope", "error 1146 (42S02): Table 'd.nope' doesn't exist")
	ls.expect("LOAD DATA INFILE '/etc/passwd' INTO TABLE nn",
		"error 1290 (HY000): The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
	ls.expect("PREPARE p FROM 'LOAD DATA LOCAL INFILE ''few.txt'' INTO TABLE nn'",
		"error 1295 (HY000): This command is not supported in the prepared statement protocol yet")
	ls.expect("SELECT @@global.local_infile, @@secure_file_priv", "1\tNULL")

	// Local files disabled: by the client, by the server (before the table is looked at), or by
	// a caller that cannot ask for files.
	w := &fileWriter{textWriter: &textWriter{}, files: ls.files, noLocal: true}
	disabled := "error 3948 (42000): Loading local data is disabled; this must be enabled on both the client and server sides"
	if got := ls.runWith(w, "LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nope"); got != disabled || len(w.opened) != 0 {
		t.Errorf("client without local files: %s (opened %v)", got, w.opened)
	}
	if err := ls.s.Query(context.Background(), "LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nn", &textWriter{}); !sqlerr.Is(err, 3948) {
		t.Errorf("writer without LocalFileOpener: %v", err)
	}
	ls.expect("SET local_infile = 0", "error 1229 (HY000): Variable 'local_infile' is a GLOBAL variable and should be set with SET GLOBAL")
	ls.exec("SET GLOBAL local_infile = OFF")
	ls.expect("LOAD DATA LOCAL INFILE 'few.txt' INTO TABLE nope", disabled)
	ls.exec("SET GLOBAL local_infile = ON")
	ls.expect("LOAD DATA LOCAL INFILE 'missing.txt' INTO TABLE nn",
		"ok affected=0 | Records: 0  Deleted: 0  Skipped: 0  Warnings: 0")
}

func TestLoadDataManyRows(t *testing.T) {
	ls := newLoadSession(t)
	ls.exec("CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20), n INT)")
	var b strings.Builder
	const rows = 5000
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "%d\tvalue %d\t%d\n", i, i, i%7)
	}
	ls.files["big.txt"] = b.String()
	ls.expect("LOAD DATA LOCAL INFILE 'big.txt' INTO TABLE big",
		fmt.Sprintf("ok affected=%d | Records: %d  Deleted: 0  Skipped: 0  Warnings: 0", rows, rows))
	ls.expect("SELECT COUNT(*), SUM(n), MAX(id) FROM big", fmt.Sprintf("%d\t%d\t%d", rows, 14997, rows))
}
