package log

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// corruptFixture writes, in one segment:
//
//	batch 1: entries 1..10, hardstate commit 10
//	batch 2: entries 11..20, hardstate commit 20
//	batch 3: entries 21..25 (hardstate unchanged, so no record)
//
// and returns the segment path, its records, and the model. Variant extraSync adds batch 4 (entry 26);
// variant commitAhead adds a hardstate with commit 30 (batch 4) and then entries 26..30 (batch 5).
const (
	plain = iota
	extraSync
	commitAhead
)

func corruptFixture(t *testing.T, fs vfs.FS, variant int) (string, []recInfo, *model) {
	l := mustOpen(t, fs, "/log", 0)
	m := newModel()
	run(t, l, m, []op{appendOp(1, 11, 1, 100), hsOp(1, 1, 10), syncOp,
		appendOp(11, 21, 1, 100), hsOp(1, 1, 20), syncOp,
		appendOp(21, 26, 1, 100), syncOp})
	switch variant {
	case extraSync:
		run(t, l, m, []op{appendOp(26, 27, 1, 100), syncOp})
	case commitAhead:
		run(t, l, m, []op{hsOp(1, 1, 30), syncOp, appendOp(26, 31, 1, 100), syncOp})
	}
	must(t, l.Close())
	path := "/log/" + segName(1)
	return path, records(t, fs, path), m
}

func entryOff(t *testing.T, recs []recInfo, i uint64) int64 {
	for _, r := range recs {
		if r.typ == recEntry && r.index == i {
			return r.off
		}
	}
	t.Fatalf("no record for entry %d", i)
	return 0
}

// nthOff returns the offset of the n-th (0-based) record of type typ.
func nthOff(t *testing.T, recs []recInfo, typ byte, n int) int64 {
	for _, r := range recs {
		if r.typ == typ {
			if n == 0 {
				return r.off
			}
			n--
		}
	}
	t.Fatalf("no record %d of type %d", n, typ)
	return 0
}

func TestCorruption(t *testing.T) {
	type damage func(t *testing.T, b []byte, recs []recInfo) ([]byte, int64) // returns the bad offset
	flipIn := func(at func(t *testing.T, recs []recInfo) int64, delta int64) damage {
		return func(t *testing.T, b []byte, recs []recInfo) ([]byte, int64) {
			off := at(t, recs)
			b[off+delta] ^= 0x40
			return b, off
		}
	}
	entry := func(i uint64) func(*testing.T, []recInfo) int64 {
		return func(t *testing.T, recs []recInfo) int64 { return entryOff(t, recs, i) }
	}
	hsRec := func(n int) func(*testing.T, []recInfo) int64 {
		return func(t *testing.T, recs []recInfo) int64 { return nthOff(t, recs, recHardState, n) }
	}
	cases := []struct {
		name     string
		variant  int
		damage   damage
		corrupt  string // substring of the error; "" when Open must succeed
		wantLast uint64 // after a successful Open
	}{
		// Entries 1..10 are covered by the hardstate of their own batch; that batch was synced, as the
		// batches after it show.
		{"payload of an entry below the commit", plain, flipIn(entry(5), 30), "later write", 0},
		{"crc of an entry below the commit", plain, flipIn(entry(7), 6), "later write", 0},
		{"length of an entry below the commit", plain, flipIn(entry(3), 3), "later write", 0},
		{"type byte of an entry below the commit", plain, flipIn(entry(9), 4), "later write", 0},
		// The last write holds entries 26..30, which a hardstate read before them already commits.
		{"entry of the last write below a commit read before it", commitAhead, flipIn(entry(28), 30),
			"entry 28, at or below the durable commit index 30, is damaged or missing", 0},
		// Entry 15 is at or below commit 20, but the hardstate saying so lies after it: the later
		// batch (3) is what shows the damage was synced.
		{"entry covered by a later commit", plain, flipIn(entry(15), 40), "later write", 0},
		{"hardstate record of a synced batch", plain, flipIn(hsRec(1), 12), "later write", 0},
		{"batch record of a synced batch", plain, flipIn(func(t *testing.T, r []recInfo) int64 {
			return nthOff(t, r, recBatch, 1)
		}, 10), "later write", 0},
		{"above the commit but followed by a synced write", extraSync, flipIn(entry(23), 30), "later write", 0},
		{"segment header", plain, flipIn(func(*testing.T, []recInfo) int64 { return 0 }, 14), "segment header checksum", 0},
		// Torn tails: above commit 20, in the last write.
		{"entry above the commit", plain, flipIn(entry(23), 30), "", 22},
		{"first entry of the last write", plain, flipIn(entry(21), 50), "", 20},
		{"batch record of the last write", plain, flipIn(func(t *testing.T, r []recInfo) int64 {
			return nthOff(t, r, recBatch, 2)
		}, 12), "", 20},
		{"cut inside a record", plain, func(t *testing.T, b []byte, recs []recInfo) ([]byte, int64) {
			off := entryOff(t, recs, 24)
			return b[:off+5], off
		}, "", 23},
		{"zero-filled tail", plain, func(t *testing.T, b []byte, _ []recInfo) ([]byte, int64) {
			return append(b, make([]byte, 8192)...), int64(len(b))
		}, "", 25},
		{"zero-filled hole then a stray valid record", plain, func(t *testing.T, b []byte, _ []recInfo) ([]byte, int64) {
			off := int64(len(b))
			b = append(b, make([]byte, 4096)...)
			b = appendEntryRecord(b, &Entry{Index: 26, Term: 1, Data: []byte("stray")})
			b = appendHardStateRecord(b, HardState{Term: 1, Commit: 26})
			return b, off
		}, "", 25},
		{"garbage tail", plain, func(t *testing.T, b []byte, _ []recInfo) ([]byte, int64) {
			off := int64(len(b))
			for i := 0; i < 3000; i++ {
				b = append(b, byte(i*7+13))
			}
			return b, off
		}, "", 25},
		{"huge length in the tail", plain, func(t *testing.T, b []byte, recs []recInfo) ([]byte, int64) {
			off := entryOff(t, recs, 25)
			b[off+3] = 0x7f
			return b, off
		}, "", 24},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			path, recs, m := corruptFixture(t, fs, tc.variant)
			b, badOff := tc.damage(t, readFile(t, fs, path), recs)
			writeFile(t, fs, path, b)

			rep, checkErr := Check(fs, "/log")
			if got := int64(len(readFile(t, fs, path))); got != int64(len(b)) {
				t.Fatalf("Check changed the file: %d bytes, was %d", got, len(b))
			}
			var c captureLogger
			l, err := Open("/log", Options{FS: fs, Logger: c.logger()})
			if tc.corrupt != "" {
				if err == nil {
					l.Close()
					t.Fatalf("Open succeeded on a corrupt log")
				}
				var ce *CorruptionError
				if !errors.As(err, &ce) || ce.File != path || ce.Offset != badOff {
					t.Fatalf("Open: %v; want a CorruptionError for %s at offset %d", err, path, badOff)
				}
				for _, want := range []string{path, fmt.Sprintf("offset %d", badOff), tc.corrupt} {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("Open: %q does not contain %q", err, want)
					}
				}
				if checkErr == nil || rep.Corruption == nil || *rep.Corruption != *ce || rep.OK() {
					t.Fatalf("Check: %v, report corruption %+v; want %+v", checkErr, rep.Corruption, ce)
				}
				if !strings.Contains(rep.String(), "CORRUPT") {
					t.Fatalf("report does not say CORRUPT:\n%s", rep.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer l.Close()
			if checkErr != nil || rep.TornTail == nil || rep.TornTail.Offset != badOff ||
				rep.TornTail.Dropped != int64(len(b))-badOff || rep.LastIndex != tc.wantLast {
				t.Fatalf("Check: %v, torn %+v, last %d; want a torn tail at %d, last %d\n%s", checkErr, rep.TornTail,
					rep.LastIndex, badOff, tc.wantLast, rep.String())
			}
			if !strings.Contains(c.String(), "torn tail") || !strings.Contains(c.String(), fmt.Sprintf("offset=%d", badOff)) {
				t.Fatalf("recovery did not log the truncation: %s", c.String())
			}
			m.truncate(tc.wantLast + 1)
			m.hs = HardState{Term: 1, Vote: 1, Commit: 20}
			if d := m.diff(l); d != "" {
				t.Fatal(d)
			}
			if got := int64(len(readFile(t, fs, path))); got != badOff {
				t.Fatalf("file is %d bytes after recovery, want %d", got, badOff)
			}
			// The repaired log is clean and keeps working.
			must(t, l.Append(ents(tc.wantLast+1, tc.wantLast+3, 2, 10)))
			must(t, l.Sync())
			must(t, l.Close())
			if rep, err := Check(fs, "/log"); err != nil || rep.TornTail != nil || rep.LastIndex != tc.wantLast+2 {
				t.Fatalf("Check after repair: %v\n%s", err, rep.String())
			}
			l = mustOpen(t, fs, "/log", 0)
		})
	}
}

// Damage in a sealed segment is corruption even above the commit index: the segment was synced before
// the next one was created.
func TestCorruptionInSealedSegment(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 2048)
	m := newModel()
	for b := uint64(0); b < 10; b++ {
		lo := b*5 + 1
		run(t, l, m, []op{appendOp(lo, lo+5, 1, 100), hsOp(1, 1, lo+4), syncOp})
	}
	must(t, l.Close())
	files := segFiles(t, fs, "/log")
	if len(files) < 3 {
		t.Fatalf("%d segments", len(files))
	}
	path := "/log/" + files[1]
	recs := records(t, fs, path)
	b := readFile(t, fs, path)
	last := recs[len(recs)-1]
	b[last.off+last.size-1] ^= 1
	writeFile(t, fs, path, b)
	_, err := Open("/log", Options{FS: fs, Logger: quiet})
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != path || ce.Offset != last.off || !strings.Contains(err.Error(), "later segment") {
		t.Fatalf("Open: %v", err)
	}
	rep, err := Check(fs, "/log")
	if err == nil || len(rep.Segments) != len(files) || rep.Segments[1].BadOffset != last.off {
		t.Fatalf("Check: %v\n%s", err, rep.String())
	}
	// Check keeps verifying the framing of the segments after the damage.
	for _, s := range rep.Segments[2:] {
		if s.BadOffset != -1 || s.Records == 0 {
			t.Fatalf("segment after the damage not verified: %+v", s)
		}
	}
	// A missing middle segment is a gap.
	must(t, fs.Remove(path))
	if _, err := Open("/log", Options{FS: fs, Logger: quiet}); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Fatalf("Open with a missing segment: %v", err)
	}
}

// A Check of a healthy log reports every segment and no damage.
func TestCheckClean(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 4096)
	m := newModel()
	for b := uint64(0); b < 12; b++ {
		lo := b*6 + 1
		run(t, l, m, []op{appendOp(lo, lo+6, 1, 120), hsOp(1, 1, lo+3), syncOp})
	}
	run(t, l, m, []op{appendOp(71, 73, 2, 10), syncOp})
	must(t, l.Close())
	rep, err := Check(fs, "/log")
	if err != nil || !rep.OK() || rep.TornTail != nil {
		t.Fatalf("Check: %v\n%s", err, rep.String())
	}
	if rep.FirstIndex != 1 || rep.LastIndex != 72 || rep.HardState != m.hs || len(rep.Segments) < 2 {
		t.Fatalf("report:\n%s", rep.String())
	}
	for _, s := range rep.Segments {
		if s.BadOffset != -1 || s.ValidEnd != s.Size {
			t.Fatalf("segment %+v", s)
		}
	}
	if !strings.Contains(rep.String(), "ok") {
		t.Fatalf("report:\n%s", rep.String())
	}
}

// blockingFS blocks the first fsync after arm() until release, so a test can act while a Sync's write is
// in flight.
type blockingFS struct {
	vfs.FS
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (b *blockingFS) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = true
	b.entered = make(chan struct{})
	b.release = make(chan struct{})
}

func (b *blockingFS) wait() {
	b.mu.Lock()
	armed := b.armed
	b.armed = false
	entered, release := b.entered, b.release
	b.mu.Unlock()
	if armed {
		close(entered)
		<-release
	}
}

func (b *blockingFS) Create(n string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := b.FS.Create(n, c)
	return &blockingFile{f, b}, err
}

func (b *blockingFS) OpenReadWrite(n string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	f, err := b.FS.OpenReadWrite(n, c, o...)
	return &blockingFile{f, b}, err
}

type blockingFile struct {
	vfs.File
	b *blockingFS
}

func (f *blockingFile) SyncData() error { f.b.wait(); return f.File.SyncData() }

// Appends, overwrites and a HardState that arrive while a Sync waits for the disk go into the next write;
// here the Sync also rolls, so they must reach the new segment. Readers are not blocked meanwhile.
func TestAppendDuringSync(t *testing.T) {
	bfs := &blockingFS{FS: vfs.NewMem()}
	l := mustOpen(t, bfs, "/log", 2048)
	m := newModel()
	run(t, l, m, []op{appendOp(1, 11, 1, 100), hsOp(1, 1, 8), syncOp, appendOp(11, 21, 1, 100)})
	bfs.arm()
	done := make(chan error)
	go func() { done <- l.Sync() }()
	<-bfs.entered
	// While the fsync is in flight: overwrite 19..20, add more, and commit past what is being written.
	run(t, l, m, []op{appendOp(19, 24, 2, 50), hsOp(2, 1, 22)})
	if d := m.diff(l); d != "" {
		t.Fatalf("during the sync: %s", d)
	}
	close(bfs.release)
	must(t, <-done)
	if l.Stats().Rolls != 1 {
		t.Fatalf("no roll: %+v", l.Stats())
	}
	must(t, l.Sync())
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	must(t, l.Close())
	l = mustOpen(t, bfs, "/log", 2048)
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
}
