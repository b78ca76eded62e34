// Package repltest starts the real commit path (repl over the binlog and a pebble engine) on an
// in-memory filesystem for the tests of the layers above it. There is one commit path: the SQL and
// transaction tests commit through the same raft loop, log fsyncs and apply as the server does.
package repltest

import (
	"context"
	"io"
	"log/slog"
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

// Recorder is a committer that keeps every record it commits, in commit order, as the log holds
// them: tests read back what a transaction logged.
type Recorder struct {
	*repl.Node
	mu   sync.Mutex
	recs [][]byte
}

// Commit commits through the node and keeps rec if it committed.
func (r *Recorder) Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (uint64, error) {
	idx, err := r.Node.Commit(ctx, rec, async, epoch)
	if err == nil {
		r.mu.Lock()
		r.recs = append(r.recs, append([]byte(nil), rec...))
		r.mu.Unlock()
	}
	return idx, err
}

// Records returns the records committed so far.
func (r *Recorder) Records() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.recs...)
}
