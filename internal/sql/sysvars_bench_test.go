package sql

import (
	"testing"

	"github.com/kiln-db/kiln/internal/sql/sysvar"
)

// BenchmarkGlobalVarGet reads a global system variable from parallel goroutines, as every statement
// of every session does about ten times (autocommit, durability, sql_mode, timeouts, ...).
//
//	go test ./internal/sql -run - -bench GlobalVarGet -benchmem -cpu 1,16
func BenchmarkGlobalVarGet(b *testing.B) {
	g := newGlobalVars(Config{Version: "8.0"})
	v := sysvar.Must("innodb_lock_wait_timeout")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if g.get(v).IsNull() {
				b.Fatal("null")
			}
		}
	})
}

// TestGlobalVarsCopyOnWrite: SET GLOBAL publishes a new map while sessions read (run it with
// -race): every read sees a value some SET wrote, writes to other variables are never lost, and
// the last write wins.
func TestGlobalVarsCopyOnWrite(t *testing.T) {
	g := newGlobalVars(Config{Version: "8.0"})
	a, b := sysvar.Must("innodb_lock_wait_timeout"), sysvar.Must("max_connections")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); i <= 500; i++ {
			g.set(a, intVal(i))
			g.set(b, intVal(1000+i))
		}
	}()
	for {
		select {
		case <-done:
			if x, y := g.get(a), g.get(b); x.I != 500 || y.I != 1500 {
				t.Fatalf("after the writes: %d and %d, want 500 and 1500", x.I, y.I)
			}
			if v := g.get(sysvar.Must("version")); v.S != "8.0" {
				t.Fatalf("version = %q: a SET lost another global", v.S)
			}
			return
		default:
			if x := g.get(a); x.I < 0 || x.I > 500 {
				t.Fatalf("read %d", x.I)
			}
		}
	}
}
