package backup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
)

// restoreMarkerKey marks an engine a restore is still building (engine.SnapshotLoader's install
// marker); it is deleted before Restore returns. A directory Restore did not finish also lacks
// DATA/FORMAT, which the caller writes last, so no server starts on it.
var restoreMarkerKey = []byte{0x00, 'r', 'e', 's', 't'}

// RestoreOptions say where to stop and what the new node is.
type RestoreOptions struct {
	// ToIndex is the last log entry to include: 0 for the backup's end, else in
	// [EngineIndex, EndIndex].
	ToIndex uint64
	// ToTime, if not zero, restores exactly the commits with a commit time at or before it
	// (timeTarget); ToGTID, if not empty, the commits of the GTID set <cluster uuid>:1-N (index N,
	// this backup's cluster only). At most one of ToIndex, ToTime and ToGTID is set.
	ToTime time.Time
	ToGTID string
	// LogDir is a log archive (kiln log archive) that continues the backup: the restore can go
	// on to its end.
	LogDir string
	// NodeID is the restored node's raft id, the only voter of its new cluster (1 if 0); with
	// Join, its id as a new member of the source cluster (required).
	NodeID uint64
	// Join builds a new member of the backup's own cluster instead of a new cluster: the engine
	// keeps the cluster's membership, the log keeps every entry as the cluster has it (membership
	// changes too) up to the end of what the backup (and LogDir) holds, and the engine records
	// that end for the node's check against the leader (repl.PrepareJoin). A point in time
	// (ToIndex, ToTime, ToGTID) is refused with it. JoinCluster, if not empty, is the cluster to
	// join: a backup of another cluster is refused.
	Join        bool
	JoinCluster string
	// join is what a Join restore tracks (shared by the copies of the options the steps get).
	join   *joinTrack
	Logger *slog.Logger
}

// Result is what a restore built.
type Result struct {
	Manifest    Manifest
	EngineIndex uint64 // the engine's applied index as restored
	Index       uint64 // the last log entry in the new log: the node replays up to it on start
	Term        uint64 // its term
	// CommitTime is the commit time of the last commit restored, for --to-time (nil otherwise or
	// if unknown).
	CommitTime *time.Time
}

// Restore builds dataDir/engine and dataDir/log from the backup in dir (verified first, entirely:
// a damaged or truncated backup is refused, naming the file, before anything is written). The
// engine is the snapshot at EngineIndex with the membership of a new cluster whose only voter is
// NodeID; the log holds the entries EngineIndex+1..ToIndex (membership changes of the old cluster
// become no-ops) with every one of them committed, so the node replays them on its first start. An
// entry is a whole commit: the restored state is exactly the commits up to ToIndex. dataDir must not
// exist or be empty; the caller writes DATA/FORMAT and DATA/CLUSTER afterwards. With o.Join the
// restored node is instead a new member of the backup's cluster (RestoreOptions.Join).
func Restore(dir, dataDir string, o RestoreOptions) (res Result, err error) {
	if o.Join && o.NodeID == 0 {
		return res, errors.New("restore: --join needs the new member's --node-id")
	}
	if o.NodeID == 0 {
		o.NodeID = 1
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	full, err := verifyChain(dir, true)
	if err != nil {
		return res, err
	}
	// The restore starts from the newest engine of the chain and replays the log after it.
	ei := engineLink(full)
	chain := full[ei:]
	m := view(chain)
	ls := logSource{chain: chain, archive: o.LogDir}
	if o.LogDir != "" {
		if m, err = withArchive(m, o.LogDir); err != nil {
			return res, err
		}
	}
	res.Manifest = m
	set := 0
	for _, b := range []bool{o.ToIndex != 0, !o.ToTime.IsZero(), o.ToGTID != ""} {
		if b {
			set++
		}
	}
	if set > 1 {
		return res, errors.New("restore: give one of --to-index, --to-time and --to-gtid")
	}
	if o.Join {
		if err := checkJoin(m, o, set); err != nil {
			return res, err
		}
	}
	to, what := o.ToIndex, "--to-index"
	var at int64
	switch {
	case o.ToGTID != "":
		if to, err = gtidTarget(o.ToGTID, m); err != nil {
			return res, err
		}
		what = "--to-gtid " + o.ToGTID + ": index"
	case !o.ToTime.IsZero():
		if to, at, err = timeTarget(ls, m, o.ToTime); err != nil {
			return res, err
		}
	}
	if to == 0 {
		to = m.EndIndex
	}
	if to < m.EngineIndex && ei > 0 {
		return res, fmt.Errorf("restore: %s %d is before the engine index %d of %s (an incremental file-form backup restores from its own engine): restore from an earlier backup of the chain, which restores to %d..%d",
			what, to, m.EngineIndex, chain[0].dir, full[0].m.EngineIndex, full[ei-1].m.EndIndex)
	}
	if to < m.EngineIndex || to > m.EndIndex {
		return res, fmt.Errorf("restore: %s %d is outside this backup, which restores to %d..%d", what, to, m.EngineIndex, m.EndIndex)
	}
	if o.Join {
		o.join = &joinTrack{id: o.NodeID, end: to, term: m.EndTerm}
	}
	if ents, err := os.ReadDir(dataDir); err == nil && len(ents) > 0 {
		return res, fmt.Errorf("restore: %s is not empty", dataDir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("restore: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer func() {
		if err != nil {
			for _, sub := range []string{"engine", "log", "restore-staging"} {
				_ = os.RemoveAll(filepath.Join(dataDir, sub))
			}
		}
	}()
	if chain[0].m.Format == FormatFiles {
		err = restoreEngineFiles(full, ei, dataDir, o)
	} else {
		err = restoreEngine(chain[0].dir, dataDir, chain[0].m, o)
	}
	if err != nil {
		return res, err
	}
	term, err := restoreLog(ls, dataDir, m, to, o)
	if err != nil {
		return res, err
	}
	if j := o.join; j != nil && j.members[j.id] {
		return res, fmt.Errorf("restore: node %d is a member of the cluster where the backup ends (index %d): a joining member needs an id of its own (remove the old member first, or pick another --node-id)", j.id, to)
	}
	return Result{Manifest: m, EngineIndex: m.EngineIndex, Index: to, Term: term, CommitTime: nanoTime(at)}, nil
}

func restoreEngine(dir, dataDir string, m Manifest, o RestoreOptions) error {
	eng, err := engine.Open(filepath.Join(dataDir, "engine"), engine.Options{Logger: o.Logger, DisableWAL: true, CacheBytes: 16 << 20})
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer eng.Close()
	l, err := eng.NewSnapshotLoader("restore-staging")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := scan(dir, m, m.EndIndex, l.Add, nil); err != nil {
		l.Abort()
		return err
	}
	val := binary.BigEndian.AppendUint64(nil, m.EngineIndex)
	if err := l.Install(restoreMarkerKey, val); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := o.membership(eng, m.EngineIndex); err != nil {
		return err
	}
	if err := eng.ClearMarker(restoreMarkerKey); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if got, err := eng.AppliedPosition(); err != nil || got != m.EngineIndex {
		return fmt.Errorf("restore: the restored engine's applied index is %d (%v), want %d", got, err, m.EngineIndex)
	}
	return nil
}

// restoreLog writes the new log: the entries after the engine's index up to to, all committed.
func restoreLog(ls logSource, dataDir string, m Manifest, to uint64, o RestoreOptions) (uint64, error) {
	lg, err := klog.Open(filepath.Join(dataDir, "log"), klog.Options{Logger: o.Logger})
	if err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	term := m.EngineTerm
	// The first Reset fixes where the log starts (Term(EngineIndex) answers the snapshot's term, as
	// after an engine snapshot install); the commit index is set once the entries are there.
	if err := lg.Reset(m.EngineIndex, m.EngineTerm, klog.HardState{Term: m.EngineTerm, Commit: m.EngineIndex}); err != nil {
		lg.Close()
		return 0, fmt.Errorf("restore: %w", err)
	}
	var batch []klog.Entry
	var size int
	flush := func() error {
		if err := lg.Append(batch); err != nil {
			return fmt.Errorf("restore: append to the new log: %w", err)
		}
		batch, size = batch[:0], 0
		return nil
	}
	err = ls.scan(to, func(e klog.Entry) error {
		if o.join != nil {
			// A joining member keeps the cluster's entries as they are: its log must match the
			// leader's index for index, term for term.
			if err := o.track(e); err != nil {
				return err
			}
			batch = append(batch, e)
		} else {
			batch = append(batch, repl.RestoreEntry(e))
		}
		term = e.Term
		if size += len(e.Data); size >= 4<<20 || len(batch) >= 4096 {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err == nil {
		err = lg.SetHardState(klog.HardState{Term: term, Commit: to})
	}
	if err == nil {
		err = lg.Sync()
	}
	if cerr := lg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	return term, nil
}

// checkJoin refuses what a joining member cannot be: a point in time (set targets given), a backup
// of another cluster than the one to join.
func checkJoin(m Manifest, o RestoreOptions, set int) error {
	if set > 0 {
		return errors.New("restore: --join restores to the end of what the backup (and --log-dir) holds: a member must hold a prefix of its cluster's history and catch up from there; --to-index, --to-time and --to-gtid are for a new cluster (restore without --join)")
	}
	if m.ClusterID == "" {
		return errors.New("restore: the backup records no cluster id: it cannot join a cluster")
	}
	if o.JoinCluster != "" && o.JoinCluster != m.ClusterID {
		return fmt.Errorf("restore: the backup is of cluster %s, not %s (the cluster to join): a backup can only join the cluster it was taken from; restore it without --join for a new cluster", m.ClusterID, o.JoinCluster)
	}
	return nil
}

// joinTrack is a Join restore's state: the new member's id, the restored end and its term, and the
// cluster's members as the restored history goes.
type joinTrack struct {
	id, end, term uint64
	members       map[uint64]bool
}

// membership gives the restored engine its membership: a new cluster's (the restored node its
// only voter), or, with Join, the source cluster's as recorded plus the restored end
// (repl.PrepareJoin: the node checks it against the leader's log), whose members are then
// followed through the log (track).
func (o RestoreOptions) membership(eng *engine.Engine, applied uint64) error {
	j := o.join
	if j == nil {
		if err := repl.ResetMembership(eng, o.NodeID, applied); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		return nil
	}
	if err := repl.PrepareJoin(eng, applied, j.end, j.term); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	members, err := repl.Members(eng)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	j.members = members
	return nil
}

// track follows a membership change of the restored log (Join).
func (o RestoreOptions) track(e klog.Entry) error {
	if o.join == nil || o.join.members == nil {
		return nil
	}
	if err := repl.ApplyMemberEntry(o.join.members, e); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}
