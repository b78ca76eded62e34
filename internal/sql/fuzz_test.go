package sql

import (
	"context"
	"testing"
	"time"
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
		if len(q) > 2000 {
			return
		}
		s := db.NewSession(2, "root", "localhost", "f")
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Query(ctx, q, &textWriter{})
	})
}
