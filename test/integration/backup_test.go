package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// backupManifest is the part of a backup's MANIFEST.json the tests read.
type backupManifest struct {
	ClusterUUID string `json:"cluster_uuid"`
	EngineIndex uint64 `json:"engine_index"`
	EndIndex    uint64 `json:"end_index"`
	Entries     uint64 `json:"entries"`
	GTID        string `json:"gtid"`
	Files       []struct {
		Path string `json:"path"`
	} `json:"files"`
}

func runKiln(args ...string) (string, error) {
	out, err := exec.Command(kilnBin, args...).CombinedOutput()
	return string(out), err
}

func readManifest(t *testing.T, dir string) backupManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m backupManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// takeBackup runs kiln backup against k into dir and returns its manifest.
func takeBackup(t *testing.T, k *kiln, dir string, extra ...string) backupManifest {
	t.Helper()
	out, err := runKiln(append([]string{"backup", "--from", k.http, "--to", dir}, extra...)...)
	if err != nil {
		t.Fatalf("kiln backup: %v\n%s", err, out)
	}
	m := readManifest(t, dir)
	if want := fmt.Sprintf("gtid_executed\t%s:1-%d\n", m.ClusterUUID, m.EndIndex); !strings.Contains(out, want) {
		t.Fatalf("kiln backup printed\n%s\nwant a line %q", out, want)
	}
	if !strings.Contains(out, fmt.Sprintf("log_index\t%d\n", m.EndIndex)) {
		t.Fatalf("kiln backup printed\n%s\nwithout log_index %d", out, m.EndIndex)
	}
	for _, p := range []string{dir, filepath.Join(dir, "MANIFEST.json"), filepath.Join(dir, filepath.FromSlash(m.Files[0].Path))} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s has mode %v: a backup must be owner-only", p, fi.Mode().Perm())
		}
	}
	return m
}

// restoreAndStart restores backup dir (to index to, 0: its end) into a new data directory, checks
// it with kiln check and starts a server on it.
func restoreAndStart(t *testing.T, dir string, to uint64) *kiln {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	args := []string{"restore", "--from", dir, "--data-dir", data}
	if to != 0 {
		args = append(args, "--to-index", fmt.Sprint(to))
	}
	if out, err := runKiln(args...); err != nil {
		t.Fatalf("kiln restore: %v\n%s", err, out)
	}
	out, err := kilnCheck(data)
	if err != nil {
		t.Fatalf("kiln check of the restored directory: %v\n%s", err, out)
	}
	var rep struct {
		LastIndex uint64
		HardState struct{ Commit uint64 }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("kiln check output: %v\n%s", err, out)
	}
	if to == 0 {
		to = readManifest(t, dir).EndIndex
	}
	if rep.LastIndex != to || rep.HardState.Commit != to {
		t.Fatalf("restored log ends at %d with commit %d, want both %d", rep.LastIndex, rep.HardState.Commit, to)
	}
	return startKiln(t, data)
}

// ledgerState reads a restored node: the ledger's rows must be 1..n without a gap (a prefix of the
// one writer's sequence), and the accounts' total must be whole (never half a transfer).
func ledgerState(t *testing.T, k *kiln) (n int64) {
	t.Helper()
	db := k.db(t, "")
	var cnt, max sql.NullInt64
	if err := db.QueryRow("SELECT COUNT(*), MAX(seq) FROM bk.ledger").Scan(&cnt, &max); err != nil {
		t.Fatal(err)
	}
	if cnt.Int64 != max.Int64 {
		t.Fatalf("ledger holds %d rows with max seq %d: not a prefix of the commit history", cnt.Int64, max.Int64)
	}
	var total int64
	if err := db.QueryRow("SELECT SUM(bal) FROM bk.acct").Scan(&total); err != nil {
		t.Fatal(err)
	}
	if total != 10*1000 {
		t.Fatalf("accounts total %d, want 10000: a transfer was restored in part", total)
	}
	return cnt.Int64
}

// Backup under concurrent writes (a ledger of sequential inserts from one client, random transfers
// from others): the restore is exactly a prefix of the commit history holding every commit
// acknowledged before the backup started, its log ends at the manifest's index, kiln check is clean;
// --to-index restores exactly the commits up to each index (one ledger row per entry when only the
// ledger writes).
func TestBackupUnderWrites(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE bk")
	mustExec(t, db, "CREATE TABLE bk.ledger (seq BIGINT PRIMARY KEY, pad VARCHAR(100))")
	mustExec(t, db, "CREATE TABLE bk.acct (id INT PRIMARY KEY, bal INT NOT NULL)")
	mustExec(t, db, "CREATE TABLE bk.filler (id INT PRIMARY KEY, pad VARCHAR(300))")
	for i := 0; i < 10; i++ {
		mustExec(t, db, "INSERT INTO bk.acct VALUES (?, 1000)", i)
	}
	// Bulk, so that streaming the engine takes a while (paced by --max-rate) and writes land in
	// the backup's log part.
	pad := strings.Repeat("x", 300)
	for b := 0; b < 10; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO bk.filler VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, '%s')", b*500+i, pad)
		}
		mustExec(t, db, sb.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked atomic.Int64 // the ledger's last acknowledged seq
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seq := int64(1); ctx.Err() == nil; seq++ {
			if _, err := db.ExecContext(ctx, "INSERT INTO bk.ledger VALUES (?, 'x')", seq); err != nil {
				if ctx.Err() == nil {
					t.Errorf("ledger insert %d: %v", seq, err)
				}
				return
			}
			acked.Store(seq)
		}
	}()
	var transfers atomic.Int64
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for ctx.Err() == nil {
				from, to, amt := rng.Intn(10), rng.Intn(10), 1+rng.Intn(50)
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return
				}
				_, err1 := tx.Exec("UPDATE bk.acct SET bal = bal - ? WHERE id = ?", amt, from)
				_, err2 := tx.Exec("UPDATE bk.acct SET bal = bal + ? WHERE id = ?", amt, to)
				if err1 != nil || err2 != nil {
					tx.Rollback()
					continue // a deadlock between two transfers: retry
				}
				if tx.Commit() == nil {
					transfers.Add(1)
				}
			}
		}(int64(c))
	}
	time.Sleep(300 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "b")
	var m backupManifest
	var before int64
	// The log part must hold writes for the test to mean anything: retry (rarely needed) until one
	// backup has entries after its engine index.
	for attempt := 0; ; attempt++ {
		before = acked.Load()
		dir = filepath.Join(t.TempDir(), fmt.Sprintf("b%d", attempt))
		start := time.Now()
		m = takeBackup(t, k, dir, "--max-rate", "4M")
		t.Logf("backup %d: engine index %d, end %d, %d entries, %v", attempt, m.EngineIndex, m.EndIndex, m.Entries, time.Since(start))
		if m.Entries >= 5 || attempt == 4 {
			break
		}
	}
	cancel()
	wg.Wait()
	if m.Entries < 5 {
		t.Fatalf("no backup caught writes in its log part (last: %d entries)", m.Entries)
	}
	if before < 10 || transfers.Load() < 10 {
		t.Fatalf("too little load: %d ledger rows acknowledged before the backup, %d transfers", before, transfers.Load())
	}
	if out, err := runKiln("backup", "verify", dir); err != nil {
		t.Fatalf("kiln backup verify: %v\n%s", err, out)
	}

	full := restoreAndStart(t, dir, 0)
	n := ledgerState(t, full)
	if n < before {
		t.Fatalf("restored ledger has %d rows, but %d were acknowledged before the backup started", n, before)
	}
	if n > acked.Load() {
		t.Fatalf("restored ledger has %d rows, more than the %d ever acknowledged", n, acked.Load())
	}
	// The restored node is a new cluster: another UUID, the same indexes.
	var gtid string
	if err := full.db(t, "").QueryRow("SELECT @@gtid_executed").Scan(&gtid); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(gtid, m.ClusterUUID) {
		t.Fatalf("restored node's gtid_executed %s: still the source cluster's UUID", gtid)
	}
	mustExec(t, full.db(t, ""), "INSERT INTO bk.ledger VALUES (?, 'after restore')", n+1)
	full.stop()

	// Point in time by index: at the engine index, in the middle and at the end; the ledger only
	// grows with the index, every state is whole.
	prev := int64(-1)
	for _, to := range []uint64{m.EngineIndex, m.EngineIndex + (m.EndIndex-m.EngineIndex)/2, m.EndIndex} {
		k2 := restoreAndStart(t, dir, to)
		got := ledgerState(t, k2)
		k2.stop()
		if got < prev {
			t.Fatalf("--to-index %d restored %d ledger rows, fewer than an earlier index (%d)", to, got, prev)
		}
		if to == m.EndIndex && got != n {
			t.Fatalf("--to-index %d (the end) restored %d ledger rows, the full restore %d", to, got, n)
		}
		prev = got
	}

	// With only the ledger writing, each log entry is one ledger row: --to-index N+j restores
	// exactly j rows more than the engine held.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var last atomic.Int64
	var maxSeq int64 // the first writer's last insert may have committed unacknowledged
	if err := db.QueryRow("SELECT MAX(seq) FROM bk.ledger").Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	last.Store(maxSeq)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := last.Load() + 1; ctx2.Err() == nil; seq++ {
			if _, err := db.ExecContext(ctx2, "INSERT INTO bk.ledger VALUES (?, 'y')", seq); err != nil {
				if ctx2.Err() == nil {
					t.Errorf("ledger insert %d: %v", seq, err)
				}
				return
			}
			last.Store(seq)
		}
	}()
	var m2 backupManifest
	dir2 := ""
	for attempt := 0; ; attempt++ {
		dir2 = filepath.Join(t.TempDir(), fmt.Sprintf("solo%d", attempt))
		m2 = takeBackup(t, k, dir2, "--max-rate", "4M")
		if m2.Entries >= 3 || attempt == 4 {
			break
		}
	}
	cancel2()
	<-done
	if m2.Entries < 3 {
		t.Fatalf("the ledger-only backup caught %d entries", m2.Entries)
	}
	base := int64(-1)
	for _, j := range []uint64{0, 1, m2.Entries} {
		k3 := restoreAndStart(t, dir2, m2.EngineIndex+j)
		got := ledgerState(t, k3)
		k3.stop()
		if base < 0 {
			base = got
		}
		if got != base+int64(j) {
			t.Fatalf("--to-index %d restored %d ledger rows, want %d (the engine's %d plus one per entry)", m2.EngineIndex+j, got, base+int64(j), base)
		}
	}
	if out, err := runKiln("restore", "--from", dir2, "--data-dir", filepath.Join(t.TempDir(), "x"), "--to-index", fmt.Sprint(m2.EndIndex+1)); err == nil || !strings.Contains(out, "outside this backup") {
		t.Fatalf("restore past the backup's end: %v\n%s", err, out)
	}
}

// copyDir copies a backup directory (files only, one level of subdirectories).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A flipped byte or a truncation in any file of a backup, a missing file, a stray file or a missing
// manifest: kiln backup verify and kiln restore both refuse, naming the file, and restore leaves
// no data directory a server would start on.
func TestBackupCorruptionDetected(t *testing.T) {
	for _, form := range []string{"files", "logical"} {
		t.Run(form, func(t *testing.T) { testBackupCorruptionDetected(t, form) })
	}
}

func testBackupCorruptionDetected(t *testing.T, form string) {
	sum, sumKey := map[string]string{"files": "CRC32C", "logical": "SHA-256"}[form], map[string]string{"files": `"crc32c": "`, "logical": `"sha256": "`}[form]
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE bc")
	mustExec(t, db, "CREATE TABLE bc.t (id INT PRIMARY KEY, v VARCHAR(100))")
	mustExec(t, db, "CREATE TABLE bc.filler (id INT PRIMARY KEY, v VARCHAR(300))")
	for b := 0; b < 4; b++ { // ~600 KB: the paced engine stream takes ~0.5 s, writes land in the log part
		var sb strings.Builder
		sb.WriteString("INSERT INTO bc.filler VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, REPEAT('f', 300))", b*500+i)
		}
		mustExec(t, db, sb.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // writes during the backup, so it has log files too
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := db.ExecContext(ctx, "INSERT INTO bc.t VALUES (?, REPEAT('v', 100))", i); err != nil {
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	var good string
	var m backupManifest
	for attempt := 0; ; attempt++ {
		good = filepath.Join(t.TempDir(), "good")
		m = takeBackup(t, k, good, "--max-rate", "1M", "--form", form)
		if m.Entries > 0 || attempt == 4 {
			break
		}
	}
	cancel()
	<-done
	var logFile, engFile string
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, "log/") && logFile == "" {
			logFile = f.Path
		}
		if strings.HasPrefix(f.Path, "engine/") && engFile == "" && (form == "logical" || strings.HasSuffix(f.Path, ".sst")) {
			engFile = f.Path
		}
	}
	if logFile == "" || engFile == "" {
		t.Fatalf("backup has no log or no engine file: %+v", m.Files)
	}
	if out, err := runKiln("backup", "verify", good); err != nil {
		t.Fatalf("verify of an intact backup: %v\n%s", err, out)
	}
	flip := func(rel string) func(dir string) string {
		return func(dir string) string {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x40
			os.WriteFile(p, b, 0o600)
			return p
		}
	}
	cases := []struct {
		name   string
		damage func(dir string) string // returns the path the message must name
		want   string
	}{
		{"flipped byte in an engine file", flip(engFile), sum},
		{"flipped byte in a log file", flip(logFile), sum},
		{"truncated log file", func(dir string) string {
			p := filepath.Join(dir, filepath.FromSlash(logFile))
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-3)
			return p
		}, "truncated"},
		{"missing engine file", func(dir string) string {
			p := filepath.Join(dir, filepath.FromSlash(engFile))
			os.Remove(p)
			return p
		}, "no such file"},
		{"stray file", func(dir string) string {
			p := filepath.Join(dir, "log", "000099.ent")
			os.WriteFile(p, []byte("x"), 0o600)
			return p
		}, "not listed"},
		{"no manifest (interrupted backup)", func(dir string) string {
			os.Remove(filepath.Join(dir, "MANIFEST.json"))
			return "MANIFEST.json"
		}, "incomplete"},
		{"flipped byte in the manifest", func(dir string) string {
			p := filepath.Join(dir, "MANIFEST.json")
			b, _ := os.ReadFile(p)
			i := strings.Index(string(b), sumKey) + len(sumKey)
			b[i] = "10"[b[i]&1] // another hex digit
			os.WriteFile(p, b, 0o600)
			return sum
		}, sum},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			copyDir(t, good, dir)
			names := c.damage(dir)
			out, err := runKiln("backup", "verify", dir)
			if err == nil || !strings.Contains(out, names) || !strings.Contains(out, c.want) {
				t.Fatalf("verify: %v\n%s\nwant an error naming %s (%q)", err, out, names, c.want)
			}
			data := filepath.Join(t.TempDir(), "data")
			out, err = runKiln("restore", "--from", dir, "--data-dir", data)
			if err == nil || !strings.Contains(out, names) || !strings.Contains(out, c.want) {
				t.Fatalf("restore: %v\n%s\nwant an error naming %s (%q)", err, out, names, c.want)
			}
			if _, err := os.Stat(filepath.Join(data, "FORMAT")); err == nil {
				t.Fatal("a refused restore left a data directory with FORMAT")
			}
		})
	}
}

// kill -9 of kiln backup in the middle of the stream: the node goes on serving (reads, writes,
// /health), its log purge is no longer held, the interrupted directory is refused, and a later
// backup succeeds and restores.
func TestBackupKill9(t *testing.T) {
	k := startKiln(t, "", "--log-purge-interval", "200ms", "--log-retain-entries", "10")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE b9")
	mustExec(t, db, "CREATE TABLE b9.t (id INT PRIMARY KEY, v VARCHAR(300))")
	// Incompressible rows: the file form copies compressed sstables, and the backup must take
	// several seconds at --max-rate.
	rng := rand.New(rand.NewSource(9))
	pad := make([]byte, 150)
	for b := 0; b < 10; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO b9.t VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			rng.Read(pad)
			fmt.Fprintf(&sb, "(%d, '%x')", b*500+i, pad)
		}
		mustExec(t, db, sb.String())
	}
	dir := filepath.Join(t.TempDir(), "killed")
	// About 1.7 MB at 256 KiB/s: several seconds, killed after one.
	cmd := exec.Command(kilnBin, "backup", "--from", k.http, "--to", dir, "--max-rate", "256K")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	mustExec(t, db, "INSERT INTO b9.t VALUES (-1, 'during')")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !st.Signaled() {
		t.Fatalf("kiln backup was not killed mid-way (it ended with %v): make the backup slower", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "engine")); len(entries) == 0 {
		t.Fatal("the killed backup had written nothing: not mid-way")
	}
	if out, err := runKiln("backup", "verify", dir); err == nil || !strings.Contains(out, "incomplete") {
		t.Fatalf("verify of the killed backup: %v\n%s", err, out)
	}
	// The node serves: writes, reads, health.
	for i := 0; i < 50; i++ {
		mustExec(t, db, "INSERT INTO b9.t VALUES (?, 'after')", 100000+i)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM b9.t").Scan(&n); err != nil || n != 5000+1+50 {
		t.Fatalf("after the killed backup: count %d, %v", n, err)
	}
	out, err := runKiln("cluster", "status", "--http", k.http)
	if err != nil {
		t.Fatalf("kiln cluster status after the killed backup: %v\n%s", err, out)
	}
	// The node notices the client is gone and releases its snapshot and log hold.
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, _ := os.ReadFile(k.logPath)
		if strings.Contains(string(log), `msg="backup stream"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node never ended the killed backup's stream:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The node removed the file-form backup's engine checkpoint when the stream ended.
	if ents, err := os.ReadDir(filepath.Join(k.dir, "backup-checkpoints")); err != nil || len(ents) != 0 {
		t.Fatalf("the killed backup's checkpoint is left on the node: %v %v", ents, err)
	}
	dir2 := filepath.Join(t.TempDir(), "again")
	m := takeBackup(t, k, dir2)
	if out, err := runKiln("backup", "verify", dir2); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	k2 := restoreAndStart(t, dir2, 0)
	var got int
	if err := k2.db(t, "").QueryRow("SELECT COUNT(*) FROM b9.t").Scan(&got); err != nil || got != n {
		t.Fatalf("restored %d rows (%v), want %d (backup at index %d)", got, err, n, m.EndIndex)
	}
}

// A node shut down (SIGTERM) while it streams a backup ends the stream and stops cleanly: the
// engine never closes under a running stream; the client reports the cut-off stream.
func TestBackupDuringShutdown(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE bs")
	mustExec(t, db, "CREATE TABLE bs.t (id INT PRIMARY KEY, v LONGTEXT)")
	// Incompressible values: the file form copies compressed sstables, and the backup must still
	// be streaming when the node stops.
	rng := rand.New(rand.NewSource(3))
	val := make([]byte, 500000)
	for i := 0; i < 3; i++ {
		rng.Read(val)
		mustExec(t, db, "INSERT INTO bs.t VALUES (?, ?)", i, fmt.Sprintf("%x", val))
	}
	db.Close()
	dir := filepath.Join(t.TempDir(), "b")
	bk := exec.Command(kilnBin, "backup", "--from", k.http, "--to", dir, "--max-rate", "256K")
	var out strings.Builder
	bk.Stdout, bk.Stderr = &out, &out
	if err := bk.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := k.cmd.Wait()
	k.cmd = nil
	log, _ := os.ReadFile(k.logPath)
	if err != nil || !strings.Contains(string(log), `msg=stopped`) || strings.Contains(string(log), "panic") {
		t.Fatalf("the node did not stop cleanly during a backup: %v\n%s", err, log)
	}
	if err := bk.Wait(); err == nil {
		t.Fatalf("kiln backup succeeded although the node stopped mid-way:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.json")); err == nil {
		t.Fatal("a cut-off backup has a manifest")
	}
	k.start() // and the node starts again
}

// kiln backup --to - writes the backup as a tar stream on stdout; extracted, it verifies and
// restores like a directory backup.
func TestBackupTarStream(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE bt")
	mustExec(t, db, "CREATE TABLE bt.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO bt.t VALUES (1), (2), (3)")
	tmp := t.TempDir()
	tarPath := filepath.Join(tmp, "b.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := exec.Command(kilnBin, "backup", "--from", k.http, "--to", "-")
	cmd.Stdout, cmd.Stderr = f, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kiln backup --to -: %v\n%s", err, stderr.String())
	}
	f.Close()
	if !strings.Contains(stderr.String(), "gtid_executed\t") {
		t.Fatalf("the summary goes to stderr: %q", stderr.String())
	}
	dir := filepath.Join(tmp, "x")
	os.Mkdir(dir, 0o700)
	if out, err := exec.Command("tar", "-xf", tarPath, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, out)
	}
	if out, err := runKiln("backup", "verify", dir); err != nil {
		t.Fatalf("verify of the extracted tar: %v\n%s", err, out)
	}
	k2 := restoreAndStart(t, dir, 0)
	var n int
	if err := k2.db(t, "").QueryRow("SELECT COUNT(*) FROM bt.t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("restored from the tar: %d rows, %v", n, err)
	}
}
