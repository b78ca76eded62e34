package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// Executor loops: a join whose inner level is served from memory, aggregation, DISTINCT, a sort,
// window functions, and a point select (the OLTP path). They show what the cancellation checks cost per row.
func BenchmarkExec(b *testing.B) {
	db := testDB(b)
	s := db.NewSession(1, "root", "localhost", "")
	defer s.Close()
	var v strings.Builder
	for i := 1; i <= 300; i++ {
		if i > 1 {
			v.WriteByte(',')
		}
		fmt.Fprintf(&v, "(%d, %d)", i, i%10)
	}
	for _, q := range []string{"CREATE DATABASE bx", "USE bx", "CREATE TABLE t (id INT PRIMARY KEY, g INT)", "INSERT INTO t VALUES " + v.String()} {
		if err := s.Query(context.Background(), q, &textWriter{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, q string }{
		{"join-90k", "SELECT COUNT(*) FROM t a, t b"},
		{"group-by-90k", "SELECT a.g, COUNT(*) FROM t a, t b GROUP BY a.g"},
		{"distinct-90k", "SELECT DISTINCT a.g FROM t a, t b"},
		{"order-by-90k", "SELECT a.id FROM t a, t b ORDER BY a.g, b.id LIMIT 1"},
		{"window-300", "SELECT id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id), SUM(id) OVER (ORDER BY id ROWS 2 PRECEDING) FROM t"},
		{"point-select", "SELECT g FROM t WHERE id = 17"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				if err := s.Query(ctx, bc.q, &discardWriter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discardWriter drops results.
type discardWriter struct{}

func (discardWriter) Columns([]proto.Column) error { return nil }
func (discardWriter) Row([]types.Value) error      { return nil }
func (discardWriter) EndRows(uint16, bool) error   { return nil }
func (discardWriter) OK(proto.OK, bool) error      { return nil }
