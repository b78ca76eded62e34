package main

import "testing"

// kiln serve --backup-max-rate caps what a client asks for; it never speeds a client up.
func TestCapRate(t *testing.T) {
	for _, c := range []struct{ asked, limit, want int64 }{
		{0, 0, 0}, // neither: unlimited
		{16 << 20, 0, 16 << 20},
		{0, 64 << 20, 64 << 20}, // the client asked for no limit: the node's
		{16 << 20, 64 << 20, 16 << 20},
		{128 << 20, 64 << 20, 64 << 20},
	} {
		if got := capRate(c.asked, c.limit); got != c.want {
			t.Errorf("capRate(%d, %d) = %d, want %d", c.asked, c.limit, got, c.want)
		}
	}
}
