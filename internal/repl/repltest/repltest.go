// Package repltest starts the real commit path (repl over the binlog and a pebble engine) on an
// in-memory filesystem for the tests of the layers above it. There is one commit path: the SQL and
// transaction tests commit through the same raft loop, log fsyncs and apply as the server does.
package repltest

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
)

// Stack is one node: its log, engine and raft node on one filesystem.
type Stack struct {
	FS     vfs.FS
	Log    *klog.Log
	Engine *engine.Engine
	Node   *repl.Node
}

// Start opens a single-voter node on fs (a new in-memory filesystem when nil) and stops it when the
// test ends. tweak, if not nil, adjusts the configuration before the start.
func Start(tb testing.TB, fs vfs.FS, applier repl.Applier, tweak func(*repl.Config)) *Stack {
	tb.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lg, err := klog.Open("/data/log", klog.Options{FS: fs, Logger: quiet})
	if err != nil {
		tb.Fatalf("open log: %v", err)
	}
	eng, err := engine.Open("/data/engine", engine.Options{FS: fs, DisableWAL: true, CacheBytes: 8 << 20})
	if err != nil {
		tb.Fatalf("open engine: %v", err)
	}
	cfg := repl.Config{Log: lg, Engine: eng, Applier: applier, Logger: quiet, TickInterval: 10 * time.Millisecond, PurgeInterval: -1}
	if tweak != nil {
		tweak(&cfg)
	}
	n, err := repl.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("start node: %v", err)
	}
	s := &Stack{FS: fs, Log: lg, Engine: eng, Node: n}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the node and closes the engine and log (idempotent).
func (s *Stack) Close() {
	if s.Node == nil {
		return
	}
	s.Node.Stop()
	_ = s.Engine.Close()
	_ = s.Log.Close()
	s.Node = nil
}

// Recorder is a committer that keeps every record it commits, in log order, as the log holds
// them: tests read back what a transaction logged. It commits through Commit or Place (early lock
// release), like the node it wraps.
type Recorder struct {
	*repl.Node
	mu   sync.Mutex
	recs map[uint64][]byte // by log index
}

func (r *Recorder) keep(idx uint64, rec []byte) {
	r.mu.Lock()
	if r.recs == nil {
		r.recs = map[uint64][]byte{}
	}
	r.recs[idx] = append([]byte(nil), rec...)
	r.mu.Unlock()
}

// Commit commits through the node and keeps rec if it committed.
func (r *Recorder) Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (uint64, error) {
	idx, err := r.Node.Commit(ctx, rec, async, epoch)
	if err == nil {
		r.keep(idx, rec)
	}
	return idx, err
}

// Place places through the node; rec is kept once its Wait reports it committed.
func (r *Recorder) Place(ctx context.Context, rec []byte, async bool, epoch uint64, after []repl.Waiter) (repl.Waiter, error) {
	deps := make([]repl.Waiter, 0, len(after))
	for _, a := range after {
		if w, ok := a.(*recorded); ok {
			a = w.Waiter
		}
		deps = append(deps, a)
	}
	w, err := r.Node.Place(ctx, rec, async, epoch, deps)
	if err != nil {
		return nil, err
	}
	return &recorded{Waiter: w, r: r, rec: rec}, nil
}

// recorded is a placed record the Recorder keeps when it commits.
type recorded struct {
	repl.Waiter
	r   *Recorder
	rec []byte
}

func (w *recorded) Wait(ctx context.Context) (uint64, error) {
	idx, err := w.Waiter.Wait(ctx)
	if err == nil {
		w.r.keep(idx, w.rec)
	}
	return idx, err
}

// Records returns the records committed so far, in log order.
func (r *Recorder) Records() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	idxs := make([]uint64, 0, len(r.recs))
	for i := range r.recs {
		idxs = append(idxs, i)
	}
	slices.Sort(idxs)
	out := make([][]byte, 0, len(idxs))
	for _, i := range idxs {
		out = append(out, r.recs[i])
	}
	return out
}
