package backup

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
)

// Source is the running node a backup is served from.
type Source struct {
	Engine *engine.Engine
	Log    *klog.Log
	// Applied is the node's applied index: every entry up to it is committed and in the log.
	Applied func() uint64
	// HoldLog keeps the log from index from on out of purge until release (repl.Node.HoldLog).
	HoldLog func(from uint64) (release func())
	// Identity of the source, copied into the header.
	ClusterID, ClusterUUID string
	Node                   uint64
	DataFormat             int
	// After, if not 0, makes the backup incremental: no engine, the log entries after index After
	// (the previous backup's end) up to the applied index.
	After uint64
	// Files selects the file form (files.go): the engine as a checkpoint's files, not its keys.
	// Have, with it, lists the engine files the client already holds (an incremental backup).
	Files bool
	Have  map[string]HaveFile
	// MaxRate paces the stream to at most this many bytes per second (0: unlimited), so a backup
	// spares the node's disk and network (kiln backup --max-rate).
	MaxRate int64
}

// logBatchBytes bounds the entries read from the log at once.
const logBatchBytes = 4 << 20

// Serve writes a backup stream to w: the engine as of a snapshot at its applied index N, then the
// log entries N+1..E, E being the applied index once the engine has been sent. Writes go on
// meanwhile (a pebble snapshot blocks no writer); the log after N is held from purge until Serve
// returns. ctx ends it early (the client went away): nothing is left behind on the node.
func Serve(ctx context.Context, w io.Writer, src Source) error {
	if src.Files {
		if src.After > 0 {
			return errors.New("backup: a file-form backup has no log-only incremental form")
		}
		return serveFiles(ctx, w, src)
	}
	var snap engine.Snapshot
	var n uint64
	var err error
	if src.After > 0 {
		// An incremental backup: the log after the previous backup's end, no engine.
		if n = src.After; n > src.Applied() {
			return fmt.Errorf("backup: the previous backup ends at index %d, beyond this node's applied index %d (back up the node it was taken from, or wait)", n, src.Applied())
		}
	} else {
		snap = src.Engine.NewSnapshot()
		defer snap.Close()
		if n, err = snap.AppliedPosition(); err != nil {
			return fmt.Errorf("backup: applied index of the engine snapshot: %w", err)
		}
	}
	// The hold is taken after the snapshot, from N+1 on: a purge already running when it is taken
	// removes only entries below the applied index it read, which is at most N (repl.HoldLog).
	release := src.HoldLog(n + 1)
	defer release()
	if first := src.Log.FirstIndex(); first > n+1 {
		if src.After > 0 {
			return fmt.Errorf("backup: the log starts at %d, after the previous backup's end %d (purged): take a full backup", first, n)
		}
		return fmt.Errorf("backup: the log starts at %d, after the engine snapshot's index %d (purged)", first, n)
	}
	var nTerm uint64
	if n > 0 {
		if nTerm, err = src.Log.Term(n); err != nil {
			return fmt.Errorf("backup: term of the snapshot's index %d: %w", n, err)
		}
	}
	engineTime := commitTimeAt(src.Log, n)
	h := sha256.New()
	if src.MaxRate > 0 {
		w = &paced{ctx: ctx, w: w, rate: float64(src.MaxRate), start: time.Now()}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	mw := io.MultiWriter(bw, h)
	hdr, _ := json.Marshal(Header{Format: FormatVersion, DataFormat: src.DataFormat, ClusterID: src.ClusterID,
		ClusterUUID: src.ClusterUUID, Node: src.Node, EngineIndex: n, EngineTerm: nTerm, EngineTime: engineTime,
		Incremental: src.After > 0})
	buf := append([]byte(streamMagic), frameHeader)
	buf = appendJSON(buf, hdr)
	if _, err := mw.Write(buf); err != nil {
		return err
	}
	var tr Trailer
	if snap != nil {
		if err := serveKeys(ctx, mw, snap, &tr); err != nil {
			return err
		}
	}
	if err := serveTail(ctx, mw, src, n, nTerm, &tr); err != nil {
		return err
	}
	if _, err := bw.Write(h.Sum(nil)); err != nil {
		return err
	}
	return bw.Flush()
}

// serveTail ends both forms' streams: the log entries after the engine's index n, then the trailer
// (tr, with the index and term the engine was taken at).
func serveTail(ctx context.Context, mw io.Writer, src Source, n, nTerm uint64, tr *Trailer) error {
	tr.EndIndex, tr.EndTerm = n, nTerm
	if err := serveEntries(ctx, mw, src, n, tr); err != nil {
		return err
	}
	tb, _ := json.Marshal(*tr)
	_, err := mw.Write(appendJSON([]byte{frameTrailer}, tb))
	return err
}

// serveEntries writes the log entries n+1..E as frames, E being the applied index now.
func serveEntries(ctx context.Context, mw io.Writer, src Source, n uint64, tr *Trailer) error {
	end := src.Applied()
	var buf []byte
	for lo := n + 1; lo <= end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := src.Log.Entries(lo, end+1, logBatchBytes)
		if err != nil {
			return fmt.Errorf("backup: read log entries from %d: %w", lo, err)
		}
		for _, e := range ents {
			buf = append(buf[:0], frameEntry)
			buf = appendEntry(buf, e)
			if _, err := mw.Write(buf); err != nil {
				return err
			}
			tr.EndIndex, tr.EndTerm = e.Index, e.Term
			tr.Entries++
		}
		lo += uint64(len(ents))
	}
	return nil
}

// serveKeys writes every key of snap as a frame, counting them in tr.
func serveKeys(ctx context.Context, mw io.Writer, snap engine.Snapshot, tr *Trailer) error {
	it, err := snap.NewIter(nil, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var buf []byte
	for it.First(); it.Valid(); it.Next() {
		buf = append(buf[:0], frameKV)
		buf = appendKV(buf, it.Key(), it.Value())
		if _, err := mw.Write(buf); err != nil {
			return err
		}
		if tr.Keys++; tr.Keys%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return it.Error()
}

// commitTimeAt is the commit time of the last commit at or below index n that lg still holds,
// looking back at most 64 entries (raft's empty entries and membership changes carry none), or 0.
func commitTimeAt(lg *klog.Log, n uint64) int64 {
	if n == 0 || n < lg.FirstIndex() {
		return 0
	}
	lo := max(lg.FirstIndex(), n-min(n-1, 63))
	ents, err := lg.Entries(lo, n+1, 1<<30)
	if err != nil {
		return 0
	}
	for i := len(ents) - 1; i >= 0; i-- {
		if at, ok := repl.EntryCommitTime(ents[i]); ok {
			return at
		}
	}
	return 0
}

// paced writes at most rate bytes per second on average.
type paced struct {
	ctx   context.Context
	w     io.Writer
	rate  float64
	start time.Time
	n     int64
}

func (p *paced) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if ahead := time.Duration(float64(p.n)/p.rate*float64(time.Second)) - time.Since(p.start); ahead > 0 {
		select {
		case <-time.After(ahead):
		case <-p.ctx.Done():
			return n, p.ctx.Err()
		}
	}
	return n, err
}

func appendJSON(b, js []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(js)))
	return append(b, js...)
}
