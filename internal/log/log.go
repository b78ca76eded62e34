package log

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Entry is one raft log entry. Type is raft's entry type (0 normal, 1 conf change, ...), opaque here.
type Entry struct {
	Index, Term uint64
	Type        uint8
	Data        []byte
}

// HardState is raft's durable state: the current term, the vote in it, and the commit index.
type HardState struct{ Term, Vote, Commit uint64 }

// Options configure Open.
type Options struct {
	FS           vfs.FS // nil: vfs.Default
	SegmentBytes int64  // roll to a new segment past this size; 0: 64 MiB
	Logger       *slog.Logger
	// Preallocate writes each segment's space before the log needs it: a background goroutine
	// prepares a zero-filled, synced spare file of SegmentBytes, and the next roll writes the new
	// segment over it. Appends then overwrite blocks that are already allocated and written, so the
	// fdatasync of a commit has no file size or extent change to commit (on ext4, no journal
	// transaction). Recovery treats a zero-filled remainder of the last segment as its clean end and
	// overwrites a torn tail with zeros instead of cutting the file. The format is unchanged: a log
	// opened without Preallocate cuts the zero-filled remainder as a torn tail. The server turns it
	// on; it is off by default so in-memory test logs do not hold a segment's worth of zeros.
	Preallocate bool

	// inlineSpare prepares the spare inside Sync instead of in the background (tests: a crash trial's
	// fsyncs are counted, so their order must not depend on goroutine scheduling).
	inlineSpare bool
}

var (
	// ErrCompacted: the index is below FirstIndex-1 (purged). Maps to raft.ErrCompacted.
	ErrCompacted = errors.New("log: requested index is unavailable due to compaction")
	// ErrUnavailable: the index is above LastIndex. Maps to raft.ErrUnavailable.
	ErrUnavailable = errors.New("log: requested entry at index is unavailable")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("log: closed")
)

// CorruptionError names the file and offset of damage that recovery must not repair by itself: a record
// that had been synced (at or below the durable commit index, or followed by later synced data) is
// unreadable. Open refuses to start with it; Check reports it.
type CorruptionError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("log: corruption in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Stats are cumulative counters since Open (Segments is the current count).
type Stats struct {
	Syncs          uint64 // fsyncs of a segment that made appended data durable
	DirSyncs       uint64 // fsyncs of the log directory (segment created, renamed or removed)
	BytesWritten   uint64 // bytes written to segment files
	Appends        uint64 // entries appended
	HardStates     uint64 // hardstate records written
	Truncations    uint64 // Append calls that overwrote a suffix
	Segments       uint64 // segment files now
	Rolls          uint64 // segments created by rolling
	PurgedSegments uint64 // segment files removed by Purge
	CacheHits      uint64 // entries served from memory
	DiskReads      uint64 // entries read back from segment files
	Spares         uint64 // zero-filled spare segment files prepared (Options.Preallocate)
	SpareRolls     uint64 // rolls that wrote the new segment over a spare
}

type stats struct {
	syncs, dirSyncs, bytesWritten, appends, hardStates, truncations atomic.Uint64
	segments, rolls, purged, cacheHits, diskReads                   atomic.Uint64
	spares, spareRolls                                              atomic.Uint64
}

// defaultCacheBytes bounds the in-memory copy of recent entries. A variable so tests can force reads
// from segment files.
var defaultCacheBytes int64 = 64 << 20

const defaultSegmentBytes = 64 << 20

const (
	// spareChunk is the size of one zero write while a spare is prepared, spareSyncEvery how many bytes
	// go between its fsyncs: the disk gets the zeros in steps of a few MiB, not 64 MiB behind one
	// fsync that a commit's fsync would queue behind.
	spareChunk     = 1 << 20
	spareSyncEvery = 4 << 20
	// spareMinWritten: a segment that was not preallocated (a new log, one written before this
	// option existed) gets a spare once it holds this much, so a short-lived log (a test) never writes
	// a segment's worth of zeros.
	spareMinWritten = 1 << 20
	// spareRetry: after a failed preparation, wait this long before trying again.
	spareRetry = 10 * time.Second
	// spareMaxSyncBytes: while the Syncs average this many bytes or more (syncBytesAvg), no spare is
	// prepared and segments grow by appending. A preallocated segment saves each fsync the
	// metadata of a growing file, 20-25 us of CPU on ext4 here, but its zeros cost 0.2-0.4 us of CPU per
	// KiB written, more under a bulk load's page-cache pressure (docs/benchmarks.md): from about 64
	// KiB per Sync the zeros cost more than they save. Bulk loads (LinkBench's 1,024-row INSERTs:
	// hundreds of KiB per group) are past it; OLTP commits (hundreds of bytes to a few KiB) far below.
	spareMaxSyncBytes = 64 << 10
)

// segment is one segment file. Its live entries are [first, next segment's first - 1]; for the active
// (last) segment, [first, LastIndex].
type segment struct {
	first, prevTerm uint64
	path            string
	f               vfs.File // read-write for the active segment, read-only for sealed ones
	written         int64    // bytes of records in the file
	alloc           int64    // size of the file: > written when the rest is preallocated (zero-filled)
	end             int64    // active only: written + bytes being written + bytes pending
}

// Log is the binlog: raft's entries and HardState in CRC-framed segment files. See the package doc for
// the contract.
type Log struct {
	fs         vfs.FS
	dir        string
	segBytes   int64
	cacheBytes int64
	logger     *slog.Logger
	dirLock    io.Closer
	stats      stats
	prealloc   bool
	inline     bool // Options.inlineSpare

	// The spare file (Options.Preallocate). spareWG tracks the goroutine preparing it; spareStop asks
	// it to give up (Close).
	spareWG   sync.WaitGroup
	spareStop atomic.Bool

	// purgeMu serialises Purge with itself and Close; syncMu serialises writes to files (Sync, the roll
	// it may do, Close). Neither is held by Append or the readers, so they never wait on a fsync.
	purgeMu sync.Mutex
	syncMu  sync.Mutex

	mu        sync.RWMutex // guards everything below
	segs      []*segment
	idx       index
	cache     cache
	hs        HardState // last set
	hsWritten HardState // last written to a segment
	pend      []byte    // records not yet written, for the active segment; starts with a batch record
	spare     []byte    // the other half of the double buffer
	flushed   uint64    // every live entry <= flushed is in a segment file
	truncLow  uint64    // lowest truncation point since the write in flight started
	nextSeq   uint64    // sequence number of the next batch
	rollAfter int64     // after a failed roll, do not retry before the active segment reaches this size
	err       error     // sticky: a failed write or fsync leaves the file in an unknown state
	closed    bool

	// syncBytesAvg is a moving average of the bytes one Sync writes (each Sync weighs 1/8).
	syncBytesAvg int64

	spareFile    vfs.File  // a zero-filled, synced file of spareSize bytes named spareName, or nil
	spareSize    int64     //
	spareBusy    bool      // being prepared
	spareRetryAt time.Time // after a failure
}

// Open opens the log in dir, creating it if needed, and recovers it (see the package doc): a torn tail
// above the durable commit index is truncated, damage at or below it is a *CorruptionError.
func Open(dir string, o Options) (*Log, error) {
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	l := &Log{
		fs:         fs,
		dir:        dir,
		segBytes:   o.SegmentBytes,
		cacheBytes: defaultCacheBytes,
		logger:     o.Logger,
		prealloc:   o.Preallocate,
		inline:     o.inlineSpare,
		nextSeq:    1,
		truncLow:   math.MaxUint64,
	}
	if l.segBytes <= 0 {
		l.segBytes = defaultSegmentBytes
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	start := time.Now()
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, fmt.Errorf("log: create %s: %w", dir, err)
	}
	lock, err := fs.Lock(fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("log: lock %s: %w", dir, err)
	}
	l.dirLock = lock
	if err := l.recover(); err != nil {
		for _, s := range l.segs {
			if s.f != nil {
				s.f.Close()
			}
		}
		lock.Close()
		return nil, err
	}
	l.stats.segments.Store(uint64(len(l.segs)))
	l.logger.Info("log: opened", "dir", dir, "segments", len(l.segs), "first_index", l.idx.first,
		"last_index", l.idx.last, "term", l.hs.Term, "commit", l.hs.Commit, "took", time.Since(start))
	return l, nil
}

// recover scans the segments and makes the in-memory state match them (or creates the first segment).
func (l *Log) recover() error {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return fmt.Errorf("log: list %s: %w", l.dir, err)
	}
	var segNames []string
	removed := false
	for _, n := range names {
		switch {
		case isTmpName(n):
			// A segment being created or rewritten when the process stopped: the original (if any) is
			// still in place, because the rename is what publishes a new file.
			if err := l.fs.Remove(l.fs.PathJoin(l.dir, n)); err != nil {
				return fmt.Errorf("log: remove leftover %s: %w", n, err)
			}
			l.logger.Info("log: removed leftover temporary segment", "file", l.fs.PathJoin(l.dir, n))
			removed = true
		default:
			if _, ok := parseSegName(n); ok {
				segNames = append(segNames, n)
			}
		}
	}
	sort.Strings(segNames)
	if removed {
		if err := l.syncDir(); err != nil {
			return err
		}
	}
	if len(segNames) == 0 {
		l.idx = newIndex(1, 0)
		l.cache.first = 1
		f, size, err := l.createSegmentFile(1, appendSegHeader(nil, 1, 0))
		if err != nil {
			return err
		}
		l.segs = []*segment{{first: 1, path: l.segPath(1), f: f, written: size, alloc: size, end: size}}
		return nil
	}

	sc := &scan{fs: l.fs, dir: l.dir, keepCache: true, cacheBudget: l.cacheBytes, zeroEnd: l.prealloc}
	defer func() {
		// Handles the state did not adopt (all of them on failure).
		for _, s := range sc.segs {
			if s.f != nil {
				s.f.Close()
			}
		}
	}()
	if err := sc.run(segNames); err != nil {
		return err
	}
	if sc.corrupt != nil {
		return sc.corrupt
	}
	lastSeg := sc.segs[len(sc.segs)-1]
	if t := sc.torn; t != nil && !t.Fill {
		if err := l.truncateFile(lastSeg, t.Offset); err != nil {
			return err
		}
		l.logger.Warn("log: truncated a torn tail", "file", t.File, "offset", t.Offset,
			"dropped_bytes", t.Dropped, "reason", t.Reason, "commit", sc.hs.Commit, "last_index", sc.idx.last)
	} else if t == nil && sc.idx.last < sc.hs.Commit {
		l.logger.Warn("log: the hardstate's commit index is above the last entry", "commit", sc.hs.Commit,
			"last_index", sc.idx.last)
	}
	for _, s := range sc.segs[:len(sc.segs)-1] {
		l.segs = append(l.segs, &segment{first: s.first, prevTerm: s.prevTerm, path: s.path, f: s.f,
			written: s.validEnd, alloc: s.validEnd, end: s.validEnd})
		s.f = nil
	}
	lastSeg.f.Close()
	lastSeg.f = nil
	f, err := l.fs.OpenReadWrite(lastSeg.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("log: open %s: %w", lastSeg.path, err)
	}
	l.segs = append(l.segs, &segment{first: lastSeg.first, prevTerm: lastSeg.prevTerm, path: lastSeg.path,
		f: f, written: lastSeg.validEnd, alloc: lastSeg.size, end: lastSeg.validEnd})
	if t := sc.torn; t != nil && t.Fill {
		// A preallocated segment keeps its size: the torn bytes become preallocated space again, and the
		// sync below makes that durable. A crash half-way leaves a tail that is still torn (zeroing only
		// removes bytes, so no rule of badPoint can turn against it), and the next Open does it again.
		if err := writeZeros(f, t.Offset, t.Offset+t.Dropped, nil); err != nil {
			return fmt.Errorf("log: overwrite the torn tail of %s: %w", lastSeg.path, err)
		}
		l.logger.Warn("log: overwrote a torn tail with zeros", "file", t.File, "offset", t.Offset,
			"dropped_bytes", t.Dropped, "reason", t.Reason, "commit", sc.hs.Commit, "last_index", sc.idx.last)
	}
	// What we recovered may include records written but never synced (they happened to reach the disk).
	// We are about to serve them, and raft may apply them: make them durable first, or a second crash
	// could take back what the first restart exposed.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("log: sync %s: %w", lastSeg.path, err)
	}
	if err := l.syncDir(); err != nil {
		return err
	}
	l.idx = sc.idx
	l.cache = sc.cache
	l.hs, l.hsWritten = sc.hs, sc.hs
	l.flushed = l.idx.last
	if sc.seqKnown {
		l.nextSeq = sc.seq + 1
	}
	return nil
}

func (l *Log) segPath(first uint64) string { return l.fs.PathJoin(l.dir, segName(first)) }

func (l *Log) tmpPath(first uint64) string {
	return l.fs.PathJoin(l.dir, fmt.Sprintf("%020d%s", first, tmpSuffix))
}

// createSegmentFile publishes a complete segment file atomically: write it under a temporary name, fsync
// it, rename it into place, fsync the directory. A crash at any point leaves either no segment or the
// whole one, so a segment header is never torn and a new segment never shadows data half-way.
// It returns the open file (read-write) and its size.
func (l *Log) createSegmentFile(first uint64, content []byte) (vfs.File, int64, error) {
	tmp, path := l.tmpPath(first), l.segPath(first)
	f, err := l.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, 0, fmt.Errorf("log: create %s: %w", tmp, err)
	}
	fail := func(err error) (vfs.File, int64, error) {
		f.Close()
		l.fs.Remove(tmp)
		return nil, 0, err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return fail(fmt.Errorf("log: write %s: %w", tmp, err))
	}
	if err := f.SyncData(); err != nil {
		return fail(fmt.Errorf("log: sync %s: %w", tmp, err))
	}
	l.stats.bytesWritten.Add(uint64(len(content)))
	if err := l.fs.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("log: rename %s: %w", tmp, err))
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, int64(len(content)), nil
}

// truncateFile durably cuts a segment at off. vfs.File has no Truncate, so the kept prefix is copied to a
// new file that replaces the old one atomically (createSegmentFile); this only runs during recovery.
func (l *Log) truncateFile(s *scanSeg, off int64) error {
	buf := make([]byte, off)
	if n, err := s.f.ReadAt(buf, 0); int64(n) < off {
		return fmt.Errorf("log: read %s: %w", s.path, err)
	}
	f, _, err := l.createSegmentFile(s.first, buf)
	if err != nil {
		return err
	}
	s.size, s.validEnd = off, off
	return f.Close()
}

func (l *Log) syncDir() error {
	if err := syncDir(l.fs, l.dir); err != nil {
		return fmt.Errorf("log: sync directory %s: %w", l.dir, err)
	}
	l.stats.dirSyncs.Add(1)
	return nil
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirAllSynced creates dir and makes every directory it created durable by syncing its parent.
func mkdirAllSynced(fs vfs.FS, dir string) error {
	var missing []string
	for d := dir; ; {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		p := fs.PathDir(d)
		if p == d {
			break
		}
		d = p
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDir(fs, fs.PathDir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.err
}

// beginPending starts an empty pending buffer with a batch record: the first record of every write is a
// batch record, whose sequence number is filled in when the batch is written.
func (l *Log) beginPending() {
	if len(l.pend) == 0 {
		l.pend = appendBatchRecord(l.pend, 0)
		l.active().end += batchRecordBytes
	}
}

// Append adds entries to the log. They must be contiguous; if ents[0].Index <= LastIndex the suffix from
// ents[0].Index is replaced (raft overwriting uncommitted entries). Nothing is written to the file until
// Sync; the entries are readable at once. Append keeps ents[i].Data: the caller must not modify it.
func (l *Log) Append(ents []Entry) error {
	if len(ents) == 0 {
		return nil
	}
	if ents[0].Index == 0 {
		return errors.New("log: Append: index 0 is not a log index")
	}
	for i := range ents {
		if i > 0 && ents[i].Index != ents[i-1].Index+1 {
			return fmt.Errorf("log: Append: entry %d follows entry %d (entries must be contiguous)",
				ents[i].Index, ents[i-1].Index)
		}
		if len(ents[i].Data) > MaxEntryData {
			return fmt.Errorf("log: Append: entry %d has %d bytes of data, more than the %d-byte limit",
				ents[i].Index, len(ents[i].Data), MaxEntryData)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	k := ents[0].Index
	switch {
	case k < l.idx.first:
		return fmt.Errorf("%w: Append at %d, the first retained index is %d", ErrCompacted, k, l.idx.first)
	case k > l.idx.last+1:
		return fmt.Errorf("log: Append at %d would leave a gap after the last index %d", k, l.idx.last)
	case k <= l.idx.last:
		// Raft never overwrites a committed entry; refusing here keeps a caller's bug from destroying
		// durable history. The bound is the commit index already written, not the one just set: in one
		// Ready a follower may overwrite from k and carry a commit that covers the new entries at k
		// (commit = min(leader's commit, last new index)), and the caller sets that HardState first.
		if k <= l.hsWritten.Commit {
			return fmt.Errorf("log: Append at %d would overwrite committed entries (commit index %d)",
				k, l.hsWritten.Commit)
		}
		seg := l.active()
		if k < seg.first {
			return fmt.Errorf("log: Append at %d would overwrite a sealed segment starting at %d", k, seg.first)
		}
		l.beginPending()
		n := len(l.pend)
		l.pend = appendTruncateRecord(l.pend, k)
		seg.end += int64(len(l.pend) - n)
		l.idx.truncate(k)
		l.cache.truncate(k)
		l.flushed = min(l.flushed, k-1)
		l.truncLow = min(l.truncLow, k)
		l.stats.truncations.Add(1)
	}
	seg := l.active()
	l.beginPending()
	for i := range ents {
		e := &ents[i]
		off := seg.end
		n := len(l.pend)
		l.pend = appendEntryRecord(l.pend, e)
		seg.end += int64(len(l.pend) - n)
		l.idx.push(e.Index, e.Term, off)
		l.cache.push(*e)
	}
	l.cache.evict(l.cacheBytes, l.flushed)
	l.stats.appends.Add(uint64(len(ents)))
	return nil
}

// SetHardState records raft's HardState. It is written, after every entry appended before it, by the
// next Sync: a hardstate record never precedes entries its commit index covers, which recovery relies on.
func (l *Log) SetHardState(hs HardState) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	l.hs = hs
	return nil
}

// HardState returns the last HardState set (after Open: the last durable one).
func (l *Log) HardState() HardState {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.hs
}

// Sync writes everything appended (and the HardState, if it changed) with one write call and makes it
// durable with one fsync. When it returns nil, every earlier Append and SetHardState is durable.
// Appends and reads may run while it waits for the disk.
func (l *Log) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return err
	}
	seg := l.active()
	writeHS := l.hs != l.hsWritten
	if writeHS {
		l.beginPending()
		n := len(l.pend)
		l.pend = appendHardStateRecord(l.pend, l.hs)
		seg.end += int64(len(l.pend) - n)
	}
	if len(l.pend) == 0 {
		l.mu.Unlock()
		return nil
	}
	setBatchSeq(l.pend, l.nextSeq)
	l.nextSeq++
	buf, off, target, hs := l.pend, seg.written, l.idx.last, l.hs
	l.pend, l.spare = l.spare[:0], nil
	l.truncLow = math.MaxUint64
	l.mu.Unlock()

	// Only Sync writes to the file, and only one Sync runs at a time (syncMu): so the next batch's first
	// byte is written after this batch's fsync returned. Recovery relies on that ordering.
	_, err := seg.f.WriteAt(buf, off)
	if err == nil {
		err = seg.f.SyncData()
	}

	l.mu.Lock()
	if err != nil {
		// After a failed write or fsync the kernel may have dropped the dirty pages: nothing about the
		// file can be trusted, and retrying the fsync could report success for lost data.
		l.err = fmt.Errorf("log: write %s: %w", seg.path, err)
		l.logger.Error("log: write failed; the log accepts no more writes", "file", seg.path, "err", err)
		l.mu.Unlock()
		return l.err
	}
	seg.written += int64(len(buf))
	seg.alloc = max(seg.alloc, seg.written)
	if writeHS {
		l.hsWritten = hs
		l.stats.hardStates.Add(1)
	}
	l.flushed = max(l.flushed, min(target, l.truncLow-1))
	l.cache.evict(l.cacheBytes, l.flushed)
	if cap(buf) <= 4<<20 {
		l.spare = buf[:0]
	}
	l.stats.syncs.Add(1)
	l.stats.bytesWritten.Add(uint64(len(buf)))
	l.syncBytesAvg += (int64(len(buf)) - l.syncBytesAvg) / 8
	err = l.maybeRoll()
	spare := err == nil && l.wantSpare()
	l.mu.Unlock()
	if spare {
		if l.inline {
			l.prepareSpare()
		} else {
			go l.prepareSpare()
		}
	}
	return err
}

// wantSpare reports whether to start preparing a spare now, and if so marks it started. mu is held.
// The active segment needs a successor when its preallocated room is down to half a segment (so the
// spare is ready well before the roll), or at once when it has none (a segment created before the
// log preallocated, or by a roll that found no spare ready) and holds enough to be worth it. Not
// while the Syncs are large (spareMaxSyncBytes): the next segment is then created by appending, and a
// spare is prepared again once they are small.
func (l *Log) wantSpare() bool {
	if !l.prealloc || l.spareFile != nil || l.spareBusy || l.closed || l.err != nil || l.spareStop.Load() ||
		l.syncBytesAvg >= spareMaxSyncBytes {
		return false
	}
	act := l.active()
	room := act.alloc - act.written
	if room > l.segBytes/2 || room <= 0 && act.written < min(l.segBytes/2, spareMinWritten) {
		return false
	}
	if !l.spareRetryAt.IsZero() && time.Now().Before(l.spareRetryAt) {
		return false
	}
	l.spareBusy = true
	l.spareWG.Add(1)
	return true
}

// prepareSpare writes the spare file: SegmentBytes of zeros, synced, so that the blocks a segment made
// from it will be written into are allocated and written on disk, and their metadata committed, before
// a commit's fsync. It runs without any of the log's locks until it publishes the file.
func (l *Log) prepareSpare() {
	defer l.spareWG.Done()
	start := time.Now()
	size := l.segBytes
	path := l.fs.PathJoin(l.dir, spareName)
	f, err := l.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err == nil {
		err = writeZeros(f, 0, size, &l.spareStop)
		if err != nil {
			f.Close()
			f = nil
			l.fs.Remove(path)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spareBusy = false
	if err != nil {
		if !errors.Is(err, errSpareStopped) {
			l.spareRetryAt = time.Now().Add(spareRetry)
			l.logger.Warn("log: preparing a spare segment failed; the next roll creates its segment unpreallocated",
				"file", path, "err", err)
		}
		return
	}
	l.spareFile, l.spareSize = f, size
	l.spareRetryAt = time.Time{}
	l.stats.spares.Add(1)
	l.logger.Debug("log: prepared a spare segment", "file", path, "bytes", size, "took", time.Since(start))
}

var errSpareStopped = errors.New("log: spare preparation stopped")

// writeZeros writes zeros over [from, to) of f in chunks, syncing every spareSyncEvery bytes and at the
// end. stop, if set, abandons the work between chunks.
func writeZeros(f vfs.File, from, to int64, stop *atomic.Bool) error {
	zeros := make([]byte, min(spareChunk, max(to-from, 0)))
	unsynced := int64(0)
	for off := from; off < to; {
		if stop != nil && stop.Load() {
			return errSpareStopped
		}
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
		if unsynced += n; unsynced >= spareSyncEvery && off < to {
			if err := f.SyncData(); err != nil {
				return err
			}
			unsynced = 0
		}
	}
	return f.SyncData()
}

// maybeRoll starts a new segment once the active one is past SegmentBytes. Called with syncMu and mu held,
// right after a batch was made durable.
//
// With Options.Preallocate the new segment is written over the spare when one is ready, and a segment
// without preallocated room (a new log's first one, one from before preallocation, one a roll created
// while no spare was ready) rolls as soon as a spare is: its commits then overwrite preallocated space.
// A segment is never sealed while it has preallocated room (written < alloc), whatever SegmentBytes
// says: a sealed segment ends at its last record, which is what recovery expects of it.
//
// The new segment starts at s = min(commit, last, flushed)+1, and entries s..last, which raft may still overwrite,
// are copied into it. So a sealed segment holds only committed entries, raft's overwrites always land in
// the active segment, and a truncate record never has to reach back into an older file. If nothing in
// the active segment is committed yet, the roll waits.
func (l *Log) maybeRoll() error {
	act := l.active()
	switch {
	case act.written < act.alloc: // preallocated room left: keep writing into it
		return nil
	case act.written < l.rollAfter: // a roll failed recently
		return nil
	case act.written < l.segBytes && l.spareFile == nil: // not full, and no preallocated segment to move to
		return nil
	}
	// Entries above flushed were appended while the batch was in flight and exist only in the pending
	// buffer, which the roll discards: they must be among the copied ones.
	s := min(l.hs.Commit, l.idx.last, l.flushed) + 1
	if s <= act.first {
		return nil
	}
	prevTerm, _ := l.idx.term(s - 1)
	buf := appendSegHeader(nil, s, prevTerm)
	buf = appendBatchRecord(buf, l.nextSeq)
	// Every segment starts with the current HardState, so purging older segments never loses it.
	buf = appendHardStateRecord(buf, l.hsWritten)
	offs := make([]int64, 0, l.idx.last+1-s)
	for i := s; i <= l.idx.last; i++ {
		e, err := l.entryLocked(i)
		if err != nil {
			return err
		}
		offs = append(offs, int64(len(buf)))
		buf = appendEntryRecord(buf, &e)
	}
	var f vfs.File
	var size, alloc int64
	var err error
	if l.spareFile != nil {
		f, err = l.publishSpare(s, buf)
		size, alloc = int64(len(buf)), max(int64(len(buf)), l.spareSize)
	} else {
		f, size, err = l.createSegmentFile(s, buf)
		alloc = size
	}
	if err != nil {
		if _, serr := l.fs.Stat(l.segPath(s)); serr == nil {
			// The rename happened but the directory sync failed: the new segment may or may not survive
			// a crash, and writing on in the old one could be shadowed by it. Stop.
			l.err = err
			return err
		}
		// Nothing was published; the old segment is intact and stays active. Retry later.
		l.rollAfter = act.written + max(l.segBytes/8, 1)
		l.logger.Warn("log: segment roll failed; continuing in the current segment", "err", err)
		return nil
	}
	l.segs = append(l.segs, &segment{first: s, prevTerm: prevTerm, path: l.segPath(s), f: f,
		written: size, alloc: alloc, end: size})
	copy(l.idx.offs[s-l.idx.first:], offs)
	// Records appended while the batch was in flight were meant for the old segment; the new segment
	// already holds the state they describe (entries up to last, truncations applied). The HardState, if
	// it changed, is still pending (hsWritten did not move).
	l.pend = l.pend[:0]
	l.flushed = l.idx.last
	l.nextSeq++
	l.rollAfter = 0
	l.stats.rolls.Add(1)
	l.stats.segments.Store(uint64(len(l.segs)))
	l.logger.Debug("log: rolled to a new segment", "file", l.segPath(s), "first_index", s,
		"copied_entries", len(offs), "preallocated", alloc-size)
	return nil
}

// publishSpare makes the spare the segment starting at first, with content at its start: written over
// the zeros, synced, renamed into place, directory synced, the same publication as createSegmentFile's
// (a crash before the rename leaves the spare, which Open removes). The spare is used up either way.
func (l *Log) publishSpare(first uint64, content []byte) (vfs.File, error) {
	f, tmp, path := l.spareFile, l.fs.PathJoin(l.dir, spareName), l.segPath(first)
	l.spareFile = nil
	fail := func(err error) (vfs.File, error) {
		f.Close()
		l.fs.Remove(tmp)
		return nil, err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return fail(fmt.Errorf("log: write %s: %w", tmp, err))
	}
	if err := f.SyncData(); err != nil {
		return fail(fmt.Errorf("log: sync %s: %w", tmp, err))
	}
	l.stats.bytesWritten.Add(uint64(len(content)))
	if err := l.fs.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("log: rename %s: %w", tmp, err))
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		return nil, err
	}
	l.stats.spareRolls.Add(1)
	return f, nil
}

// FirstIndex returns the first retained entry index (1 for an empty log; purged+1 after Purge).
func (l *Log) FirstIndex() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.idx.first
}

// LastIndex returns the last entry index, 0 when the log is empty.
func (l *Log) LastIndex() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.idx.last
}

// Term returns the term of entry i, for i in [FirstIndex-1, LastIndex].
func (l *Log) Term(i uint64) (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, ErrClosed
	}
	if i > l.idx.last {
		return 0, ErrUnavailable
	}
	if i+1 < l.idx.first {
		return 0, ErrCompacted
	}
	t, _ := l.idx.term(i)
	return t, nil
}

// Entries returns entries [lo, hi), at least one if lo < hi, and no more than fit in maxBytes (measured
// as raft does: see entrySize). The entries' Data may be shared with the log's cache: do not modify it.
func (l *Log) Entries(lo, hi, maxBytes uint64) ([]Entry, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	if lo < l.idx.first {
		return nil, ErrCompacted
	}
	if hi > l.idx.last+1 {
		return nil, ErrUnavailable
	}
	if lo > hi {
		return nil, fmt.Errorf("log: Entries: invalid range [%d, %d)", lo, hi)
	}
	if lo == hi {
		return nil, nil
	}
	out := make([]Entry, 0, min(hi-lo, 256))
	var size uint64
	add := func(e Entry) bool {
		s := entrySize(&e)
		if len(out) > 0 && size+s > maxBytes {
			return false
		}
		size += s
		out = append(out, e)
		return true
	}
	i := lo
	if i < l.cache.first {
		next, full, err := l.readEntries(i, min(hi, l.cache.first), add)
		l.stats.diskReads.Add(uint64(len(out)))
		if err != nil {
			return nil, err
		}
		if full {
			return out, nil
		}
		i = next
	}
	n := len(out)
	for ; i < hi; i++ {
		e, _ := l.cache.get(i)
		if !add(e) {
			break
		}
	}
	l.stats.cacheHits.Add(uint64(len(out) - n))
	return out, nil
}

// entryLocked returns entry i (in [first, last]) from the cache or the disk. mu is held.
func (l *Log) entryLocked(i uint64) (Entry, error) {
	if e, ok := l.cache.get(i); ok {
		return e, nil
	}
	var out Entry
	_, _, err := l.readEntries(i, i+1, func(e Entry) bool { out = e; return true })
	l.stats.diskReads.Add(1)
	return out, err
}

// readEntries reads entries [lo, hi) from segment files, passing each to add until it returns false
// (full). It returns the index after the last one added. Every record is verified (CRC, type, index,
// term) before use. mu is held (read or write).
func (l *Log) readEntries(lo, hi uint64, add func(Entry) bool) (next uint64, full bool, err error) {
	i := lo
	for i < hi {
		si := sort.Search(len(l.segs), func(j int) bool { return l.segs[j].first > i }) - 1
		seg := l.segs[si]
		end := hi
		if si+1 < len(l.segs) {
			end = min(end, l.segs[si+1].first)
		}
		rd := newFileReader(seg.f, seg.written, entriesWindow)
		for ; i < end; i++ {
			off := l.idx.offs[i-l.idx.first]
			rec, reason, err := rd.readRecord(off)
			if err == io.EOF {
				reason = "end of file"
			} else if err != nil {
				return i, false, fmt.Errorf("log: read %s: %w", seg.path, err)
			}
			var e Entry
			if reason == "" {
				if rec.typ != recEntry {
					reason = fmt.Sprintf("record type %d where entry %d was expected", rec.typ, i)
				} else if e = decodeEntry(rec.payload); e.Index != i {
					reason = fmt.Sprintf("entry %d where entry %d was expected", e.Index, i)
				} else if t, _ := l.idx.term(i); e.Term != t {
					reason = fmt.Sprintf("entry %d has term %d, the index says %d", i, e.Term, t)
				}
			}
			if reason != "" {
				return i, false, &CorruptionError{File: seg.path, Offset: off, Reason: reason}
			}
			if e.Data != nil {
				e.Data = append([]byte(nil), e.Data...) // the reader's window is reused
			}
			if !add(e) {
				return i, true, nil
			}
		}
	}
	return i, false, nil
}

// BytesFrom is the size of the segment files that hold entries at or after index: what the log keeps
// on disk while something holds it from index (a purge hold's cost, kiln log archive --hold-max-bytes).
func (l *Log) BytesFrom(index uint64) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for i, s := range l.segs {
		if i+1 < len(l.segs) && l.segs[i+1].first <= index {
			continue // every entry of s is below index
		}
		n += s.written
	}
	return n
}

// Purge removes whole sealed segments whose entries are all below below. The active segment is never
// removed; the term of the last purged entry stays answerable (Term(FirstIndex-1)).
func (l *Log) Purge(below uint64) error {
	l.purgeMu.Lock()
	defer l.purgeMu.Unlock()
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return err
	}
	n := 0
	for n+1 < len(l.segs) && l.segs[n+1].first <= below {
		n++
	}
	if n == 0 {
		l.mu.Unlock()
		return nil
	}
	victims := append([]*segment(nil), l.segs[:n]...)
	l.segs = append([]*segment(nil), l.segs[n:]...)
	nf := l.segs[0].first
	l.idx.purgeTo(nf)
	l.cache.purgeTo(nf)
	l.stats.segments.Store(uint64(len(l.segs)))
	l.mu.Unlock()

	// Readers that used the victims held mu.RLock, so they are done. Remove oldest first and sync the
	// directory after each removal, so what survives a crash is always a suffix of the segments: a
	// missing middle segment would be a gap, which recovery treats as corruption.
	for _, s := range victims {
		s.f.Close()
		if err := l.fs.Remove(s.path); err != nil {
			return fmt.Errorf("log: remove %s: %w", s.path, err)
		}
		if err := l.syncDir(); err != nil {
			return err
		}
		l.stats.purged.Add(1)
	}
	l.logger.Debug("log: purged segments", "count", len(victims), "first_index", nf)
	return nil
}

// Close syncs what is pending, closes the files and releases the directory lock.
func (l *Log) Close() error {
	l.purgeMu.Lock()
	defer l.purgeMu.Unlock()
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.RLock()
	closed, failed := l.closed, l.err != nil
	l.mu.RUnlock()
	if closed {
		return nil
	}
	l.spareStop.Store(true)
	var err error
	if !failed {
		err = l.syncLocked()
	}
	l.spareWG.Wait() // the preparer takes mu to publish: wait without it
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, s := range l.segs {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
	}
	if l.spareFile != nil {
		// Not needed across a restart (Open removes a leftover spare anyway): do not leave a
		// segment's worth of zeros in a stopped node's directory.
		l.spareFile.Close()
		l.spareFile = nil
		if rerr := l.fs.Remove(l.fs.PathJoin(l.dir, spareName)); err == nil && rerr != nil {
			err = fmt.Errorf("log: remove %s: %w", spareName, rerr)
		}
	}
	if cerr := l.dirLock.Close(); err == nil {
		err = cerr
	}
	return err
}

// Stats returns the counters.
func (l *Log) Stats() Stats {
	s := &l.stats
	return Stats{
		Syncs:          s.syncs.Load(),
		DirSyncs:       s.dirSyncs.Load(),
		BytesWritten:   s.bytesWritten.Load(),
		Appends:        s.appends.Load(),
		HardStates:     s.hardStates.Load(),
		Truncations:    s.truncations.Load(),
		Segments:       s.segments.Load(),
		Rolls:          s.rolls.Load(),
		PurgedSegments: s.purged.Load(),
		CacheHits:      s.cacheHits.Load(),
		DiskReads:      s.diskReads.Load(),
		Spares:         s.spares.Load(),
		SpareRolls:     s.spareRolls.Load(),
	}
}
