package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Write-set records: what COMMIT puts in the binlog and what every node applies, in log order.
//
//	record  = version(1) op*
//	op      = kind(1) uvarint(len(key)) key uvarint(len(value)) value
//	kind    = 1 set | 2 delete (empty value) | 3 delete range [key, value)
//
// Range deletions come first, then point writes in key order, exactly as WriteSet.Apply orders them,
// so applying a record reproduces the transaction's final writes.
const recordVersion = 1

const (
	opSet         = 1
	opDelete      = 2
	opDeleteRange = 3
)

// Encode returns the write set as a record.
func (w *WriteSet) Encode() []byte {
	n := 1
	for _, r := range w.ranges {
		n += 1 + 2*binary.MaxVarintLen32 + len(r.lo) + len(r.hi)
	}
	w.tree.Ascend(func(e wsEntry) bool {
		n += 1 + 2*binary.MaxVarintLen32 + len(e.key) + len(e.val)
		return true
	})
	buf := make([]byte, 0, n)
	buf = append(buf, recordVersion)
	put := func(kind byte, k, v []byte) {
		buf = append(buf, kind)
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		buf = append(buf, v...)
	}
	for _, r := range w.ranges {
		put(opDeleteRange, r.lo, r.hi)
	}
	w.tree.Ascend(func(e wsEntry) bool {
		k := []byte(e.key)
		for _, r := range w.ranges {
			if r.seq > e.seq && inRange(k, r) {
				return true
			}
		}
		if e.del {
			put(opDelete, k, nil)
		} else {
			put(opSet, k, e.val)
		}
		return true
	})
	return buf
}

// Batch is what a record is applied into (an engine batch).
type Batch interface {
	Set(k, v []byte) error
	Delete(k []byte) error
	DeleteRange(lo, hi []byte) error
}

var errBadRecord = errors.New("txn: malformed write-set record")

// ApplyRecord decodes a record into b. A malformed record is an error, never a partial guess.
func ApplyRecord(rec []byte, b Batch) error {
	if len(rec) == 0 || rec[0] != recordVersion {
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
		var err error
		switch kind {
		case opSet:
			err = b.Set(k, v)
		case opDelete:
			err = b.Delete(k)
		case opDeleteRange:
			err = b.DeleteRange(k, v)
		default:
			return fmt.Errorf("%w: op %d", errBadRecord, kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
