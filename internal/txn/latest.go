package txn

import (
	"bytes"

	"github.com/kiln-db/kiln/internal/engine"
)

// LatestReader reads keys as GetLatest does (the latest committed version, or the pending version
// of an early-released commit, overlaid with the transaction's own writes), for a statement that
// reads many keys of one span, such as the duplicate-key checks of a multi-row INSERT. Instead of a
// pebble Get per key, which builds an iterator stack per call, it keeps one engine iterator over the
// span and seeks it, and it reopens that iterator whenever the engine's Generation has moved since it
// was opened, so every read still sees the latest committed state, as GetLatest: a commit that became
// visible after the iterator was opened bumped the generation first, and a commit still being applied
// either holds the locks of its keys, which the caller of Get must hold (as for GetLatest), or has
// released them early with its versions in the pending set, which Get reads first. Keys outside the
// span fall back to GetLatest. Close releases the iterator; a LatestReader is not safe for
// concurrent use.
type LatestReader struct {
	t      *Txn
	lo, hi []byte
	it     engine.Iterator
	open   bool
	gen    uint64
}

// NewLatestReader returns a reader of [lo, hi).
func (t *Txn) NewLatestReader(lo, hi []byte) *LatestReader {
	return &LatestReader{t: t, lo: lo, hi: hi}
}

// Get is GetLatest(key). Call it after Lock on the key.
func (r *LatestReader) Get(key []byte) ([]byte, bool, error) {
	t := r.t
	if v, del, ok := t.ws.get(key); ok {
		if del {
			return nil, false, nil
		}
		return v, true, nil
	}
	if t.ws.rangeDeleted(key) {
		return nil, false, nil
	}
	if t.loc != nil && t.loc.Owns(key) {
		return t.loc.eng.Get(key)
	}
	if e, ok := t.m.pending.get(key); ok {
		// A pending version (early lock release, pending.go) is the latest, as for GetLatest.
		t.dependOn(e.tk)
		if e.del {
			return nil, false, nil
		}
		return e.val, true, nil
	}
	if bytes.Compare(key, r.lo) < 0 || bytes.Compare(key, r.hi) >= 0 {
		return t.m.eng.Get(key)
	}
	eng := t.m.eng
	// The generation is read before the iterator is opened: a change made visible in between
	// moves it again, and the next Get reopens.
	if g := eng.Generation(); !r.open || g != r.gen {
		r.Close()
		it, err := eng.NewIter(r.lo, r.hi)
		if err != nil {
			return nil, false, err
		}
		r.it, r.open, r.gen = it, true, g
	}
	if !r.it.SeekGE(key) {
		return nil, false, r.it.Error()
	}
	if !bytes.Equal(r.it.Key(), key) {
		return nil, false, nil
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		return nil, false, err
	}
	return bytes.Clone(v), true, nil
}

// Close releases the engine iterator (the reader may be used again: Get reopens it).
func (r *LatestReader) Close() {
	if r.open {
		_ = r.it.Close()
		r.open = false
	}
}
