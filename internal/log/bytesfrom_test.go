package log

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BytesFrom counts the segment files that hold an index at or after the one asked for: all of them
// from the first index, only the active one past the last sealed segment, and less after a purge.
func TestBytesFrom(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 4096)
	defer l.Close()
	for i := uint64(1); i <= 200; i += 10 {
		must(t, l.Append(ents(i, i+10, 1, 100)))
		must(t, l.SetHardState(HardState{Term: 1, Commit: i + 9})) // only committed entries are sealed
		must(t, l.Sync())
	}
	files, err := fs.List("/log")
	must(t, err)
	var total int64
	for _, f := range files {
		if fi, err := fs.Stat("/log/" + f); err == nil && !fi.IsDir() {
			total += fi.Size()
		}
	}
	if l.Stats().Segments < 3 {
		t.Fatalf("%d segments: want several", l.Stats().Segments)
	}
	all := l.BytesFrom(1)
	if all <= 0 || all > total {
		t.Fatalf("BytesFrom(1) = %d, the directory holds %d bytes", all, total)
	}
	last := l.BytesFrom(l.LastIndex())
	if last <= 0 || last >= all {
		t.Fatalf("BytesFrom(last) = %d, BytesFrom(1) = %d: want only the active segment", last, all)
	}
	mid := l.BytesFrom(100)
	if mid < last || mid > all {
		t.Fatalf("BytesFrom(100) = %d outside [%d, %d]", mid, last, all)
	}
	must(t, l.Purge(100))
	if after := l.BytesFrom(1); after >= all || after < l.BytesFrom(100) {
		t.Fatalf("BytesFrom(1) after a purge to 100 = %d (was %d)", after, all)
	}
}
