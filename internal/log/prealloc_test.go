package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const preallocSeg = 64 << 10

func openPrealloc(t testing.TB, fs vfs.FS, dir string, logger *captureLogger) *Log {
	t.Helper()
	o := Options{FS: fs, SegmentBytes: preallocSeg, Logger: quiet, Preallocate: true, inlineSpare: true}
	if logger != nil {
		o.Logger = logger.logger()
	}
	l, err := Open(dir, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func fileSize(t testing.TB, fs vfs.FS, path string) int64 {
	t.Helper()
	st, err := fs.Stat(path)
	must(t, err)
	return st.Size()
}

// intoPreallocated writes committed batches until the log has rolled into a segment made from a spare
// (a new log's first segment is not preallocated; it rolls once the spare is ready). It returns the
// next index.
func intoPreallocated(t *testing.T, l *Log, m *model) uint64 {
	t.Helper()
	next := uint64(1)
	for l.Stats().SpareRolls == 0 {
		if next > 2000 {
			t.Fatalf("no roll into a spare: %+v", l.Stats())
		}
		run(t, l, m, []op{appendOp(next, next+4, 1, 500), hsOp(1, 1, next+3), syncOp})
		next += 4
	}
	return next
}

// The life of a preallocating log: the first segment rolls into a spare as soon as one is ready, the
// commits after that overwrite preallocated space (the file does not grow), a full segment rolls into
// the next spare, sealed segments end at their last record, a reopen keeps the zero-filled remainder
// (no torn tail, no copy), and a log opened without Preallocate (an older build) cuts it as a torn tail.
func TestPreallocRolls(t *testing.T) {
	fs := vfs.NewMem()
	l := openPrealloc(t, fs, "/log", nil)
	m := newModel()
	next := intoPreallocated(t, l, m)
	act := "/log/" + segFiles(t, fs, "/log")[len(segFiles(t, fs, "/log"))-1]
	if got := fileSize(t, fs, act); got != preallocSeg {
		t.Fatalf("the new segment is %d bytes, want the spare's %d", got, preallocSeg)
	}
	// Commits inside the preallocated space do not change the file's size.
	for i := 0; i < 8; i++ {
		run(t, l, m, []op{appendOp(next, next+2, 1, 300), hsOp(1, 1, next+1), syncOp})
		next += 2
		if got := fileSize(t, fs, act); got != preallocSeg {
			t.Fatalf("after commit %d the active segment is %d bytes, want %d", i, got, preallocSeg)
		}
	}
	// Fill a few segments: every roll after the first finds a spare ready.
	for l.Stats().SpareRolls < 4 {
		run(t, l, m, []op{appendOp(next, next+8, 1, 700), hsOp(1, 1, next+7), syncOp})
		next += 8
	}
	if st := l.Stats(); st.Rolls != st.SpareRolls || st.Spares < st.SpareRolls {
		t.Fatalf("rolls without a spare: %+v", st)
	}
	// One more batch above the commit, so the reopen has an uncommitted tail to keep.
	run(t, l, m, []op{appendOp(next, next+3, 1, 100), syncOp})
	must(t, l.Close())
	for _, n := range mustList(t, fs, "/log") {
		if n == spareName {
			t.Fatalf("Close left the spare behind")
		}
	}

	rep, err := CheckOptions("/log", Options{FS: fs, Preallocate: true})
	if err != nil || rep.TornTail != nil || rep.LastIndex != m.last {
		t.Fatalf("Check: %v\n%s", err, rep.String())
	}
	for i, s := range rep.Segments {
		last := i == len(rep.Segments)-1
		if !last && (s.ValidEnd != s.Size || s.Preallocated != 0) {
			t.Fatalf("sealed segment with room: %+v", s)
		}
		if last && (s.Preallocated == 0 || s.ValidEnd+s.Preallocated != s.Size || s.BadOffset != -1) {
			t.Fatalf("active segment: %+v", s)
		}
	}
	if !strings.Contains(rep.String(), "preallocated") {
		t.Fatalf("report:\n%s", rep.String())
	}
	act = rep.Segments[len(rep.Segments)-1].File
	size := fileSize(t, fs, act)

	var c captureLogger
	l = openPrealloc(t, fs, "/log", &c)
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	if strings.Contains(c.String(), "torn") || fileSize(t, fs, act) != size {
		t.Fatalf("reopen touched the preallocated remainder (size %d, was %d): %s", fileSize(t, fs, act), size, c.String())
	}
	run(t, l, m, []op{appendOp(m.last+1, m.last+3, 2, 100), hsOp(2, 1, m.last+2), syncOp})
	if fileSize(t, fs, act) != size {
		t.Fatalf("a commit after the reopen grew the file")
	}
	must(t, l.Close())

	// An older build (no Preallocate) cuts the remainder as a torn tail and loses nothing.
	if rep, err := Check(fs, "/log"); err != nil || rep.TornTail == nil || rep.TornTail.Fill ||
		rep.TornTail.Dropped != rep.Segments[len(rep.Segments)-1].Size-rep.Segments[len(rep.Segments)-1].ValidEnd {
		t.Fatalf("Check without Preallocate: %v\n%s", err, rep.String())
	}
	l = mustOpen(t, fs, "/log", preallocSeg)
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	must(t, l.Close())
	if rep, err := Check(fs, "/log"); err != nil || rep.TornTail != nil {
		t.Fatalf("Check after the cut: %v\n%s", err, rep.String())
	}
}

func mustList(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	must(t, err)
	return names
}

// preallocFixture writes a log whose active segment is preallocated and holds, after the records the
// roll copied into it:
//
//	batch A: entries n..n+9, hardstate commit n+9
//	batch B: entries n+10..n+19, hardstate commit n+19
//	batch C: entries n+20..n+24 (above the commit)
//
// It returns the segment's path, its records, the end of its last record, and the model.
func preallocFixture(t *testing.T, fs vfs.FS) (string, []recInfo, int64, *model, uint64) {
	l := openPrealloc(t, fs, "/log", nil)
	m := newModel()
	n := intoPreallocated(t, l, m)
	run(t, l, m, []op{appendOp(n, n+10, 1, 100), hsOp(1, 1, n+9), syncOp,
		appendOp(n+10, n+20, 1, 100), hsOp(1, 1, n+19), syncOp,
		appendOp(n+20, n+25, 1, 100), syncOp})
	must(t, l.Close())
	files := segFiles(t, fs, "/log")
	path := "/log/" + files[len(files)-1]
	recs := records(t, fs, path)
	end := recs[len(recs)-1].off + recs[len(recs)-1].size
	return path, recs, end, m, n
}

// nonZeroEndOf is what recovery computes: the end of the last non-zero byte at or after off.
func nonZeroEndOf(b []byte, off int64) int64 {
	for i := int64(len(b)) - 1; i >= off; i-- {
		if b[i] != 0 {
			return i + 1
		}
	}
	return off
}

// Recovery in a preallocated segment: the zero-filled remainder is the clean end; anything else after
// the last valid record is judged by the same rules as before (torn tail or corruption), and a torn
// tail is overwritten with zeros in place, the file keeping its size.
func TestPreallocTail(t *testing.T) {
	type damage func(t *testing.T, b []byte, recs []recInfo, end int64, n uint64) ([]byte, int64)
	cases := []struct {
		name    string
		damage  damage
		corrupt string // substring of the error; "" when Open must succeed
		torn    bool   // Open reports and zeroes a torn tail
		keep    uint64 // entries kept above n+19 (the commit) after Open
	}{
		{"clean preallocated end", func(t *testing.T, b []byte, _ []recInfo, end int64, _ uint64) ([]byte, int64) {
			return b, end
		}, "", false, 5},
		{"torn record followed by zeros", func(t *testing.T, b []byte, recs []recInfo, end int64, n uint64) ([]byte, int64) {
			off := entryOff(t, recs, n+23)
			clear(b[off+12 : end])
			return b, off
		}, "", true, 3},
		{"torn first record of the last write", func(t *testing.T, b []byte, recs []recInfo, end int64, n uint64) ([]byte, int64) {
			off := nthOff(t, recs, recBatch, 3) // batch records: the roll's, then A, B, C
			b[off+10] ^= 0x40
			return b, off
		}, "", true, 0},
		{"zero hole then a stray record in preallocated space", func(t *testing.T, b []byte, _ []recInfo, end int64, n uint64) ([]byte, int64) {
			stray := appendEntryRecord(nil, &Entry{Index: n + 25, Term: 1, Data: []byte("stray")})
			copy(b[end+4096:], stray)
			return b, end
		}, "", true, 5},
		{"garbage at the end of the preallocated space", func(t *testing.T, b []byte, _ []recInfo, end int64, _ uint64) ([]byte, int64) {
			for i := len(b) - 300; i < len(b); i++ {
				b[i] = byte(i*7 + 13)
			}
			return b, end
		}, "", true, 5},
		// A later write shows the zeros at the end of the records had been synced: a lost write.
		{"zero hole then a later batch in preallocated space", func(t *testing.T, b []byte, recs []recInfo, end int64, _ uint64) ([]byte, int64) {
			seq := decodeBatchSeq(t, b, nthOff(t, recs, recBatch, 3)) // batch C, the last write
			copy(b[end+4096:], appendBatchRecord(nil, seq+1))
			return b, end
		}, "later write", false, 0},
		{"damaged synced entry", func(t *testing.T, b []byte, recs []recInfo, _ int64, n uint64) ([]byte, int64) {
			off := entryOff(t, recs, n+4)
			b[off+30] ^= 0x40
			return b, off
		}, "later write", false, 0},
		// Synced records read as zeros (lost) before later synced ones: data, not preallocated space.
		{"zeroed synced batch before a later one", func(t *testing.T, b []byte, recs []recInfo, _ int64, _ uint64) ([]byte, int64) {
			from, to := nthOff(t, recs, recBatch, 2), nthOff(t, recs, recBatch, 3) // batch B
			clear(b[from:to])
			return b, from
		}, "later write", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			path, recs, end, m, n := preallocFixture(t, fs)
			b, badOff := tc.damage(t, readFile(t, fs, path), recs, end, n)
			size := int64(len(b))
			if size != preallocSeg {
				t.Fatalf("the active segment is %d bytes, want %d", size, preallocSeg)
			}
			writeFile(t, fs, path, b)
			tornEnd := nonZeroEndOf(b, badOff)

			rep, checkErr := CheckOptions("/log", Options{FS: fs, Preallocate: true})
			if got := readFile(t, fs, path); string(got) != string(b) {
				t.Fatalf("Check changed the file")
			}
			var c captureLogger
			l, err := Open("/log", Options{FS: fs, SegmentBytes: preallocSeg, Logger: c.logger(), Preallocate: true, inlineSpare: true})
			if tc.corrupt != "" {
				if err == nil {
					l.Close()
					t.Fatalf("Open succeeded on a corrupt log")
				}
				var ce *CorruptionError
				if !errors.As(err, &ce) || ce.File != path || ce.Offset != badOff || !strings.Contains(err.Error(), tc.corrupt) {
					t.Fatalf("Open: %v; want a CorruptionError for %s at offset %d: %s", err, path, badOff, tc.corrupt)
				}
				if checkErr == nil || rep.Corruption == nil || *rep.Corruption != *ce {
					t.Fatalf("Check: %v, report corruption %+v; want %+v", checkErr, rep.Corruption, ce)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer l.Close()
			wantLast := n + 19 + tc.keep
			last := rep.Segments[len(rep.Segments)-1]
			if tc.torn {
				if checkErr != nil || rep.TornTail == nil || !rep.TornTail.Fill || rep.TornTail.Offset != badOff ||
					rep.TornTail.Dropped != tornEnd-badOff || rep.LastIndex != wantLast {
					t.Fatalf("Check: %v, torn %+v, last %d; want a torn tail at %d of %d bytes, last %d\n%s", checkErr,
						rep.TornTail, rep.LastIndex, badOff, tornEnd-badOff, wantLast, rep.String())
				}
				if !strings.Contains(c.String(), "torn tail") || !strings.Contains(c.String(), fmt.Sprintf("offset=%d", badOff)) {
					t.Fatalf("recovery did not log the repair: %s", c.String())
				}
			} else if checkErr != nil || rep.TornTail != nil || last.Preallocated != size-badOff || rep.LastIndex != wantLast {
				t.Fatalf("Check: %v; want a clean end at %d with %d bytes preallocated, last %d\n%s", checkErr, badOff,
					size-badOff, wantLast, rep.String())
			}
			m.truncate(wantLast + 1)
			if d := m.diff(l); d != "" {
				t.Fatal(d)
			}
			// The file keeps its size and everything after the last kept record is zero again.
			got := readFile(t, fs, path)
			if int64(len(got)) != size || nonZeroEndOf(got, badOff) != badOff {
				t.Fatalf("after recovery: %d bytes, non-zero up to %d; want %d bytes, zero from %d", len(got),
					nonZeroEndOf(got, badOff), size, badOff)
			}
			// The repaired log is clean and keeps working inside its preallocated space.
			must(t, l.Append(ents(wantLast+1, wantLast+3, 2, 10)))
			must(t, l.Sync())
			must(t, l.Close())
			if rep, err := CheckOptions("/log", Options{FS: fs, Preallocate: true}); err != nil || rep.TornTail != nil ||
				rep.LastIndex != wantLast+2 || fileSize(t, fs, path) != size {
				t.Fatalf("Check after repair: %v\n%s", err, rep.String())
			}
			l = openPrealloc(t, fs, "/log", nil)
		})
	}
}

func decodeBatchSeq(t *testing.T, b []byte, off int64) uint64 {
	t.Helper()
	rd := newFileReader(vfs.NewMemFile(b), int64(len(b)), readWindow)
	rec, reason, err := rd.readRecord(off)
	if err != nil || reason != "" || rec.typ != recBatch {
		t.Fatalf("no batch record at %d: %v %s", off, err, reason)
	}
	return binary.LittleEndian.Uint64(rec.payload)
}

// A spare left by a crash is a leftover: Check lists it, Open removes it.
func TestPreallocLeftoverSpare(t *testing.T) {
	fs := vfs.NewMem()
	l := openPrealloc(t, fs, "/log", nil)
	m := newModel()
	run(t, l, m, []op{appendOp(1, 5, 1, 100), hsOp(1, 1, 4), syncOp})
	must(t, l.Close())
	writeFile(t, fs, "/log/"+spareName, appendEntryRecord(make([]byte, 100), &Entry{Index: 5, Term: 1}))
	rep, err := CheckOptions("/log", Options{FS: fs, Preallocate: true})
	if err != nil || len(rep.Leftovers) != 1 || rep.Leftovers[0] != "/log/"+spareName {
		t.Fatalf("Check: %v\n%s", err, rep.String())
	}
	l = openPrealloc(t, fs, "/log", nil)
	defer l.Close()
	if _, err := fs.Stat("/log/" + spareName); err == nil {
		t.Fatalf("Open kept the leftover spare")
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
}

// The spare prepared in the background (as the server runs it) while commits and readers go on: every
// roll after the first spare finds one ready or falls back to a plain segment, nothing is lost, and
// Close leaves no spare behind. Run with -race, it checks the preparer's hand-over under mu.
func TestPreallocBackground(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("/log", Options{FS: fs, SegmentBytes: preallocSeg, Logger: quiet, Preallocate: true})
	must(t, err)
	m := newModel()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a reader, as raft and the applier are
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if last := l.LastIndex(); last > 0 {
				if _, err := l.Entries(l.FirstIndex(), last+1, 1<<20); err != nil && !errors.Is(err, ErrCompacted) {
					t.Errorf("Entries: %v", err)
					return
				}
			}
		}
	}()
	next := uint64(1)
	deadline := time.Now().Add(20 * time.Second)
	for l.Stats().SpareRolls < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no spare rolls in time: %+v", l.Stats())
		}
		run(t, l, m, []op{appendOp(next, next+4, 1, 600), hsOp(1, 1, next+3), syncOp})
		next += 4
		if next%64 == 1 {
			time.Sleep(time.Millisecond) // let the preparer run
		}
	}
	close(stop)
	<-done
	must(t, l.Close())
	if _, err := fs.Stat("/log/" + spareName); err == nil {
		t.Fatalf("Close left the spare behind")
	}
	l = openPrealloc(t, fs, "/log", nil)
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
}

// Large Syncs (a bulk load's groups) make the log stop preparing spares, whose zeros would cost more
// than they save, and grow its segments by appending; once the Syncs are small again (OLTP commits) it
// prepares a spare and rolls into it. Nothing written in either phase is lost.
func TestPreallocSkippedForLargeSyncs(t *testing.T) {
	fs := vfs.NewMem()
	const segBytes = 1 << 20
	open := func() *Log {
		l, err := Open("/log", Options{FS: fs, SegmentBytes: segBytes, Logger: quiet, Preallocate: true, inlineSpare: true})
		must(t, err)
		return l
	}
	l := open()
	m := newModel()
	next := uint64(1)
	// 100 KiB per Sync, well over spareMaxSyncBytes, for four segments' worth.
	for l.Stats().BytesWritten < 4*segBytes {
		run(t, l, m, []op{appendOp(next, next+100, 1, 1024), hsOp(1, 1, next+99), syncOp})
		next += 100
	}
	// The average starts at zero, so the first segment may still get its spare before the first
	// few Syncs have moved it past the threshold; none after that.
	large := l.Stats()
	if large.Spares > 1 || large.Rolls-large.SpareRolls < 2 {
		t.Fatalf("after large Syncs: %+v (want rolls into appended segments, at most the first spare)", large)
	}
	// Small Syncs: the average falls below the threshold within a few, then a spare is prepared and the
	// segment without preallocated room rolls into it.
	for i := 0; l.Stats().SpareRolls == large.SpareRolls; i++ {
		if i > 200 {
			t.Fatalf("no roll into a spare after %d small Syncs: %+v", i, l.Stats())
		}
		run(t, l, m, []op{appendOp(next, next+2, 1, 300), hsOp(1, 1, next+1), syncOp})
		next += 2
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	must(t, l.Close())
	if rep, err := CheckOptions("/log", Options{FS: fs, Preallocate: true}); err != nil || rep.TornTail != nil || rep.LastIndex != m.last {
		t.Fatalf("Check: %v\n%s", err, rep.String())
	}
	l = open()
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
}
