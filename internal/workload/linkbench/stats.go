package linkbench

import (
	"math/bits"
	"time"
)

// Histogram records latencies in nanoseconds in log-linear buckets: exact
// below 64 ns, then 64 buckets per power of two (under 1.6% relative error).
// The maximum is kept exactly.
type Histogram struct {
	counts []uint64
	n      uint64
	max    uint64
}

const subBuckets = 64

func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 7 // v>>e in [64, 128)
	return (e+1)*subBuckets + int(v>>e) - subBuckets
}

// bucketUpper is the largest value that falls in bucket i.
func bucketUpper(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := i/subBuckets - 1
	m := uint64(i%subBuckets + subBuckets)
	return (m+1)<<e - 1
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	b := bucketOf(v)
	if b >= len(h.counts) {
		grown := make([]uint64, b+1+subBuckets)
		copy(grown, h.counts)
		h.counts = grown
	}
	h.counts[b]++
	h.n++
	h.max = max(h.max, v)
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	if len(o.counts) > len(h.counts) {
		grown := make([]uint64, len(o.counts))
		copy(grown, h.counts)
		h.counts = grown
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest sample.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Quantile is the smallest bucket bound at or above the q-th fraction of the
// samples (q in (0, 1]), never above the maximum; 0 without samples.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if float64(rank) < q*float64(h.n) {
		rank++
	}
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketUpper(i), h.max))
		}
	}
	return time.Duration(h.max)
}

// opStats is one worker's record of one operation.
type opStats struct {
	hist    Histogram
	errors  uint64
	retries uint64
	rows    uint64
	samples []string // first distinct error messages
}

const maxErrorSamples = 3

func (s *opStats) addError(err error) {
	s.errors++
	if len(s.samples) >= maxErrorSamples {
		return
	}
	msg := err.Error()
	for _, m := range s.samples {
		if m == msg {
			return
		}
	}
	s.samples = append(s.samples, msg)
}

func (s *opStats) merge(o *opStats) {
	s.hist.Merge(&o.hist)
	s.errors += o.errors
	s.retries += o.retries
	s.rows += o.rows
	for _, m := range o.samples {
		if len(s.samples) >= maxErrorSamples {
			break
		}
		dup := false
		for _, x := range s.samples {
			dup = dup || x == m
		}
		if !dup {
			s.samples = append(s.samples, m)
		}
	}
}
