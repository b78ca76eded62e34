// Package backup owns Kiln's online backups: a consistent engine snapshot at an applied log index N
// plus the committed log entries after it, streamed from a running node (Serve), written to a
// directory with a manifest of checksums (Fetch), checked (Verify) and turned into a data directory
// rolled forward to any index between N and the backup's end (Restore).
//
// The engine is a pure function of the log: the snapshot at N and the entries N+1..E hold the
// state at every index from N to E, so one backup gives every point in that range, and a restore
// stops only on an entry boundary (an entry is one whole commit: never half a transaction).
//
// Invariants:
//  1. The snapshot is a pebble snapshot, so it holds exactly the batches up to its applied index N
//     (the engine writes the index atomically with the data it applies).
//  2. Only applied (hence committed) entries are copied: a backup never holds an entry that a
//     leader change could still replace.
//  3. A backup directory is complete only once MANIFEST.json is written (last, atomically); every
//     other file is listed in it with its size and SHA-256, and Verify/Restore refuse anything else.
package backup

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	klog "github.com/kiln-db/kiln/internal/log"
)

// FormatVersion is the version of the logical stream and of its backup directory's layout; the
// file form (files.go) is FormatFiles. Both are read.
const FormatVersion = 1

// The stream Serve writes and Fetch reads:
//
//	stream  = magic frame* trailer sha256[32]
//	magic   = "KILNBAK1"
//	frame   = 'h' uvarint(len) header-json     (first, once)
//	        | 'k' kv                            (engine keys, strictly ascending)
//	        | 'l' entry                         (log entries N+1.., contiguous)
//	trailer = 't' uvarint(len) trailer-json
//	kv      = uvarint(len k) k uvarint(len v) v
//	entry   = uvarint(index) uvarint(term) type u8 uvarint(len data) data
//
// The SHA-256 covers every byte before it. A backup directory's files hold the same kv and entry
// encodings (without the frame byte): engine/NNNNNN.kv and log/NNNNNN.ent.
const (
	streamMagic  = "KILNBAK1"
	frameHeader  = 'h'
	frameKV      = 'k'
	frameEntry   = 'l'
	frameTrailer = 't'

	maxKeyBytes  = 1 << 20
	maxValBytes  = 256 << 20
	maxJSONBytes = 1 << 20
)

// Header opens a stream: where the engine snapshot is and whose it is.
type Header struct {
	Format      int    `json:"format"`
	DataFormat  int    `json:"data_format"`
	ClusterID   string `json:"cluster_id"`
	ClusterUUID string `json:"cluster_uuid"`
	Node        uint64 `json:"node"`
	EngineIndex uint64 `json:"engine_index"`
	EngineTerm  uint64 `json:"engine_term"`
	// EngineTime is the commit time (Unix nanoseconds) of the last commit at or below EngineIndex,
	// when the node's log still holds it and it carries one (0: unknown).
	EngineTime int64 `json:"engine_time,omitempty"`
	// Incremental: no engine keys follow; EngineIndex is where the previous backup ended.
	Incremental bool `json:"incremental,omitempty"`
}

// Trailer closes a stream: where the log copy ended and how much was sent.
type Trailer struct {
	EndIndex uint64 `json:"end_index"`
	EndTerm  uint64 `json:"end_term"`
	Keys     uint64 `json:"keys"`
	Entries  uint64 `json:"entries"`
	// Files and Refs count the engine files a file-form stream sent and referred to (files.go).
	Files uint64 `json:"files,omitempty"`
	Refs  uint64 `json:"refs,omitempty"`
}

func appendKV(b, k, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendEntry(b []byte, e klog.Entry) []byte {
	b = binary.AppendUvarint(b, e.Index)
	b = binary.AppendUvarint(b, e.Term)
	b = append(b, e.Type)
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	return append(b, e.Data...)
}

// reader is what the record decoders read from (a bufio.Reader, or hashing's wrapper of one).
type reader interface {
	io.Reader
	io.ByteReader
}

// hashing passes through what its decoder consumes to h: exactly the bytes parsed so far, however
// far the buffer below has read ahead.
type hashing struct {
	r *bufio.Reader
	h hash.Hash
}

func (x hashing) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	x.h.Write(p[:n])
	return n, err
}

func (x hashing) ReadByte() (byte, error) {
	c, err := x.r.ReadByte()
	if err == nil {
		x.h.Write([]byte{c})
	}
	return c, err
}

// errShort marks input that ends inside a record: a truncated file or stream.
var errShort = errors.New("ends inside a record (truncated)")

func readBytes(r reader, limit uint64, what string) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, short(err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s of %d bytes exceeds %d (damaged)", what, n, limit)
	}
	if n > 1<<20 {
		// Grow with what arrives: a damaged length must not allocate its size before the
		// input proves it has that many bytes.
		var buf bytes.Buffer
		if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
			return nil, short(err)
		}
		return buf.Bytes(), nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, short(err)
	}
	return b, nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errShort
	}
	return err
}

func readKV(r reader) (k, v []byte, err error) {
	if k, err = readBytes(r, maxKeyBytes, "key"); err != nil {
		return nil, nil, err
	}
	v, err = readBytes(r, maxValBytes, "value")
	return k, v, err
}

func readEntry(r reader) (klog.Entry, error) {
	var e klog.Entry
	var err error
	if e.Index, err = binary.ReadUvarint(r); err != nil {
		return e, short(err)
	}
	if e.Term, err = binary.ReadUvarint(r); err != nil {
		return e, short(err)
	}
	if e.Type, err = r.ReadByte(); err != nil {
		return e, short(err)
	}
	d, err := readBytes(r, klog.MaxEntryData, "entry data")
	if err != nil {
		return e, err
	}
	if len(d) > 0 {
		e.Data = d
	}
	return e, nil
}
