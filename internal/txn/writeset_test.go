package txn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestWSIndexModel runs random writes, removals, point reads and ordered reads against wsIndex and a
// plain map, in every form the index takes: a few keys (linear search), many keys written in key
// order (binary search, no hash index), many out of order (hash index), and iterators between writes
// (the slice sorted once, then the btree).
func TestWSIndexModel(t *testing.T) {
	cases := []struct {
		name      string
		keys      int  // key space
		ascending bool // new keys mostly in ascending order
		strict    bool // written keys only in ascending order
		streams   int  // written keys from this many interleaved ascending sequences
		rangeEach int  // an ordered range read every rangeEach operations (0: none until the end)
		wantTree  bool // the index ends as a btree
		wantRuns  int  // the ascending runs it tracks at the end (0: not checked)
	}{
		{name: "few keys", keys: 6},
		{name: "a dozen keys", keys: 12, rangeEach: 7},
		{name: "ascending", keys: 3000, ascending: true},
		{name: "random", keys: 3000},
		{name: "random with a few range reads", keys: 3000, rangeEach: 5000},
		{name: "random with range reads", keys: 3000, rangeEach: 50, wantTree: true},
		{name: "ascending with range reads", keys: 3000, ascending: true, rangeEach: 50, wantTree: true},
		{name: "strictly ascending with range reads", keys: 3000, ascending: true, strict: true, rangeEach: 50},
		{name: "two ascending streams", keys: 3000, streams: 2, wantRuns: 2},
		{name: "six ascending streams", keys: 3000, streams: 6, wantRuns: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			var x wsIndex
			model := map[string]wsEntry{}
			next := 0
			counters := make([]int, tc.streams)
			var written []string
			key := func() string {
				if tc.streams > 0 {
					s := len(written) % tc.streams
					counters[s]++
					k := fmt.Sprintf("s%d-%06d", s, counters[s])
					written = append(written, k)
					return k
				}
				if tc.ascending && (tc.strict || rng.IntN(4) > 0) {
					next++
					return fmt.Sprintf("k%06d", next)
				}
				return fmt.Sprintf("k%06d", rng.IntN(tc.keys))
			}
			check := func(where string) {
				t.Helper()
				if x.Len() != len(model) {
					t.Fatalf("%s: Len %d, model %d", where, x.Len(), len(model))
				}
				want := make([]string, 0, len(model))
				for k := range model {
					want = append(want, k)
				}
				slices.Sort(want)
				var got []string
				x.ascend(func(e wsEntry) bool {
					if m := model[e.key]; m.seq != e.seq || string(m.val) != string(e.val) {
						t.Fatalf("%s: %s = %+v, model %+v", where, e.key, e, m)
					}
					got = append(got, e.key)
					return true
				})
				if !slices.Equal(got, want) {
					t.Fatalf("%s: ascend gives %d keys, model %d (first %v vs %v)", where, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
				}
			}
			for op := 1; op <= 20000; op++ {
				k := key()
				r := rng.IntN(10)
				if tc.strict && r >= 6 {
					k = fmt.Sprintf("k%06d", rng.IntN(next+1)) // reads and removals of any written key
				}
				if tc.streams > 0 && r >= 6 {
					written = written[:len(written)-1]
					counters[len(written)%tc.streams]--
					if k = "none"; len(written) > 0 {
						k = written[rng.IntN(len(written))]
					}
				}
				switch {
				case r < 6:
					e := wsEntry{key: k, val: []byte(fmt.Sprint(op)), del: r == 0, seq: uint64(op)}
					prev, ok := x.put(e)
					m, had := model[k]
					if ok != had || (ok && prev.seq != m.seq) {
						t.Fatalf("op %d: put %s replaced %+v %v, model %+v %v", op, k, prev, ok, m, had)
					}
					model[k] = e
				case r < 7:
					x.remove(k)
					delete(model, k)
				default:
					e, ok := x.get(k)
					m, had := model[k]
					if ok != had || (ok && (e.seq != m.seq || e.del != m.del)) {
						t.Fatalf("op %d: get %s = %+v %v, model %+v %v", op, k, e, ok, m, had)
					}
				}
				if tc.rangeEach > 0 && op%tc.rangeEach == 0 {
					lo, hi := key(), key()
					if lo > hi {
						lo, hi = hi, lo
					}
					var got, want []string
					x.ascendRange(lo, hi, func(e wsEntry) bool { got = append(got, e.key); return true })
					for mk := range model {
						if mk >= lo && mk < hi {
							want = append(want, mk)
						}
					}
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Fatalf("op %d: range [%s, %s) gives %d keys, model %d", op, lo, hi, len(got), len(want))
					}
				}
			}
			check("end")
			if tc.wantRuns != 0 && (x.big == nil || x.big.nruns != tc.wantRuns) {
				t.Errorf("runs: %+v, want %d", x.big, tc.wantRuns)
			}
			if tc.keys <= wsLinear && x.big != nil {
				t.Errorf("%d keys in the large form", x.Len())
			}
			if (x.tree != nil) != tc.wantTree {
				t.Errorf("btree: %v, want %v", x.tree != nil, tc.wantTree)
			}
			// Written again after the ordered read, out of order: still right.
			for i := range 100 {
				k := fmt.Sprintf("j%06d", tc.keys-i)
				e := wsEntry{key: k, val: []byte("again"), seq: uint64(30000 + i)}
				x.put(e)
				model[k] = e
			}
			check("after more writes")
		})
	}
}

// TestWriteSetOutOfOrderAllocs: with keys written out of order (a bulk INSERT writes each row's
// primary and secondary keys in turn), a lookup copies nothing and the record is one allocation.
func TestWriteSetOutOfOrderAllocs(t *testing.T) {
	var w WriteSet
	for i := range 500 {
		w.set(fmt.Sprintf("b %03d", i), []byte("row"), false)
		w.set(fmt.Sprintf("a %03d", i), []byte("idx"), false)
	}
	hit, miss := []byte("a 042"), []byte("a 042x")
	if got := testing.AllocsPerRun(100, func() {
		if _, _, ok := w.get(hit); !ok {
			t.Fatal("a 042 not found")
		}
		if _, _, ok := w.get(miss); ok {
			t.Fatal("a 042x found")
		}
	}); got != 0 {
		t.Errorf("WriteSet.get makes %v allocations, want 0", got)
	}
	if got := testing.AllocsPerRun(10, func() { _ = w.Encode() }); got != 1 {
		t.Errorf("Encode makes %v allocations, want 1", got)
	}
}

// BenchmarkWriteSetBulkInsert is a 1,024-row INSERT's use of the write set: per row a lookup and a
// write of its primary key (ascending) and of a secondary key (ascending by groups of four rows,
// random within a group, as LinkBench's links of one id1 by time), then the commit record.
func BenchmarkWriteSetBulkInsert(b *testing.B) {
	keys := make([]string, 0, 2048)
	for i := range 1024 {
		keys = append(keys, fmt.Sprintf("\x01table0007\x00\x01%08d", i), fmt.Sprintf("\x01table0007\x00\x02%08d%08d", i/4, rand.N(1000000)))
	}
	benchWriteSet(b, keys)
}

// BenchmarkWriteSetSmall is an OLTP transaction's use of the write set: four keys written and read
// back, then the commit record.
func BenchmarkWriteSetSmall(b *testing.B) {
	keys := []string{"\x01table0007\x00\x01k0042", "\x01table0007\x00\x02c0042", "\x01table0007\x00\x01k0007", "\x01table0007\x00\x02c0007"}
	benchWriteSet(b, keys)
}

// benchWriteSet looks up and writes each key in a new write set, then encodes its record.
func benchWriteSet(b *testing.B, keys []string) {
	val := []byte("a row's value")
	b.ReportAllocs()
	for b.Loop() {
		var w WriteSet
		for _, k := range keys {
			w.get(unsafe.Slice(unsafe.StringData(k), len(k)))
			w.set(k, val, false)
		}
		_ = w.Encode()
	}
}
