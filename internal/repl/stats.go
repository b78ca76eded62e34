package repl

import (
	"math/bits"
	"sync/atomic"
)

// Histogram counts observations in power-of-two buckets: bucket i holds values in [2^(i-1), 2^i).
// Lock-free; good enough for group sizes and latencies in /metrics and SHOW STATUS.
type Histogram struct {
	buckets [64]atomic.Uint64
	count   atomic.Uint64
	sum     atomic.Uint64
}

// Observe records v.
func (h *Histogram) Observe(v uint64) {
	h.buckets[bits.Len64(v)].Add(1)
	h.count.Add(1)
	h.sum.Add(v)
}

// Snapshot returns the count, the sum, and cumulative counts at each bucket's upper bound (2^i).
func (h *Histogram) Snapshot() (count, sum uint64, upper []uint64, cumulative []uint64) {
	var c uint64
	for i := range h.buckets {
		c += h.buckets[i].Load()
		if i >= 1 && i < 40 {
			upper = append(upper, 1<<uint(i))
			cumulative = append(cumulative, c)
		}
	}
	return h.count.Load(), h.sum.Load(), upper, cumulative
}
