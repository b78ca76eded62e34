package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func segments(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no log segments in %s: %v", dir, err)
	}
	return m
}

func kilnCheck(dir string) (string, error) {
	out, err := exec.Command(kilnBin, "check", "--data-dir", dir).CombinedOutput()
	return string(out), err
}

// A torn tail (garbage after the last durable record) is truncated on start; a flipped byte inside a
// committed record refuses to start with a message naming the file and offset. kiln check reports
// both.
func TestTornAndCorruptLog(t *testing.T) {
	dir := t.TempDir()
	k := startKiln(t, dir)
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE lf")
	mustExec(t, db, "CREATE TABLE lf.t (id INT PRIMARY KEY, v VARCHAR(100))")
	for i := 0; i < 50; i++ {
		mustExec(t, db, "INSERT INTO lf.t VALUES (?, REPEAT('x', 80))", i)
	}
	db.Close()
	k.stop()
	seg := segments(t, dir)
	last := seg[len(seg)-1]

	// Torn tail: bytes that look like the start of a record, then zeros.
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(append([]byte{0x40, 0, 0, 0, 1, 0xde, 0xad}, make([]byte, 300)...))
	f.Close()
	if out, err := kilnCheck(dir); err != nil || !strings.Contains(strings.ToLower(out), "torn") {
		t.Fatalf("kiln check on a torn tail: %v\n%s", err, out)
	}
	k.start()
	db = k.db(t, "")
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM lf.t").Scan(&n); err != nil || n != 50 {
		t.Fatalf("after a torn tail: %d rows (%v), want 50", n, err)
	}
	db.Close()
	k.stop()

	// Corruption below the commit index: flip a byte in the middle of the log.
	seg = segments(t, dir)
	b, err := os.ReadFile(seg[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(seg[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := kilnCheck(dir)
	if err == nil || !strings.Contains(out, filepath.Base(seg[0])) {
		t.Fatalf("kiln check on a corrupt log: err %v\n%s", err, out)
	}
	cmd := exec.Command(kilnBin, "serve", "--data-dir", dir, "--listen", freePort(t), "--http", freePort(t))
	done := make(chan []byte, 1)
	go func() { o, _ := cmd.CombinedOutput(); done <- o }()
	select {
	case o := <-done:
		if !strings.Contains(string(o), filepath.Base(seg[0])) || !strings.Contains(string(o), "offset") {
			t.Fatalf("server refused to start without naming file and offset:\n%s", o)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("server started on a corrupt log")
	}
}
