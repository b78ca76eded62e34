package engine

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkApply measures what the apply step costs per committed transaction with pebble's WAL
// disabled (the choice, see docs/decisions.md) and with its WAL written but never synced: one
// transaction = one batch of ROWS row writes (sysbench-sized 120-byte values on random keys of a
// 1M-row key space) plus the applied index, as repl.apply does. Reported: ns/op and bytes written to
// the engine's directory per op (WAL + flushes + compactions), from /proc/self/io.
//
//	go test ./internal/engine -run - -bench Apply -benchtime 200000x -count 5
func BenchmarkApply(b *testing.B) {
	for _, rows := range []int{1, 10} {
		for _, mode := range []struct {
			name       string
			disableWAL bool
		}{{"wal-disabled", true}, {"wal-nosync", false}} {
			b.Run(fmt.Sprintf("%s/rows=%d", mode.name, rows), func(b *testing.B) {
				dir := b.TempDir()
				e, err := Open(filepath.Join(dir, "e"), Options{DisableWAL: mode.disableWAL, CacheBytes: 64 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				rng := rand.New(rand.NewSource(1))
				val := make([]byte, 120)
				key := make([]byte, 13)
				key[0] = 't'
				w0 := writtenBytes()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					bt := e.NewBatch()
					for r := 0; r < rows; r++ {
						binary.BigEndian.PutUint64(key[1:9], 42)
						binary.BigEndian.PutUint32(key[9:], uint32(rng.Intn(1_000_000)))
						rng.Read(val[:16])
						if err := bt.Set(key, val); err != nil {
							b.Fatal(err)
						}
					}
					if err := e.Apply(bt, uint64(i+1), false); err != nil {
						b.Fatal(err)
					}
					bt.Close()
				}
				b.StopTimer()
				if w1 := writtenBytes(); w1 > 0 {
					b.ReportMetric(float64(w1-w0)/float64(b.N), "wbytes/op")
				}
			})
		}
	}
}

// writtenBytes is this process's write_bytes from /proc/self/io (0 if unavailable).
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range splitLines(string(b)) {
		const p = "write_bytes: "
		if len(line) > len(p) && line[:len(p)] == p {
			n, _ := strconv.ParseInt(line[len(p):], 10, 64)
			return n
		}
	}
	return 0
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
