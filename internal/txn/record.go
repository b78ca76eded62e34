package txn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kiln-db/kiln/internal/engine"
)

// Write-set records: what COMMIT puts in the binlog and what every node applies, in log order.
//
//	record  = version(1) op*
//	op      = kind(1) uvarint(len(key)) key uvarint(len(value)) value
//	kind    = 1 set | 2 delete (empty value) | 3 delete range [key, value)
//	          | 4 logical operation (key = its registered name, value = its payload)
//	          | 5 before-image (value = the key's committed value before the transaction)
//	          | 6 before-image: the key did not exist (empty value)
//
// Before-images come first (only when the transaction asked for them, for change data capture; apply
// skips them), then range deletions, then point writes in key order, then logical operations in the
// order they were added, so applying a record reproduces the transaction's final writes. Version 1 records
// hold no logical operation; version 2 records do, and are applied on top of every earlier record
// (RecordReadsState): a logical operation reads the engine, e.g. to build an index from the table's
// rows, so DDL stays a small record whatever the table's size.
const (
	recordVersion        = 1
	recordVersionLogical = 2
)

const (
	opSet         = 1
	opDelete      = 2
	opDeleteRange = 3
	opLogical     = 4
	opBefore      = 5
	opBeforeNone  = 6
)

// LogicalFunc applies a logical operation's payload at apply time: it reads the engine's state (every
// earlier record applied, none of this record's point writes) and writes into b. It must be
// deterministic (every node and every replay must produce the same writes) and must not fail on input
// the statement validated: a record in the log can no longer be refused.
type LogicalFunc func(payload []byte, eng Reader, b Batch) error

// Applier applies records to an engine batch with a fixed set of logical operations (the SQL
// layer's DDL operations, passed in by whoever wires the node: this package cannot import sql). It
// is the commit path's repl.Applier.
type Applier struct {
	logical map[string]LogicalFunc
	watch   []byte // CountWrites' prefix
	written atomic.Uint64
}

// CountWrites makes the applier count the records that write (set, delete or range-delete) a key
// starting with prefix: the SQL layer watches its catalog this way on replicas.
func (a *Applier) CountWrites(prefix []byte) { a.watch = append([]byte(nil), prefix...) }

// Writes is how many applied records wrote under CountWrites' prefix.
func (a *Applier) Writes() uint64 { return a.written.Load() }

// NewApplier returns an applier that knows the given logical operations.
func NewApplier(ops map[string]LogicalFunc) *Applier {
	m := make(map[string]LogicalFunc, len(ops))
	for k, v := range ops {
		m[k] = v
	}
	return &Applier{logical: m}
}

// Apply decodes rec into b (see ApplyRecord).
func (a *Applier) Apply(rec []byte, eng *engine.Engine, b *engine.Batch) error {
	var r Reader
	if eng != nil { // a nil *engine.Engine must stay a nil Reader (ApplyRecord checks it)
		r = eng
	}
	if err := a.ApplyRecord(rec, r, b); err != nil {
		return err
	}
	if len(a.watch) > 0 && a.touches(rec) {
		a.written.Add(1)
	}
	return nil
}

func (a *Applier) touches(rec []byte) bool {
	hit := false
	_ = forEachOp(rec, func(kind byte, k, v []byte) error {
		switch kind {
		case opSet, opDelete:
			hit = hit || bytes.HasPrefix(k, a.watch)
		case opDeleteRange:
			// [k, v) meets the prefix's span.
			hit = hit || bytes.HasPrefix(k, a.watch) || (bytes.Compare(k, a.watch) < 0 && bytes.Compare(v, a.watch) > 0)
		}
		return nil
	})
	return hit
}

// ReadsState reports whether rec holds logical operations (RecordReadsState).
func (a *Applier) ReadsState(rec []byte) bool { return RecordReadsState(rec) }

// Logical adds a logical operation to the transaction's record.
func (t *Txn) Logical(name string, payload []byte) {
	t.ws.logical = append(t.ws.logical, logicalOp{name: name, payload: payload})
}

type logicalOp struct {
	name    string
	payload []byte
}

// RecordReadsState reports whether rec holds logical operations: the caller must have applied every
// earlier record to the engine (not just to a pending batch) before applying it.
func RecordReadsState(rec []byte) bool { return len(rec) > 0 && rec[0] == recordVersionLogical }

// Encode returns the write set as a record.
func (w *WriteSet) Encode() []byte { return w.encode(0) }

// encode returns the write set as a record after headroom bytes left for the committer
// (RecordFramer): the record is the returned slice's bytes from headroom on.
func (w *WriteSet) encode(headroom int) []byte {
	n := headroom + 1
	for _, r := range w.ranges {
		n += 1 + 2*binary.MaxVarintLen32 + len(r.lo) + len(r.hi)
	}
	w.pts.ascend(func(e wsEntry) bool {
		n += 1 + 2*binary.MaxVarintLen32 + len(e.key) + len(e.val)
		return true
	})
	for _, l := range w.logical {
		n += 1 + 2*binary.MaxVarintLen32 + len(l.name) + len(l.payload)
	}
	for _, b := range w.before {
		n += 1 + 2*binary.MaxVarintLen32 + len(b.key) + len(b.val)
	}
	buf := make([]byte, headroom, n)
	if len(w.logical) > 0 {
		buf = append(buf, recordVersionLogical)
	} else {
		buf = append(buf, recordVersion)
	}
	// Keys are appended from their strings, not converted to []byte first: that was an allocation
	// per written key at every commit (a bulk INSERT commits thousands).
	put := func(kind byte, k string, v []byte) {
		buf = append(buf, kind)
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		buf = append(buf, v...)
	}
	for _, b := range w.before {
		if b.exists {
			put(opBefore, b.key, b.val)
		} else {
			put(opBeforeNone, b.key, nil)
		}
	}
	for _, r := range w.ranges {
		put(opDeleteRange, string(r.lo), r.hi)
	}
	w.pts.ascend(func(e wsEntry) bool {
		if len(w.ranges) > 0 {
			k := unsafe.Slice(unsafe.StringData(e.key), len(e.key)) // read only, by inRange
			for _, r := range w.ranges {
				if r.seq > e.seq && inRange(k, r) {
					return true
				}
			}
		}
		if e.del {
			put(opDelete, e.key, nil)
		} else {
			put(opSet, e.key, e.val)
		}
		return true
	})
	for _, l := range w.logical {
		put(opLogical, l.name, l.payload)
	}
	return buf
}

// Batch is what a record is applied into (an engine batch).
type Batch interface {
	Set(k, v []byte) error
	Delete(k []byte) error
	DeleteRange(lo, hi []byte) error
}

var errBadRecord = errors.New("txn: malformed write-set record")

// ApplyRecord decodes a record into b. eng is what logical operations read (see RecordReadsState); it
// may be nil for records without any. A malformed record or an unknown logical operation is an error,
// never a partial guess.
func (a *Applier) ApplyRecord(rec []byte, eng Reader, b Batch) error {
	return forEachOp(rec, func(kind byte, k, v []byte) error {
		switch kind {
		case opSet:
			return b.Set(k, v)
		case opDelete:
			return b.Delete(k)
		case opDeleteRange:
			return b.DeleteRange(k, v)
		case opBefore, opBeforeNone:
			// For change data capture readers (Changes); the engine needs only the after-images.
			return nil
		case opLogical:
			if rec[0] != recordVersionLogical {
				return fmt.Errorf("%w: logical operation in a version 1 record", errBadRecord)
			}
			fn, ok := a.logical[string(k)]
			if !ok {
				return fmt.Errorf("txn: record needs logical operation %q, which this build does not know", k)
			}
			if eng == nil {
				return fmt.Errorf("txn: logical operation %q applied without an engine", k)
			}
			if err := fn(v, eng, b); err != nil {
				return fmt.Errorf("txn: logical operation %q: %w", k, err)
			}
			return nil
		}
		return fmt.Errorf("%w: op %d", errBadRecord, kind)
	})
}

// forEachOp checks a record's version and framing and calls fn for each op in order; it stops at the
// first error.
func forEachOp(rec []byte, fn func(kind byte, k, v []byte) error) error {
	if len(rec) == 0 || (rec[0] != recordVersion && rec[0] != recordVersionLogical) {
		return fmt.Errorf("%w: version %v", errBadRecord, rec[:min(1, len(rec))])
	}
	p := rec[1:]
	next := func() ([]byte, bool) {
		n, sz := binary.Uvarint(p)
		if sz <= 0 || n > uint64(len(p)-sz) {
			return nil, false
		}
		v := p[sz : sz+int(n)]
		p = p[sz+int(n):]
		return v, true
	}
	for len(p) > 0 {
		kind := p[0]
		p = p[1:]
		k, ok1 := next()
		v, ok2 := next()
		if !ok1 || !ok2 {
			return errBadRecord
		}
		if err := fn(kind, k, v); err != nil {
			return err
		}
	}
	return nil
}

// Change is one operation of a record, as change data capture reads it.
type Change struct {
	Kind   string // "set", "delete", "delete-range", "logical", "before", "before-none"
	Key    []byte // for delete-range: the start; for logical: the operation's name
	Value  []byte // for set: the after-image; for delete-range: the end; for before: the before-image
	Before []byte // for set and delete: the before-image, if the record carries one
	// HadBefore says whether Before is known (the record carries before-images for the key), and
	// Existed whether the key existed before the transaction.
	HadBefore, Existed bool
}

// Changes decodes a record for change data capture: its point writes carry their before-images when
// the transaction recorded them (Txn.SetBeforeImages).
func Changes(rec []byte) ([]Change, error) {
	names := map[byte]string{opSet: "set", opDelete: "delete", opDeleteRange: "delete-range", opLogical: "logical",
		opBefore: "before", opBeforeNone: "before-none"}
	var out []Change
	before := map[string]int{}
	err := forEachOp(rec, func(kind byte, k, v []byte) error {
		name, ok := names[kind]
		if !ok {
			return fmt.Errorf("%w: op %d", errBadRecord, kind)
		}
		c := Change{Kind: name, Key: k, Value: v}
		switch kind {
		case opBefore, opBeforeNone:
			before[string(k)] = len(out)
		case opSet, opDelete:
			if i, ok := before[string(k)]; ok {
				c.HadBefore, c.Existed = true, out[i].Kind == "before"
				if c.Existed {
					c.Before = out[i].Value
				}
			}
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
