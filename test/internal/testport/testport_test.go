package testport

import (
	"net"
	"strconv"
	"testing"
)

// Addr gives distinct ports below the ephemeral range that can be bound.
func TestAddr(t *testing.T) {
	seen := map[string]bool{}
	low := ephemeralLow()
	for range 50 {
		a := Addr(t)
		if seen[a] {
			t.Fatalf("%s handed out twice", a)
		}
		seen[a] = true
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(p); n < 10000 || n >= low {
			t.Fatalf("%s is outside [10000, %d)", a, low)
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s cannot be bound: %v", a, err)
		}
		l.Close()
	}
}
