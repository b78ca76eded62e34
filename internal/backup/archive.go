package backup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	klog "github.com/kiln-db/kiln/internal/log"
)

// The log archive (kiln log archive): a node streams its committed log continuously (ServeLog,
// GET /log?after=P), and an Archiver writes it to a directory of segment files, fsynced, resuming
// after the last entry it holds when restarted. Restore reads an archive (--log-dir) to roll a backup
// forward beyond its end.
//
// The log stream: magic "KILNLOG\x01", 'h' uvarint(len) header-json, then records
// 'a' uvarint(len) crc32c u32 (little-endian) entry, forever (an entry is appendEntry's encoding).
// An archive directory: ARCHIVE.json (the cluster, written once) and segment files
// <first index, 20 digits>.arc holding the same records without the frame byte:
// uvarint(len) crc u32 entry. A record cut short at the very end of the newest segment is a write
// the archiver had not finished (it cuts it off when it starts); anything else unreadable is damage.

const logStreamMagic = "KILNLOG\x01"

// ArchiveFileName is the archive's identity file.
const ArchiveFileName = "ARCHIVE.json"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// LogHeader opens a log stream.
type LogHeader struct {
	ClusterID   string `json:"cluster_id"`
	ClusterUUID string `json:"cluster_uuid"`
	Node        uint64 `json:"node"`
	After       uint64 `json:"after"` // the stream's first entry is After+1
	AfterTerm   uint64 `json:"after_term"`
}

// ArchiveInfo is ARCHIVE.json.
type ArchiveInfo struct {
	ClusterID   string `json:"cluster_id"`
	ClusterUUID string `json:"cluster_uuid"`
}

// ServeLog streams src's committed (applied) log entries after index after, following the log
// until ctx ends; flush is called after each batch (the HTTP response's flush). after 0 starts at
// the oldest entry the node holds. The node keeps the entries not yet sent out of purge.
func ServeLog(ctx context.Context, w io.Writer, src Source, after uint64, flush func()) error {
	if after == 0 {
		after = src.Log.FirstIndex() - 1
	}
	if applied := src.Applied(); after > applied {
		return fmt.Errorf("log: index %d is beyond this node's applied index %d", after, applied)
	}
	release := src.HoldLog(after + 1)
	defer func() { release() }()
	if first := src.Log.FirstIndex(); first > after+1 {
		return fmt.Errorf("log: the log starts at %d, after index %d (purged): the archive has a gap; start a new archive after a new full backup", first, after)
	}
	term, err := src.Log.Term(after)
	if err != nil && after > 0 {
		return fmt.Errorf("log: term of index %d: %w", after, err)
	}
	hdr, _ := json.Marshal(LogHeader{ClusterID: src.ClusterID, ClusterUUID: src.ClusterUUID, Node: src.Node, After: after, AfterTerm: term})
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := appendJSON(append([]byte(logStreamMagic), frameHeader), hdr)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	flush()
	next := after + 1
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var ent []byte
	for {
		if end := src.Applied(); end >= next {
			ents, err := src.Log.Entries(next, end+1, logBatchBytes)
			if err != nil {
				return fmt.Errorf("log: read entries from %d: %w", next, err)
			}
			for _, e := range ents {
				ent = appendEntry(ent[:0], e)
				buf = append(buf[:0], 'a')
				buf = binary.AppendUvarint(buf, uint64(len(ent)))
				buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(ent, castagnoli))
				if _, err := bw.Write(append(buf, ent...)); err != nil {
					return err
				}
			}
			next += uint64(len(ents))
			if err := bw.Flush(); err != nil {
				return err
			}
			flush()
			// Move the purge hold up to what is still to be sent.
			old := release
			release = src.HoldLog(next)
			old()
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Archiver writes a log stream into an archive directory.
type Archiver struct {
	Dir          string
	SegmentBytes int64 // a new segment starts past this size (default 64 MiB)
	info         ArchiveInfo
	last, term   uint64 // the last entry archived and its term
	seg          *os.File
	segSize      int64
	durable      atomic.Uint64 // the last entry fsynced (read by the hold renewer while Follow runs)
}

// OpenArchive opens (or creates) an archive directory for appending: it reads every segment,
// cuts off a write the previous run did not finish, and returns the archiver positioned after the
// last whole entry.
func OpenArchive(dir string, segmentBytes int64) (*Archiver, error) {
	if segmentBytes <= 0 {
		segmentBytes = 64 << 20
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	a := &Archiver{Dir: dir, SegmentBytes: segmentBytes}
	b, err := os.ReadFile(filepath.Join(dir, ArchiveFileName))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &a.info); err != nil {
			return nil, fmt.Errorf("archive: %s: %w (damaged)", filepath.Join(dir, ArchiveFileName), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("archive: %w", err)
	}
	st, err := readArchive(dir, 0, ^uint64(0), nil)
	if err != nil {
		return nil, err
	}
	a.last, a.term = st.last, st.lastTerm
	defer func() { a.durable.Store(a.last) }() // the open fsyncs the last segment
	if st.tailFile != "" {
		// The previous run was stopped inside a write: keep the whole records.
		if err := os.Truncate(st.tailFile, st.tailAt); err != nil {
			return nil, fmt.Errorf("archive: cut the unfinished record off %s: %w", st.tailFile, err)
		}
		if st.tailAt == 0 {
			// A segment with no whole record: its name (its first index) is only right if the
			// stream goes on there, so start it again when the next entry comes.
			if err := os.Remove(st.tailFile); err != nil {
				return nil, fmt.Errorf("archive: %w", err)
			}
			if err := syncDir(dir); err != nil {
				return nil, fmt.Errorf("archive: %w", err)
			}
			if st.lastFile == st.tailFile {
				st.lastFile = ""
			}
		}
	}
	if st.lastFile != "" {
		f, err := os.OpenFile(st.lastFile, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("archive: %w", err)
		}
		fi, _ := f.Stat()
		a.seg, a.segSize = f, fi.Size()
	}
	return a, nil
}

// Last is the last archived entry's index (0: none yet).
func (a *Archiver) Last() uint64 { return a.last }

// Durable is the last entry the archive holds durably (fsynced): what a purge hold may let go
// below. Safe to call while Follow runs.
func (a *Archiver) Durable() uint64 { return a.durable.Load() }

// Close closes the current segment.
func (a *Archiver) Close() error {
	if a.seg == nil {
		return nil
	}
	err := a.seg.Close()
	a.seg = nil
	return err
}

// Follow reads one log stream (ServeLog's, asked for the entries after a.Last()) into the archive
// until the stream ends, fsyncing whatever it has written whenever the stream pauses and at the
// end. It checks the stream continues the archive: the same cluster, the entry after the last
// archived one, the same term at the last archived index.
func (a *Archiver) Follow(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	magic := make([]byte, len(logStreamMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != logStreamMagic {
		return fmt.Errorf("archive: the node did not send a log stream (%q, %v)", magic, err)
	}
	if k, err := br.ReadByte(); err != nil || k != frameHeader {
		return fmt.Errorf("archive: log stream header missing (%v)", err)
	}
	hb, err := readBytes(br, maxJSONBytes, "header")
	if err != nil {
		return fmt.Errorf("archive: log stream header: %w", err)
	}
	var h LogHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		return fmt.Errorf("archive: log stream header: %w", err)
	}
	if a.info.ClusterUUID == "" {
		a.info = ArchiveInfo{ClusterID: h.ClusterID, ClusterUUID: h.ClusterUUID}
		if err := writeFileSync(filepath.Join(a.Dir, ArchiveFileName), a.info); err != nil {
			return err
		}
	} else if a.info.ClusterUUID != h.ClusterUUID {
		return fmt.Errorf("archive: %s holds the log of cluster %s; the node is of cluster %s", a.Dir, a.info.ClusterUUID, h.ClusterUUID)
	}
	if a.last != 0 && (h.After != a.last || h.AfterTerm != a.term) {
		return fmt.Errorf("archive: the node's log after index %d (term %d) does not continue the archive, which ends at %d (term %d)", h.After, h.AfterTerm, a.last, a.term)
	}
	next := h.After + 1
	dirty := false
	sync := func() error {
		if dirty && a.seg != nil {
			if err := a.seg.Sync(); err != nil {
				return fmt.Errorf("archive: fsync: %w", err)
			}
			a.durable.Store(a.last)
		}
		dirty = false
		return nil
	}
	for {
		if br.Buffered() == 0 {
			if err := sync(); err != nil { // the stream paused: make what came durable
				return err
			}
		}
		k, err := br.ReadByte()
		if err != nil {
			if serr := sync(); serr != nil {
				return serr
			}
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF // a log stream never ends by itself
			}
			return err
		}
		if k != 'a' {
			return fmt.Errorf("archive: log stream frame %q (damaged)", k)
		}
		n, err := binary.ReadUvarint(br)
		if err != nil || n > klog.MaxEntryData+64 {
			return fmt.Errorf("archive: log stream record length: %v", err)
		}
		rec := make([]byte, 4+n)
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("archive: log stream: %w", short(err))
		}
		if crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec) {
			return errors.New("archive: log stream record CRC mismatch (damaged in transit)")
		}
		e, err := readEntry(bytes.NewReader(rec[4:]))
		if err != nil || e.Index != next || e.Term < a.term {
			return fmt.Errorf("archive: log stream entry %d (term %d) where %d was expected after term %d (%v)", e.Index, e.Term, next, a.term, err)
		}
		if a.seg == nil || a.segSize >= a.SegmentBytes {
			if err := a.roll(e.Index); err != nil {
				return err
			}
		}
		out := binary.AppendUvarint(nil, n)
		out = append(out, rec...)
		if _, err := a.seg.Write(out); err != nil {
			return fmt.Errorf("archive: write %s: %w", a.seg.Name(), err)
		}
		a.segSize += int64(len(out))
		a.last, a.term, dirty = e.Index, e.Term, true
		next++
	}
}

// roll fsyncs and closes the current segment and creates the next, starting at index first.
func (a *Archiver) roll(first uint64) error {
	if a.seg != nil {
		if err := a.seg.Sync(); err != nil {
			return fmt.Errorf("archive: fsync: %w", err)
		}
		a.durable.Store(a.last)
		a.seg.Close()
	}
	p := filepath.Join(a.Dir, fmt.Sprintf("%020d.arc", first))
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := syncDir(a.Dir); err != nil {
		f.Close()
		return fmt.Errorf("archive: %w", err)
	}
	a.seg, a.segSize = f, 0
	return nil
}

func writeFileSync(p string, v any) error {
	b, _ := json.MarshalIndent(v, "", "  ")
	tmp := p + ".tmp"
	err := os.WriteFile(tmp, append(b, '\n'), 0o600)
	if err == nil {
		var f *os.File
		if f, err = os.Open(tmp); err == nil {
			err = f.Sync()
			f.Close()
		}
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err == nil {
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return fmt.Errorf("archive: write %s: %w", p, err)
	}
	return nil
}

// archiveState is what readArchive found.
type archiveState struct {
	first, last, lastTerm uint64
	lastFile              string // the newest segment
	tailFile              string // set if the newest segment ends inside a record
	tailAt                int64  // where its whole records end
}

// readArchive reads an archive's segments in order, checking every record (CRC, contiguous
// indexes, non-decreasing terms), and passes the entries in (after, upTo] to fn (if not nil).
// Errors name the file and offset.
func readArchive(dir string, after, upTo uint64, fn func(klog.Entry) error) (archiveState, error) {
	var st archiveState
	ents, err := os.ReadDir(dir)
	if err != nil {
		return st, fmt.Errorf("archive: %w", err)
	}
	var segs []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".arc") && len(name) == 24 {
			if _, err := strconv.ParseUint(name[:20], 10, 64); err == nil {
				segs = append(segs, name)
			}
		}
	}
	sort.Strings(segs)
	for si, name := range segs {
		p := filepath.Join(dir, name)
		start, _ := strconv.ParseUint(name[:20], 10, 64)
		if st.last != 0 && start != st.last+1 {
			return st, fmt.Errorf("archive: %s starts at %d, the segment before ends at %d (a gap or damage)", p, start, st.last)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return st, fmt.Errorf("archive: %w", err)
		}
		st.lastFile = p
		off := 0
		for off < len(b) {
			n, sz := binary.Uvarint(b[off:])
			whole := sz > 0 && uint64(len(b)-off-sz) >= 4+n
			if !whole {
				if si == len(segs)-1 && (sz == 0 || (sz > 0 && n <= klog.MaxEntryData+64)) {
					st.tailFile, st.tailAt = p, int64(off)
					break
				}
				return st, fmt.Errorf("archive: %s: record at offset %d is cut short or damaged", p, off)
			}
			rec := b[off+sz : off+sz+4+int(n)]
			if crc32.Checksum(rec[4:], castagnoli) != binary.LittleEndian.Uint32(rec) {
				return st, fmt.Errorf("archive: %s: record at offset %d: CRC mismatch (damaged)", p, off)
			}
			e, err := readEntry(bytes.NewReader(rec[4:]))
			if err != nil {
				return st, fmt.Errorf("archive: %s: record at offset %d: %w", p, off, err)
			}
			want := st.last + 1
			if st.last == 0 {
				want, st.first = start, start
			}
			if e.Index != want || e.Term < st.lastTerm {
				return st, fmt.Errorf("archive: %s: entry %d (term %d) at offset %d where %d was expected after term %d (damaged)", p, e.Index, e.Term, off, want, st.lastTerm)
			}
			st.last, st.lastTerm = e.Index, e.Term
			if fn != nil && e.Index > after && e.Index <= upTo {
				if err := fn(e); err != nil {
					return st, err
				}
			}
			off += sz + 4 + int(n)
		}
	}
	return st, nil
}

// archiveTerm returns the term of entry index in the archive (ok false if it does not hold it).
func archiveTerm(dir string, index uint64) (uint64, bool, error) {
	var term uint64
	found := false
	_, err := readArchive(dir, index-1, index, func(e klog.Entry) error {
		term, found = e.Term, true
		return nil
	})
	return term, found, err
}

// withArchive extends the backup m (a chain's view) with the log archive in dir: the archive must
// be of the same cluster and hold the entry after the backup's end (or reach back into the backup,
// with the same term at its end); m's end becomes the archive's.
func withArchive(m Manifest, dir string) (Manifest, error) {
	var info ArchiveInfo
	b, err := os.ReadFile(filepath.Join(dir, ArchiveFileName))
	if err != nil {
		return m, fmt.Errorf("restore: --log-dir %s: %w (not a log archive?)", dir, err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return m, fmt.Errorf("restore: %s: %w (damaged)", filepath.Join(dir, ArchiveFileName), err)
	}
	if info.ClusterUUID != m.ClusterUUID {
		return m, fmt.Errorf("restore: --log-dir %s is the log of cluster %s; the backup is of cluster %s", dir, info.ClusterUUID, m.ClusterUUID)
	}
	var afterEnd *klog.Entry // the archive's entry right after the backup's end
	st, err := readArchive(dir, m.EndIndex, m.EndIndex+1, func(e klog.Entry) error {
		afterEnd = &e
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("restore: %w", err)
	}
	switch {
	case st.last == 0:
		return m, fmt.Errorf("restore: --log-dir %s holds no entries", dir)
	case st.last <= m.EndIndex:
		return m, nil // nothing beyond the backup
	case st.first > m.EndIndex+1:
		return m, fmt.Errorf("restore: --log-dir %s starts at index %d, after the backup's end %d: a gap", dir, st.first, m.EndIndex)
	}
	if st.first <= m.EndIndex && m.EndIndex > 0 {
		if term, ok, err := archiveTerm(dir, m.EndIndex); err != nil || !ok || term != m.EndTerm {
			return m, fmt.Errorf("restore: --log-dir %s has term %d at the backup's end %d, the backup %d (%v): not the same history", dir, term, m.EndIndex, m.EndTerm, err)
		}
	}
	if afterEnd == nil || afterEnd.Term < m.EndTerm {
		return m, fmt.Errorf("restore: --log-dir %s does not continue the backup after index %d (term %d)", dir, m.EndIndex, m.EndTerm)
	}
	m.EndIndex, m.EndTerm, m.EndCommitTime = st.last, st.lastTerm, nil
	m.Entries = m.EndIndex - m.EngineIndex
	m.GTID = GTIDSet(m.ClusterUUID, m.EndIndex)
	return m, nil
}

// ArchiveStatus is what VerifyArchive found.
type ArchiveStatus struct {
	ArchiveInfo
	First, Last, LastTerm uint64
	// Unfinished names the newest segment if it ends inside a record (an archiver was stopped
	// mid-write, or is writing now); the next archiver run cuts it off.
	Unfinished string `json:",omitempty"`
}

// VerifyArchive checks a log archive without changing it: its identity file, every record's CRC,
// indexes contiguous across segments, terms non-decreasing. Errors name the file and offset.
func VerifyArchive(dir string) (ArchiveStatus, error) {
	var s ArchiveStatus
	b, err := os.ReadFile(filepath.Join(dir, ArchiveFileName))
	if err != nil {
		return s, fmt.Errorf("archive: %w (not a log archive?)", err)
	}
	if err := json.Unmarshal(b, &s.ArchiveInfo); err != nil {
		return s, fmt.Errorf("archive: %s: %w (damaged)", filepath.Join(dir, ArchiveFileName), err)
	}
	st, err := readArchive(dir, 0, 0, nil)
	if err != nil {
		return s, err
	}
	s.First, s.Last, s.LastTerm, s.Unfinished = st.first, st.last, st.lastTerm, st.tailFile
	return s, nil
}
