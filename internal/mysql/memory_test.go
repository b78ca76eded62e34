package mysql

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/kiln-db/kiln/internal/proto"
	"github.com/kiln-db/kiln/internal/sql/types"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// fakeAccount is a MemoryAccount with a plain limit (package memory's also watches the Go heap,
// which a test process cannot keep small).
type fakeAccount struct {
	mu                  sync.Mutex
	limit, used, peak   int64
	refused, reserveOps int
}

func (a *fakeAccount) Reserve(n int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reserveOps++
	if a.used+n > a.limit {
		a.refused++
		return false
	}
	a.used += n
	a.peak = max(a.peak, a.used)
	return true
}

func (a *fakeAccount) Release(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.used -= n
}

func (a *fakeAccount) CapacityError() error {
	return sqlerr.New(sqlerr.ErrCapacityExceeded, "Memory capacity of %d bytes for 'kiln_memory_limit' exceeded.", a.limit)
}

func (a *fakeAccount) figures() (used, peak int64, refused int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used, a.peak, a.refused
}

// TestLongDataServerMemory: long data and large payload buffers reserve from the server-wide
// account; past it the execution gets 3170 (long data) or the connection 3170 and a close (a
// packet), other connections go on, and everything is given back.
func TestLongDataServerMemory(t *testing.T) {
	h := newFakeHandler()
	h.stmts["SELECT ?, ?"] = func(ctx context.Context, args []types.Value, w proto.ResultWriter) error {
		cols := []proto.Column{{Name: "0", Type: pmysql.TypeBlob, Charset: 63}, {Name: "1", Type: pmysql.TypeBlob, Charset: 63}}
		if err := w.Columns(cols); err != nil {
			return err
		}
		if err := w.Row([]types.Value{types.NewInt(int64(len(args[0].S))), args[1]}); err != nil {
			return err
		}
		return w.EndRows(0, false)
	}
	h.stmts["SELECT 1"] = rowsOf([]proto.Column{{Name: "1", Type: pmysql.TypeLonglong}}, []types.Value{types.NewInt(1)})
	acct := &fakeAccount{limit: 2 << 20}
	_, addr := startServer(t, Config{MaxAllowedPacket: 8 << 20, Memory: acct}, h)
	db := openDB(t, addr, "root", "", "maxAllowedPacket=4096") // arguments go as long data

	var n int
	var b []byte
	if err := db.QueryRow("SELECT ?, ?", bytes.Repeat([]byte("x"), 1<<20), "a").Scan(&n, &b); err != nil || n != 1<<20 {
		t.Fatalf("within the account: %v %d", err, n)
	}
	if used, peak, _ := acct.figures(); used != 0 || peak < 1<<20 {
		t.Fatalf("long data not accounted or not released: used %d peak %d", used, peak)
	}
	// 3 MB of long data is within max_allowed_packet but not within the server's account.
	err := db.QueryRow("SELECT ?, ?", bytes.Repeat([]byte("y"), 3<<20), "a").Scan(&n, &b)
	mustErrCode(t, err, sqlerr.ErrCapacityExceeded)
	if used, _, refused := acct.figures(); used != 0 || refused == 0 {
		t.Fatalf("after refusal: used %d refused %d", used, refused)
	}
	if err := db.QueryRow("SELECT ?, ?", "x", "y").Scan(&n, &b); err != nil || n != 1 {
		t.Fatalf("the connection goes on: %v", err)
	}

	// A 3 MB statement text: its payload buffer is refused; that connection is closed, others work.
	ctx := context.Background()
	dbBig := openDB(t, addr, "root", "", "maxAllowedPacket=16777216")
	conn, err := dbBig.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "SELECT '"+strings.Repeat("z", 3<<20)+"'")
	mustErrCode(t, err, sqlerr.ErrCapacityExceeded)
	conn.Close()
	db2 := openDB(t, addr, "root", "", "")
	var one int
	if err := db2.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("another connection: %v", err)
	}
	db.Close()
	db2.Close()
	dbBig.Close()
	// Every connection's reservations come back when it closes.
	waitFor(t, func() bool { used, _, _ := acct.figures(); return used == 0 }, "account back to 0")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
