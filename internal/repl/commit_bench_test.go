package repl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/txn"
)

// BenchmarkCommit measures durable commits on a single node over the real filesystem (a temporary
// directory: real fsyncs), with 1 and 16 committing goroutines, and reports the process's CPU time
// (user+system, from getrusage) and its voluntary context switches per commit beside the wall time:
// the commit path's fixed cost, without SQL or the network. `go test -run - -bench Commit -benchtime 2000x ./internal/repl/`.
func BenchmarkCommit(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			dir := b.TempDir()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			lg, err := klog.Open(dir+"/log", klog.Options{FS: vfs.Default, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer lg.Close()
			eng, err := engine.Open(dir+"/engine", engine.Options{FS: vfs.Default, DisableWAL: true})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), Logger: quiet, PurgeInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer n.Stop()
			m := txn.NewManager(eng, txn.NewLockManager(txn.DefaultLockConfig()), n)
			ctx := context.Background()
			var ru0, ru1 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / clients
			for c := range clients {
				wg.Go(func() {
					for i := range per {
						tx := m.Begin(txn.RepeatableRead, false)
						tx.Set(fmt.Appendf(nil, "k/%02d/%08d", c, i), []byte("value"))
						if _, err := tx.Commit(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) +
				syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
			if done := per * clients; done > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/float64(done), "cpu-us/commit")
				b.ReportMetric(float64(n.Stats.Syncs.Load())/float64(done), "fsyncs/commit")
				// Voluntary context switches: OS threads parking (a goroutine hand-off to an idle
				// thread wakes one, which parks again): the least noisy measure of wake-ups.
				b.ReportMetric(float64(ru1.Nvcsw-ru0.Nvcsw)/float64(done), "ctxsw/commit")
			}
		})
	}
}
