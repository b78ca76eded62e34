package txn

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"

	"github.com/google/btree"
)

// WriteSet is a transaction's pending writes (points by key, see wsIndex), plus range deletions.
type WriteSet struct {
	// Async asks the committer to acknowledge once the commit is applied, without waiting for the
	// log's fsync (durability=async). It is not part of the record.
	Async   bool
	pts     wsIndex
	logical []logicalOp
	before  []beforeImage // filled at commit when the transaction asked for before-images
	ranges  []keyRange
	seq     uint64
}

type keyRange struct {
	lo, hi []byte
	seq    uint64
}

type beforeImage struct {
	key    string
	val    []byte
	exists bool
}

// wsEntry is one point write. seq orders it against the range deletions (a deletion hides the
// entries written before it); seq 0 marks an entry of wsIndex's slice that was removed again.
type wsEntry struct {
	key string
	val []byte
	del bool
	seq uint64
}

// wsNodes is the node free list of every write set's tree: shared and of capacity 0, so it keeps
// no nodes (a write set's nodes go with it) and no tree allocates a free list of its own, which
// btree.NewG does (two allocations and ~300 bytes).
var wsNodes = btree.NewFreeListG[wsEntry](0)

func wsLess(a, b wsEntry) bool { return a.key < b.key }

// wsLinear is how many keys a write set keeps in a plain slice, searched one by one and sorted in
// place when their order is needed: an OLTP transaction writes a few keys, and comparing a few
// strings costs less than a hash index.
const wsLinear = 8

// wsMaxRuns is how many ascending runs a large write set tracks; keys that fit none are sorted apart.
const wsMaxRuns = 4

// wsIndex holds a write set's point writes, in one of three forms:
//
//  1. Up to wsLinear keys: a slice (es), searched one by one and sorted in place when a reader needs
//     key order.
//  2. More: the slice in the order the keys were first written, with a hash index and the ascending
//     runs the keys came in (wsLarge). Writes and point reads cost O(1). The readers that need key
//     order (the commit record, before-images, the pending set, an iterator) get it by merging the
//     runs (a multi-row INSERT writes each row's primary key and index keys in turn, each kind
//     ascending when the rows come in key order) with the keys that fitted none, sorted. A bulk
//     INSERT writes thousands of keys and reads each back once, for its duplicate check, and needs
//     the order only when it commits. Keeping that order at every write, in the btree this form
//     replaced, was 14% of the server's CPU in LinkBench's load.
//  3. A btree (tree), once iterators have made a large set rebuild its order for more than a few
//     times its length in all: a transaction that keeps alternating new keys and range reads over
//     what it wrote would otherwise pay a rebuild at each read. The set then stays a tree, O(log n)
//     per operation.
//
// In the large form slots never move, so the index and the order stay valid: removing a key (a
// rollback to a savepoint) zeroes its slot's seq, and writing it again reuses the slot. An empty
// wsIndex allocates nothing: most transactions are autocommit reads that never write.
type wsIndex struct {
	es   []wsEntry
	live int      // slots whose seq is not 0
	big  *wsLarge // the large form's index and order; nil in the small form
	tree *btree.BTreeG[wsEntry]
}

// wsLarge is the index and key order of a write set of more than wsLinear keys.
type wsLarge struct {
	idx     map[string]int32   // key -> slot in es
	runs    [wsMaxRuns][]int32 // ascending runs of slots, in write order
	nruns   int                // runs in use
	over    []int32            // slots that fitted no run
	order   []int32            // the slots in key order; stale when len(order) != len(es)
	rebuilt int                // slots put in order by rebuilds for iterators
}

// Len is the number of keys written (and not removed).
func (x *wsIndex) Len() int {
	if x.tree != nil {
		return x.tree.Len()
	}
	return x.live
}

// slot returns key's slot in es, or -1.
func (x *wsIndex) slot(key string) int {
	if x.big == nil {
		for i := range x.es {
			if x.es[i].key == key {
				return i
			}
		}
		return -1
	}
	if i, ok := x.big.idx[key]; ok {
		return int(i)
	}
	return -1
}

// get returns key's entry.
func (x *wsIndex) get(key string) (wsEntry, bool) {
	if x.tree != nil {
		return x.tree.Get(wsEntry{key: key})
	}
	if x.live == 0 {
		return wsEntry{}, false
	}
	if i := x.slot(key); i >= 0 && x.es[i].seq != 0 {
		return x.es[i], true
	}
	return wsEntry{}, false
}

// put sets e and returns the entry it replaced.
func (x *wsIndex) put(e wsEntry) (wsEntry, bool) {
	if x.tree != nil {
		return x.tree.ReplaceOrInsert(e)
	}
	if i := x.slot(e.key); i >= 0 {
		prev := x.es[i]
		x.es[i] = e
		if prev.seq == 0 {
			x.live++
			return wsEntry{}, false
		}
		return prev, true
	}
	if x.big == nil && len(x.es) == wsLinear {
		x.toLarge()
	}
	n := int32(len(x.es))
	x.es = append(x.es, e)
	x.live++
	if x.big != nil {
		x.big.idx[e.key] = n
		x.big.addToRun(x.es, n)
	}
	return wsEntry{}, false
}

// toLarge builds the large form's index over the small form's keys, sorted: they make one run.
func (x *wsIndex) toLarge() {
	x.sortSmall()
	b := &wsLarge{idx: make(map[string]int32, max(cap(x.es), 4*wsLinear)), nruns: 1}
	b.runs[0] = make([]int32, len(x.es), max(cap(x.es), 4*wsLinear))
	for i := range x.es {
		b.idx[x.es[i].key] = int32(i)
		b.runs[0][i] = int32(i)
	}
	x.big = b
}

// addToRun appends slot n to the run whose last key is the greatest one below n's key (so the runs
// stay few: patience sorting's rule), or starts a run, or, with wsMaxRuns runs already, leaves it to
// the slots sorted when the order is needed (over).
func (b *wsLarge) addToRun(es []wsEntry, n int32) {
	key, best := es[n].key, -1
	for r := 0; r < b.nruns; r++ {
		last := es[b.runs[r][len(b.runs[r])-1]].key
		if last < key && (best < 0 || last > es[b.runs[best][len(b.runs[best])-1]].key) {
			best = r
		}
	}
	switch {
	case best >= 0:
		b.runs[best] = append(b.runs[best], n)
	case b.nruns < wsMaxRuns:
		b.runs[b.nruns] = append(b.runs[b.nruns][:0], n)
		b.nruns++
	default:
		b.over = append(b.over, n)
	}
}

// remove deletes key.
func (x *wsIndex) remove(key string) {
	if x.tree != nil {
		x.tree.Delete(wsEntry{key: key})
		return
	}
	if i := x.slot(key); i >= 0 && x.es[i].seq != 0 {
		if x.big == nil {
			x.es = slices.Delete(x.es, i, i+1) // the small form's slots may move
		} else {
			x.es[i] = wsEntry{key: key}
		}
		x.live--
	}
}

// grow makes room for n more keys.
func (x *wsIndex) grow(n int) {
	if x.tree == nil && len(x.es)+n > wsLinear {
		x.es = slices.Grow(x.es, n)
	}
}

// sortSmall sorts the small form's slice by key.
func (x *wsIndex) sortSmall() {
	slices.SortFunc(x.es, func(a, b wsEntry) int { return strings.Compare(a.key, b.key) })
}

// inWriteOrder reports whether a large set's keys were all written in ascending order.
func (b *wsLarge) inWriteOrder() bool { return b.nruns == 1 && len(b.over) == 0 }

// sorted returns a large set's slots in key order (removed ones included).
func (b *wsLarge) sorted(es []wsEntry) []int32 {
	if b.inWriteOrder() {
		return b.runs[0]
	}
	if len(b.order) == len(es) {
		return b.order
	}
	var all [wsMaxRuns + 1][]int32 // the runs, and over sorted
	runs := append(all[:0], b.runs[:b.nruns]...)
	if len(b.over) > 0 {
		slices.SortFunc(b.over, func(i, j int32) int { return strings.Compare(es[i].key, es[j].key) })
		runs = append(runs, b.over)
	}
	// Merge the runs: at each step the run whose next key is least.
	o := b.order[:0]
	var at [wsMaxRuns + 1]int
	for len(o) < len(es) {
		best := -1
		for r := range runs {
			if at[r] < len(runs[r]) && (best < 0 || es[runs[r][at[r]]].key < es[runs[best][at[best]]].key) {
				best = r
			}
		}
		o = append(o, runs[best][at[best]])
		at[best]++
	}
	b.order = o
	return o
}

// ascend calls fn for every entry in key order until fn returns false. fn must not change the set.
func (x *wsIndex) ascend(fn func(wsEntry) bool) { x.walk("", "", false, fn) }

// ascendRange calls fn for the entries in [lo, hi) in key order until fn returns false. fn must not
// change the set.
func (x *wsIndex) ascendRange(lo, hi string, fn func(wsEntry) bool) { x.walk(lo, hi, true, fn) }

// walk is ascend (bounded false: from lo on) and ascendRange (for iterators).
func (x *wsIndex) walk(lo, hi string, bounded bool, fn func(wsEntry) bool) {
	if x.tree == nil && x.live == 0 {
		return
	}
	if b := x.big; b != nil && bounded && !b.inWriteOrder() && len(b.order) != len(x.es) {
		// An iterator needs the order rebuilt: past a few times the set's size in all, a btree.
		if b.rebuilt += len(x.es); b.rebuilt > 4*len(x.es)+64 {
			x.toTree()
		}
	}
	if x.tree != nil {
		if !bounded {
			x.tree.AscendGreaterOrEqual(wsEntry{key: lo}, fn)
		} else {
			x.tree.AscendRange(wsEntry{key: lo}, wsEntry{key: hi}, fn)
		}
		return
	}
	if x.big == nil {
		x.sortSmall()
		for _, e := range x.es {
			if bounded && e.key >= hi {
				return
			}
			if e.key >= lo && e.seq != 0 && !fn(e) {
				return
			}
		}
		return
	}
	o := x.big.sorted(x.es)
	i, _ := slices.BinarySearchFunc(o, lo, func(s int32, k string) int { return strings.Compare(x.es[s].key, k) })
	for _, s := range o[i:] {
		e := x.es[s]
		if bounded && e.key >= hi {
			return
		}
		if e.seq != 0 && !fn(e) {
			return
		}
	}
}

// toTree moves the entries into a btree, for good.
func (x *wsIndex) toTree() {
	t := btree.NewWithFreeListG[wsEntry](16, wsLess, wsNodes)
	for _, i := range x.big.sorted(x.es) {
		if e := x.es[i]; e.seq != 0 {
			t.ReplaceOrInsert(e)
		}
	}
	*x = wsIndex{tree: t}
}

// set writes key with the next sequence number and returns the entry it replaced.
func (w *WriteSet) set(key string, val []byte, del bool) (wsEntry, bool) {
	w.seq++
	return w.pts.put(wsEntry{key: key, val: val, del: del, seq: w.seq})
}

func (w *WriteSet) remove(key string) { w.pts.remove(key) }

// get returns an entry unless a later range deletion covers it.
func (w *WriteSet) get(key []byte) ([]byte, bool, bool) {
	if w.pts.Len() == 0 {
		return nil, false, false // a read-only transaction: no key to build for the search
	}
	// The search key is key's bytes viewed as a string, not copied: get keeps nothing of it (the
	// duplicate-key checks of a bulk INSERT look up every key they write).
	e, ok := w.pts.get(unsafe.String(unsafe.SliceData(key), len(key)))
	if !ok {
		return nil, false, false
	}
	for _, r := range w.ranges {
		if r.seq > e.seq && inRange(key, r) {
			return nil, true, true
		}
	}
	return e.val, e.del, true
}

func inRange(key []byte, r keyRange) bool {
	return bytes.Compare(key, r.lo) >= 0 && bytes.Compare(key, r.hi) < 0
}

func (w *WriteSet) rangeDeleted(key []byte) bool {
	for _, r := range w.ranges {
		if inRange(key, r) {
			return true
		}
	}
	return false
}

// Len is the number of point writes.
func (w *WriteSet) Len() int { return w.pts.Len() }
