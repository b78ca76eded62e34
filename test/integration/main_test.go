// Package integration runs a real kiln server (bin/kiln, or $KILN_BIN) and drives it with the
// go-sql-driver client: concurrency, locking, durability across restart, and protocol behaviour.
package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/kiln-db/kiln/test/internal/testport"
)

// kiln is one running server.
type kiln struct {
	t       testing.TB
	dir     string
	addr    string
	http    string
	cmd     *exec.Cmd
	logPath string
}

var kilnBin string

func TestMain(m *testing.M) {
	kilnBin = os.Getenv("KILN_BIN")
	if kilnBin == "" {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		kilnBin = filepath.Join(root, "bin", "kiln")
		build := exec.Command("go", "build", "-o", kilnBin, "./cmd/kiln")
		build.Dir = root
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build kiln:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// freePort picks a port below the ephemeral range (see testport): a restarted or restored
// server must still find it free.
func freePort(t testing.TB) string { return testport.Addr(t) }

// startKiln starts a server on dir (a new temp dir if empty) and stops it when the test ends.
func startKiln(t testing.TB, dir string, extra ...string) *kiln {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	k := &kiln{t: t, dir: dir}
	k.start(extra...)
	t.Cleanup(func() { k.stop() })
	return k
}

func (k *kiln) start(extra ...string) {
	k.t.Helper()
	k.addr, k.http = freePort(k.t), freePort(k.t)
	k.logPath = filepath.Join(k.dir, "..", filepath.Base(k.dir)+".log")
	logf, err := os.OpenFile(k.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		k.t.Fatal(err)
	}
	args := append([]string{"serve", "--data-dir", k.dir, "--listen", k.addr, "--http", k.http}, extra...)
	k.cmd = exec.Command(kilnBin, args...)
	k.cmd.Stdout, k.cmd.Stderr = logf, logf
	if err := k.cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + k.http + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(k.logPath)
	k.t.Fatalf("kiln did not become healthy:\n%s", log)
}

// stop sends SIGTERM and waits.
func (k *kiln) stop() {
	if k.cmd == nil || k.cmd.Process == nil {
		return
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = k.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Kill()
		<-done
	}
	k.cmd = nil
}

// kill9 kills the server without warning.
func (k *kiln) kill9() {
	_ = k.cmd.Process.Kill()
	_ = k.cmd.Wait()
	k.cmd = nil
}

func (k *kiln) db(t testing.TB, dbName string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("root@tcp(%s)/%s?multiStatements=true&interpolateParams=false&timeout=10s", k.addr, dbName)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}
