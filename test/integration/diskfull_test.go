package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Disk full on a small tmpfs: commits fail with 1021 before anything reaches the log, reads keep
// working, nothing is corrupted, and commits resume when space returns.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	k := startKiln(t, dir, "--disk-reserve", "16777216")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE df")
	mustExec(t, db, "CREATE TABLE df.t (id INT PRIMARY KEY AUTO_INCREMENT, v LONGBLOB)")
	big := strings.Repeat("z", 1<<20)
	var full error
	n := 0
	for i := 0; i < 200; i++ {
		if _, err := db.Exec("INSERT INTO df.t (v) VALUES (?)", big); err != nil {
			full = err
			break
		}
		n++
	}
	if errCode(full) != 1021 {
		t.Fatalf("filling the disk ended with %v after %d rows, want 1021", full, n)
	}
	var have int
	if err := db.QueryRow("SELECT COUNT(*) FROM df.t").Scan(&have); err != nil || have != n {
		t.Fatalf("reads while full: %d rows (%v), want %d", have, err, n)
	}
	// Space returns: grow the tmpfs; commits work again.
	if out, err := exec.Command("mount", "-o", "remount,size=128m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	mustExec(t, db, "INSERT INTO df.t (v) VALUES ('after')")
	db.Close()
	k.stop()
	if out, err := kilnCheck(dir); err != nil {
		t.Fatalf("kiln check after disk full: %v\n%s", err, out)
	}
	k.start()
	db = k.db(t, "")
	if err := db.QueryRow("SELECT COUNT(*) FROM df.t").Scan(&have); err != nil || have != n+1 {
		t.Fatalf("after restart %d rows (%v), want %d", have, err, n+1)
	}
}
