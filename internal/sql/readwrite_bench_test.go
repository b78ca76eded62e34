package sql

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/kiln-db/kiln/internal/sql/types"
)

// sysbench's oltp_read_write statements (oltp_common.lua), in the order one transaction sends them.
var rwStmts = []struct{ name, q string }{
	{"begin", "BEGIN"},
	{"point", "SELECT c FROM sbtest1 WHERE id=?"},
	{"range", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"},
	{"sum", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"},
	{"order", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
	{"distinct", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
	{"update_k", "UPDATE sbtest1 SET k=k+1 WHERE id=?"},
	{"update_c", "UPDATE sbtest1 SET c=? WHERE id=?"},
	{"delete", "DELETE FROM sbtest1 WHERE id=?"},
	{"insert", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"},
	{"commit", "COMMIT"},
}

// rwStep is one statement of a transaction: its index in rwStmts and its arguments.
type rwStep struct {
	stmt int
	args []types.Value
	text string // the statement with its arguments as literals (the text protocol)
}

// rwTxns builds n sysbench read_write transactions over ids 1..rows (10 point selects, the four
// 100-row ranges, the two updates, the delete and the insert of the same id), or only the
// writes (BEGIN, the updates, DELETE, INSERT, COMMIT).
func rwTxns(n, rows int, writesOnly bool) [][]rwStep {
	r := rand.New(rand.NewSource(1))
	str := func(groups int) string {
		b := make([]byte, 0, groups*12)
		for g := 0; g < groups; g++ {
			if g > 0 {
				b = append(b, '-')
			}
			for i := 0; i < 11; i++ {
				b = append(b, byte('0'+r.Intn(10)))
			}
		}
		return string(b)
	}
	id := func() int64 { return int64(1 + r.Intn(rows)) }
	lit := func(v types.Value) string {
		if v.K == types.KindString {
			return "'" + v.S + "'"
		}
		return fmt.Sprint(v.I)
	}
	step := func(stmt int, args ...types.Value) rwStep {
		text := rwStmts[stmt].q
		for _, a := range args {
			for i := 0; i < len(text); i++ {
				if text[i] == '?' {
					text = text[:i] + lit(a) + text[i+1:]
					break
				}
			}
		}
		return rwStep{stmt: stmt, args: args, text: text}
	}
	txns := make([][]rwStep, n)
	for i := range txns {
		t := []rwStep{step(0)}
		if !writesOnly {
			for j := 0; j < 10; j++ {
				t = append(t, step(1, types.NewInt(id())))
			}
			for s := 2; s <= 5; s++ {
				lo := int64(1 + r.Intn(rows-100))
				t = append(t, step(s, types.NewInt(lo), types.NewInt(lo+99)))
			}
		}
		t = append(t, step(6, types.NewInt(id())))
		t = append(t, step(7, types.NewString(str(10)), types.NewInt(id())))
		del := id()
		t = append(t, step(8, types.NewInt(del)))
		t = append(t, step(9, types.NewInt(del), types.NewInt(id()), types.NewString(str(10)), types.NewString(str(5))))
		t = append(t, step(10))
		txns[i] = t
	}
	return txns
}

// BenchmarkReadWriteTxn is one sysbench oltp_read_write transaction through the SQL layer, without
// the network, on its schema (2,000 rows): prepared (COM_STMT_EXECUTE, --db-ps-mode=auto) and as
// text (COM_QUERY and the plan cache, --db-ps-mode=disable); the -writes variants run only
// BEGIN, UPDATE k (an indexed column), UPDATE c, DELETE and INSERT of one id, and COMMIT, which is
// what the transaction adds to oltp_read_only. The commit goes through the real commit path (repl
// over the binlog) on an in-memory filesystem, so an fsync costs nothing here.
func BenchmarkReadWriteTxn(b *testing.B) {
	for _, bc := range []struct {
		name       string
		text       bool
		writesOnly bool
	}{
		{"prepared", false, false},
		{"text", true, false},
		{"prepared-writes", false, true},
		{"text-writes", true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := pointSession(b)
			ctx := context.Background()
			ids := make([]uint32, len(rwStmts))
			for i, st := range rwStmts {
				info, err := s.Prepare(ctx, st.q)
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = info.ID
			}
			txns := rwTxns(256, 2000, bc.writesOnly)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				for _, st := range txns[i%len(txns)] {
					var err error
					if bc.text {
						err = s.Query(ctx, st.text, discardWriter{})
					} else {
						err = s.Execute(ctx, ids[st.stmt], st.args, discardWriter{})
					}
					if err != nil {
						b.Fatalf("%s: %v", st.text, err)
					}
				}
				i++
			}
		})
	}
}
