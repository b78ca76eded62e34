package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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

type holdInfo struct {
	Name     string `json:"name"`
	From     uint64 `json:"from"`
	MaxBytes int64  `json:"max_bytes"`
}

func listHolds(t *testing.T, k *kiln) []holdInfo {
	t.Helper()
	resp, err := http.Get("http://" + k.http + "/log/holds")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hs []holdInfo
	if err := json.NewDecoder(resp.Body).Decode(&hs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /log/holds: %s %v", resp.Status, err)
	}
	return hs
}

// kiln log archive --hold keeps a purge hold on the node at the entry after the last one it has
// fsynced, renewed as the archive grows (GET /log/holds shows it, with its byte bound); killed,
// the archiver stops renewing and the hold lapses --hold-ttl later. Bad hold settings are refused
// by the command and by POST /log/hold. (That purge stops at a hold: TestArchiveHoldStopsPurge in
// internal/backup; a node's segments are 64 MiB, too large to fill here.)
func TestLogArchiveHold(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE lh")
	mustExec(t, db, "CREATE TABLE lh.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	arc := filepath.Join(t.TempDir(), "arc")
	cmd := exec.Command(kilnBin, "log", "archive", "--from", k.http, "--to", arc, "--hold", "--hold-ttl", "5s",
		"--hold-max-bytes", "1G", "--hold-name", "test-arc")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 30; i++ {
		mustExec(t, db, "INSERT INTO lh.t VALUES (?, 0)", i)
	}
	last := waitArchived(t, k, arc)
	deadline := time.Now().Add(15 * time.Second)
	for {
		hs := listHolds(t, k)
		if len(hs) == 1 && hs[0].Name == "test-arc" && hs[0].From == last+1 && hs[0].MaxBytes == 1<<30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("holds %+v, want test-arc from %d with max_bytes 1G\narchiver:\n%s", hs, last+1, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if hs := listHolds(t, k); len(hs) != 1 {
		t.Fatalf("the hold went with the archiver, before its ttl: %+v", hs)
	}
	deadline = time.Now().Add(30 * time.Second)
	for len(listHolds(t, k)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the hold of a dead archiver did not lapse: %+v", listHolds(t, k))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "log purge hold set") {
		t.Fatalf("the archiver did not report its hold:\n%s", out.String())
	}
	for _, args := range [][]string{{"--hold-ttl", "0s"}, {"--hold-ttl", "9000h"}, {"--hold-max-bytes", "lots"}} {
		o, err := runKiln(append([]string{"log", "archive", "--from", k.http, "--to", arc, "--hold"}, args...)...)
		if err == nil || !strings.Contains(o, args[0]) {
			t.Fatalf("kiln log archive --hold %v: %v\n%s", args, err, o)
		}
	}
	for q, want := range map[string]int{
		"name=x&from=1&ttl=0s":              http.StatusBadRequest,
		"name=x&from=1":                     http.StatusBadRequest,
		"from=1&ttl=1m":                     http.StatusBadRequest,
		"name=x&from=1&ttl=1m&max_bytes=1":  http.StatusConflict,
		"name=x&from=one&ttl=1m":            http.StatusBadRequest,
		"name=ok&from=1&ttl=1m&max_bytes=0": http.StatusOK,
	} {
		resp, err := http.Post("http://"+k.http+"/log/hold?"+q, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST /log/hold?%s: %s, want %d", q, resp.Status, want)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, "http://"+k.http+"/log/hold?name=ok", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE /log/hold: %v %v", resp, err)
	}
	if hs := listHolds(t, k); len(hs) != 0 {
		t.Fatalf("holds after DELETE: %+v", hs)
	}
	// An archiver that cannot go on (here: the archive is another cluster's) drops its hold as it
	// stops, instead of leaving the node to keep log for it until the ttl.
	k2 := startKiln(t, "")
	db2 := k2.db(t, "")
	mustExec(t, db2, "CREATE DATABASE lh")
	mustExec(t, db2, "CREATE TABLE lh.t (id INT PRIMARY KEY, v BIGINT NOT NULL)")
	for i := uint64(0); i <= last; i++ { // past the archive's end: else the archiver waits for k2
		mustExec(t, db2, "INSERT INTO lh.t VALUES (?, 0)", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ob, err := exec.CommandContext(ctx, kilnBin, "log", "archive", "--from", k2.http, "--to", arc, "--hold", "--hold-ttl", "1h").CombinedOutput()
	o := string(ob)
	if err == nil || !strings.Contains(o, "holds the log of cluster") || !strings.Contains(o, "log purge hold released") {
		t.Fatalf("kiln log archive --hold into another cluster's archive: %v\n%s", err, o)
	}
	if hs := listHolds(t, k2); len(hs) != 0 {
		t.Fatalf("the hold of an archiver that gave up is still there: %+v", hs)
	}
}
