package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopBound is what the tests allow a cancelled statement to take to end. The promise is 100 ms;
// the bound is generous because CI machines are shared and noisy. Measured times are logged.
const stopBound = 5 * time.Second

// loadRunawayTable creates db.t with 4,000 rows: a join of it with itself three times is 64 billion
// rows, a statement that never ends on its own.
func loadRunawayTable(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	mustExec(t, db, "CREATE DATABASE "+name)
	mustExec(t, db, "CREATE TABLE "+name+".t (id INT PRIMARY KEY, g INT)")
	vals := make([]string, 0, 4000)
	for i := 1; i <= 4000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i%10))
	}
	mustExec(t, db, "INSERT INTO "+name+".t VALUES "+strings.Join(vals, ","))
}

// running reports whether connection id is executing a statement (SHOW PROCESSLIST says Query).
func running(t *testing.T, db *sql.DB, id int64) bool {
	t.Helper()
	var n int
	err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND <> 'Sleep'", id).Scan(&n)
	if err != nil {
		t.Fatalf("processlist: %v", err)
	}
	return n > 0
}

// answers checks that another client is served while (and after) a runaway statement runs.
func answers(t *testing.T, db *sql.DB, schema string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stopBound)
	defer cancel()
	var g int
	if err := db.QueryRowContext(ctx, "SELECT g FROM "+schema+".t WHERE id = 17").Scan(&g); err != nil || g != 7 {
		t.Fatalf("another client is not answered: %v (%d)", err, g)
	}
}

// The reproduction: SELECT COUNT(*) FROM t a, t b, t c (and the other kinds of long loop)
// stops on KILL QUERY, KILL, max_execution_time and the client's disconnect; other clients are
// answered during and after.
func TestKillRunawayStatements(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	db.SetMaxIdleConns(4)
	loadRunawayTable(t, db, "ra")
	kinds := []struct{ name, q string }{
		{"join", "SELECT COUNT(*) FROM ra.t a, ra.t b, ra.t c"},
		{"group-by", "SELECT a.g, COUNT(*) FROM ra.t a, ra.t b, ra.t c GROUP BY a.g"},
		{"order-by", "SELECT a.id FROM ra.t a, ra.t b, ra.t c WHERE a.id + b.id + c.id = 5 ORDER BY a.id"},
		{"distinct", "SELECT DISTINCT a.g FROM ra.t a, ra.t b, ra.t c"},
		{"union", "SELECT a.g FROM ra.t a, ra.t b, ra.t c WHERE a.id = 0 UNION SELECT a.g FROM ra.t a, ra.t b, ra.t c"},
		{"subquery", "SELECT (SELECT COUNT(*) FROM ra.t b, ra.t c WHERE b.id > a.id) FROM ra.t a"},
	}
	type method struct {
		name string
		want uint16 // the error the victim's statement gets (0: its connection is gone)
	}
	killQuery, kill := method{"kill-query", 1317}, method{"kill", 0}
	timeout, disconnect := method{"max-execution-time", 3024}, method{"client-disconnect", 0}
	type run struct {
		kind int
		m    method
	}
	var runs []run
	for i := range kinds {
		runs = append(runs, run{i, killQuery})
	}
	runs = append(runs, run{0, kill}, run{0, timeout}, run{0, disconnect})
	var worst time.Duration
	for _, r := range runs {
		kind := kinds[r.kind]
		t.Run(kind.name+"/"+r.m.name, func(t *testing.T) {
			ctx := context.Background()
			victim, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close()
			var id int64
			if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			if r.m == timeout {
				mustExec(t, victim, "SET SESSION max_execution_time = 300")
			}
			qctx, qcancel := context.WithCancel(ctx)
			defer qcancel()
			errc := make(chan error, 1)
			started := time.Now()
			go func() {
				rows, err := victim.QueryContext(qctx, kind.q)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				errc <- err
			}()
			// Running, and others are served meanwhile.
			deadline := time.Now().Add(stopBound)
			for !running(t, db, id) {
				if time.Now().After(deadline) {
					t.Fatal("the statement never showed as running")
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(150 * time.Millisecond)
			answers(t, db, "ra")
			var at time.Time
			switch r.m {
			case killQuery:
				at = time.Now()
				mustExec(t, db, fmt.Sprintf("KILL QUERY %d", id))
			case kill:
				at = time.Now()
				mustExec(t, db, fmt.Sprintf("KILL %d", id))
			case timeout:
				at = started.Add(300 * time.Millisecond) // when it was due
			case disconnect:
				at = time.Now()
				qcancel() // go-sql-driver closes the connection when the context ends
			}
			// The server side: the statement ends (its connection leaves the processlist or sleeps).
			for running(t, db, id) {
				if time.Since(at) > stopBound {
					t.Fatalf("still running %v after %s", stopBound, r.m.name)
				}
				time.Sleep(2 * time.Millisecond)
			}
			took := time.Since(at)
			worst = max(worst, took)
			t.Logf("stopped %v after %s", took.Round(time.Millisecond), r.m.name)
			select {
			case err := <-errc:
				if r.m.want != 0 && errCode(err) != r.m.want {
					t.Fatalf("victim got %v, want %d", err, r.m.want)
				}
				if err == nil {
					t.Fatal("victim's statement succeeded")
				}
			case <-time.After(stopBound):
				t.Fatal("the client never got an answer")
			}
			if r.m == killQuery {
				// KILL QUERY ends the statement, not the session: the next statement runs (the
				// server reuses a command's context until it is cancelled, then replaces it).
				for range 2 {
					var one int
					if err := victim.QueryRowContext(ctx, "SELECT g FROM ra.t WHERE id = 17").Scan(&one); err != nil || one != 7 {
						t.Fatalf("the victim's next statement after KILL QUERY: %v (%d)", err, one)
					}
				}
			}
			answers(t, db, "ra")
		})
	}
	t.Logf("slowest stop: %v (bound asserted: %v)", worst, stopBound)
}

// The second reproduction over the wire: a 1.5 MB statement nested 300,000 levels deep gets
// 1436 and the server keeps answering (before, the process died of a stack overflow).
func TestDeepNestingRefused(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	q := "SELECT " + strings.Repeat("ABS(", 300000) + "1" + strings.Repeat(")", 300000)
	if _, err := db.Exec(q); errCode(err) != 1436 {
		t.Fatalf("deep statement: %v, want 1436", err)
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Fatalf("server stopped answering: %v", err)
	}
}

// waitExit waits for the server process to exit, at most limit, and returns its exit error.
func (k *kiln) waitExit(t *testing.T, limit time.Duration) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- k.cmd.Wait() }()
	select {
	case err := <-done:
		k.cmd = nil
		return err, time.Since(start)
	case <-time.After(limit):
		_ = k.cmd.Process.Kill()
		<-done
		k.cmd = nil
		t.Fatalf("kiln did not exit within %v of SIGTERM", limit)
		return nil, 0
	}
}

// SIGTERM stops a server that runs runaway statements (one inside a transaction with uncommitted
// writes) within a bounded time, cleanly; the restart has every acknowledged commit and none of the
// rolled-back writes.
func TestShutdownWithRunawayStatements(t *testing.T) {
	k := startKiln(t, "", "--shutdown-timeout", "20s")
	db := k.db(t, "")
	loadRunawayTable(t, db, "sd")
	mustExec(t, db, "CREATE TABLE sd.acked (id INT PRIMARY KEY)")
	for i := 1; i <= 50; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO sd.acked VALUES (%d)", i))
	}
	ctx := context.Background()
	var ids []int64
	for i, q := range []string{
		"SELECT COUNT(*) FROM sd.t a, sd.t b, sd.t c",
		"UPDATE sd.t SET g = (SELECT COUNT(*) FROM sd.t a, sd.t b, sd.t c) WHERE id = 1",
	} {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if i == 1 {
			mustExec(t, c, "BEGIN")
			mustExec(t, c, "INSERT INTO sd.acked VALUES (1000)") // never committed
		}
		go func() { _, _ = c.ExecContext(ctx, q) }()
	}
	for _, id := range ids {
		deadline := time.Now().Add(stopBound)
		for !running(t, db, id) {
			if time.Now().After(deadline) {
				t.Fatal("the statement never showed as running")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err, took := k.waitExit(t, 15*time.Second)
	log, _ := os.ReadFile(k.logPath)
	if err != nil {
		t.Fatalf("exit: %v after %v\n%s", err, took, log)
	}
	if !strings.Contains(string(log), "msg=stopped") {
		t.Fatalf("no clean stop in the log:\n%s", log)
	}
	t.Logf("SIGTERM to exit with two runaway statements: %v", took.Round(time.Millisecond))
	k.start("--shutdown-timeout", "20s")
	checkAcked(t, k, "sd", 50)
}

// checkAcked checks that schema.acked holds exactly the acknowledged ids 1..n after a restart.
func checkAcked(t *testing.T, k *kiln, schema string, n int) {
	t.Helper()
	db := k.db(t, "")
	var count, maxID int
	if err := db.QueryRow("SELECT COUNT(*), MAX(id) FROM "+schema+".acked").Scan(&count, &maxID); err != nil {
		t.Fatal(err)
	}
	if count != n || maxID != n {
		t.Fatalf("after restart: %d rows up to %d, want %d up to %d", count, maxID, n, n)
	}
	var g int
	if err := db.QueryRow("SELECT g FROM " + schema + ".t WHERE id = 1").Scan(&g); err != nil || g != 1 {
		t.Fatalf("the killed UPDATE's row: %v %d, want 1", err, g)
	}
}

// A shutdown that cannot finish within --shutdown-timeout exits anyway (non-zero, as a crash would
// leave things); the next start recovers every acknowledged commit from the log.
func TestShutdownTimeoutForcesExit(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	loadRunawayTable(t, db, "st")
	mustExec(t, db, "CREATE TABLE st.acked (id INT PRIMARY KEY)")
	for i := 1; i <= 50; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO st.acked VALUES (%d)", i))
	}
	db.Close()
	k.stop()
	k.start("--shutdown-timeout", "1ns") // no shutdown finishes in a nanosecond
	db = k.db(t, "")
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.ExecContext(context.Background(), "SELECT COUNT(*) FROM st.t a, st.t b, st.t c") }()
	time.Sleep(300 * time.Millisecond)
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err, took := k.waitExit(t, 15*time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		log, _ := os.ReadFile(k.logPath)
		t.Fatalf("exit: %v, want exit status 1\n%s", err, log)
	}
	t.Logf("forced exit after %v", took.Round(time.Millisecond))
	k.start()
	checkAcked(t, k, "st", 50)
}

// SHOW PROCESSLIST lists a connection that has sent no command yet as sleeping, under its own id
// and user, and shows a prepared statement's text while it executes (COM_STMT_EXECUTE) and the
// seconds it has run, as MySQL does.
func TestProcessListIdleAndPrepared(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	ctx := context.Background()
	idle, err := db.Conn(ctx) // connected, no command sent
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	var zero int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = 0 OR USER = ''").Scan(&zero); err != nil || zero != 0 {
		t.Fatalf("processlist rows with id 0 or no user: %d (%v)", zero, err)
	}
	var sleeping int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Sleep' AND USER = 'root'").Scan(&sleeping); err != nil || sleeping < 1 {
		t.Fatalf("sleeping connections: %d (%v)", sleeping, err)
	}

	done := make(chan error, 1)
	go func() {
		var v int
		// An argument makes the driver prepare and execute (binary protocol).
		done <- db.QueryRow("SELECT SLEEP(?) + 7", 3).Scan(&v)
	}()
	// Its INFO is its text, and its TIME counts the seconds it has run.
	deadline := time.Now().Add(stopBound)
	for {
		var info string
		var secs int64
		err := db.QueryRow("SELECT COALESCE(MAX(INFO), ''), COALESCE(MAX(TIME), -1) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Execute'").Scan(&info, &secs)
		if err != nil {
			t.Fatal(err)
		}
		if info == "SELECT SLEEP(?) + 7" && secs >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the executing prepared statement's INFO %q, TIME %d", info, secs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
