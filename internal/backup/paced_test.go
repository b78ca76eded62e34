package backup

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// Source.MaxRate (kiln backup --max-rate) holds a stream to about its rate: 2 MiB at 4 MiB/s
// take at least 0.45 s (the bound is loose: the machine may be slow, never fast), and a
// cancelled context ends a paced write at once.
func TestPacedRate(t *testing.T) {
	var sink bytes.Buffer
	p := &paced{ctx: context.Background(), w: &sink, rate: 4 << 20, start: time.Now()}
	start := time.Now()
	chunk := make([]byte, 64<<10)
	for i := 0; i < 32; i++ {
		if _, err := p.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("2 MiB at 4 MiB/s took %v", took)
	if took < 450*time.Millisecond || took > 30*time.Second || sink.Len() != 2<<20 {
		t.Fatalf("2 MiB at 4 MiB/s took %v (%d bytes)", took, sink.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	p = &paced{ctx: ctx, w: io.Discard, rate: 1024, start: time.Now()}
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	if _, err := p.Write(make([]byte, 1<<20)); err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("a paced write of 17 minutes' worth, cancelled after 0.1 s: %v after %v", err, time.Since(start))
	}
}
