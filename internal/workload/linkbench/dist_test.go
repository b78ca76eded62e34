package linkbench

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHarmonic(t *testing.T) {
	for _, tc := range []struct {
		n uint64
		s float64
	}{
		{1, 0.8}, {2, 0.8}, {1000, 0.741}, {100000, 0.625}, {100001, 0.606}, {3000000, 0.8}, {2500000, 1},
	} {
		var exact float64
		for k := tc.n; k >= 1; k-- {
			exact += math.Pow(float64(k), -tc.s)
		}
		got := Harmonic(tc.n, tc.s)
		if rel := math.Abs(got-exact) / exact; rel > 1e-9 {
			t.Errorf("Harmonic(%d, %v) = %v, exact %v (relative error %g)", tc.n, tc.s, got, exact, rel)
		}
	}
}

func TestZipfQuantile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     uint64
		shape float64
		p     float64
		want  uint64
	}{
		{"p=0 is the hottest rank", 1000, 0.8, 0, 0},
		{"one rank", 1, 0.8, 0.99, 0},
		{"first 1/zetan of the mass is rank 0", 1000, 0.8, 0.5 / Harmonic(1000, 0.8), 0},
		{"then rank 1", 1000, 0.8, (1 + 0.5*math.Pow(0.5, 0.8)) / Harmonic(1000, 0.8), 1},
		{"top is the last rank", 1000, 0.8, 0.9999999999, 999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewZipf(tc.n, tc.shape).Quantile(tc.p); got != tc.want {
				t.Errorf("Quantile(%v) = %d, want %d", tc.p, got, tc.want)
			}
		})
	}
}

// The sampled frequencies of the top ranks follow 1/(k+1)^shape.
func TestZipfFrequencies(t *testing.T) {
	for _, tc := range []struct {
		n     uint64
		shape float64
	}{
		{100000, readShape}, {100000, writeShape}, {5000, nodeReadShape}, {5000, nodeUpdateShape},
	} {
		z := NewZipf(tc.n, tc.shape)
		rng := rand.New(rand.NewPCG(1, 2))
		const draws = 400000
		counts := make(map[uint64]int)
		for range draws {
			r := z.Quantile(rng.Float64())
			if r >= tc.n {
				t.Fatalf("rank %d out of [0, %d)", r, tc.n)
			}
			counts[r]++
		}
		zetan := Harmonic(tc.n, tc.shape)
		for k := uint64(0); k < 2; k++ { // Gray's method is exact for ranks 0 and 1
			want := draws * math.Pow(float64(k+1), -tc.shape) / zetan
			if got := float64(counts[k]); math.Abs(got-want) > 5*math.Sqrt(want) {
				t.Errorf("n %d shape %v: rank %d drawn %v times, want ~%.0f", tc.n, tc.shape, k, got, want)
			}
		}
		// The hottest 1% of ranks take their share within 20%.
		top := uint64(float64(tc.n) * 0.01)
		var got int
		for k, c := range counts {
			if k < top {
				got += c
			}
		}
		want := draws * Harmonic(top, tc.shape) / zetan
		if math.Abs(float64(got)-want)/want > 0.2 {
			t.Errorf("n %d shape %v: top 1%% drawn %d times, want ~%.0f", tc.n, tc.shape, got, want)
		}
	}
}

func TestGeometricQuantile(t *testing.T) {
	g := multigetDist
	for _, tc := range []struct {
		r    float64
		want int
	}{
		{0, 1},
		{0.1, 2},   // ceil(ln 0.9 / ln 0.618) = 1
		{0.382, 2}, // exactly one failure's worth
		{0.5, 3},   // ceil(1.44) = 2
		{0.9, 6},   // ceil(4.79) = 5
		{0.99999999, 40},
		{1, 127}, // not drawn (Float64 < 1), but clamped
	} {
		if got := g.Quantile(tc.r); got != tc.want {
			t.Errorf("Quantile(%v) = %d, want %d", tc.r, got, tc.want)
		}
	}
}

func TestLogNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, l := range []LogNormal{linkDataSize, nodeDataSize, {Median: 100, Sigma: 3, Min: 10, Max: 200}} {
		var below int
		const draws = 20000
		for range draws {
			v := l.Choose(rng)
			if v < l.Min || v > l.Max {
				t.Fatalf("%+v: %d out of range", l, v)
			}
			if float64(v) < l.Median {
				below++
			}
		}
		if f := float64(below) / draws; f < 0.4 || f > 0.55 {
			t.Errorf("%+v: %.2f of the draws below the median", l, f)
		}
	}
}

func TestOutdegree(t *testing.T) {
	o := NewOutdegree(2, 10000)
	z := Harmonic(10001, 2)
	for _, tc := range []struct {
		u    float64
		want int
	}{
		{0, 0},
		{1/z - 1e-12, 0},
		{1 / z, 1}, // P(X <= 0) = 1/z exactly: u there is past 0
		{(1 + 0.25) / z, 2},
		{0.9999999999999, 10000},
	} {
		if got := o.Quantile(tc.u); got != tc.want {
			t.Errorf("Quantile(%v) = %d, want %d", tc.u, got, tc.want)
		}
	}
	if m := o.Mean(); math.Abs(m-4.95) > 0.01 {
		t.Errorf("mean outdegree %v, want ~4.95", m)
	}
	var sum, zero int
	const n = 200000
	for id := uint64(1); id <= n; id++ {
		l := o.Links(id)
		if l != o.Links(id) {
			t.Fatal("Links is not deterministic")
		}
		sum += l
		if l == 0 {
			zero++
		}
	}
	if f := float64(zero) / n; math.Abs(f-1/z) > 0.01 {
		t.Errorf("%.3f of nodes without links, want %.3f", f, 1/z)
	}
	if m := float64(sum) / n; m < 4 || m > 6 {
		t.Errorf("sampled mean outdegree %v", m)
	}
}

func TestLinkCountSplitsOutdegree(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nodes = 1000
	wl, err := newWorkload(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id <= cfg.Nodes; id++ {
		a, b := wl.linkCount(id, DefaultLinkType), wl.linkCount(id, DefaultLinkType+1)
		if a+b != uint64(wl.out.Links(id)) || a < b || a-b > 1 {
			t.Fatalf("id %d: outdegree %d split %d + %d", id, wl.out.Links(id), a, b)
		}
	}
}

func TestPermutationIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 10, 64, 97, 1000, 5000, 100000} {
		for salt := uint64(0); salt < 3; salt++ {
			p := NewPermutation(n, salt)
			seen := make([]bool, n)
			for x := range n {
				y := p.Apply(x)
				if y >= n || seen[y] {
					t.Fatalf("n %d salt %d: %d -> %d repeats or is out of range", n, salt, x, y)
				}
				seen[y] = true
			}
		}
	}
	// Large n: no overflow in a*x.
	p := NewPermutation(1<<40+7, 1)
	if y := p.Apply(1<<40 + 6); y >= 1<<40+7 {
		t.Fatalf("out of range: %d", y)
	}
}

func TestIDChoosersStayInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []uint64{1, 2, 5000} {
		for _, c := range []IDChooser{ZipfIDs{NewZipf(n, readShape), NewPermutation(n, 9)}, UniformIDs{n}} {
			for range 10000 {
				if id := c.Next(rng); id < 1 || id > n {
					t.Fatalf("n %d: id %d", n, id)
				}
			}
		}
	}
}

func TestQuoteString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "''"}, {"abc", "'abc'"}, {"it's", "'it''s'"}, {`a\b`, `'a\\b'`}, {"a\x00b", `'a\0b'`},
	} {
		if got := quoteString(tc.in); got != tc.want {
			t.Errorf("quoteString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
