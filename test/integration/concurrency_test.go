package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// N clients increment rows: no update is lost and none fails. The statements reach the rows by a
// point read, a primary-key range, a full scan and a secondary index: a locking scan that waited for a row's lock must
// read the row again (the version its scan saw may have been replaced meanwhile), not increment the
// version it scanned (txn.Iterator.Fresh).
func TestConcurrentIncrement(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE inc")
	for i, tc := range []struct {
		name, update string
		rows         int
	}{
		{"point", "UPDATE inc.t%d SET n = n + 1 WHERE id = 1", 1},
		{"range", "UPDATE inc.t%d SET n = n + 1 WHERE id BETWEEN 1 AND 3", 3},
		{"full scan", "UPDATE inc.t%d SET n = n + 1 WHERE n >= 0", 3},
		{"secondary index", "UPDATE inc.t%d SET n = n + 1 WHERE k BETWEEN 10 AND 30", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustExec(t, db, fmt.Sprintf("CREATE TABLE inc.t%d (id INT PRIMARY KEY, k INT NOT NULL, n INT NOT NULL, KEY (k))", i))
			mustExec(t, db, fmt.Sprintf("INSERT INTO inc.t%d VALUES (1, 30, 0), (2, 20, 0), (3, 10, 0)", i))
			update := fmt.Sprintf(tc.update, i)
			const clients, each = 16, 50
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					conn, err := db.Conn(context.Background())
					if err != nil {
						errs <- err
						return
					}
					defer conn.Close()
					for i := 0; i < each; i++ {
						if _, err := conn.ExecContext(context.Background(), update); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("increment failed: %v", err)
			}
			rows, err := db.Query(fmt.Sprintf("SELECT id, n FROM inc.t%d ORDER BY id", i))
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id, n int
				if err := rows.Scan(&id, &n); err != nil {
					t.Fatal(err)
				}
				want := 0
				if id <= tc.rows {
					want = clients * each
				}
				if n != want {
					t.Errorf("row %d: n = %d, want %d (lost updates)", id, n, want)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// N clients transfer between accounts in explicit transactions; the total never changes, and every
// reader sees a consistent total.
func TestTransfersKeepTotal(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE bank")
	mustExec(t, db, "CREATE TABLE bank.acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)")
	const accounts = 10
	for i := 0; i < accounts; i++ {
		mustExec(t, db, "INSERT INTO bank.acct VALUES (?, 1000)", i)
	}
	const total = accounts * 1000
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done, retried int
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func(seed int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 200; i++ {
				from, to := (seed+i)%accounts, (seed*7+i*3+1)%accounts
				if from == to {
					continue
				}
				err := transfer(ctx, db, from, to, 1+i%17)
				mu.Lock()
				switch {
				case err == nil:
					done++
				case errCode(err) == 1213 || errCode(err) == 1205:
					retried++
				case ctx.Err() != nil:
				default:
					mu.Unlock()
					t.Errorf("transfer: %v", err)
					return
				}
				mu.Unlock()
			}
		}(c)
	}
	// A reader checks the invariant while transfers run.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			var sum int
			if err := db.QueryRowContext(ctx, "SELECT SUM(bal) FROM bank.acct").Scan(&sum); err != nil {
				if ctx.Err() == nil {
					t.Errorf("sum: %v", err)
				}
				return
			}
			if sum != total {
				t.Errorf("reader saw total %d, want %d", sum, total)
				return
			}
		}
	}()
	wg.Wait()
	var sum int
	if err := db.QueryRow("SELECT SUM(bal) FROM bank.acct").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != total {
		t.Fatalf("total %d, want %d", sum, total)
	}
	if done == 0 {
		t.Fatal("no transfer committed")
	}
	t.Logf("%d transfers committed, %d deadlock/timeout retries", done, retried)
}

func transfer(ctx context.Context, db *sql.DB, from, to, amount int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var bal int
	if err := tx.QueryRowContext(ctx, "SELECT bal FROM bank.acct WHERE id = ? FOR UPDATE", from).Scan(&bal); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE bank.acct SET bal = bal - ? WHERE id = ?", amount, from); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE bank.acct SET bal = bal + ? WHERE id = ?", amount, to); err != nil {
		return err
	}
	return tx.Commit()
}

// Two sessions lock rows in opposite order: one gets 1213 (and its transaction is rolled back), the
// other proceeds.
func TestDeadlockDetected(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE dl")
	mustExec(t, db, "CREATE TABLE dl.t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO dl.t VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	b, _ := db.Conn(ctx)
	defer a.Close()
	defer b.Close()
	mustExec(t, a, "BEGIN")
	mustExec(t, b, "BEGIN")
	mustExec(t, a, "UPDATE dl.t SET v = 1 WHERE id = 1")
	mustExec(t, b, "UPDATE dl.t SET v = 2 WHERE id = 2")
	errA := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, "UPDATE dl.t SET v = 1 WHERE id = 2")
		errA <- err
	}()
	time.Sleep(200 * time.Millisecond) // let a block on row 2
	_, errB := b.ExecContext(ctx, "UPDATE dl.t SET v = 2 WHERE id = 1")
	var victimErr, winnerErr error
	var winner interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}
	if errB != nil {
		victimErr = errB
		winnerErr = <-errA
		winner = a
	} else {
		victimErr = <-errA
		winner = b
	}
	if errCode(victimErr) != 1213 {
		t.Fatalf("victim error = %v, want 1213", victimErr)
	}
	var me *mysql.MySQLError
	errors.As(victimErr, &me)
	if string(me.SQLState[:]) != "40001" {
		t.Fatalf("SQLSTATE %s, want 40001", me.SQLState)
	}
	if winnerErr != nil {
		t.Fatalf("winner failed: %v", winnerErr)
	}
	mustExec(t, winner, "COMMIT")
	var v1, v2 int
	if err := db.QueryRow("SELECT (SELECT v FROM dl.t WHERE id=1), (SELECT v FROM dl.t WHERE id=2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if !(v1 == v2 && (v1 == 1 || v1 == 2)) {
		t.Fatalf("rows = %d, %d: the victim's transaction should be rolled back entirely", v1, v2)
	}
}

// A lock wait past innodb_lock_wait_timeout fails with 1205 and rolls back only the statement.
func TestLockWaitTimeout(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE lw")
	mustExec(t, db, "CREATE TABLE lw.t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO lw.t VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	b, _ := db.Conn(ctx)
	defer a.Close()
	defer b.Close()
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE lw.t SET v = 1 WHERE id = 1")
	mustExec(t, b, "SET SESSION innodb_lock_wait_timeout = 1")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE lw.t SET v = 5 WHERE id = 2")
	start := time.Now()
	_, err := b.ExecContext(ctx, "UPDATE lw.t SET v = 2 WHERE id = 1")
	if errCode(err) != 1205 {
		t.Fatalf("err = %v, want 1205", err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("timed out after %v, before the 1 s timeout", el)
	}
	// The statement rolled back; the transaction and its earlier write survive.
	mustExec(t, b, "COMMIT")
	mustExec(t, a, "COMMIT")
	var v2 int
	if err := db.QueryRow("SELECT v FROM lw.t WHERE id = 2").Scan(&v2); err != nil {
		t.Fatal(err)
	}
	if v2 != 5 {
		t.Fatalf("v2 = %d, want 5 (the transaction's earlier write)", v2)
	}
}

// Committed data survives a clean restart and kill -9 (the synced commit path).
func TestRestartKeepsCommits(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE r")
	mustExec(t, db, "CREATE TABLE r.t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(20), KEY kv (v))")
	for i := 0; i < 100; i++ {
		mustExec(t, db, "INSERT INTO r.t (v) VALUES (?)", "x")
	}
	db.Close()
	k.stop()
	k.start()
	db2 := k.db(t, "")
	var n int
	if err := db2.QueryRow("SELECT COUNT(*) FROM r.t WHERE v = 'x'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 100 {
		t.Fatalf("after restart %d rows, want 100", n)
	}
	mustExec(t, db2, "INSERT INTO r.t (v) VALUES ('y')")
	db2.Close()
	k.kill9()
	k.start()
	db3 := k.db(t, "")
	var id int
	if err := db3.QueryRow("SELECT id FROM r.t WHERE v = 'y'").Scan(&id); err != nil {
		t.Fatalf("row committed before kill -9 is gone: %v", err)
	}
	if id != 101 {
		t.Fatalf("id = %d, want 101", id)
	}
	// The auto-increment counter continues after the restart.
	r := mustExec(t, db3, "INSERT INTO r.t (v) VALUES ('z')")
	if li, _ := r.LastInsertId(); li != 102 {
		t.Fatalf("last insert id %d, want 102", li)
	}
	// As in MySQL 8, the counter is persisted: values of deleted rows are not handed out again
	// after a restart, explicit values included.
	mustExec(t, db3, "INSERT INTO r.t (id, v) VALUES (500, 'w')")
	mustExec(t, db3, "DELETE FROM r.t WHERE id >= 102")
	db3.Close()
	k.kill9()
	k.start()
	db4 := k.db(t, "")
	r = mustExec(t, db4, "INSERT INTO r.t (v) VALUES ('after')")
	if li, _ := r.LastInsertId(); li != 501 {
		t.Fatalf("after deleting ids 102 and 500 and a restart, last insert id %d, want 501", li)
	}
}

// Concurrent inserts of the same new key: one wins, the others get 1062, never a corrupt state;
// concurrent delete+insert of one key never raises a spurious 1062.
func TestConcurrentSameKey(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE sk")
	mustExec(t, db, "CREATE TABLE sk.t (id INT PRIMARY KEY, v INT, UNIQUE KEY uv (v))")
	mustExec(t, db, "INSERT INTO sk.t VALUES (1, 1)")
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, _ := db.Conn(context.Background())
			defer conn.Close()
			for i := 0; i < 30; i++ {
				tx, err := conn.BeginTx(context.Background(), nil)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tx.Exec("DELETE FROM sk.t WHERE id = 1"); err != nil {
					tx.Rollback()
					t.Errorf("delete: %v", err)
					return
				}
				if _, err := tx.Exec("INSERT INTO sk.t VALUES (1, 1)"); err != nil {
					tx.Rollback()
					t.Errorf("insert after delete: %v", err)
					return
				}
				if err := tx.Commit(); err != nil {
					t.Errorf("commit: %v", err)
					return
				}
				if _, err := conn.ExecContext(context.Background(), "INSERT INTO sk.t VALUES (2, 2) ON DUPLICATE KEY UPDATE v = v"); err != nil {
					t.Errorf("odku: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sk.t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}
