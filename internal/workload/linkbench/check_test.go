package linkbench

import (
	"reflect"
	"strings"
	"testing"
)

func TestCompareCounts(t *testing.T) {
	k := func(id1, lt uint64) CountKey { return CountKey{id1, lt} }
	for _, tc := range []struct {
		name    string
		visible map[CountKey]uint64
		counts  map[CountKey]uint64
		want    []Mismatch
	}{
		{"both empty", nil, nil, nil},
		{"equal", map[CountKey]uint64{k(1, 7): 3, k(2, 7): 1}, map[CountKey]uint64{k(1, 7): 3, k(2, 7): 1}, nil},
		{"count 0 row without links is fine", nil, map[CountKey]uint64{k(1, 7): 0}, nil},
		{"count too high", map[CountKey]uint64{k(1, 7): 3}, map[CountKey]uint64{k(1, 7): 4},
			[]Mismatch{{k(1, 7), 3, 4, true}}},
		{"count too low", map[CountKey]uint64{k(1, 7): 3}, map[CountKey]uint64{k(1, 7): 2},
			[]Mismatch{{k(1, 7), 3, 2, true}}},
		{"row missing", map[CountKey]uint64{k(1, 7): 2}, nil, []Mismatch{{k(1, 7), 2, 0, false}}},
		{"count without visible links", nil, map[CountKey]uint64{k(5, 8): 1}, []Mismatch{{k(5, 8), 0, 1, true}}},
		{"link types are separate", map[CountKey]uint64{k(1, 7): 1}, map[CountKey]uint64{k(1, 8): 1},
			[]Mismatch{{k(1, 7), 1, 0, false}, {k(1, 8), 0, 1, true}}},
		{"sorted by id1 then link type",
			map[CountKey]uint64{k(9, 1): 1, k(2, 2): 1, k(2, 1): 1, k(3, 3): 3},
			map[CountKey]uint64{k(3, 3): 3},
			[]Mismatch{{k(2, 1), 1, 0, false}, {k(2, 2), 1, 0, false}, {k(9, 1), 1, 0, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CompareCounts(tc.visible, tc.counts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReportFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rep       Report
		maxErrors int64
		want      []string // substrings, one per failure
	}{
		{"clean", Report{Check: &CheckReport{}, Request: &RequestReport{}}, 0, nil},
		{"mismatch", Report{Check: &CheckReport{Mismatches: 2}}, 0, []string{"2 (id1, link_type)"}},
		{"errors over the limit", Report{Request: &RequestReport{Errors: 3}}, 2, []string{"3 operations failed"}},
		{"errors within the limit", Report{Request: &RequestReport{Errors: 2}}, 2, nil},
		{"any errors allowed", Report{Request: &RequestReport{Errors: 9}}, -1, nil},
		{"both", Report{Check: &CheckReport{Mismatches: 1}, Request: &RequestReport{Errors: 1}}, 0,
			[]string{"consistency", "1 operations failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rep.Failures(tc.maxErrors)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d failures", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("failure %q lacks %q", got[i], w)
				}
			}
		})
	}
}
