// Package gtid parses, formats and compares MySQL GTID sets ("uuid:1-5:7,uuid2:3"), the form in which
// Kiln exposes its log position: a committed transaction's GTID is <cluster uuid>:<log index>, and a
// node's @@gtid_executed is <cluster uuid>:1-<applied index> (docs/operations.md, "Reads on a
// cluster: GTIDs"). It follows MySQL 8's text form: a set is a comma-separated list of
// uuid:interval[:interval...] where an interval is n or n-m with 1 <= n <= m < 2^63; whitespace
// around the parts is allowed; the empty string is the empty set. GTID tags (MySQL 8.3's
// uuid:tag:n) are not accepted. It imports nothing of Kiln's.
package gtid

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxGNO is the largest transaction number MySQL accepts (GNO_END - 1).
const MaxGNO = 1<<63 - 2

// UUID is a server or cluster UUID.
type UUID [16]byte

// String formats u as MySQL does: lower-case, 8-4-4-4-12.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// ParseUUID accepts a UUID as MySQL does: 36 characters with hyphens (8-4-4-4-12), 32 hex digits
// without them, or either in braces.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	t := s
	if len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' {
		t = t[1 : len(t)-1]
	}
	switch len(t) {
	case 36:
		if t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
			return u, fmt.Errorf("malformed UUID %q", s)
		}
		t = t[0:8] + t[9:13] + t[14:18] + t[19:23] + t[24:36]
	case 32:
	default:
		return u, fmt.Errorf("malformed UUID %q", s)
	}
	if _, err := hex.Decode(u[:], []byte(t)); err != nil {
		return u, fmt.Errorf("malformed UUID %q", s)
	}
	return u, nil
}

// Interval is the transaction numbers Start..End (inclusive).
type Interval struct{ Start, End uint64 }

// Set is a GTID set: for each UUID, its intervals, sorted, disjoint and not adjacent (normalised,
// as MySQL prints them). The zero value is the empty set.
type Set struct {
	m map[UUID][]Interval
}

// ErrMalformed is wrapped by every Parse error.
var ErrMalformed = errors.New("malformed GTID set")

// Parse parses a GTID set's text. Errors wrap ErrMalformed.
func Parse(text string) (Set, error) {
	var s Set
	if strings.TrimSpace(text) == "" {
		return s, nil
	}
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			// MySQL skips empty elements between commas ("a:1,,b:2"); an all-empty text is empty.
			continue
		}
		// A UUID with no intervals is valid and adds nothing, as in MySQL.
		fields := strings.Split(part, ":")
		u, err := ParseUUID(strings.TrimSpace(fields[0]))
		if err != nil {
			return Set{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		for _, f := range fields[1:] {
			iv, err := parseInterval(strings.TrimSpace(f))
			if err != nil {
				return Set{}, fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			s.add(u, iv)
		}
	}
	return s, nil
}

func parseInterval(f string) (Interval, error) {
	lo, hi, ranged := strings.Cut(f, "-")
	start, err := parseGNO(strings.TrimSpace(lo))
	if err != nil {
		return Interval{}, err
	}
	end := start
	if ranged {
		if end, err = parseGNO(strings.TrimSpace(hi)); err != nil {
			return Interval{}, err
		}
		if end < start {
			return Interval{}, fmt.Errorf("interval %q ends before it starts", f)
		}
	}
	return Interval{start, end}, nil
}

func parseGNO(s string) (uint64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("transaction number %q", s)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < 1 || n > MaxGNO {
		return 0, fmt.Errorf("transaction number %q out of range 1..%d", s, uint64(MaxGNO))
	}
	return n, nil
}

// Range returns the set u:start-end (empty when end < start).
func Range(u UUID, start, end uint64) Set {
	var s Set
	if start >= 1 && end >= start {
		s.add(u, Interval{start, end})
	}
	return s
}

// add inserts iv into u's intervals, keeping them normalised.
func (s *Set) add(u UUID, iv Interval) {
	if s.m == nil {
		s.m = map[UUID][]Interval{}
	}
	ivs := append(s.m[u], iv)
	slices.SortFunc(ivs, func(a, b Interval) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	out := ivs[:1]
	for _, x := range ivs[1:] {
		last := &out[len(out)-1]
		if x.Start <= last.End+1 {
			last.End = max(last.End, x.End)
			continue
		}
		out = append(out, x)
	}
	s.m[u] = out
}

// IsEmpty reports whether s holds no GTID.
func (s Set) IsEmpty() bool { return len(s.m) == 0 }

// UUIDs returns the UUIDs s names, sorted.
func (s Set) UUIDs() []UUID {
	out := make([]UUID, 0, len(s.m))
	for u := range s.m {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b UUID) int { return strings.Compare(string(a[:]), string(b[:])) })
	return out
}

// Intervals returns u's intervals in s (normalised; nil when s names no u).
func (s Set) Intervals(u UUID) []Interval { return s.m[u] }

// Max is the largest transaction number of u in s (0 when none).
func (s Set) Max(u UUID) uint64 {
	ivs := s.m[u]
	if len(ivs) == 0 {
		return 0
	}
	return ivs[len(ivs)-1].End
}

// Contains reports whether every GTID of sub is in s.
func (s Set) Contains(sub Set) bool {
	for u, ivs := range sub.m {
		have := s.m[u]
		for _, iv := range ivs {
			// have is normalised, so an interval of sub is covered only by a single one of have.
			i, _ := slices.BinarySearchFunc(have, iv.Start, func(h Interval, t uint64) int {
				switch {
				case h.End < t:
					return -1
				case h.Start > t:
					return 1
				}
				return 0
			})
			if i == len(have) || have[i].Start > iv.Start || have[i].End < iv.End {
				return false
			}
		}
	}
	return true
}

// String formats s as MySQL prints a GTID set: UUIDs in order, "uuid:1-5:7", separated by ",\n"
// (the separator of @@gtid_executed; Parse accepts it back).
func (s Set) String() string { return s.format(",\n") }

// Compact formats s with "," between UUIDs, as session state tracking and WAIT_FOR... callers
// usually write it.
func (s Set) Compact() string { return s.format(",") }

func (s Set) format(sep string) string {
	var b strings.Builder
	for i, u := range s.UUIDs() {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(u.String())
		for _, iv := range s.m[u] {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(iv.Start, 10))
			if iv.End != iv.Start {
				b.WriteByte('-')
				b.WriteString(strconv.FormatUint(iv.End, 10))
			}
		}
	}
	return b.String()
}
