package sql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// FuzzQuery feeds arbitrary statement text to a session over a small schema: any input must end in
// a result or a MySQL error, never a panic or a hang.
func FuzzQuery(f *testing.F) {
	seeds := []string{
		"SELECT 1", "SELECT * FROM t WHERE id = 1", "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1",
		"INSERT INTO t VALUES (1, 2, 'x')", "UPDATE t SET a = a + 1 WHERE id IN (1, 2)", "DELETE FROM t WHERE c LIKE 'x%'",
		"SELECT * FROM t t1 LEFT JOIN t t2 ON t1.id = t2.a ORDER BY t1.id DESC LIMIT 2",
		"SELECT (SELECT MAX(id) FROM t), EXISTS (SELECT 1 FROM t WHERE a > 1)",
		"SELECT CAST('12x' AS SIGNED), 7/0, 1 DIV 0, '2020-02-30' + INTERVAL 1 DAY",
		"CREATE TABLE u (x INT PRIMARY KEY)", "ALTER TABLE t ADD COLUMN d INT DEFAULT 5", "SELECT * FROM t UNION SELECT * FROM t",
		"SELECT ~0 + 1, -9223372036854775808 - 1, 18446744073709551615 * 2",
		"SELECT CONCAT_WS(',', NULL, 'a'), SUBSTRING('abc', -5, 2), REPEAT('a', 3)",
		"SET @x = 1; SELECT @x + @y",
	}
	// Hostile shapes (issue 13): deep, wide and huge statements must end in an error or a result
	// within the bounds, without exhausting the stack or memory.
	deep := func(open, close string, n int, mid string) string {
		return "SELECT " + strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	seeds = append(seeds,
		deep("ABS(", ")", 300000, "1"),
		deep("(", ")", 100000, "1"),
		deep("(SELECT ", ")", 5000, "1"),
		"SELECT "+strings.Repeat("~", 100000)+"1",
		"SELECT "+strings.Repeat("NOT ", 50000)+"1",
		"SELECT 1 FROM t WHERE "+strings.Repeat("id = 1 OR ", 3000)+"id = 2",
		"SELECT "+strings.Repeat("1, ", 20000)+"1",
		"SET @0=000 "+strings.Repeat("0", 100)+"."+strings.Repeat("0", 100), // a parser panic (MyDecimal)
		"SELECT * FROM t WHERE id IN ("+strings.Repeat("1, ", 100000)+"2)",
		"SELECT '"+strings.Repeat("x", 1<<20)+"'",
		"SELECT COUNT(*) FROM t a, t b, t c, t d, t e, t f, t g",
		"SELECT * FROM (SELECT * FROM (SELECT * FROM (SELECT * FROM t) x) y) z",
		strings.Repeat("SELECT 1 UNION ", 2000)+"SELECT 1",
		"SELECT REPEAT('a', 1000000000)",
		"SELECT LENGTH(REPLACE(REPEAT('a', 1000000), 'a', REPEAT('b', 1000)))",
		"SELECT GROUP_CONCAT(REPEAT(c, 100000)) FROM t a, t b, t c",
		"SELECT JSON_ARRAY("+strings.Repeat("JSON_ARRAY(", 5000)+"1"+strings.Repeat(")", 5000)+")",
		"SELECT CAST('"+strings.Repeat("[", 100000)+"' AS JSON)",
		"CREATE TABLE `"+strings.Repeat("x", 100)+"` (a INT)",
		"LOCK TABLES t WRITE; SELECT * FROM t; UNLOCK TABLES",
		"SELECT * FROM t INTO OUTFILE '/tmp/kiln-fuzz-outfile'",
		"SELECT * FROM t, JSON_TABLE(t.c, '$[*]' COLUMNS(n FOR ORDINALITY, v INT PATH '$.v' DEFAULT '1' ON EMPTY ERROR ON ERROR, NESTED PATH '$.w[*]' COLUMNS(w JSON PATH '$'))) jt",
		"SELECT * FROM JSON_TABLE('"+strings.Repeat("[", 5000)+"', '$"+strings.Repeat("[*]", 5000)+"' COLUMNS(a INT PATH '$')) jt",
		"SELECT * FROM "+strings.Repeat("JSON_TABLE(", 100000)+"'[]'",
		"SELECT * FROM JSON_TABLE('[]', '$' COLUMNS("+strings.Repeat("NESTED PATH '$' COLUMNS(", 10000)+"a INT PATH '$'"+strings.Repeat(")", 10001)+") jt",
	)
	for _, s := range seeds {
		f.Add(s)
	}
	db := testDB(f)
	setup := db.NewSession(1, "root", "localhost", "")
	for _, q := range []string{"CREATE DATABASE f", "USE f", "CREATE TABLE t (id INT PRIMARY KEY, a INT, c VARCHAR(10), KEY ka (a))", "INSERT INTO t VALUES (1, 1, 'x'), (2, 1, 'y'), (3, NULL, NULL)"} {
		if err := setup.Query(context.Background(), q, &textWriter{}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 4<<20 {
			return // max_allowed_packet's order of size; the protocol refuses bigger statements
		}
		s := db.NewSession(2, "root", "localhost", "f")
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Query(ctx, q, &textWriter{})
		// The same text through the binary protocol's path, as a client's prepared statement.
		if info, err := s.Prepare(ctx, q); err == nil {
			args := make([]types.Value, info.Params)
			for i := range args {
				args[i] = types.NewInt(int64(i))
			}
			_ = s.Execute(ctx, info.ID, args, &textWriter{})
			s.CloseStmt(info.ID)
		}
		// The session still answers after whatever the input did.
		w := &textWriter{}
		if err := s.Query(context.Background(), "SELECT 1", w); err != nil || w.b.String() != "1\n" {
			t.Fatalf("the session no longer answers after %.200q: %v %q", q, err, w.b.String())
		}
	})
}
