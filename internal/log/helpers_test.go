package log

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// captureLogger records log output, for asserting what recovery reported.
type captureLogger struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captureLogger) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *captureLogger) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func (c *captureLogger) logger() *slog.Logger { return slog.New(slog.NewTextHandler(c, nil)) }

// payload makes deterministic data that names its entry, so a misplaced entry is visible.
func payload(i, term uint64, n int) []byte {
	if n < 0 {
		return nil
	}
	s := fmt.Sprintf("e%d/t%d;", i, term)
	b := []byte(strings.Repeat(s, n/len(s)+1))[:n]
	return b
}

func ents(lo, hi, term uint64, size int) []Entry {
	var out []Entry
	for i := lo; i < hi; i++ {
		out = append(out, Entry{Index: i, Term: term, Type: uint8(i % 3), Data: payload(i, term, size)})
	}
	return out
}

func mustOpen(t testing.TB, fs vfs.FS, dir string, segBytes int64) *Log {
	t.Helper()
	l, err := Open(dir, Options{FS: fs, SegmentBytes: segBytes, Logger: quiet})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// model is what the log should hold: entries by index (never forgotten on purge, so any first index can
// be checked) and the HardState.
type model struct {
	ents map[uint64]Entry
	last uint64
	hs   HardState
}

func newModel() *model { return &model{ents: map[uint64]Entry{}} }

func (m *model) clone() *model {
	c := &model{ents: make(map[uint64]Entry, len(m.ents)), last: m.last, hs: m.hs}
	for k, v := range m.ents {
		c.ents[k] = v
	}
	return c
}

func (m *model) truncate(k uint64) {
	for i := k; i <= m.last; i++ {
		delete(m.ents, i)
	}
	m.last = k - 1
}

func (m *model) append(es []Entry) {
	if len(es) == 0 {
		return
	}
	if es[0].Index <= m.last {
		m.truncate(es[0].Index)
	}
	for _, e := range es {
		m.ents[e.Index] = e
		m.last = e.Index
	}
}

func sameEntry(a, b Entry) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type && bytes.Equal(a.Data, b.Data)
}

// diff compares a log with a model over [FirstIndex, LastIndex] (and Term(FirstIndex-1)); "" if equal.
func (m *model) diff(l *Log) string {
	first, last := l.FirstIndex(), l.LastIndex()
	if last != m.last {
		return fmt.Sprintf("last index %d, want %d", last, m.last)
	}
	if hs := l.HardState(); hs != m.hs {
		return fmt.Sprintf("hardstate %+v, want %+v", hs, m.hs)
	}
	if first > 1 {
		t, err := l.Term(first - 1)
		if err != nil {
			return fmt.Sprintf("Term(first-1=%d): %v", first-1, err)
		}
		if want := m.ents[first-1].Term; t != want {
			return fmt.Sprintf("Term(%d) = %d, want %d", first-1, t, want)
		}
	}
	if first > last {
		return ""
	}
	got, err := l.Entries(first, last+1, ^uint64(0))
	if err != nil {
		return fmt.Sprintf("Entries(%d, %d): %v", first, last+1, err)
	}
	if uint64(len(got)) != last+1-first {
		return fmt.Sprintf("Entries(%d, %d) returned %d entries", first, last+1, len(got))
	}
	for k, e := range got {
		want, ok := m.ents[first+uint64(k)]
		if !ok || !sameEntry(e, want) {
			return fmt.Sprintf("entry %d = {%d %d %d %q}, want %+v", first+uint64(k), e.Index, e.Term, e.Type,
				e.Data, want)
		}
		if t, err := l.Term(e.Index); err != nil || t != e.Term {
			return fmt.Sprintf("Term(%d) = %d, %v; want %d", e.Index, t, err, e.Term)
		}
	}
	return ""
}

// powerFS wraps a crashable MemFS and cuts the power at the n-th fsync (of a file or a directory): that
// fsync and every later mutation fail, as they would on a machine that is going down. What was written
// before but not synced stays in the MemFS as unsynced data, for CrashClone to keep or lose at random.
type powerFS struct {
	vfs.FS
	mu     sync.Mutex
	syncs  int // fsyncs so far
	failAt int // 0: never
	dead   bool
}

var errPowerLost = errors.New("power lost")

func (p *powerFS) alive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return errPowerLost
	}
	return nil
}

func (p *powerFS) sync() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return errPowerLost
	}
	p.syncs++
	if p.failAt > 0 && p.syncs >= p.failAt {
		p.dead = true
		return errPowerLost
	}
	return nil
}

func (p *powerFS) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

func (p *powerFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &powerFile{File: f, p: p}, nil
}

func (p *powerFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	return p.wrap(p.FS.Create(name, c))
}

func (p *powerFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return p.wrap(p.FS.Open(name, opts...))
}

func (p *powerFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	return p.wrap(p.FS.OpenReadWrite(name, c, opts...))
}

func (p *powerFS) OpenDir(name string) (vfs.File, error) { return p.wrap(p.FS.OpenDir(name)) }

func (p *powerFS) Remove(name string) error {
	if err := p.alive(); err != nil {
		return err
	}
	return p.FS.Remove(name)
}

func (p *powerFS) Rename(a, b string) error {
	if err := p.alive(); err != nil {
		return err
	}
	return p.FS.Rename(a, b)
}

func (p *powerFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := p.alive(); err != nil {
		return err
	}
	return p.FS.MkdirAll(dir, perm)
}

type powerFile struct {
	vfs.File
	p *powerFS
}

func (f *powerFile) Write(b []byte) (int, error) {
	if err := f.p.alive(); err != nil {
		return 0, err
	}
	return f.File.Write(b)
}

func (f *powerFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.p.alive(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(b, off)
}

func (f *powerFile) Sync() error {
	if err := f.p.sync(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *powerFile) SyncData() error {
	if err := f.p.sync(); err != nil {
		return err
	}
	return f.File.SyncData()
}

// readFile returns a file's bytes.
func readFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	must(t, err)
	defer f.Close()
	st, err := f.Stat()
	must(t, err)
	b := make([]byte, st.Size())
	if n, err := f.ReadAt(b, 0); n != len(b) {
		t.Fatalf("read %s: %d of %d bytes: %v", path, n, len(b), err)
	}
	return b
}

// writeFile replaces a file's bytes.
func writeFile(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	must(t, err)
	_, err = f.WriteAt(b, 0)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
}

// recInfo is one record's place in a segment file.
type recInfo struct {
	off   int64
	size  int64
	typ   byte
	index uint64 // entries
}

// records lists a segment file's valid records.
func records(t testing.TB, fs vfs.FS, path string) []recInfo {
	t.Helper()
	b := readFile(t, fs, path)
	rd := newFileReader(vfs.NewMemFile(b), int64(len(b)), readWindow)
	var out []recInfo
	for off := int64(segHeaderSize); ; {
		rec, reason, err := rd.readRecord(off)
		if err == io.EOF || reason != "" {
			return out
		}
		must(t, err)
		ri := recInfo{off: off, size: rec.size, typ: rec.typ}
		if rec.typ == recEntry {
			ri.index = decodeEntry(rec.payload).Index
		}
		out = append(out, ri)
		off += rec.size
	}
}

func segFiles(t testing.TB, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	must(t, err)
	var out []string
	for _, n := range names {
		if _, ok := parseSegName(n); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
