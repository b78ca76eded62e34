package sql

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// BenchmarkSysbenchRead runs the statements of sysbench's oltp_read_only (its schema, its c and pad
// values, 100-row ranges) through the SQL layer, text protocol: one sub-benchmark per statement
// kind. Per-row costs of the range queries (row decode, residual filters, collation keys for
// ORDER BY / DISTINCT on the CHAR(120) column) show here without the network.
func BenchmarkSysbenchRead(b *testing.B) {
	db := testDB(b)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE sbtest", "USE sbtest",
		"CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0', c CHAR(120) NOT NULL DEFAULT '', " +
			"pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))"} {
		if err := s.Query(ctx, q, &textWriter{}); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(1))
	digits := func(groups int) string {
		var sb strings.Builder
		for g := 0; g < groups; g++ {
			if g > 0 {
				sb.WriteByte('-')
			}
			for i := 0; i < 11; i++ {
				sb.WriteByte(byte('0' + r.Intn(10)))
			}
		}
		return sb.String()
	}
	const rows = 2000
	for base := 0; base < rows; base += 500 {
		var v strings.Builder
		for i := base + 1; i <= base+500; i++ {
			if i > base+1 {
				v.WriteByte(',')
			}
			fmt.Fprintf(&v, "(%d, %d, '%s', '%s')", i, r.Intn(rows), digits(10), digits(5))
		}
		if err := s.Query(ctx, "INSERT INTO sbtest1 (id, k, c, pad) VALUES "+v.String(), &textWriter{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, q string }{
		{"point", "SELECT c FROM sbtest1 WHERE id=%d"},
		{"range", "SELECT c FROM sbtest1 WHERE id BETWEEN %d AND %d"},
		{"sum", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %d AND %d"},
		{"order", "SELECT c FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY c"},
		{"distinct", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY c"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				lo := 1 + (i*37)%(rows-100)
				q := fmt.Sprintf(bc.q, lo, lo+99)
				if bc.name == "point" {
					q = fmt.Sprintf(bc.q, lo)
				}
				if err := s.Query(ctx, q, &discardWriter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
