package repl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	klog "github.com/kiln-db/kiln/internal/log"
)

// The data of a normal log entry that holds a commit (docs/log-format.md, "Entry data"):
//
//	format 1: proposal id u64 (big-endian) | write-set record
//	format 2: proposal id u64 (big-endian) | 0x80 | commit time i64 (big-endian, Unix nanoseconds) | write-set record
//
// A write-set record starts with its version (1 or 2, internal/txn), never 0x80, so the byte after
// the proposal id tells the two formats apart in any entry, whoever wrote it: entries travel between
// nodes (and into backups) as raft entries, without a segment header that could carry a version.
// This build writes format 2 and reads both. The commit time is the leader's wall clock when it
// proposes the entry, raised to the latest commit time it has seen in its log, so commit times never
// decrease along the log even across a leader change to a node whose clock is behind (as long as
// that node has the previous leader's entries, which raft guarantees for every committed one). Every
// replica stores the same bytes, so they agree on it; it is what restore --to-time compares.
const (
	entryIDBytes   = 8
	entryTimeTag   = 0x80
	entryTimeBytes = 1 + 8
)

var errEntryData = errors.New("repl: malformed commit entry data")

// EntryRecord splits a normal entry's data into its write-set record and commit time (Unix
// nanoseconds; hasTime is false for an entry written before commit times existed). Data shorter
// than a proposal id holds no commit (raft's empty entry on a leader change): rec is nil.
func EntryRecord(data []byte) (rec []byte, commitNanos int64, hasTime bool, err error) {
	if len(data) < entryIDBytes {
		return nil, 0, false, nil
	}
	rec = data[entryIDBytes:]
	if len(rec) == 0 || rec[0] != entryTimeTag {
		return rec, 0, false, nil
	}
	if len(rec) < entryTimeBytes {
		return nil, 0, false, fmt.Errorf("%w: %d bytes after the commit time tag", errEntryData, len(rec)-1)
	}
	return rec[entryTimeBytes:], int64(binary.BigEndian.Uint64(rec[1:entryTimeBytes])), true, nil
}

// EncodeEntryData frames rec as a commit entry's data (format 2) with proposal id id and commit time
// at (Unix nanoseconds). For tests and tools; the commit path frames in newProposal and propose.
func EncodeEntryData(id uint64, at int64, rec []byte) []byte {
	b := make([]byte, entryIDBytes+entryTimeBytes+len(rec))
	binary.BigEndian.PutUint64(b, id)
	b[entryIDBytes] = entryTimeTag
	binary.BigEndian.PutUint64(b[entryIDBytes+1:], uint64(at))
	copy(b[entryIDBytes+entryTimeBytes:], rec)
	return b
}

// EntryCommitTime is the commit time of log entry e, if it is a commit that carries one.
func EntryCommitTime(e klog.Entry) (nanos int64, ok bool) {
	if pb.EntryType(e.Type) != pb.EntryNormal {
		return 0, false
	}
	_, at, ok, err := EntryRecord(e.Data)
	return at, ok && err == nil
}

// stamp writes the commit time into a proposal's data just before raft appends it (on the loop, so
// in log order): now, or the latest commit time seen if the clock is behind it.
func (n *Node) stamp(p *proposal) {
	now := time.Now
	if n.cfg.Now != nil {
		now = n.cfg.Now
	}
	at := now().UnixNano()
	if at <= n.lastStamp {
		at = n.lastStamp + 1
	}
	n.lastStamp = at
	binary.BigEndian.PutUint64(p.data[entryIDBytes+1:], uint64(at))
}

// sawEntry keeps lastStamp at or above the commit time of every entry in this node's log.
func (n *Node) sawEntry(e pb.Entry) {
	if e.Type != pb.EntryNormal {
		return
	}
	if _, at, ok, err := EntryRecord(e.Data); err == nil && ok && at > n.lastStamp {
		n.lastStamp = at
	}
}

// loadLastStamp reads the commit times at the end of the log on start (at most the last
// stampScan entries: the newest commit is normally the last or nearly the last entry).
func (n *Node) loadLastStamp() {
	const stampScan = 64
	last := n.lg.LastIndex()
	if last == 0 {
		return
	}
	lo := max(n.lg.FirstIndex(), last-min(last, stampScan-1))
	if lo == 0 {
		lo = 1
	}
	if lo > last {
		return // nothing after a reset or a snapshot install
	}
	ents, err := n.lg.Entries(lo, last+1, 1<<30)
	if err != nil {
		return // best effort: the clock still orders commits while it is not behind
	}
	for _, e := range ents {
		if at, ok := EntryCommitTime(e); ok && at > n.lastStamp {
			n.lastStamp = at
		}
	}
}
