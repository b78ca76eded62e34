package log

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Report is what Check found. Open would serve entries [FirstIndex, LastIndex] and HardState; it would
// truncate TornTail (if set) and refuse to start on Corruption (if set).
type Report struct {
	Dir        string
	Segments   []SegmentReport
	Leftovers  []string // temporary files of an interrupted roll or repair (Open removes them)
	FirstIndex uint64
	LastIndex  uint64
	HardState  HardState
	TornTail   *TornTail
	Corruption *CorruptionError
}

// SegmentReport describes one segment file's framing: records are verified up to ValidEnd.
type SegmentReport struct {
	File                  string
	FirstIndex            uint64 // from the header
	Size                  int64
	ValidEnd              int64 // end of the last valid record
	Records               int
	Entries               int
	MinEntry, MaxEntry    uint64 // index range of the entry records (overwritten ones included)
	HardStates, Truncates int
	Batches               int
	BadOffset             int64  // first unusable record, -1 if none
	BadReason             string // why it is unusable
	// Preallocated is the zero-filled space after ValidEnd that a preallocating log keeps as room for
	// its next writes (the last segment only, and only when every byte of it is zero).
	Preallocated int64
}

// TornTail is an unsynced tail: everything from Offset on is dropped by Open.
type TornTail struct {
	File    string
	Offset  int64
	Dropped int64 // bytes
	Reason  string
	// Fill: the segment is preallocated, so Open overwrites [Offset, Offset+Dropped) (up to the last
	// non-zero byte) with zeros and keeps the file's size, instead of cutting the file at Offset.
	Fill bool
}

// OK reports whether Open would start on this log.
func (r *Report) OK() bool { return r.Corruption == nil }

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "log %s: %d segment(s)\n", r.Dir, len(r.Segments))
	for _, s := range r.Segments {
		fmt.Fprintf(&b, "  %s: first index %d, %d bytes, valid to %d, %d records (%d entries",
			s.File, s.FirstIndex, s.Size, s.ValidEnd, s.Records, s.Entries)
		if s.Entries > 0 {
			fmt.Fprintf(&b, " %d..%d", s.MinEntry, s.MaxEntry)
		}
		fmt.Fprintf(&b, ", %d hardstates, %d truncations, %d batches)", s.HardStates, s.Truncates, s.Batches)
		if s.BadOffset >= 0 {
			fmt.Fprintf(&b, "; unusable record at offset %d: %s", s.BadOffset, s.BadReason)
		}
		if s.Preallocated > 0 {
			fmt.Fprintf(&b, "; %d bytes preallocated (zero-filled) after it", s.Preallocated)
		}
		b.WriteByte('\n')
	}
	for _, f := range r.Leftovers {
		fmt.Fprintf(&b, "  leftover temporary file %s\n", f)
	}
	fmt.Fprintf(&b, "  entries %d..%d, hardstate term %d vote %d commit %d\n",
		r.FirstIndex, r.LastIndex, r.HardState.Term, r.HardState.Vote, r.HardState.Commit)
	if t := r.TornTail; t != nil {
		action := "open truncates it"
		if t.Fill {
			action = "open overwrites it with zeros"
		}
		fmt.Fprintf(&b, "  torn tail in %s at offset %d (%d bytes, %s): %s\n",
			t.File, t.Offset, t.Dropped, t.Reason, action)
	}
	if c := r.Corruption; c != nil {
		fmt.Fprintf(&b, "  CORRUPT: %s at offset %d: %s: open refuses to start\n", c.File, c.Offset, c.Reason)
	} else {
		b.WriteString("  ok\n")
	}
	return b.String()
}

// Check verifies a stopped node's log without changing it: every segment's header and records (framing,
// CRC, index contiguity), and what Open would do. The error is non-nil if the log cannot be read or
// Open would refuse it (then it is the *CorruptionError, also in Report.Corruption); a torn tail is
// reported, not an error, because Open repairs it. Check reports what Open(dir, Options{FS: fs}) would
// do; CheckOptions what Open with other options would (a preallocating log's zero-filled remainder).
func Check(fs vfs.FS, dir string) (Report, error) {
	return CheckOptions(dir, Options{FS: fs})
}

// CheckOptions is Check for a log that Open(dir, o) would open: with o.Preallocate, a zero-filled
// remainder of the last segment is its clean end (Report.Segments[i].Preallocated), and a torn tail is
// overwritten with zeros rather than cut off (TornTail.Fill).
func CheckOptions(dir string, o Options) (Report, error) {
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	rep := Report{Dir: dir, FirstIndex: 1}
	names, err := fs.List(dir)
	if err != nil {
		return rep, fmt.Errorf("log: list %s: %w", dir, err)
	}
	var segNames []string
	for _, n := range names {
		if isTmpName(n) {
			rep.Leftovers = append(rep.Leftovers, fs.PathJoin(dir, n))
		} else if _, ok := parseSegName(n); ok {
			segNames = append(segNames, n)
		}
	}
	sort.Strings(segNames)
	sc := &scan{fs: fs, dir: dir, check: true, zeroEnd: o.Preallocate}
	defer func() {
		for _, s := range sc.segs {
			if s.f != nil {
				s.f.Close()
			}
		}
	}()
	err = sc.run(segNames)
	rep.Segments = sc.reports
	if sc.idx.first > 0 { // else no segment header was readable
		rep.FirstIndex, rep.LastIndex = sc.idx.first, sc.idx.last
	}
	rep.HardState = sc.hs
	rep.TornTail = sc.torn
	rep.Corruption = sc.corrupt
	if err != nil {
		return rep, err
	}
	if sc.corrupt != nil {
		return rep, sc.corrupt
	}
	return rep, nil
}

// scanSeg is one segment as found by a scan.
type scanSeg struct {
	path            string
	first, prevTerm uint64
	f               vfs.File
	size, validEnd  int64
}

// scan replays the segments in order: the recovery of Open and the verification of Check.
type scan struct {
	fs          vfs.FS
	dir         string
	keepCache   bool  // Open: keep the newest entries in memory
	cacheBudget int64 //
	check       bool  // Check: after corruption, keep verifying framing for the report
	zeroEnd     bool  // preallocating log: a zero-filled remainder of the last segment is its clean end

	segs     []*scanSeg
	reports  []SegmentReport
	idx      index
	cache    cache
	hs       HardState
	seq      uint64 // last batch sequence number seen
	seqKnown bool
	torn     *TornTail
	corrupt  *CorruptionError
}

func (sc *scan) fail(path string, off int64, reason string) {
	if sc.corrupt == nil {
		sc.corrupt = &CorruptionError{File: path, Offset: off, Reason: reason}
	}
}

// run scans every segment. Its error is for I/O failures; what the data says is in torn and corrupt.
func (sc *scan) run(names []string) error {
	for i, name := range names {
		if sc.corrupt != nil && !sc.check {
			return nil
		}
		path := sc.fs.PathJoin(sc.dir, name)
		f, err := sc.fs.Open(path)
		if err != nil {
			return fmt.Errorf("log: open %s: %w", path, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("log: stat %s: %w", path, err)
		}
		seg := &scanSeg{path: path, f: f, size: st.Size()}
		sc.segs = append(sc.segs, seg)
		rep := SegmentReport{File: path, Size: seg.size, BadOffset: -1}
		err = sc.segment(seg, name, i == len(names)-1, &rep)
		sc.reports = append(sc.reports, rep)
		if err != nil {
			return err
		}
	}
	return nil
}

func (sc *scan) segment(seg *scanSeg, name string, last bool, rep *SegmentReport) error {
	rd := newFileReader(seg.f, seg.size, readWindow)
	semantic := sc.corrupt == nil
	// A segment is published complete (written, synced, then renamed into place), so its header is
	// never torn: any problem with it is corruption.
	if seg.size < segHeaderSize {
		rep.BadOffset, rep.BadReason = 0, "file shorter than the segment header"
		sc.fail(seg.path, 0, rep.BadReason)
		return nil
	}
	h, err := rd.at(0, segHeaderSize)
	if err != nil {
		return fmt.Errorf("log: read %s: %w", seg.path, err)
	}
	first, prevTerm, reason := parseSegHeader(h)
	if nameFirst, _ := parseSegName(name); reason == "" && first != nameFirst {
		reason = fmt.Sprintf("the header says first index %d, the file name %d", first, nameFirst)
	}
	if reason != "" {
		rep.BadOffset, rep.BadReason = 0, reason
		sc.fail(seg.path, 0, reason)
		return nil
	}
	seg.first, seg.prevTerm = first, prevTerm
	rep.FirstIndex = first
	if semantic {
		if r := sc.startSegment(first, prevTerm, len(sc.segs) == 1); r != "" {
			sc.fail(seg.path, 0, r)
			semantic = false
		}
	}
	off := int64(segHeaderSize)
	for {
		if !semantic && !sc.check {
			break
		}
		rec, reason, err := rd.readRecord(off)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("log: read %s: %w", seg.path, err)
		}
		if reason != "" {
			tornEnd := seg.size
			if last && sc.zeroEnd {
				// A preallocated segment: its space was zero-filled and synced when it was made, and
				// writes overwrite it in order. If every byte from here on is zero, this is where the
				// writes stopped (exactly as if the file ended here), not damage. Anything non-zero
				// is judged by badPoint's rules as before; the torn extent ends at the last non-zero
				// byte, since everything after it is preallocated space again.
				nz, err := rd.nonZeroEnd(off)
				if err != nil {
					return fmt.Errorf("log: read %s: %w", seg.path, err)
				}
				if nz == off {
					rep.Preallocated = seg.size - off
					break
				}
				tornEnd = nz
			}
			rep.BadOffset, rep.BadReason = off, reason
			if semantic {
				if err := sc.badPoint(seg, rd, last, off, tornEnd, reason); err != nil {
					return err
				}
			}
			break
		}
		rep.Records++
		switch rec.typ {
		case recEntry:
			i := binary.LittleEndian.Uint64(rec.payload)
			if rep.Entries == 0 || i < rep.MinEntry {
				rep.MinEntry = i
			}
			rep.MaxEntry = max(rep.MaxEntry, i)
			rep.Entries++
		case recHardState:
			rep.HardStates++
		case recTruncate:
			rep.Truncates++
		case recBatch:
			rep.Batches++
		}
		if semantic {
			if r := sc.apply(seg, rec, off); r != "" {
				sc.fail(seg.path, off, r)
				semantic = false
			}
		}
		off += rec.size
	}
	seg.validEnd = off
	rep.ValidEnd = off
	return nil
}

// startSegment checks a segment header against the log so far. A segment may start at or below the
// previous last index: it was rolled with a copy of the uncommitted tail (see maybeRoll), and its start
// implies a truncation of what the older segment held from there on.
func (sc *scan) startSegment(first, prevTerm uint64, isFirst bool) string {
	if isFirst {
		if first == 0 {
			return "segment first index 0"
		}
		sc.idx = newIndex(first, prevTerm)
		sc.cache.first = first
		return ""
	}
	x := &sc.idx
	if first > x.last+1 {
		return fmt.Sprintf("gap: the segment starts at index %d but the log before it ends at %d", first, x.last)
	}
	if first <= x.last && first <= sc.hs.Commit {
		return fmt.Sprintf("the segment starts at index %d, which would drop entries at or below the durable commit index %d",
			first, sc.hs.Commit)
	}
	if t, _ := x.term(first - 1); t != prevTerm {
		return fmt.Sprintf("the header gives term %d for entry %d, the log before it has term %d", prevTerm, first-1, t)
	}
	if first <= x.last {
		x.truncate(first)
		sc.cache.truncate(first)
	}
	return ""
}

// apply replays one verified record; a non-empty result is a corruption reason. A record that passed
// its CRC but breaks the log's rules cannot come from a torn write (a torn write makes records unreadable,
// it does not rewrite them), so it is never treated as a torn tail.
func (sc *scan) apply(seg *scanSeg, rec record, off int64) string {
	p := rec.payload
	switch rec.typ {
	case recEntry:
		e := decodeEntry(p)
		if e.Index != sc.idx.last+1 {
			return fmt.Sprintf("entry %d where entry %d was expected (entries must be contiguous)", e.Index, sc.idx.last+1)
		}
		sc.idx.push(e.Index, e.Term, off)
		if sc.keepCache {
			if e.Data != nil {
				e.Data = append([]byte(nil), e.Data...) // the reader's window is reused
			}
			sc.cache.push(e)
			sc.cache.evict(sc.cacheBudget, math.MaxUint64)
		}
	case recHardState:
		sc.hs = decodeHardState(p)
	case recTruncate:
		k := binary.LittleEndian.Uint64(p)
		if k < seg.first || k > sc.idx.last+1 {
			return fmt.Sprintf("truncation to %d outside the segment's entries %d..%d", k, seg.first, sc.idx.last)
		}
		if k <= sc.hs.Commit {
			return fmt.Sprintf("truncation to %d would drop entries at or below the durable commit index %d", k, sc.hs.Commit)
		}
		sc.idx.truncate(k)
		sc.cache.truncate(k)
	case recBatch:
		s := binary.LittleEndian.Uint64(p)
		if sc.seqKnown && s != sc.seq+1 {
			return fmt.Sprintf("batch %d follows batch %d", s, sc.seq)
		}
		sc.seq, sc.seqKnown = s, true
	}
	return ""
}

// badPoint decides whether the first unusable record (at off) starts a torn tail or is corruption.
//
// A torn tail is the unsynced end of the last write: it may hold garbage, zero-filled blocks and stray
// valid records after a hole. It is only acceptable if nothing that had been synced is lost. Three
// things prove that the data at off had been synced, and then we refuse to start:
//   - a later segment exists (a segment is sealed with an fsync before the next one is created);
//   - an entry at or below the commit index of the last HardState read so far is missing (hardstate
//     records are written after the entries they cover, so all of them should have been read by now);
//   - a batch record with a higher sequence number follows (a write starts only after the previous
//     write's fsync returned). This catches a damaged entry that a later HardState's commit covers, which
//     the first two rules cannot see because that HardState lies beyond the damage.
//
// In a preallocating log (zeroEnd) the torn tail ends at tornEnd, the end of its last non-zero byte, and
// Open overwrites it with zeros (Fill) instead of cutting the file.
func (sc *scan) badPoint(seg *scanSeg, rd *fileReader, last bool, off, tornEnd int64, reason string) error {
	if !last {
		sc.fail(seg.path, off, reason+"; a later segment exists, so this data had been synced")
		return nil
	}
	if sc.idx.last < sc.hs.Commit {
		sc.fail(seg.path, off, fmt.Sprintf("%s; entry %d, at or below the durable commit index %d, is damaged or missing",
			reason, sc.idx.last+1, sc.hs.Commit))
		return nil
	}
	at, seq, found, err := rd.findBatchAfter(off, sc.seq, sc.seqKnown)
	if err != nil {
		return fmt.Errorf("log: read %s: %w", seg.path, err)
	}
	if found {
		sc.fail(seg.path, off, fmt.Sprintf("%s; a later write (batch %d at offset %d) shows this data had been synced",
			reason, seq, at))
		return nil
	}
	sc.torn = &TornTail{File: seg.path, Offset: off, Dropped: tornEnd - off, Reason: reason, Fill: sc.zeroEnd}
	return nil
}
