package log

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// After Reset the log starts at index+1 with Term(index) known, keeps appending, and a reopen (also
// after a power loss) recovers exactly that.
func TestReset(t *testing.T) {
	fs := vfs.NewCrashableMem()
	l, err := Open("/log", Options{FS: fs, SegmentBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	var ents []Entry
	for i := uint64(1); i <= 50; i++ {
		ents = append(ents, Entry{Index: i, Term: 1, Data: []byte("some entry data")})
	}
	if err := l.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := l.SetHardState(HardState{Term: 1, Commit: 50}); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Reset(100, 3, HardState{Term: 4, Vote: 2, Commit: 90}); err == nil {
		t.Fatal("Reset with commit below the snapshot index accepted")
	}
	if err := l.Reset(100, 3, HardState{Term: 4, Vote: 2, Commit: 100}); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log, last uint64) {
		t.Helper()
		if l.FirstIndex() != 101 || l.LastIndex() != last {
			t.Fatalf("first %d last %d, want 101 %d", l.FirstIndex(), l.LastIndex(), last)
		}
		if tm, err := l.Term(100); err != nil || tm != 3 {
			t.Fatalf("Term(100) = %d, %v; want 3", tm, err)
		}
		if _, err := l.Term(99); err == nil {
			t.Fatal("Term(99) answered after the reset")
		}
		if hs := l.HardState(); hs.Commit < 100 || hs.Term != 4 {
			t.Fatalf("hard state %+v", hs)
		}
	}
	check(l, 100)
	if err := l.Append([]Entry{{Index: 101, Term: 4, Data: []byte("x")}, {Index: 102, Term: 4, Data: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	l.Close()
	l2, err := Open("/log", Options{FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	check(l2, 102)
	got, err := l2.Entries(101, 103, 1<<20)
	if err != nil || len(got) != 2 || string(got[1].Data) != "y" {
		t.Fatalf("entries after reset: %v %v", got, err)
	}
}
