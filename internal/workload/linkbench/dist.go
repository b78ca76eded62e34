package linkbench

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Zipf draws ranks in [0, n) with P(rank k) proportional to 1/(k+1)^shape,
// shape in (0, 1), rank 0 the most likely. It is LinkBench's
// ZipfDistribution.quantile (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", 1994).
type Zipf struct {
	n                          uint64
	shape                      float64
	alpha, eta, zetan, halfPow float64
}

// NewZipf returns the distribution over n >= 1 ranks; shape must be in (0, 1).
func NewZipf(n uint64, shape float64) *Zipf {
	if n < 1 {
		n = 1
	}
	z := &Zipf{n: n, shape: shape}
	z.alpha = 1 / (1 - shape)
	z.zetan = Harmonic(n, shape)
	zeta2 := Harmonic(2, shape)
	z.eta = (1 - math.Pow(2/float64(n), 1-shape)) / (1 - zeta2/z.zetan)
	z.halfPow = math.Pow(0.5, shape)
	return z
}

// Quantile maps p in [0, 1) to a rank in [0, n).
func (z *Zipf) Quantile(p float64) uint64 {
	uz := p * z.zetan
	if uz < 1 || z.n == 1 {
		return 0
	}
	if uz < 1+z.halfPow {
		return 1
	}
	off := float64(z.n) * math.Pow(z.eta*p-z.eta+1, z.alpha)
	if off >= float64(z.n) || math.IsNaN(off) {
		return z.n - 1
	}
	return uint64(off)
}

// Harmonic is the generalized harmonic number H(n, s) = sum_{k=1..n} k^-s:
// exact for the first 100,000 terms, the rest by Euler-Maclaurin (relative
// error far below 1e-9 for the shapes LinkBench uses).
func Harmonic(n uint64, s float64) float64 {
	const exact = 100000
	var sum float64
	m := min(n, exact)
	for k := m; k >= 1; k-- { // small terms first
		sum += math.Pow(float64(k), -s)
	}
	if n <= exact {
		return sum
	}
	a, b := float64(exact+1), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -s) }
	df := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	var integral float64
	if s == 1 {
		integral = math.Log(b / a)
	} else {
		integral = (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
	}
	return sum + integral + (f(a)+f(b))/2 + (df(b)-df(a))/12
}

// Geometric is LinkBench's GeometricDistribution: values in [min, max), the
// geometric tail truncated at max-1.
type Geometric struct {
	Min, Max int
	P        float64
}

// Quantile maps r in [0, 1) to a value.
func (g Geometric) Quantile(r float64) int {
	if r <= 0 {
		return g.Min
	}
	if r >= 1 {
		return g.Max - 1
	}
	x := g.Min + int(math.Ceil(math.Log(1-r)/math.Log(1-g.P)))
	return min(x, g.Max-1)
}

// LogNormal sizes payloads: round(median * e^(sigma*N(0,1))), clamped to
// [Min, Max] (LinkBench's LogNormalDistribution for link and node data).
type LogNormal struct {
	Median, Sigma float64
	Min, Max      int
}

// Choose draws a size.
func (l LogNormal) Choose(rng *rand.Rand) int {
	v := math.Round(l.Median * math.Exp(l.Sigma*rng.NormFloat64()))
	if v < float64(l.Min) {
		return l.Min
	}
	if v > float64(l.Max) {
		return l.Max
	}
	return int(v)
}

// Outdegree is the number of links a node has after the load: a truncated
// discrete power law, P(k) proportional to (k+1)^-Exponent for k in
// [0, MaxLinks], drawn per node from a hash of its id so that the load and
// every later request phase agree on it without storing it. LinkBench's
// default samples an empirical distribution (config/Distribution.dat); this
// is the same heavy-tailed shape as a closed form (exponent 2, cap 10,000:
// mean ~4.9 links per node, ~47% of nodes with no links).
type Outdegree struct {
	cdf []float64
}

// NewOutdegree precomputes the CDF.
func NewOutdegree(exponent float64, maxLinks int) *Outdegree {
	cdf := make([]float64, maxLinks+1)
	var sum float64
	for k := 0; k <= maxLinks; k++ {
		sum += math.Pow(float64(k+1), -exponent)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	cdf[maxLinks] = 1
	return &Outdegree{cdf: cdf}
}

// Quantile maps u in [0, 1) to a link count.
func (o *Outdegree) Quantile(u float64) int {
	i := sort.SearchFloat64s(o.cdf, u)
	if i < len(o.cdf) && o.cdf[i] == u {
		i++ // cdf[k] is P(X <= k): u equal to it belongs to k+1
	}
	return min(i, len(o.cdf)-1)
}

// Mean is the expected link count.
func (o *Outdegree) Mean() float64 {
	var m, prev float64
	for k, c := range o.cdf {
		m += float64(k) * (c - prev)
		prev = c
	}
	return m
}

// Links is the outdegree of node id1.
func (o *Outdegree) Links(id1 uint64) int {
	return o.Quantile(unitFloat(mix64(id1 ^ 0x6c696e6b62656e63)))
}

// mix64 is splitmix64's finalizer: a bijective 64-bit hash.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// Permutation is a bijection of [0, n): x -> (a*x + b) mod n with
// gcd(a, n) = 1. It spreads the Zipf ranks (rank 0 hottest) over the id
// space, as LinkBench's InvertibleShuffler does, so hot ids are not all small.
type Permutation struct {
	n, a, b uint64
}

// NewPermutation returns a permutation of [0, n) chosen by salt.
func NewPermutation(n, salt uint64) Permutation {
	if n <= 1 {
		return Permutation{n: max(n, 1), a: 1}
	}
	a := (uint64(float64(n)*0.6180339887498949) + mix64(salt)%1024) % n
	for a == 0 || gcd(a, n) != 1 { // terminates: gcd(1, n) = 1
		a = (a + 1) % n
	}
	return Permutation{n: n, a: a, b: mix64(salt+1) % n}
}

// Apply maps x in [0, n) to its image.
func (p Permutation) Apply(x uint64) uint64 {
	hi, lo := bits.Mul64(p.a, x)
	r := bits.Rem64(hi, lo, p.n)
	if r += p.b; r >= p.n { // both terms < n, so one subtraction suffices
		r -= p.n
	}
	return r
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// IDChooser picks node ids in [1, n] for one kind of access.
type IDChooser interface {
	Next(rng *rand.Rand) uint64
}

// ZipfIDs picks ids by Zipf rank, shuffled through a permutation.
type ZipfIDs struct {
	Z    *Zipf
	Perm Permutation
}

// Next returns an id in [1, n].
func (z ZipfIDs) Next(rng *rand.Rand) uint64 {
	return 1 + z.Perm.Apply(z.Z.Quantile(rng.Float64()))
}

// UniformIDs picks ids uniformly in [1, N].
type UniformIDs struct{ N uint64 }

// Next returns an id in [1, N].
func (u UniformIDs) Next(rng *rand.Rand) uint64 { return 1 + rng.Uint64N(max(u.N, 1)) }
