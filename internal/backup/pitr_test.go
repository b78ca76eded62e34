package backup

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
)

const testUUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

var pitrBase = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

// stampedAt is the commit time of entry i in timedBackup: pitrBase + i seconds.
func stampedAt(i uint64) time.Time { return pitrBase.Add(time.Duration(i) * time.Second) }

// timedBackup is a backup whose engine is at index 20 and whose log runs to 40; entry i is a commit
// stamped at stampedAt(i), except entry 22 (a membership change), entry 30 (raft's empty entry)
// and the entries in untimed (commits as an older build wrote them, without a commit time).
func timedBackup(t *testing.T, untimed ...uint64) string {
	t.Helper()
	src := sourceWith(t, 20, 40, 10, func(i uint64) []byte {
		rec := []byte(fmt.Sprintf("\x01record-%d", i))
		switch {
		case i == 30:
			return nil
		case containsIndex(untimed, i):
			return append([]byte{0, 0, 0, 0, 0, 0, 0, byte(i)}, rec...)
		}
		return repl.EncodeEntryData(i, stampedAt(i).UnixNano(), rec)
	})
	dir := filepath.Join(t.TempDir(), "b")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func containsIndex(s []uint64, i uint64) bool {
	for _, x := range s {
		if x == i {
			return true
		}
	}
	return false
}

// restoredEnd restores dir with o and returns the last index of the restored log.
func restoredEnd(t *testing.T, dir string, o RestoreOptions) (uint64, Result, error) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	res, err := Restore(dir, data, o)
	if err != nil {
		return 0, res, err
	}
	lg, err := klog.Open(filepath.Join(data, "log"), klog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	if lg.HardState().Commit != lg.LastIndex() || res.Index != lg.LastIndex() {
		t.Fatalf("restored log ends at %d, commit %d, result says %d", lg.LastIndex(), lg.HardState().Commit, res.Index)
	}
	return lg.LastIndex(), res, nil
}

// --to-time restores exactly the commits stamped at or before the time: the cut falls before the
// first commit after it; a time the backup cannot answer exactly is refused with the reason.
func TestRestoreToTime(t *testing.T) {
	dir := timedBackup(t)
	m, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.EngineCommitTime == nil || !m.EngineCommitTime.Equal(stampedAt(20)) || m.EndCommitTime == nil || !m.EndCommitTime.Equal(stampedAt(40)) {
		t.Fatalf("manifest commit times %v..%v, want %v..%v", m.EngineCommitTime, m.EndCommitTime, stampedAt(20), stampedAt(40))
	}
	cases := []struct {
		name string
		at   time.Time
		want uint64 // 0: refused
		err  string
	}{
		{"between two commits", stampedAt(25).Add(500 * time.Millisecond), 25, ""},
		{"exactly at a commit", stampedAt(25), 25, ""},
		{"a nanosecond before a commit", stampedAt(26).Add(-1), 25, ""},
		{"just after the first commit after the snapshot (and the membership change after it)", stampedAt(21).Add(time.Millisecond), 22, ""},
		{"before the first commit after the snapshot", stampedAt(20).Add(500 * time.Millisecond), 20, ""},
		{"after a membership change", stampedAt(23).Add(-time.Millisecond), 22, ""},
		{"takes raft's empty entry before the next commit", stampedAt(29).Add(time.Millisecond), 30, ""},
		{"the second to last commit", stampedAt(39), 39, ""},
		{"before the snapshot", stampedAt(19), 0, "before this backup's engine snapshot"},
		{"at the last commit", stampedAt(40), 0, "not before any commit in this backup"},
		{"after the backup", stampedAt(400), 0, "not before any commit in this backup"},
	}
	for _, c := range cases {
		got, res, err := restoredEnd(t, dir, RestoreOptions{ToTime: c.at})
		if c.want == 0 {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: restored to %d (%v), want an error %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: restored to %d (%v), want %d", c.name, got, err, c.want)
			continue
		}
		last := c.want
		for last == 22 || last == 30 {
			last--
		}
		if res.CommitTime == nil || !res.CommitTime.Equal(stampedAt(last)) {
			t.Errorf("%s: result commit time %v, want %v", c.name, res.CommitTime, stampedAt(last))
		}
	}
	if _, _, err := restoredEnd(t, dir, RestoreOptions{ToTime: stampedAt(25), ToIndex: 25}); err == nil {
		t.Error("--to-time with --to-index accepted")
	}
}

// Commits without a commit time (an older build's) are taken when a later commit at or before the
// time follows them, and refused when the cut would fall right after them.
func TestRestoreToTimeOlderEntries(t *testing.T) {
	dir := timedBackup(t, 24, 25)
	for _, c := range []struct {
		at   time.Time
		want uint64
	}{{stampedAt(26), 26}, {stampedAt(21).Add(time.Second / 2), 22}, {stampedAt(23), 0}, {stampedAt(25), 0}} {
		got, _, err := restoredEnd(t, dir, RestoreOptions{ToTime: c.at})
		if c.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "entries 24..25 were written without commit times") {
				t.Errorf("%v: a cut right after commits without times: %d, %v", c.at, got, err)
			}
		} else if err != nil || got != c.want {
			t.Errorf("%v: restored to %d (%v), want %d", c.at, got, err, c.want)
		}
	}
}

// --to-gtid <cluster uuid>:1-N restores to index N; another cluster's set, a set with a gap or not
// starting at 1, or one outside the backup is refused.
func TestRestoreToGTID(t *testing.T) {
	dir := timedBackup(t)
	for _, c := range []struct {
		gtid string
		want uint64
		err  string
	}{
		{testUUID + ":1-25", 25, ""},
		{strings.ToUpper(testUUID) + ":1-40", 40, ""},
		{" " + testUUID + ":1-20 ", 20, ""},
		{testUUID + ":1-19", 0, "outside this backup"},
		{testUUID + ":1-41", 0, "outside this backup"},
		{"4e11fa47-71ca-11e1-9e33-c80aa9429562:1-25", 0, "this backup is of cluster " + testUUID},
		{testUUID + ":2-25", 0, "starts at 1"},
		{testUUID + ":1-25:27-30", 0, "want <cluster uuid>:1-<index>"},
		{testUUID + ":1-25," + testUUID + ":30", 0, "want <cluster uuid>:1-<index>"},
		{testUUID, 0, "want <cluster uuid>:1-<index>"},
		{testUUID + ":1-x", 0, "starts at 1"},
	} {
		got, _, err := restoredEnd(t, dir, RestoreOptions{ToGTID: c.gtid})
		if c.want == 0 {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: restored to %d (%v), want an error %q", c.gtid, got, err, c.err)
			}
		} else if err != nil || got != c.want {
			t.Errorf("%q: restored to %d (%v), want %d", c.gtid, got, err, c.want)
		}
	}
}
