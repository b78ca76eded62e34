package log

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// On-disk format, "kiln binlog format 1" (docs/log-format.md is the reference; keep the two in step).
//
//	segment  = header record*
//	header   = "KILNLOG1" | version u32 | first index u64 | previous term u64 | crc32c u32   (32 bytes)
//	record   = length u32 | type u8 | crc32c u32 | payload[length]
//
// All integers are little-endian. The record CRC covers the type byte and the payload, so a record whose
// type byte was damaged is rejected like any other damage.
const (
	segMagic      = "KILNLOG1"
	formatVersion = 1

	segHeaderSize = 32
	recHeaderSize = 9

	// maxRecordPayload bounds a record's length field: a larger value can only be damage (or a zero-filled
	// or random block), and trusting it would make recovery allocate or skip gigabytes.
	maxRecordPayload = 256 << 20

	recEntry     byte = 1 // index u64 | term u64 | entry type u8 | data
	recHardState byte = 2 // term u64 | vote u64 | commit u64
	recTruncate  byte = 3 // from u64: entries >= from written earlier are void
	recBatch     byte = 4 // seq u64: first record of every write between two fsyncs

	entryFixed       = 17
	hardStateSize    = 24
	truncateSize     = 8
	batchSize        = 8
	batchRecordBytes = recHeaderSize + batchSize

	segSuffix = ".log"
	tmpSuffix = ".log.tmp"

	// spareName is the zero-filled file a preallocating log (Options.Preallocate) prepares for its next
	// segment. It holds no records: a roll writes the new segment's first records over its start and
	// renames it into place. Open removes a leftover one, like a temporary segment.
	spareName = "spare" + tmpSuffix
)

// MaxEntryData is the largest Entry.Data Append accepts (the record length bound minus the entry fields).
const MaxEntryData = maxRecordPayload - entryFixed

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segName is the file name of the segment whose first entry index is first: 20 digits sort numerically
// as strings, so a directory listing is already in log order.
func segName(first uint64) string { return fmt.Sprintf("%020d%s", first, segSuffix) }

// parseSegName returns the first index encoded in a segment file name.
func parseSegName(name string) (uint64, bool) {
	if len(name) != 20+len(segSuffix) || !strings.HasSuffix(name, segSuffix) {
		return 0, false
	}
	for _, c := range name[:20] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(name[:20], 10, 64)
	return n, err == nil
}

func isTmpName(name string) bool {
	return len(name) == 20+len(tmpSuffix) && strings.HasSuffix(name, tmpSuffix) || name == spareName
}

func appendSegHeader(b []byte, first, prevTerm uint64) []byte {
	n := len(b)
	b = append(b, segMagic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint64(b, first)
	b = binary.LittleEndian.AppendUint64(b, prevTerm)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[n:], castagnoli))
}

// parseSegHeader validates a segment header; reason is empty when it is valid.
func parseSegHeader(b []byte) (first, prevTerm uint64, reason string) {
	if len(b) < segHeaderSize {
		return 0, 0, "file shorter than the segment header"
	}
	if string(b[:8]) != segMagic {
		return 0, 0, "bad segment magic"
	}
	if crc32.Checksum(b[:28], castagnoli) != binary.LittleEndian.Uint32(b[28:32]) {
		return 0, 0, "segment header checksum mismatch"
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != formatVersion {
		return 0, 0, fmt.Sprintf("unsupported format version %d (this build reads %d)", v, formatVersion)
	}
	return binary.LittleEndian.Uint64(b[12:20]), binary.LittleEndian.Uint64(b[20:28]), ""
}

// beginRecord reserves a record header for a payload of plen bytes; finishRecord fills in length and CRC
// once the payload is in place. Encoding straight into the caller's buffer avoids a copy per record.
func beginRecord(b []byte, typ byte, plen int) ([]byte, int) {
	n := len(b)
	b = append(b, 0, 0, 0, 0, typ, 0, 0, 0, 0)
	return b, n
}

func finishRecord(b []byte, start int) {
	rec := b[start:]
	plen := len(rec) - recHeaderSize
	binary.LittleEndian.PutUint32(rec[0:4], uint32(plen))
	crc := crc32.Update(0, castagnoli, rec[4:5])
	crc = crc32.Update(crc, castagnoli, rec[recHeaderSize:])
	binary.LittleEndian.PutUint32(rec[5:9], crc)
}

func appendEntryRecord(b []byte, e *Entry) []byte {
	b, s := beginRecord(b, recEntry, entryFixed+len(e.Data))
	b = binary.LittleEndian.AppendUint64(b, e.Index)
	b = binary.LittleEndian.AppendUint64(b, e.Term)
	b = append(b, e.Type)
	b = append(b, e.Data...)
	finishRecord(b, s)
	return b
}

func appendHardStateRecord(b []byte, hs HardState) []byte {
	b, s := beginRecord(b, recHardState, hardStateSize)
	b = binary.LittleEndian.AppendUint64(b, hs.Term)
	b = binary.LittleEndian.AppendUint64(b, hs.Vote)
	b = binary.LittleEndian.AppendUint64(b, hs.Commit)
	finishRecord(b, s)
	return b
}

func appendTruncateRecord(b []byte, from uint64) []byte {
	b, s := beginRecord(b, recTruncate, truncateSize)
	b = binary.LittleEndian.AppendUint64(b, from)
	finishRecord(b, s)
	return b
}

func appendBatchRecord(b []byte, seq uint64) []byte {
	b, s := beginRecord(b, recBatch, batchSize)
	b = binary.LittleEndian.AppendUint64(b, seq)
	finishRecord(b, s)
	return b
}

// setBatchSeq fills in the sequence number of a batch record reserved earlier: the number is only known
// when the batch is written, because batches are numbered in write order.
func setBatchSeq(rec []byte, seq uint64) {
	binary.LittleEndian.PutUint64(rec[recHeaderSize:], seq)
	finishRecord(rec[:batchRecordBytes], 0)
}

func decodeEntry(p []byte) Entry {
	e := Entry{
		Index: binary.LittleEndian.Uint64(p[0:8]),
		Term:  binary.LittleEndian.Uint64(p[8:16]),
		Type:  p[16],
	}
	if len(p) > entryFixed {
		e.Data = p[entryFixed:]
	}
	return e
}

func decodeHardState(p []byte) HardState {
	return HardState{
		Term:   binary.LittleEndian.Uint64(p[0:8]),
		Vote:   binary.LittleEndian.Uint64(p[8:16]),
		Commit: binary.LittleEndian.Uint64(p[16:24]),
	}
}

// entrySize is the size raft's limitSize charges for an entry (the protobuf size of raftpb.Entry, whose
// Type, Term and Index are always encoded and Data only when non-nil), so that our maxBytes cut matches
// the one raft applies on top.
func entrySize(e *Entry) uint64 {
	n := 3 + uvarintLen(uint64(e.Type)) + uvarintLen(e.Term) + uvarintLen(e.Index)
	if e.Data != nil {
		n += 1 + len(e.Data) + uvarintLen(uint64(len(e.Data)))
	}
	return uint64(n)
}

// uvarintLen is the length of x as a protobuf varint (what raftpb.Entry.Size counts).
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// fileReader reads a file through a window buffer, so scanning a segment costs one read call per MiB and
// not two per record.
type fileReader struct {
	f      vfs.File
	size   int64
	window int // bytes read ahead: large for scans, small for the occasional read of old entries
	buf    []byte
	bufOff int64
}

const (
	readWindow    = 1 << 20
	entriesWindow = 64 << 10
)

func newFileReader(f vfs.File, size int64, window int) *fileReader {
	return &fileReader{f: f, size: size, window: window}
}

// at returns n bytes at off, valid until the next call. The caller has checked off+n <= size.
func (r *fileReader) at(off int64, n int) ([]byte, error) {
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		s := off - r.bufOff
		return r.buf[s : s+int64(n)], nil
	}
	want := max(n, r.window)
	if rest := r.size - off; int64(want) > rest {
		want = int(rest)
	}
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, off)
	if m < want {
		r.buf = r.buf[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.bufOff = off
	return r.buf[:n], nil
}

// record is one framed record whose CRC has been verified.
type record struct {
	typ     byte
	payload []byte // valid until the reader's next call
	size    int64  // bytes on disk, header included
}

// readRecord reads and verifies the record at off. It returns (record, "", nil) for a valid record,
// (zero, "", io.EOF) at a clean end of file, and a non-empty reason for a record that cannot be used.
// Nothing in the payload is looked at before the CRC matched (invariant 1 of the package doc).
func (r *fileReader) readRecord(off int64) (record, string, error) {
	rest := r.size - off
	if rest == 0 {
		return record{}, "", io.EOF
	}
	if rest < recHeaderSize {
		return record{}, fmt.Sprintf("short record header (%d bytes before end of file)", rest), nil
	}
	h, err := r.at(off, recHeaderSize)
	if err != nil {
		return record{}, "", err
	}
	plen := int64(binary.LittleEndian.Uint32(h[0:4]))
	typ := h[4]
	want := binary.LittleEndian.Uint32(h[5:9])
	switch {
	case plen == 0:
		return record{}, "zero record length (a hole or zero-filled block)", nil
	case plen > maxRecordPayload:
		return record{}, fmt.Sprintf("record length %d exceeds the %d-byte bound", plen, maxRecordPayload), nil
	case recHeaderSize+plen > rest:
		return record{}, fmt.Sprintf("record of %d bytes runs past the end of the file", recHeaderSize+plen), nil
	}
	b, err := r.at(off, int(recHeaderSize+plen))
	if err != nil {
		return record{}, "", err
	}
	got := crc32.Update(0, castagnoli, b[4:5])
	got = crc32.Update(got, castagnoli, b[recHeaderSize:])
	if got != want {
		return record{}, "record checksum mismatch", nil
	}
	p := b[recHeaderSize:]
	ok := false
	switch typ {
	case recEntry:
		ok = len(p) >= entryFixed
	case recHardState:
		ok = len(p) == hardStateSize
	case recTruncate:
		ok = len(p) == truncateSize
	case recBatch:
		ok = len(p) == batchSize
	default:
		return record{}, fmt.Sprintf("unknown record type %d", typ), nil
	}
	if !ok {
		return record{}, fmt.Sprintf("record type %d with a %d-byte payload", typ, len(p)), nil
	}
	return record{typ: typ, payload: p, size: recHeaderSize + plen}, "", nil
}

// nonZeroEnd returns the offset just past the last non-zero byte in [off, size), or off if every byte
// there is zero: a preallocated segment's remainder, which a preallocating log treats as the clean end.
func (r *fileReader) nonZeroEnd(off int64) (int64, error) {
	end := off
	var zero [4096]byte
	for pos := off; pos < r.size; {
		n := min(int64(readWindow), r.size-pos)
		b, err := r.at(pos, int(n))
		if err != nil {
			return 0, err
		}
		for i := 0; i < len(b); i += len(zero) {
			blk := b[i:min(i+len(zero), len(b))]
			if bytes.Equal(blk, zero[:len(blk)]) {
				continue
			}
			j := len(blk) - 1
			for blk[j] == 0 {
				j--
			}
			end = pos + int64(i+j+1)
		}
		pos += n
	}
	return end, nil
}

// findBatchAfter looks for a valid batch record with a sequence number above seq anywhere after off.
// Finding one proves that a later write happened, and a write only starts after the previous one's fsync
// returned: so the data at off had been synced and its damage is corruption, not a torn tail.
func (r *fileReader) findBatchAfter(off int64, seq uint64, seqKnown bool) (int64, uint64, bool, error) {
	// The header of a batch record is fixed: length 8, type 4. Search for it, then verify the CRC.
	pat := []byte{batchSize, 0, 0, 0, recBatch}
	const chunk = readWindow
	for pos := off + 1; pos+batchRecordBytes <= r.size; {
		n := min(int64(chunk), r.size-pos)
		b, err := r.at(pos, int(n))
		if err != nil {
			return 0, 0, false, err
		}
		b = append([]byte(nil), b...) // readRecord below moves the window
		for i := 0; ; {
			j := bytes.Index(b[i:], pat)
			if j < 0 {
				break
			}
			at := pos + int64(i+j)
			if at+batchRecordBytes <= r.size {
				rec, reason, err := r.readRecord(at)
				if err != nil {
					return 0, 0, false, err
				}
				if reason == "" && rec.typ == recBatch {
					s := binary.LittleEndian.Uint64(rec.payload)
					if !seqKnown || s > seq {
						return at, s, true, nil
					}
				}
			}
			i += j + 1
		}
		if pos+n >= r.size {
			break
		}
		// Overlap chunks so a pattern straddling the boundary is still seen.
		pos += n - int64(len(pat)) + 1
	}
	return 0, 0, false, nil
}
