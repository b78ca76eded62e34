package linkbench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestDefaultMixSumsTo100(t *testing.T) {
	var sum float64
	for _, p := range DefaultMix {
		sum += p
	}
	if math.Abs(sum-100) > 1e-9 {
		t.Fatalf("DefaultMix sums to %v", sum)
	}
}

func TestNewChooserRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		mix  Mix
	}{
		{"empty", Mix{}},
		{"short", Mix{OpGetNode: 99}},
		{"over", Mix{OpGetNode: 100, OpAddNode: 1}},
		{"negative", Mix{OpGetNode: 101, OpAddNode: -1}},
	} {
		if _, err := NewChooser(tc.mix); err == nil {
			t.Errorf("%s: accepted %v", tc.name, tc.mix)
		}
	}
}

func TestChooserPick(t *testing.T) {
	c, err := NewChooser(DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	only, err := NewChooser(Mix{OpGetLinkList: 60, OpGetNode: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    *Chooser
		r    float64
		want Op
	}{
		// Cumulative: 8.9886601 11.9794265 19.991639 24.8779957 25.4041099
		// 76.1160244 78.6893033 86.0557403 87.0673317 100.
		{c, 0, OpAddLink},
		{c, 8.98, OpAddLink},
		{c, 8.9886601, OpDeleteLink}, // boundaries belong to the next op
		{c, 11.97, OpDeleteLink},
		{c, 11.98, OpUpdateLink},
		{c, 19.99, OpUpdateLink},
		{c, 24.87, OpCountLink},
		{c, 25.40, OpGetLink},
		{c, 25.41, OpGetLinkList},
		{c, 76.11, OpGetLinkList},
		{c, 76.12, OpAddNode},
		{c, 78.68, OpAddNode},
		{c, 78.69, OpUpdateNode},
		{c, 86.05, OpUpdateNode},
		{c, 86.06, OpDeleteNode},
		{c, 87.06, OpDeleteNode},
		{c, 87.07, OpGetNode},
		{c, 99.999999, OpGetNode},
		{c, 100, OpGetNode}, // past the end (rounding): the last op
		{only, 0, OpGetLinkList},
		{only, 59.9, OpGetLinkList},
		{only, 60, OpGetNode},
		{only, 100, OpGetNode},
	} {
		if got := tc.c.Pick(tc.r); got != tc.want {
			t.Errorf("Pick(%v) = %s, want %s", tc.r, got, tc.want)
		}
	}
	zeroLast, err := NewChooser(Mix{OpAddLink: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := zeroLast.Pick(100); got != OpAddLink {
		t.Errorf("Pick(100) with only addlink = %s", got)
	}
}

// Sampled with Pick(rng.Float64()*100) as the workers do, every operation's
// share is its percentage.
func TestChooserFrequencies(t *testing.T) {
	c, err := NewChooser(DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const draws = 1000000
	var counts [numOps]int
	for range draws {
		counts[c.Pick(rng.Float64()*100)]++
	}
	for op, pct := range DefaultMix {
		want := draws * pct / 100
		if got := float64(counts[op]); math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("%s: %v draws, want ~%.0f", Op(op), got, want)
		}
	}
}

func TestOpNames(t *testing.T) {
	want := []string{"addlink", "deletelink", "updatelink", "countlink", "getlink",
		"getlinklist", "addnode", "updatenode", "deletenode", "getnode"}
	for i, op := range Ops() {
		if op.String() != want[i] {
			t.Errorf("op %d is %q, want %q", i, op, want[i])
		}
	}
	if Op(99).String() != "op(99)" {
		t.Errorf("Op(99) = %q", Op(99))
	}
}

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 1 << 20, 1<<20 + 12345, 1 << 40} {
		b := bucketOf(v)
		if b < prev {
			t.Errorf("bucketOf(%d) = %d below the previous %d", v, b, prev)
		}
		prev = b
		up := bucketUpper(b)
		if up < v {
			t.Errorf("bucketUpper(bucketOf(%d)) = %d below the value", v, up)
		}
		if b > 0 && bucketUpper(b-1) >= v {
			t.Errorf("value %d also fits bucket %d (upper %d)", v, b-1, bucketUpper(b-1))
		}
		if v >= 64 && float64(up-v) > float64(v)/64 {
			t.Errorf("bucket of %d is too wide: upper %d", v, up)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		q       float64
		want    time.Duration
		tol     float64
	}{
		{"empty", nil, 0.5, 0, 0},
		{"one", []time.Duration{1500 * time.Microsecond}, 0.99, 1500 * time.Microsecond, 0},
		{"max is exact", []time.Duration{time.Millisecond, 7777777}, 1, 7777777, 0},
		{"p50 of 1..1000 us", seq(1000, time.Microsecond), 0.5, 500 * time.Microsecond, 0.02},
		{"p99 of 1..1000 us", seq(1000, time.Microsecond), 0.99, 990 * time.Microsecond, 0.02},
		{"small values exact", seq(10, 1), 0.5, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a, b Histogram
			for i, s := range tc.samples { // split across two, then merged
				if i%2 == 0 {
					a.Record(s)
				} else {
					b.Record(s)
				}
			}
			a.Merge(&b)
			if a.Count() != uint64(len(tc.samples)) {
				t.Fatalf("count %d", a.Count())
			}
			got := a.Quantile(tc.q)
			if diff := math.Abs(float64(got - tc.want)); diff > tc.tol*float64(tc.want) {
				t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func seq(n int, unit time.Duration) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = time.Duration(i+1) * unit
	}
	return s
}
