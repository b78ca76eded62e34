package log

import (
	"fmt"
	"math"
)

// Reset discards every entry and restarts the log after a snapshot that holds everything up to
// index: the next entry appended is index+1, Term(index) answers term, and the HardState becomes hs
// (hs.Commit >= index: a snapshot holds only committed entries).
//
// Crash safety: the old segments are removed oldest first, the directory synced after each removal
// (what survives is always a suffix of the old log, or nothing), then the new segment is published
// atomically (createSegmentFile). A crash in between leaves a shorter log that is still a prefix-
// consistent history; the caller records the snapshot durably before calling Reset (repl keeps it in
// the engine) and calls Reset again on the next start. Every other call waits while Reset runs.
func (l *Log) Reset(index, term uint64, hs HardState) error {
	if hs.Commit < index {
		return fmt.Errorf("log: Reset to %d with a commit index of %d: a snapshot holds only committed entries", index, hs.Commit)
	}
	l.purgeMu.Lock()
	defer l.purgeMu.Unlock()
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	for len(l.segs) > 0 {
		s := l.segs[0]
		s.f.Close()
		if err := l.fs.Remove(s.path); err != nil {
			l.err = fmt.Errorf("log: reset: remove %s: %w", s.path, err)
			return l.err
		}
		if err := l.syncDir(); err != nil {
			l.err = err
			return err
		}
		l.segs = l.segs[1:]
		l.stats.purged.Add(1)
	}
	first := index + 1
	buf := appendSegHeader(nil, first, term)
	buf = appendBatchRecord(buf, l.nextSeq)
	buf = appendHardStateRecord(buf, hs)
	f, size, err := l.createSegmentFile(first, buf)
	if err != nil {
		l.err = fmt.Errorf("log: reset: %w", err)
		return l.err
	}
	l.segs = []*segment{{first: first, prevTerm: term, path: l.segPath(first), f: f, written: size, alloc: size, end: size}}
	l.idx = newIndex(first, term)
	l.cache = cache{first: first}
	l.hs, l.hsWritten = hs, hs
	l.pend, l.spare = nil, nil
	l.flushed = index
	l.truncLow = math.MaxUint64
	l.nextSeq++
	l.rollAfter = 0
	l.stats.segments.Store(1)
	l.logger.Info("log: reset after a snapshot", "dir", l.dir, "snapshot_index", index, "snapshot_term", term)
	return nil
}
