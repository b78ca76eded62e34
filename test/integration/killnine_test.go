package integration

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"
)

// kill -9 of the real server under concurrent load, 20 cycles: clients keep a ledger of acknowledged
// commits; after each restart every ledger entry is there, and rows written by a transaction are
// all there or all absent.
func TestKill9UnderLoad(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE k9")
	mustExec(t, db, "CREATE TABLE k9.t (id BIGINT PRIMARY KEY, pair BIGINT NOT NULL, KEY kp (pair))")
	db.Close()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[int64]bool{}
	var mu sync.Mutex
	next := int64(1)
	for cycle := 0; cycle < 20; cycle++ {
		db := k.db(t, "")
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for c := 0; c < 6; c++ {
			wg.Add(1)
			base := next + int64(c)*100000
			go func() {
				defer wg.Done()
				for i := int64(0); ctx.Err() == nil; i += 2 {
					id := base + i
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						return
					}
					// Two rows per transaction: both or neither must survive.
					_, err1 := tx.Exec("INSERT INTO k9.t VALUES (?, ?)", id, id+1)
					_, err2 := tx.Exec("INSERT INTO k9.t VALUES (?, ?)", id+1, id)
					if err1 != nil || err2 != nil {
						tx.Rollback()
						return
					}
					if err := tx.Commit(); err != nil {
						return
					}
					mu.Lock()
					acked[id], acked[id+1] = true, true
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(150+rng.Intn(350)) * time.Millisecond)
		mu.Lock() // the ledger as of the kill: later acknowledgements cannot exist
		k.kill9()
		ledger := make(map[int64]bool, len(acked))
		for id := range acked {
			ledger[id] = true
		}
		mu.Unlock()
		cancel()
		wg.Wait()
		db.Close()
		k.start()
		db2 := k.db(t, "")
		rows, err := db2.Query("SELECT id, pair FROM k9.t")
		if err != nil {
			t.Fatalf("cycle %d: read after restart: %v", cycle, err)
		}
		have := map[int64]int64{}
		for rows.Next() {
			var id, pair int64
			rows.Scan(&id, &pair)
			have[id] = pair
		}
		rows.Close()
		for id := range ledger {
			if _, ok := have[id]; !ok {
				t.Fatalf("cycle %d: acknowledged row %d lost after kill -9", cycle, id)
			}
		}
		for id, pair := range have {
			if _, ok := have[pair]; !ok {
				t.Fatalf("cycle %d: row %d survived without its transaction's other row %d", cycle, id, pair)
			}
		}
		var n int
		if err := db2.QueryRow("SELECT COUNT(*) FROM k9.t FORCE INDEX (kp)").Scan(&n); err != nil || n != len(have) {
			t.Fatalf("cycle %d: index has %d entries (%v), table %d rows", cycle, n, err, len(have))
		}
		t.Logf("cycle %d: %d rows, %d acknowledged", cycle, len(have), len(ledger))
		db2.Close()
		next += 1_000_000
	}
	_ = fmt.Sprint()
}
