package gtid

import (
	"errors"
	"testing"
)

const (
	u1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	u2 = "5e11fa47-71ca-11e1-9e33-c80aa9429562"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  \n ", ""},
		{u1 + ":1", u1 + ":1"},
		{u1 + ":1-5", u1 + ":1-5"},
		{u1 + ":1-5:7", u1 + ":1-5:7"},
		{u1 + ":7:1-5", u1 + ":1-5:7"},                        // sorted
		{u1 + ":1-5:6-9", u1 + ":1-9"},                        // adjacent intervals merge
		{u1 + ":1-5:3-4", u1 + ":1-5"},                        // contained
		{u1 + ":1-5," + u1 + ":4-8", u1 + ":1-8"},             // the same UUID twice
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:2", u1 + ":2"}, // upper case
		{"3e11fa4771ca11e19e33c80aa9429562:2", u1 + ":2"},     // no hyphens
		{"{" + u1 + "}:2", u1 + ":2"},                         // braces
		{" " + u1 + " : 1 - 3 , " + u2 + ":4 ", u1 + ":1-3,\n" + u2 + ":4"},
		{u2 + ":4,\n" + u1 + ":1", u1 + ":1,\n" + u2 + ":4"}, // @@gtid_executed's own separator
		{u1 + ":1,," + u2 + ":2", u1 + ":1,\n" + u2 + ":2"},  // empty elements are skipped
		{u1, ""}, // a UUID without intervals adds nothing
		{u1 + ":9223372036854775806", u1 + ":9223372036854775806"},
	} {
		s, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := s.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		// The formatted set parses back to itself.
		if s2, err := Parse(s.String()); err != nil || s2.String() != s.String() {
			t.Errorf("round trip of %q: %q %v", s.String(), s2.String(), err)
		}
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{
		"x",
		u1 + ":",
		u1 + ":0",
		u1 + ":-1",
		u1 + ":+1",
		u1 + ":5-3",
		u1 + ":1-",
		u1 + ":a",
		u1 + ":1:",
		u1 + ":9223372036854775807", // past MySQL's GNO_END - 1
		u1 + ":18446744073709551616",
		"3e11fa47-71ca-11e1-9e33-c80aa942956:1", // short
		"3e11fa47-71ca-11e1-9e33-c80aa94295622:1", // long
		"3e11fa47x71ca-11e1-9e33-c80aa9429562:1",  // bad separator
		"ge11fa47-71ca-11e1-9e33-c80aa9429562:1",  // not hex
		u1 + ":tag:1",                             // GTID tags are not accepted
		u1 + ":1 2",
	} {
		if s, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %q, %v; want ErrMalformed", in, s.String(), err)
		}
	}
}

func TestContains(t *testing.T) {
	uuid, _ := ParseUUID(u1)
	exec := Range(uuid, 1, 100)
	for _, tc := range []struct {
		sub  string
		want bool
	}{
		{"", true},
		{u1 + ":1", true},
		{u1 + ":100", true},
		{u1 + ":1-100", true},
		{u1 + ":5:7-9:100", true},
		{u1 + ":101", false},
		{u1 + ":100-101", false},
		{u1 + ":1:101", false},
		{u2 + ":1", false},
		{u1 + ":1," + u2 + ":1", false},
	} {
		sub, err := Parse(tc.sub)
		if err != nil {
			t.Fatal(err)
		}
		if got := exec.Contains(sub); got != tc.want {
			t.Errorf("1-100 contains %q = %v, want %v", tc.sub, got, tc.want)
		}
	}
	gappy, _ := Parse(u1 + ":1-5:10-20")
	for _, tc := range []struct {
		sub  string
		want bool
	}{{u1 + ":3-5", true}, {u1 + ":5-10", false}, {u1 + ":6", false}, {u1 + ":10-20", true}, {u1 + ":21", false}} {
		sub, _ := Parse(tc.sub)
		if got := gappy.Contains(sub); got != tc.want {
			t.Errorf("1-5:10-20 contains %q = %v, want %v", tc.sub, got, tc.want)
		}
	}
}

func TestRangeAndMax(t *testing.T) {
	uuid, _ := ParseUUID(u1)
	if s := Range(uuid, 1, 0); !s.IsEmpty() || s.String() != "" {
		t.Errorf("Range(1, 0) = %q, want empty", s.String())
	}
	s := Range(uuid, 1, 42)
	if s.String() != u1+":1-42" || s.Max(uuid) != 42 {
		t.Errorf("Range(1, 42) = %q max %d", s.String(), s.Max(uuid))
	}
	if uuid.String() != u1 {
		t.Errorf("UUID round trip: %s", uuid)
	}
}
