package log

import "sort"

// termRun says that entries from index on (up to the next run) have term. Raft terms change rarely, so
// runs keep Term() answerable for every retained entry in a few words instead of eight bytes per entry.
type termRun struct{ index, term uint64 }

// index locates every retained entry: its term and the file offset of its record. Entries are
// [first, last]; prevTerm is the term of first-1, which raft asks for (Term(FirstIndex-1)) and which a
// purge must therefore keep.
type index struct {
	first, last uint64
	prevTerm    uint64
	runs        []termRun
	offs        []int64 // offs[i-first]: offset of entry i's record in the segment that holds it
}

func newIndex(first, prevTerm uint64) index {
	return index{first: first, last: first - 1, prevTerm: prevTerm}
}

// term returns the term of entry i, for i in [first-1, last].
func (x *index) term(i uint64) (uint64, bool) {
	if i+1 == x.first {
		return x.prevTerm, true
	}
	if i < x.first || i > x.last {
		return 0, false
	}
	r := x.runs
	if n := len(r); r[n-1].index <= i {
		return r[n-1].term, true
	}
	j := sort.Search(len(r), func(j int) bool { return r[j].index > i }) - 1
	return r[j].term, true
}

// push adds entry last+1.
func (x *index) push(i, term uint64, off int64) {
	if n := len(x.runs); n == 0 || x.runs[n-1].term != term {
		x.runs = append(x.runs, termRun{index: i, term: term})
	}
	x.offs = append(x.offs, off)
	x.last = i
}

// truncate drops entries >= k, for k in [first, last+1].
func (x *index) truncate(k uint64) {
	x.offs = x.offs[:k-x.first]
	for n := len(x.runs); n > 0 && x.runs[n-1].index >= k; n-- {
		x.runs = x.runs[:n-1]
	}
	x.last = k - 1
}

// purgeTo drops entries below nf, for nf in [first, last+1], keeping the term of nf-1.
func (x *index) purgeTo(nf uint64) {
	if nf <= x.first {
		return
	}
	pt, _ := x.term(nf - 1)
	// Copy rather than reslice so the purged prefix's memory is released now.
	x.offs = append([]int64(nil), x.offs[nf-x.first:]...)
	j := sort.Search(len(x.runs), func(j int) bool { return x.runs[j].index > nf }) - 1
	if j < 0 {
		j = 0
	}
	runs := append([]termRun(nil), x.runs[j:]...)
	if len(runs) > 0 && runs[0].index < nf {
		runs[0].index = nf
	}
	if nf > x.last {
		runs = nil
	}
	x.runs = runs
	x.first = nf
	x.prevTerm = pt
}

// cache holds the newest entries, [first, first+len(ents)), so that raft's Entries and the applier's
// reads of what was just appended never touch the disk. It always ends at the log's last index; an
// empty cache has first == last+1.
type cache struct {
	first uint64
	ents  []Entry
	bytes int64
}

// cacheOverhead approximates the memory an Entry costs beyond its data.
const cacheOverhead = 48

func (c *cache) push(e Entry) {
	c.ents = append(c.ents, e)
	c.bytes += int64(len(e.Data)) + cacheOverhead
}

// get returns entry i if it is cached.
func (c *cache) get(i uint64) (Entry, bool) {
	if i < c.first || i-c.first >= uint64(len(c.ents)) {
		return Entry{}, false
	}
	return c.ents[i-c.first], true
}

// truncate drops entries >= k.
func (c *cache) truncate(k uint64) {
	if k <= c.first {
		clear(c.ents)
		c.ents = c.ents[:0]
		c.bytes = 0
		c.first = k
		return
	}
	if n := k - c.first; n < uint64(len(c.ents)) {
		for _, e := range c.ents[n:] {
			c.bytes -= int64(len(e.Data)) + cacheOverhead
		}
		clear(c.ents[n:]) // let the dropped data be collected
		c.ents = c.ents[:n]
	}
}

// evict drops the oldest entries while the cache is over budget, but never an entry above upTo: only
// entries that are in a segment file can be read back from disk.
func (c *cache) evict(budget int64, upTo uint64) {
	n := 0
	for c.bytes > budget && n < len(c.ents) && c.ents[n].Index <= upTo {
		c.bytes -= int64(len(c.ents[n].Data)) + cacheOverhead
		n++
	}
	c.dropFront(n)
}

// purgeTo drops entries below nf.
func (c *cache) purgeTo(nf uint64) {
	if nf <= c.first {
		return
	}
	n := min(nf-c.first, uint64(len(c.ents)))
	for _, e := range c.ents[:n] {
		c.bytes -= int64(len(e.Data)) + cacheOverhead
	}
	c.dropFront(int(n))
	c.first = nf
}

func (c *cache) dropFront(n int) {
	if n == 0 {
		return
	}
	clear(c.ents[:n])
	c.ents = c.ents[n:]
	c.first += uint64(n)
	// Reslicing keeps the dropped prefix of the array alive until append reallocates; compact when the
	// dead part dominates so a long-lived cache does not pin memory.
	if cap(c.ents) > 2*len(c.ents)+1024 {
		c.ents = append(make([]Entry, 0, len(c.ents)+len(c.ents)/2+16), c.ents...)
	}
}
