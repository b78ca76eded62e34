package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// forwarder listens on a fixed address and forwards each connection to the current target, so a
// client keeps one address while the server behind it restarts on other ports.
type forwarder struct {
	l      net.Listener
	target atomic.Value // string
	wg     sync.WaitGroup
}

func newForwarder(t *testing.T, target string) *forwarder {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{l: l}
	f.target.Store(target)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", f.target.Load().(string))
				if err != nil {
					return
				}
				defer s.Close()
				go func() { io.Copy(s, c); s.Close() }()
				io.Copy(c, s)
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return f
}

type archiveStatus struct {
	First uint64 `json:"first_index"`
	Last  uint64 `json:"last_index"`
}

func archiveLast(t *testing.T, dir string) (uint64, string) {
	t.Helper()
	out, err := runKiln("log", "verify", dir)
	if err != nil {
		return 0, out
	}
	var s archiveStatus
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("kiln log verify: %v\n%s", err, out)
	}
	return s.Last, out
}

func appliedIndex(t *testing.T, k *kiln) uint64 {
	t.Helper()
	var gtid string
	if err := k.db(t, "").QueryRow("SELECT @@gtid_executed").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	var n uint64
	fmt.Sscanf(gtid[strings.LastIndex(gtid, "-")+1:], "%d", &n)
	return n
}

// waitArchived waits until the archive holds the node's log up to its applied index.
func waitArchived(t *testing.T, k *kiln, dir string) uint64 {
	t.Helper()
	want := appliedIndex(t, k)
	deadline := time.Now().Add(15 * time.Second)
	for {
		last, out := archiveLast(t, dir)
		if last >= want {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archive reached %d, the node applied %d\n%s", last, want, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kiln log archive follows the log into fsynced segment files across a server restart and a
// kill -9 of the archiver itself (it resumes after its last whole entry, without a gap); a full
// backup plus the archive restores (--log-dir) to the live node's state at the archive's end, also
// to a time inside the archive; a damaged archive is refused by kiln log verify and by restore.
func TestLogArchive(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE la")
	mustExec(t, db, "CREATE TABLE la.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	for i := 0; i < 50; i++ {
		mustExec(t, db, "INSERT INTO la.t VALUES (?, 0)", i)
	}
	root := t.TempDir()
	full := filepath.Join(root, "full")
	fm := takeBackup(t, k, full)
	fwd := newForwarder(t, k.http)
	arc := filepath.Join(root, "archive")
	runs := 0
	startArchiver := func() *exec.Cmd {
		runs++
		cmd := exec.Command(kilnBin, "log", "archive", "--from", fwd.l.Addr().String(), "--to", arc, "--segment-bytes", "2K", "--retry", "100ms")
		lf, err := os.Create(filepath.Join(root, fmt.Sprintf("archiver%d.log", runs)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); lf.Close() })
		return cmd
	}
	arch := startArchiver()
	write := func(from, to int) {
		for i := from; i < to; i++ {
			mustExec(t, db, "UPDATE la.t SET v = v + 1 WHERE id = ?", i%50)
		}
	}
	write(0, 100)
	waitArchived(t, k, arc)

	// The node restarts (new ports behind the same address): the archiver reconnects and goes on.
	k.stop()
	k.start()
	fwd.target.Store(k.http)
	db = k.db(t, "")
	write(100, 200)
	waitArchived(t, k, arc)

	// kill -9 of the archiver while commits flow; a new one resumes without a gap.
	done := make(chan struct{})
	go func() { defer close(done); write(200, 400) }()
	time.Sleep(100 * time.Millisecond)
	arch.Process.Signal(syscall.SIGKILL)
	arch.Wait()
	<-done
	// As if it had been killed inside a write: half a record at the end of the newest segment.
	segs, _ := filepath.Glob(filepath.Join(arc, "*.arc"))
	sort.Strings(segs)
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x40, 1, 2, 3})
	f.Close()
	if out, err := runKiln("log", "verify", arc); err != nil || !strings.Contains(out, `"unfinished_segment": "`+segs[len(segs)-1]) {
		t.Fatalf("kiln log verify of an archive with an unfinished record: %v\n%s", err, out)
	}
	arch = startArchiver()
	write(400, 450)
	last := waitArchived(t, k, arc)
	midTime := time.Now()
	time.Sleep(20 * time.Millisecond)
	write(450, 460)
	last = waitArchived(t, k, arc)
	arch.Process.Signal(syscall.SIGTERM)
	arch.Wait()
	segs, _ = filepath.Glob(filepath.Join(arc, "*.arc"))
	sort.Strings(segs)
	if len(segs) < 3 {
		t.Fatalf("the archive has %d segments, want several (--segment-bytes 2K)", len(segs))
	}
	for _, p := range append(segs, arc) {
		if fi, _ := os.Stat(p); fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s has mode %v: owner-only expected", p, fi.Mode().Perm())
		}
	}
	if out, err := runKiln("log", "verify", arc); err != nil || !strings.Contains(out, `"unfinished_segment": ""`) {
		t.Fatalf("kiln log verify after the archiver resumed: %v\n%s", err, out)
	}
	if last <= fm.EndIndex {
		t.Fatalf("archive ends at %d, the backup at %d", last, fm.EndIndex)
	}
	want, _ := tableSum(t, k, "la.t")
	data, idx := restoreWith(t, full, "--log-dir", arc)
	if idx != last {
		t.Fatalf("restore with the archive went to %d, the archive ends at %d", idx, last)
	}
	r := startKiln(t, data)
	got, _ := tableSum(t, r, "la.t")
	r.stop()
	if got != want {
		t.Fatalf("backup + archive restored another state than the live node's at index %d", last)
	}
	// A time inside the archive: the 450 updates before it, not the 10 after.
	data, _ = restoreWith(t, full, "--log-dir", arc, "--to-time", midTime.UTC().Format(time.RFC3339Nano))
	r = startKiln(t, data)
	var sum int64
	if err := r.db(t, "").QueryRow("SELECT SUM(v) FROM la.t").Scan(&sum); err != nil || sum != 450 {
		t.Fatalf("--to-time inside the archive: SUM(v) = %d (%v), want 450", sum, err)
	}
	r.stop()

	// Damage in the middle of the archive is found, naming the file.
	p := segs[len(segs)/2]
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 0x08
	os.WriteFile(p, b, 0o600)
	if out, err := runKiln("log", "verify", arc); err == nil || !strings.Contains(out, p) {
		t.Fatalf("kiln log verify of a damaged archive: %v\n%s", err, out)
	}
	out, err := runKiln("restore", "--from", full, "--log-dir", arc, "--data-dir", filepath.Join(t.TempDir(), "d"))
	if err == nil || !strings.Contains(out, p) {
		t.Fatalf("restore with a damaged archive: %v\n%s", err, out)
	}
	for i := 1; i <= runs; i++ {
		b, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("archiver%d.log", i)))
		t.Logf("archiver run %d:\n%s", i, b)
	}
	t.Logf("backup ends at %d, archive %d segments to %d", fm.EndIndex, len(segs), last)
}
