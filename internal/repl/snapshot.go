package repl

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// Engine snapshots: how a member that needs entries the leader has purged (or a new member) catches
// up. Raft's snapshot message carries only a descriptor; the engine's contents travel beside raft.
//
// On the leader:
//  1. When raft asks for a snapshot (storage.Snapshot, on the loop), pin a pebble snapshot of the
//     engine. Its applied index (read from the pinned view, written atomically with the data it
//     covers) is the snapshot's index; its membership is the one recorded with it.
//  2. Serve the pinned view as a stream of keys, in order, with a CRC32C after every chunk, starting
//     after any key the follower already has (a broken transfer resumes). Unused pins are released.
//
// On the follower:
//  3. A MsgSnap is not stepped into raft at once: a fetch goroutine streams the leader's keys into
//     sstables in a staging directory (engine.SnapshotLoader), verifying every chunk before using it,
//     resuming after the last verified key when the stream breaks. Only then is the message stepped.
//  4. When raft hands the snapshot over in a Ready, the loop waits for the apply goroutine to be idle,
//     installs the staged engine (marker, clear, ingest), resets the log to start after the snapshot
//     index, clears the marker, and goes on: the following entries come from the leader's log.
//  5. A crash during 4 is finished at the next start from the marker (recoverSnapshotInstall).

// SnapshotFetcher opens the stream of leader's snapshot id from its raft address, continuing after
// key after (nil: from the start). cmd/kiln wires it over the raft port's HTTP.
type SnapshotFetcher func(ctx context.Context, leader uint64, addr, id string, after []byte) (io.ReadCloser, error)

// snapMarkerKey marks an engine snapshot install in progress: value = index(8) term(8).
var snapMarkerKey = []byte{0x00, 's', 'n', 'a', 'p'}

// snapDesc is a raft snapshot's Data: where the engine snapshot is.
type snapDesc struct {
	ID     string `json:"id"`
	Leader uint64 `json:"leader"`
}

// pinned is a leader's engine snapshot kept for followers to fetch.
type pinned struct {
	id       string
	snap     engine.Snapshot
	meta     pb.SnapshotMetadata
	created  time.Time
	lastUsed time.Time
	readers  int
}

type snapshots struct {
	mu   sync.Mutex
	pins map[string]*pinned
}

const (
	pinReuse   = 30 * time.Second // a newer request within this reuses the newest pin
	pinRelease = 5 * time.Minute  // a pin nobody read for this long is released
)

// snapshotForRaft is storage.Snapshot on the leader (duty 1). It runs on the loop, so it must be
// cheap: a pebble snapshot is.
func (n *Node) snapshotForRaft() (pb.Snapshot, error) {
	if n.cfg.LogOnly {
		// Its engine holds no data; a member that needs a snapshot waits for a full voter to lead.
		return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
	}
	n.snaps.mu.Lock()
	defer n.snaps.mu.Unlock()
	var newest *pinned
	for _, p := range n.snaps.pins {
		if newest == nil || p.created.After(newest.created) {
			newest = p
		}
	}
	// A snapshot must carry the current membership: a member added since would refuse one that
	// does not list it.
	if newest == nil || time.Since(newest.created) > pinReuse || newest.meta.Index+1 < n.lg.FirstIndex() || newest.meta.Index < n.lastConf {
		p, err := n.pin()
		if err == nil && p.meta.Index < n.lastConf {
			err = fmt.Errorf("the engine has not applied the membership change at %d yet", n.lastConf)
		}
		if err != nil {
			n.log.Warn("engine snapshot for a follower: cannot pin one now", "err", err)
			return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
		}
		newest = p
	}
	data, _ := json.Marshal(snapDesc{ID: newest.id, Leader: n.id})
	return pb.Snapshot{Data: data, Metadata: newest.meta}, nil
}

// pin takes a pebble snapshot; called with snaps.mu held.
func (n *Node) pin() (*pinned, error) {
	s := n.eng.NewSnapshot()
	fail := func(err error) (*pinned, error) { _ = s.Close(); return nil, err }
	idx, err := s.AppliedPosition()
	if err != nil || idx == 0 {
		return fail(fmt.Errorf("read applied index from the snapshot: %v (index %d)", err, idx))
	}
	term, err := n.lg.Term(idx)
	if err != nil {
		return fail(fmt.Errorf("term of %d: %w", idx, err))
	}
	cs, ok, err := readConfState(s.Get)
	if err != nil || !ok {
		return fail(fmt.Errorf("read membership from the snapshot: %v (found %v)", err, ok))
	}
	var idb [12]byte
	_, _ = rand.Read(idb[:])
	p := &pinned{id: hex.EncodeToString(idb[:]), snap: s, meta: pb.SnapshotMetadata{Index: idx, Term: term, ConfState: cs},
		created: time.Now(), lastUsed: time.Now()}
	if n.snaps.pins == nil {
		n.snaps.pins = map[string]*pinned{}
	}
	n.snaps.pins[p.id] = p
	n.releasePins(false)
	n.log.Info("engine snapshot pinned for a follower", "id", p.id, "index", idx, "term", term)
	return p, nil
}

// releasePins drops pins nobody reads (all of them when all is set); called with snaps.mu held.
func (n *Node) releasePins(all bool) {
	for id, p := range n.snaps.pins {
		if p.readers == 0 && (all || time.Since(p.lastUsed) > pinRelease) {
			_ = p.snap.Close()
			delete(n.snaps.pins, id)
		}
	}
}

// Stream framing: 'r' uvarint(len k) k uvarint(len v) v records; after about every chunkBytes a 'c'
// with the CRC32C (Castagnoli) of the bytes since the previous check; at the end an 'e' with the CRC
// of the rest and uvarint(records in this response).
const (
	frameRecord = 'r'
	frameCheck  = 'c'
	frameEnd    = 'e'
	chunkBytes  = 1 << 20
	maxKeyBytes = 1 << 20
	maxValBytes = 256 << 20
	// maxUncheckedBytes bounds what a receiver holds before a checksum frame: a chunk plus one
	// record of the largest size.
	maxUncheckedBytes = chunkBytes + maxKeyBytes + maxValBytes
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ServeSnapshot writes pinned snapshot id's keys after after to w (duty 2).
func (n *Node) ServeSnapshot(ctx context.Context, w io.Writer, id string, after []byte) error {
	n.snaps.mu.Lock()
	p := n.snaps.pins[id]
	if p != nil {
		p.readers++
		p.lastUsed = time.Now()
	}
	n.snaps.mu.Unlock()
	if p == nil {
		return fmt.Errorf("repl: engine snapshot %s is not pinned here (released or from another leader)", id)
	}
	defer func() {
		n.snaps.mu.Lock()
		p.readers--
		p.lastUsed = time.Now()
		n.snaps.mu.Unlock()
	}()
	var lower []byte
	if after != nil {
		lower = append(append([]byte(nil), after...), 0x00) // the first key after `after`
	}
	it, err := p.snap.NewIter(lower, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	bw := bufio.NewWriterSize(w, 256<<10)
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(bw, h)
	var since int
	var count uint64
	var hdr [2 * binary.MaxVarintLen64]byte
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		n1 := binary.PutUvarint(hdr[:], uint64(len(k)))
		if _, err := mw.Write(append([]byte{frameRecord}, hdr[:n1]...)); err != nil {
			return err
		}
		if _, err := mw.Write(k); err != nil {
			return err
		}
		n2 := binary.PutUvarint(hdr[:], uint64(len(v)))
		if _, err := mw.Write(hdr[:n2]); err != nil {
			return err
		}
		if _, err := mw.Write(v); err != nil {
			return err
		}
		count++
		since += 1 + n1 + len(k) + n2 + len(v)
		if since >= chunkBytes {
			if err := writeCheck(bw, frameCheck, h.Sum32(), nil); err != nil {
				return err
			}
			h.Reset()
			since = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	tail := binary.AppendUvarint(nil, count)
	if err := writeCheck(bw, frameEnd, h.Sum32(), tail); err != nil {
		return err
	}
	return bw.Flush()
}

func writeCheck(w io.Writer, kind byte, sum uint32, tail []byte) error {
	b := append([]byte{kind}, binary.BigEndian.AppendUint32(nil, sum)...)
	_, err := w.Write(append(b, tail...))
	return err
}

// staged is an engine snapshot fetched and staged, waiting for raft to hand it over.
type staged struct {
	index, term uint64
	loader      *engine.SnapshotLoader
}

// maybeFetch starts fetching the engine snapshot a MsgSnap names (duty 3) unless one is running;
// it reports whether the message should be stepped now (its snapshot is staged).
func (n *Node) maybeFetch(m pb.Message) bool {
	if st := n.staged; st != nil && st.index == m.Snapshot.Metadata.Index && st.term == m.Snapshot.Metadata.Term {
		return true
	}
	if n.fetching {
		return false
	}
	if n.cfg.FetchSnapshot == nil {
		n.log.Error("the leader sent an engine snapshot but this node cannot fetch one (no fetcher configured)")
		return false
	}
	var d snapDesc
	if err := json.Unmarshal(m.Snapshot.Data, &d); err != nil || d.ID == "" {
		n.log.Error("raft snapshot without an engine snapshot descriptor", "err", err)
		return false
	}
	addr, _ := n.memberAddr(d.Leader)
	n.fetching = true
	if n.staged != nil {
		n.staged.loader.Abort()
		n.staged = nil
	}
	n.bg.Go(func() {
		st, err := n.fetch(d, addr, m.Snapshot.Metadata)
		deliver := func() {
			n.fetching = false
			if err != nil {
				n.log.Warn("engine snapshot fetch failed; the leader will offer another", "leader", d.Leader, "err", err)
				return
			}
			n.staged = st
			n.step(m)
		}
		select {
		case n.ctlc <- deliver:
		case <-n.stopc:
			if st != nil {
				st.loader.Abort()
			}
		}
	})
	return false
}

// fetch streams the leader's snapshot into a loader, resuming after the last verified key.
func (n *Node) fetch(d snapDesc, addr string, meta pb.SnapshotMetadata) (*staged, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-n.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	l, err := n.eng.NewSnapshotLoader("snapshot-staging")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 8; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			case <-ctx.Done():
				l.Abort()
				return nil, ctx.Err()
			}
		}
		rc, err := n.cfg.FetchSnapshot(ctx, d.Leader, addr, d.ID, l.Last())
		if err != nil {
			lastErr = err
			continue
		}
		add := l.Add
		if n.cfg.LogOnly {
			// A log-only voter keeps no data: only repl's own keys (applied index, membership).
			add = func(k, v []byte) error {
				if len(k) == 0 || k[0] != 0x00 {
					return nil
				}
				return l.Add(k, v)
			}
		}
		done, err := readSnapshotStream(rc, add)
		rc.Close()
		if done {
			n.log.Info("engine snapshot fetched", "index", meta.Index, "keys", l.Keys(), "bytes", l.Bytes(), "took", time.Since(start), "attempts", attempt+1)
			return &staged{index: meta.Index, term: meta.Term, loader: l}, nil
		}
		lastErr = err
	}
	l.Abort()
	return nil, fmt.Errorf("fetch engine snapshot %s at %d from node %d: %w", d.ID, meta.Index, d.Leader, lastErr)
}

// readSnapshotStream passes every verified record to add; done reports a complete stream.
func readSnapshotStream(r io.Reader, add func(k, v []byte) error) (done bool, err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	h := crc32.New(castagnoli)
	type kv struct{ k, v []byte }
	var pending []kv
	var pendingBytes int
	var records uint64
	readN := func(limit uint64) ([]byte, error) {
		sz, err := binary.ReadUvarint(hashingByteReader{br, h})
		if err != nil {
			return nil, err
		}
		if sz > limit {
			return nil, fmt.Errorf("snapshot record of %d bytes exceeds %d", sz, limit)
		}
		b := make([]byte, sz)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		h.Write(b)
		return b, nil
	}
	for {
		kind, err := br.ReadByte()
		if err != nil {
			return false, fmt.Errorf("snapshot stream ended early: %w", err)
		}
		switch kind {
		case frameRecord:
			h.Write([]byte{kind})
			k, err := readN(maxKeyBytes)
			if err != nil {
				return false, err
			}
			v, err := readN(maxValBytes)
			if err != nil {
				return false, err
			}
			pending = append(pending, kv{k, v})
			// The sender checks every chunkBytes; a stream that does not is broken, and its
			// unverified records must not pile up in memory.
			if pendingBytes += len(k) + len(v); pendingBytes > maxUncheckedBytes {
				return false, fmt.Errorf("snapshot stream: %d bytes without a checksum", pendingBytes)
			}
		case frameCheck, frameEnd:
			var sum [4]byte
			if _, err := io.ReadFull(br, sum[:]); err != nil {
				return false, err
			}
			if binary.BigEndian.Uint32(sum[:]) != h.Sum32() {
				return false, errors.New("snapshot chunk checksum mismatch")
			}
			h.Reset()
			for _, p := range pending {
				if err := add(p.k, p.v); err != nil {
					return false, err
				}
			}
			records += uint64(len(pending))
			pending = pending[:0]
			pendingBytes = 0
			if kind == frameEnd {
				want, err := binary.ReadUvarint(br)
				if err != nil {
					return false, err
				}
				if want != records {
					return false, fmt.Errorf("snapshot stream had %d records, its end says %d", records, want)
				}
				return true, nil
			}
		default:
			return false, fmt.Errorf("snapshot stream: unknown frame %q", kind)
		}
	}
}

// installSnapshot swaps the staged engine in when raft hands the snapshot over (duty 4).
func (n *Node) installSnapshot(s pb.Snapshot, rdHS pb.HardState) error {
	st := n.staged
	idx, term := s.Metadata.Index, s.Metadata.Term
	if st == nil || st.index != idx || st.term != term {
		return fmt.Errorf("repl: raft installs snapshot %d/%d but no engine snapshot for it is staged", idx, term)
	}
	n.staged = nil
	// Entries handed to apply before are all below the snapshot; let them finish so nothing writes
	// to the engine during the swap.
	n.aq.barrier()
	if err := n.fatal(); err != nil {
		return fmt.Errorf("repl: no snapshot install on a stopped node: %w", err)
	}
	val := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, idx), term)
	if err := st.loader.Install(snapMarkerKey, val); err != nil {
		return fmt.Errorf("repl: install engine snapshot %d: %w", idx, err)
	}
	hs := n.lg.HardState()
	if !raft.IsEmptyHardState(rdHS) {
		hs = klog.HardState{Term: rdHS.Term, Vote: rdHS.Vote, Commit: rdHS.Commit}
	}
	hs.Commit = max(hs.Commit, idx)
	if err := n.lg.Reset(idx, term, hs); err != nil {
		return fmt.Errorf("repl: reset the log after snapshot %d: %w", idx, err)
	}
	if err := n.eng.ClearMarker(snapMarkerKey); err != nil {
		return fmt.Errorf("repl: finish snapshot install: %w", err)
	}
	n.setApplied(idx)
	n.inEngine.Store(idx)
	n.durable.Store(idx)
	n.commitIdx.Store(max(n.commitIdx.Load(), idx))
	n.Stats.SnapshotsInstalled.Add(1)
	if err := n.loadMembers(); err != nil {
		return err
	}
	n.log.Info("engine snapshot installed", "index", idx, "term", term)
	return nil
}

// recoverSnapshotInstall finishes or rolls back an install a crash interrupted (duty 5): if the
// engine holds the snapshot (its applied index is the marker's), the log is reset after it; if the
// crash came between the clear and the ingest, the engine is empty and the log starts over empty
// (the node then gets a snapshot again, like a new member; its term and vote are kept).
func recoverSnapshotInstall(lg *klog.Log, eng *engine.Engine) error {
	v, ok, err := eng.Get(snapMarkerKey)
	if err != nil || !ok {
		return err
	}
	if len(v) != 16 {
		return fmt.Errorf("repl: bad snapshot install marker %x", v)
	}
	idx, term := binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
	applied, err := eng.AppliedPosition()
	if err != nil {
		return err
	}
	hs := lg.HardState()
	if applied == idx {
		if t, err := lg.Term(idx); err != nil || t != term || lg.FirstIndex() > idx+1 {
			hs.Commit = max(hs.Commit, idx)
			if err := lg.Reset(idx, term, hs); err != nil {
				return err
			}
		}
	} else {
		if err := lg.Reset(0, 0, klog.HardState{Term: hs.Term, Vote: hs.Vote}); err != nil {
			return err
		}
	}
	return eng.ClearMarker(snapMarkerKey)
}

// hashingByteReader feeds every byte read to the chunk's hash.
type hashingByteReader struct {
	r *bufio.Reader
	h io.Writer
}

func (b hashingByteReader) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		_, _ = b.h.Write([]byte{c})
	}
	return c, err
}
