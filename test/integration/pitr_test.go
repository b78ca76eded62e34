package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// restoreWith runs kiln restore from backup dir with extra target flags, checks the new data
// directory with kiln check and returns it with the log index it was restored to.
func restoreWith(t *testing.T, dir string, target ...string) (string, uint64) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	out, err := runKiln(append([]string{"restore", "--from", dir, "--data-dir", data}, target...)...)
	if err != nil {
		t.Fatalf("kiln restore %v: %v\n%s", target, err, out)
	}
	mt := regexp.MustCompile(`log to index (\d+)`).FindStringSubmatch(out)
	if mt == nil {
		t.Fatalf("kiln restore printed no index:\n%s", out)
	}
	idx, _ := strconv.ParseUint(mt[1], 10, 64)
	if out, err := kilnCheck(data); err != nil {
		t.Fatalf("kiln check of the restored directory: %v\n%s", err, out)
	}
	return data, idx
}

// ledgerRows starts a server on a restored directory and returns the ledger's rows, checking they
// are 1..n without a gap.
func ledgerRows(t *testing.T, data string) int64 {
	t.Helper()
	k := startKiln(t, data)
	defer k.stop()
	var cnt, max int64
	if err := k.db(t, "").QueryRow("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM pt.ledger").Scan(&cnt, &max); err != nil {
		t.Fatal(err)
	}
	if cnt != max {
		t.Fatalf("ledger holds %d rows with max seq %d: not a prefix of the commit history", cnt, max)
	}
	return cnt
}

// Point-in-time restore by commit time and by GTID, from a backup whose log part holds a ledger of
// single-row commits written 20 ms apart: --to-time between two commits restores exactly the
// commits up to the first of them; --to-gtid <uuid>:1-N restores exactly the commits up to index N;
// times outside the backup and another cluster's GTID are refused.
func TestBackupPointInTime(t *testing.T) {
	k := startKiln(t, "")
	db := k.db(t, "")
	mustExec(t, db, "CREATE DATABASE pt")
	mustExec(t, db, "CREATE TABLE pt.ledger (seq BIGINT PRIMARY KEY)")
	mustExec(t, db, "CREATE TABLE pt.filler (id INT PRIMARY KEY, pad VARCHAR(300))")
	// ~600 KB, incompressible (the file form copies compressed sstables): the paced engine stream
	// takes a while, commits land in the log part.
	rng := rand.New(rand.NewSource(1))
	pad := make([]byte, 150)
	for b := 0; b < 4; b++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO pt.filler VALUES ")
		for i := 0; i < 500; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			rng.Read(pad)
			fmt.Fprintf(&sb, "(%d, '%x')", b*500+i, pad)
		}
		mustExec(t, db, sb.String())
	}
	// One writer: commit seq was stamped by the leader between sent[seq] and acked[seq].
	type span struct{ sent, acked time.Time }
	var mu sync.Mutex
	spans := []span{{}} // spans[seq]; seq 0 unused
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for seq := 1; ctx.Err() == nil; seq++ {
			sent := time.Now()
			if _, err := db.ExecContext(ctx, "INSERT INTO pt.ledger VALUES (?)", seq); err != nil {
				if ctx.Err() == nil {
					t.Errorf("ledger insert %d: %v", seq, err)
				}
				return
			}
			mu.Lock()
			spans = append(spans, span{sent, time.Now()})
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	var dir string
	var m backupManifest
	for attempt := 0; ; attempt++ {
		dir = filepath.Join(t.TempDir(), fmt.Sprintf("b%d", attempt))
		m = takeBackup(t, k, dir, "--max-rate", "1M")
		if m.Entries >= 8 || attempt == 4 {
			break
		}
	}
	cancel()
	<-done
	if m.Entries < 8 {
		t.Fatalf("no backup caught 8 commits in its log part (last: %d)", m.Entries)
	}
	var full struct {
		EngineCommitTime *time.Time `json:"engine_commit_time"`
		EndCommitTime    *time.Time `json:"end_commit_time"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "MANIFEST.json"))
	if err := json.Unmarshal(b, &full); err != nil || full.EngineCommitTime == nil || full.EndCommitTime == nil {
		t.Fatalf("manifest without commit times (%v):\n%s", err, b)
	}
	// Times between two acknowledged commits, strictly inside what the backup covers.
	var cuts []int // seq i: a time between commit i and commit i+1
	for i := 1; i+1 < len(spans); i++ {
		if spans[i].acked.After(*full.EngineCommitTime) && spans[i+1].sent.Before(*full.EndCommitTime) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) < 3 {
		t.Fatalf("only %d gaps between commits inside the backup's range %v..%v", len(cuts), full.EngineCommitTime, full.EndCommitTime)
	}
	between := func(i int) time.Time {
		return spans[i].acked.Add(spans[i+1].sent.Sub(spans[i].acked) / 2)
	}
	var lastIdx uint64
	var lastRows int64
	// The first gap may be the one right after the engine snapshot's last commit.
	for _, i := range []int{cuts[0], cuts[1], cuts[len(cuts)/2]} {
		at := between(i)
		// Both spellings: RFC 3339 in UTC, and MySQL's DATETIME form in the local time zone.
		form := at.UTC().Format(time.RFC3339Nano)
		if i == cuts[1] {
			form = at.Local().Format("2006-01-02 15:04:05.999999999")
		}
		data, idx := restoreWith(t, dir, "--to-time", form)
		if got := ledgerRows(t, data); got != int64(i) {
			t.Fatalf("--to-time %s (between commits %d and %d) restored %d ledger rows (index %d)", form, i, i+1, got, idx)
		}
		t.Logf("--to-time %s: index %d, %d ledger rows (backup: engine %d, end %d)", form, idx, i, m.EngineIndex, m.EndIndex)
		lastIdx, lastRows = idx, int64(i)
	}
	// By GTID: one ledger row per entry after the last time cut.
	gtid := fmt.Sprintf("%s:1-%d", m.ClusterUUID, lastIdx+1)
	data, idx := restoreWith(t, dir, "--to-gtid", gtid)
	if got := ledgerRows(t, data); idx != lastIdx+1 || got != lastRows+1 {
		t.Fatalf("--to-gtid %s restored index %d with %d ledger rows, want index %d with %d", gtid, idx, got, lastIdx+1, lastRows+1)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--to-time", full.EngineCommitTime.Add(-time.Millisecond).Format(time.RFC3339Nano)}, "before this backup's engine snapshot"},
		{[]string{"--to-time", full.EndCommitTime.Format(time.RFC3339Nano)}, "not before any commit in this backup"},
		{[]string{"--to-time", "yesterday"}, "want RFC 3339"},
		{[]string{"--to-gtid", "4e11fa47-71ca-11e1-9e33-c80aa9429562:1-" + fmt.Sprint(m.EndIndex)}, "this backup is of cluster " + m.ClusterUUID},
		{[]string{"--to-gtid", fmt.Sprintf("%s:1-%d", m.ClusterUUID, m.EndIndex+1)}, "outside this backup"},
		{[]string{"--to-gtid", gtid, "--to-index", "3"}, "one of --to-index, --to-time and --to-gtid"},
	} {
		data := filepath.Join(t.TempDir(), "refused")
		out, err := runKiln(append([]string{"restore", "--from", dir, "--data-dir", data}, c.args...)...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("restore %v: %v\n%s\nwant an error %q", c.args, err, out, c.want)
		}
		if _, err := os.Stat(filepath.Join(data, "FORMAT")); err == nil {
			t.Errorf("restore %v was refused but left a data directory with FORMAT", c.args)
		}
	}
}
