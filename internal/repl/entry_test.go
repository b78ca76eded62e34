package repl

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	klog "github.com/kiln-db/kiln/internal/log"
)

// oldEntryData is a commit entry as format 1 (before commit times) wrote it: the proposal id, then
// the write-set record.
func oldEntryData(id uint64, rec []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, id), rec...)
}

// setRecord is a version 1 write-set record setting k to v (internal/txn's encoding).
func setRecord(k, v string) []byte {
	b := []byte{1, 1}
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func TestEntryRecordFormats(t *testing.T) {
	rec := setRecord("k", "v")
	cases := []struct {
		name    string
		data    []byte
		rec     []byte
		at      int64
		hasTime bool
		bad     bool
	}{
		{"empty (raft's leader no-op)", nil, nil, 0, false, false},
		{"format 1", oldEntryData(7, rec), rec, 0, false, false},
		{"format 1, logical record", oldEntryData(7, []byte{2}), []byte{2}, 0, false, false},
		{"format 2", EncodeEntryData(7, 1234567890123, rec), rec, 1234567890123, true, false},
		{"format 2, empty record", EncodeEntryData(7, 5, nil), []byte{}, 5, true, false},
		{"format 2 cut inside the time", EncodeEntryData(7, 5, nil)[:12], nil, 0, false, true},
	}
	for _, c := range cases {
		got, at, has, err := EntryRecord(c.data)
		if (err != nil) != c.bad || !bytes.Equal(got, c.rec) || at != c.at || has != c.hasTime {
			t.Errorf("%s: EntryRecord = %x, %d, %v, %v; want %x, %d, %v, bad %v", c.name, got, at, has, err, c.rec, c.at, c.hasTime, c.bad)
		}
	}
}

// Commits carry the leader's commit time, increasing along the log; a log holding format 1 entries
// (written by an older build) still replays into the engine; after a restart the commit time never
// goes below the newest one in the log, even when that one is ahead of this node's clock.
func TestCommitTimes(t *testing.T) {
	fs := vfs.NewMem()
	n, eng, lg, m := startNode(t, fs, nil)
	before := time.Now().UnixNano()
	var idx []uint64
	for i := 0; i < 20; i++ {
		p, err := put(t, m, context.Background(), "a", "v")
		if err != nil {
			t.Fatal(err)
		}
		idx = append(idx, p)
	}
	after := time.Now().UnixNano()
	ents, err := lg.Entries(idx[0], idx[len(idx)-1]+1, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(0)
	for _, e := range ents {
		at, ok := EntryCommitTime(e)
		if !ok || at < before || at > after || at <= prev {
			t.Fatalf("entry %d: commit time %d (%v): want one in [%d, %d] above the previous %d", e.Index, at, ok, before, after, prev)
		}
		prev = at
	}
	n.Stop()

	// The log as an older build would have left it, plus an entry stamped an hour ahead (a
	// previous leader's clock).
	last := lg.LastIndex()
	term, _ := lg.Term(last)
	future := time.Now().Add(time.Hour).UnixNano()
	old := []klog.Entry{
		{Index: last + 1, Term: term, Data: oldEntryData(1<<40, setRecord("old1", "x"))},
		{Index: last + 2, Term: term, Data: oldEntryData(1<<40+1, setRecord("old2", "y"))},
		{Index: last + 3, Term: term, Data: EncodeEntryData(1<<40+2, future, setRecord("ahead", "z"))},
	}
	if err := lg.Append(old); err != nil {
		t.Fatal(err)
	}
	hs := lg.HardState()
	hs.Commit = last + 3
	if err := lg.SetHardState(hs); err != nil {
		t.Fatal(err)
	}
	if err := lg.Sync(); err != nil {
		t.Fatal(err)
	}
	eng.Close()
	lg.Close()

	n2, eng2, lg2, m2 := startNode(t, fs, nil)
	defer n2.Stop()
	for k, v := range map[string]string{"old1": "x", "old2": "y", "ahead": "z"} {
		got, ok, err := eng2.Get([]byte(k))
		if err != nil || !ok || string(got) != v {
			t.Fatalf("%s after replaying the older entries: %q %v %v", k, got, ok, err)
		}
	}
	p, err := put(t, m2, context.Background(), "b", "w")
	if err != nil {
		t.Fatal(err)
	}
	es, err := lg2.Entries(p, p+1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := EntryCommitTime(es[0]); !ok || at <= future {
		t.Fatalf("commit after a restart stamped %d (%v), want above the log's newest %d", at, ok, future)
	}
}
