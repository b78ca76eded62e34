package log

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// op is one step of a scripted scenario.
type op struct {
	app   []Entry
	hs    *HardState
	sync  bool
	purge uint64
}

func appendOp(lo, hi, term uint64, size int) op { return op{app: ents(lo, hi, term, size)} }
func hsOp(term, vote, commit uint64) op {
	return op{hs: &HardState{Term: term, Vote: vote, Commit: commit}}
}

var syncOp = op{sync: true}

// run applies ops to the log and the model.
func run(t *testing.T, l *Log, m *model, ops []op) {
	t.Helper()
	for _, o := range ops {
		switch {
		case o.app != nil:
			must(t, l.Append(o.app))
			m.append(o.app)
		case o.hs != nil:
			must(t, l.SetHardState(*o.hs))
			m.hs = *o.hs
		case o.sync:
			must(t, l.Sync())
		case o.purge > 0:
			must(t, l.Purge(o.purge))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	big := []Entry{{Index: 1, Term: 1, Data: payload(1, 1, 3<<20)}}
	cases := []struct {
		name     string
		segBytes int64
		ops      []op
	}{
		{"empty", 0, nil},
		{"one entry", 0, []op{appendOp(1, 2, 1, 200), syncOp}},
		{"empty data", 0, []op{appendOp(1, 4, 1, 0), appendOp(4, 6, 1, -1), syncOp}},
		{"many batches", 0, []op{appendOp(1, 11, 1, 100), hsOp(1, 1, 10), syncOp,
			appendOp(11, 75, 2, 300), hsOp(2, 1, 60), syncOp, appendOp(75, 76, 2, 1), syncOp}},
		{"hardstate only", 0, []op{hsOp(5, 3, 0), syncOp}},
		{"big entry", 0, []op{{app: big}, hsOp(1, 1, 1), syncOp, appendOp(2, 3, 1, 10), syncOp}},
		{"small segments", 2048, []op{appendOp(1, 30, 1, 100), hsOp(1, 1, 29), syncOp,
			appendOp(30, 60, 1, 100), hsOp(1, 1, 59), syncOp, appendOp(60, 90, 2, 100), hsOp(2, 1, 85), syncOp,
			appendOp(90, 91, 2, 10), syncOp}},
		{"append after reopen", 0, []op{appendOp(1, 5, 1, 10), syncOp}},
		{"close syncs", 0, []op{appendOp(1, 5, 1, 10), hsOp(1, 1, 4)}}, // no Sync: Close does it
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			l := mustOpen(t, fs, "/data/log", tc.segBytes)
			m := newModel()
			run(t, l, m, tc.ops)
			if d := m.diff(l); d != "" {
				t.Fatalf("before reopen: %s", d)
			}
			must(t, l.Close())
			l = mustOpen(t, fs, "/data/log", tc.segBytes)
			if d := m.diff(l); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
			// The reopened log keeps going.
			more := ents(m.last+1, m.last+4, max(m.hs.Term, 1)+1, 50)
			must(t, l.Append(more))
			m.append(more)
			must(t, l.Sync())
			must(t, l.Close())
			l = mustOpen(t, fs, "/data/log", tc.segBytes)
			defer l.Close()
			if d := m.diff(l); d != "" {
				t.Fatalf("after second reopen: %s", d)
			}
			if rep, err := Check(fs, "/data/log"); err != nil || rep.TornTail != nil {
				t.Fatalf("Check: %v, %+v", err, rep)
			}
		})
	}
}

func TestOverwriteSuffix(t *testing.T) {
	cases := []struct {
		name string
		ops  []op
	}{
		{"synced then overwrite", []op{appendOp(1, 11, 1, 50), hsOp(1, 0, 3), syncOp, appendOp(6, 9, 2, 70), syncOp}},
		{"overwrite in the same batch", []op{appendOp(1, 11, 1, 50), appendOp(4, 6, 2, 20), syncOp}},
		{"overwrite twice", []op{appendOp(1, 11, 1, 50), syncOp, appendOp(8, 12, 2, 20), syncOp,
			appendOp(5, 7, 3, 20), syncOp}},
		{"overwrite everything", []op{appendOp(1, 5, 1, 10), syncOp, appendOp(1, 3, 2, 10), syncOp}},
		{"overwrite the last entry", []op{appendOp(1, 5, 1, 10), syncOp, appendOp(4, 5, 2, 11), syncOp}},
		{"overwrite after hardstate", []op{appendOp(1, 11, 1, 50), hsOp(1, 1, 5), syncOp,
			appendOp(6, 7, 2, 5), hsOp(2, 2, 6), syncOp}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			l := mustOpen(t, fs, "/log", 0)
			m := newModel()
			run(t, l, m, tc.ops)
			if d := m.diff(l); d != "" {
				t.Fatalf("before reopen: %s", d)
			}
			if l.Stats().Truncations == 0 {
				t.Fatalf("no truncation counted")
			}
			must(t, l.Close())
			l = mustOpen(t, fs, "/log", 0)
			defer l.Close()
			if d := m.diff(l); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
		})
	}
}

// A raft follower's Ready can overwrite a suffix from k and carry a commit index that already covers the
// new entries; the caller sets the HardState before appending. That must work, and survive a reopen.
func TestFollowerOverwriteWithCommitInSameReady(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 0)
	m := newModel()
	run(t, l, m, []op{appendOp(1, 11, 1, 20), hsOp(1, 1, 5), syncOp,
		hsOp(2, 0, 8), appendOp(6, 9, 2, 30), syncOp})
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	// Now 1..8 are committed and written: overwriting 8 is refused, 9 is fine.
	if err := l.Append(ents(8, 9, 3, 1)); err == nil || !strings.Contains(err.Error(), "committed") {
		t.Fatalf("overwrite of a committed entry: %v", err)
	}
	must(t, l.Close())
	l = mustOpen(t, fs, "/log", 0)
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
}

func TestAppendErrors(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 2048)
	defer l.Close()
	for i := uint64(1); i <= 100; i += 10 {
		must(t, l.Append(ents(i, i+10, 1, 100)))
		must(t, l.SetHardState(HardState{Term: 1, Commit: i + 9}))
		must(t, l.Sync())
	}
	must(t, l.Purge(30))
	first := l.FirstIndex()
	if first == 1 {
		t.Fatalf("nothing purged")
	}
	must(t, l.Append(ents(101, 106, 2, 10)))
	must(t, l.SetHardState(HardState{Term: 2, Commit: 102}))
	must(t, l.Sync())
	cases := []struct {
		name string
		ents []Entry
		want string
	}{
		{"gap", ents(108, 109, 2, 1), "gap"},
		{"not contiguous", []Entry{{Index: 106, Term: 2}, {Index: 108, Term: 2}}, "contiguous"},
		{"index 0", []Entry{{Index: 0}}, "index 0"},
		{"overwrites committed", ents(102, 103, 3, 1), "committed"},
		{"below first", ents(first-1, first, 3, 1), "compaction"},
		{"too big", []Entry{{Index: 106, Term: 2, Data: make([]byte, MaxEntryData+1)}}, "limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Append(tc.ents)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Append: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if !errors.Is(l.Append(ents(first-1, first, 3, 1)), ErrCompacted) {
		t.Fatalf("Append below first is not ErrCompacted")
	}
	// The log is still usable.
	must(t, l.Append(ents(103, 104, 3, 1)))
	must(t, l.Sync())
	if l.LastIndex() != 103 {
		t.Fatalf("last %d", l.LastIndex())
	}
}

func TestRollAndPurge(t *testing.T) {
	fs := vfs.NewMem()
	const dir = "/log"
	l := mustOpen(t, fs, dir, 4096)
	m := newModel()
	// 40 batches of 5 entries of ~150 bytes: ~30 KiB, so several segments.
	for b := uint64(0); b < 40; b++ {
		lo := b*5 + 1
		run(t, l, m, []op{appendOp(lo, lo+5, 1+b/10, 150), hsOp(1+b/10, 1, lo+4), syncOp})
	}
	st := l.Stats()
	if st.Segments < 4 || st.Rolls != st.Segments-1 {
		t.Fatalf("stats after rolling: %+v", st)
	}
	if n := len(segFiles(t, fs, dir)); uint64(n) != st.Segments {
		t.Fatalf("%d segment files, stats say %d", n, st.Segments)
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}

	// Purge below an index in the middle: only whole segments below it go.
	files := segFiles(t, fs, dir)
	third, _ := parseSegName(files[2])
	must(t, l.Purge(third+1))
	if l.FirstIndex() != third {
		t.Fatalf("first %d after Purge(%d), want %d (start of the third segment)", l.FirstIndex(), third+1, third)
	}
	if got := len(segFiles(t, fs, dir)); got != len(files)-2 {
		t.Fatalf("%d files after purge, want %d", got, len(files)-2)
	}
	if tm, err := l.Term(third - 1); err != nil || tm != m.ents[third-1].Term {
		t.Fatalf("Term(first-1) = %d, %v", tm, err)
	}
	if _, err := l.Term(third - 2); err != ErrCompacted {
		t.Fatalf("Term(first-2): %v", err)
	}
	if _, err := l.Entries(third-1, third+1, 1<<20); err != ErrCompacted {
		t.Fatalf("Entries below first: %v", err)
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	// Purging never removes the active segment.
	must(t, l.Purge(1<<40))
	if got := len(segFiles(t, fs, dir)); got != 1 {
		t.Fatalf("%d files after purging everything", got)
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	first := l.FirstIndex()
	must(t, l.Close())
	l = mustOpen(t, fs, dir, 4096)
	defer l.Close()
	if l.FirstIndex() != first {
		t.Fatalf("first %d after reopen, want %d", l.FirstIndex(), first)
	}
	if d := m.diff(l); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
}

// A roll keeps uncommitted entries in the active segment, so raft can still overwrite them; and it waits
// while nothing in the active segment is committed.
func TestRollUncommittedTail(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 2048)
	m := newModel()
	run(t, l, m, []op{appendOp(1, 40, 1, 100), syncOp})
	if n := len(segFiles(t, fs, "/log")); n != 1 {
		t.Fatalf("rolled with nothing committed: %d segments", n)
	}
	run(t, l, m, []op{hsOp(1, 1, 30), appendOp(40, 41, 1, 100), syncOp})
	files := segFiles(t, fs, "/log")
	if len(files) != 2 || files[1] != segName(31) {
		t.Fatalf("segments %v, want a second one starting at 31", files)
	}
	// Overwrite entries 35.. which were written in both segments: the truncation is in the active one.
	run(t, l, m, []op{appendOp(35, 37, 2, 60), hsOp(2, 2, 30), syncOp})
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	must(t, l.Close())
	l = mustOpen(t, fs, "/log", 2048)
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
	// Purge(31) drops the first segment; the term of 30 is kept.
	must(t, l.Purge(31))
	if l.FirstIndex() != 31 {
		t.Fatalf("first %d", l.FirstIndex())
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
}

func TestTermAndEntriesBounds(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 1024)
	defer l.Close()
	if l.FirstIndex() != 1 || l.LastIndex() != 0 {
		t.Fatalf("empty log: first %d last %d", l.FirstIndex(), l.LastIndex())
	}
	if tm, err := l.Term(0); tm != 0 || err != nil {
		t.Fatalf("Term(0) on an empty log: %d, %v", tm, err)
	}
	if _, err := l.Term(1); err != ErrUnavailable {
		t.Fatalf("Term(1) on an empty log: %v", err)
	}
	if es, err := l.Entries(1, 1, 100); len(es) != 0 || err != nil {
		t.Fatalf("Entries(1,1) on an empty log: %v, %v", es, err)
	}
	for b := uint64(0); b < 10; b++ {
		lo := b*10 + 1
		must(t, l.Append(ents(lo, lo+10, b+1, 40)))
		must(t, l.SetHardState(HardState{Term: b + 1, Commit: lo + 9}))
		must(t, l.Sync())
	}
	must(t, l.Purge(25))
	first := l.FirstIndex() // a segment boundary at or below 25
	if first < 2 || first > 25 {
		t.Fatalf("first %d", first)
	}
	one := entrySize(&Entry{Index: 50, Term: 5, Type: 2, Data: make([]byte, 40)})
	termCases := []struct {
		i    uint64
		want uint64
		err  error
	}{
		{first - 2, 0, ErrCompacted},
		{first - 1, (first-2)/10 + 1, nil},
		{first, (first-1)/10 + 1, nil},
		{50, 5, nil},
		{100, 10, nil},
		{101, 0, ErrUnavailable},
		{^uint64(0), 0, ErrUnavailable},
	}
	for _, tc := range termCases {
		got, err := l.Term(tc.i)
		if got != tc.want || err != tc.err {
			t.Errorf("Term(%d) = %d, %v; want %d, %v", tc.i, got, err, tc.want, tc.err)
		}
	}
	entCases := []struct {
		lo, hi, max uint64
		n           int
		err         error
	}{
		{first - 1, first + 1, 1 << 20, 0, ErrCompacted},
		{first, first, 1 << 20, 0, nil},
		{first, 101, ^uint64(0), int(101 - first), nil},
		{50, 60, ^uint64(0), 10, nil},
		{50, 60, 0, 1, nil},         // at least one
		{50, 60, one - 1, 1, nil},   // at least one
		{50, 60, one, 1, nil},       // exactly one fits
		{50, 60, 3 * one, 3, nil},   // exactly three
		{50, 60, 3*one + 1, 3, nil}, // not quite four
		{50, 102, 1 << 20, 0, ErrUnavailable},
		{100, 101, 0, 1, nil},
		{60, 50, 1 << 20, 0, errors.New("invalid range")},
	}
	for _, tc := range entCases {
		got, err := l.Entries(tc.lo, tc.hi, tc.max)
		switch {
		case tc.err != nil && (err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.err.Error(), "log: "))):
			t.Errorf("Entries(%d, %d, %d): %v, want %v", tc.lo, tc.hi, tc.max, err, tc.err)
		case tc.err == nil && (err != nil || len(got) != tc.n):
			t.Errorf("Entries(%d, %d, %d) = %d entries, %v; want %d", tc.lo, tc.hi, tc.max, len(got), err, tc.n)
		case tc.err == nil:
			for k, e := range got {
				if e.Index != tc.lo+uint64(k) || e.Term != (e.Index-1)/10+1 {
					t.Errorf("Entries(%d, %d): entry %d is %d/%d", tc.lo, tc.hi, k, e.Index, e.Term)
				}
			}
		}
	}
}

func TestHardStatePersistence(t *testing.T) {
	cases := []struct {
		name string
		ops  []op
		want HardState
		recs uint64 // hardstate records written
	}{
		{"none", []op{appendOp(1, 3, 1, 1), syncOp}, HardState{}, 0},
		{"alone", []op{hsOp(3, 2, 0), syncOp}, HardState{3, 2, 0}, 1},
		{"last one set wins", []op{hsOp(1, 1, 0), appendOp(1, 3, 1, 1), hsOp(2, 1, 1), hsOp(2, 3, 2), syncOp},
			HardState{2, 3, 2}, 1},
		{"unchanged is not rewritten", []op{hsOp(1, 1, 0), syncOp, appendOp(1, 3, 1, 1), hsOp(1, 1, 0), syncOp},
			HardState{1, 1, 0}, 1},
		{"each sync", []op{hsOp(1, 1, 0), syncOp, appendOp(1, 3, 1, 1), hsOp(1, 1, 2), syncOp, hsOp(2, 0, 2), syncOp},
			HardState{2, 0, 2}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			l := mustOpen(t, fs, "/log", 0)
			run(t, l, newModel(), tc.ops)
			if got := l.Stats().HardStates; got != tc.recs {
				t.Errorf("%d hardstate records written, want %d", got, tc.recs)
			}
			must(t, l.Close())
			l = mustOpen(t, fs, "/log", 0)
			defer l.Close()
			if got := l.HardState(); got != tc.want {
				t.Fatalf("HardState() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// With a tiny cache, reads come from the segment files, across segments, before and after reopening.
func TestReadsFromDisk(t *testing.T) {
	defer func(v int64) { defaultCacheBytes = v }(defaultCacheBytes)
	defaultCacheBytes = 2048
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 8192)
	m := newModel()
	for b := uint64(0); b < 20; b++ {
		lo := b*10 + 1
		run(t, l, m, []op{appendOp(lo, lo+10, b/5+1, 90), hsOp(b/5+1, 1, lo+9), syncOp})
	}
	if d := m.diff(l); d != "" {
		t.Fatal(d)
	}
	if l.Stats().DiskReads == 0 || l.Stats().Segments < 2 {
		t.Fatalf("stats %+v: expected disk reads across segments", l.Stats())
	}
	// A cut by maxBytes in the disk part stops there (no cache entries after it).
	es, err := l.Entries(5, 150, 3*entrySize(&es0))
	if err != nil || len(es) != 3 || es[2].Index != 7 {
		t.Fatalf("Entries with a byte limit from disk: %d entries, %v", len(es), err)
	}
	must(t, l.Close())
	l = mustOpen(t, fs, "/log", 8192)
	defer l.Close()
	if d := m.diff(l); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
}

var es0 = Entry{Index: 5, Term: 1, Type: 2, Data: make([]byte, 90)}

// Appends, syncs, rolls and purges race with readers; run with -race.
func TestConcurrentReaders(t *testing.T) {
	defer func(v int64) { defaultCacheBytes = v }(defaultCacheBytes)
	defaultCacheBytes = 4096
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 4096)
	defer l.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				first, last := l.FirstIndex(), l.LastIndex()
				if last < first {
					continue
				}
				lo := first + rng.Uint64N(last-first+1)
				es, err := l.Entries(lo, last+1, 4096)
				if err == ErrCompacted || err == ErrUnavailable {
					continue // purged or overwritten meanwhile
				}
				if err != nil {
					errs <- err
					return
				}
				for _, e := range es {
					if string(e.Data) != string(payload(e.Index, e.Term, len(e.Data))) {
						errs <- fmt.Errorf("entry %d/%d has wrong data", e.Index, e.Term)
						return
					}
				}
				if _, err := l.Term(lo); err != nil && err != ErrCompacted && err != ErrUnavailable {
					errs <- err
					return
				}
			}
		}(uint64(r))
	}
	var next uint64 = 1
	for b := 0; b < 300; b++ {
		term := uint64(b/50 + 1)
		es := ents(next, next+3, term, 100)
		if b%7 == 6 && next > 4 {
			es = ents(next-2, next+1, term, 80) // overwrite the two uncommitted ones
		}
		must(t, l.Append(es))
		next = es[len(es)-1].Index + 1
		if b%2 == 0 {
			must(t, l.SetHardState(HardState{Term: term, Commit: next - 3}))
		}
		must(t, l.Sync())
		if b%25 == 24 {
			must(t, l.Purge(next-20))
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestClosed(t *testing.T) {
	fs := vfs.NewMem()
	l := mustOpen(t, fs, "/log", 0)
	must(t, l.Append(ents(1, 3, 1, 1)))
	must(t, l.Close())
	must(t, l.Close())
	if err := l.Append(ents(3, 4, 1, 1)); err != ErrClosed {
		t.Fatalf("Append after Close: %v", err)
	}
	if _, err := l.Entries(1, 2, 10); err != ErrClosed {
		t.Fatalf("Entries after Close: %v", err)
	}
	if err := l.Sync(); err != ErrClosed {
		t.Fatalf("Sync after Close: %v", err)
	}
	// The directory lock was released.
	l = mustOpen(t, fs, "/log", 0)
	defer l.Close()
	if _, err := Open("/log", Options{FS: fs, Logger: quiet}); err == nil {
		t.Fatalf("a second Open of a locked log succeeded")
	}
}
