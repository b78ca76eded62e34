package memory

import (
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/sqlerr"
)

func TestTrackerQuotaAndAccount(t *testing.T) {
	a := NewAccount(4 << 20)
	a.liveHeap = func() int64 { return 0 }
	tr := NewTracker(a, 3<<20)
	if err := tr.Grow(100); err != nil {
		t.Fatal(err)
	}
	if a.Used() != chunkBytes {
		t.Fatalf("account used %d, want one chunk", a.Used())
	}
	if err := tr.Grow(3 << 20); err == nil || sqlerr.As(err).Code != sqlerr.ErrCapacityExceeded ||
		!strings.Contains(err.Error(), "'kiln_mem_quota_query'") {
		t.Fatalf("past the quota: %v", err)
	}
	if tr.Used() != 100 {
		t.Fatalf("a refused Grow counted: %d", tr.Used())
	}
	// Another tracker fills the account: this one gets exactly what is left, then is refused.
	other := NewTracker(a, 0)
	if err := other.Grow(3<<20 - 10); err != nil {
		t.Fatal(err)
	}
	if err := tr.Grow(chunkBytes); err == nil || !strings.Contains(err.Error(), "'kiln_memory_limit'") {
		t.Fatalf("account full: %v", err)
	}
	if a.Refused() != 1 {
		t.Fatalf("refused %d", a.Refused())
	}
	other.Close()
	tr.Close()
	if a.Used() != 0 || a.Peak() < 4<<20-chunkBytes {
		t.Fatalf("used %d peak %d", a.Used(), a.Peak())
	}
	// A heap near the limit refuses new reservations even with the account empty.
	a.liveHeap = func() int64 { return 4 << 20 }
	if a.Reserve(1) {
		t.Fatal("reserved with the heap at the limit")
	}
	// No limit, no account: everything is admitted.
	var none *Account
	if !none.Reserve(1<<40) || NewTracker(nil, 0).Grow(1<<40) != nil {
		t.Fatal("unlimited refused")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "8G": 8 << 30, "512MiB": 512 << 20, "64mb": 64 << 20, "1t": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1.5G", "99999999999T"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	if DefaultLimit() <= 0 {
		t.Errorf("DefaultLimit() = %d on a Linux machine", DefaultLimit())
	}
}
