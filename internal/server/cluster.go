package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/sql"
	"github.com/kiln-db/kiln/internal/sqlerr"
	"github.com/kiln-db/kiln/internal/txn"
)

// committer is the transaction layer's commit path: the raft node, with its outcomes turned into
// MySQL errors (repl stays protocol-neutral). The codes, as docs/operations.md lists them:
//   - not the leader: 1290 ER_OPTION_PREVENTS_STATEMENT naming the primary, as a MySQL replica with
//     read_only answers; nothing was committed.
//   - leadership changed during the transaction, or its entry was superseded by a newer leader: 1213
//     ER_LOCK_DEADLOCK ("try restarting transaction"); it was rolled back and a retry is safe.
//   - outcome unknown (the leader lost its quorum while the commit waited): 1180
//     ER_ERROR_DURING_COMMIT; it is committed if a majority's log holds it. Never reported as success.
//   - the node stopped while the commit waited: 1053 ER_SERVER_SHUTDOWN; the outcome follows the log.
//   - disk below the reserve: 1021 ER_DISK_FULL; nothing was proposed.
//   - the client was killed while the commit waited: 1317, and the commit stands.
type committer struct {
	n       *repl.Node
	primary func() string // the leader's MySQL address, "" if unknown
}

func (c committer) Epoch() uint64 { return c.n.Epoch() }

// RecordHeadroom makes the committer a txn.RecordFramer: records arrive with room for repl's
// entry header before them, and are proposed without a copy.
func (c committer) RecordHeadroom() int { return repl.RecordHeadroom }

func (c committer) Commit(ctx context.Context, rec []byte, async bool, epoch uint64) (uint64, error) {
	idx, err := c.n.CommitFramed(ctx, rec, async, epoch)
	if err == nil {
		return idx, nil
	}
	return idx, mapCommitError(err, c.primary)
}

// Place makes the committer a txn.Placer (early lock release): repl's tickets, wrapped so that
// their outcomes get Commit's error mapping.
func (c committer) Place(ctx context.Context, rec []byte, async bool, epoch uint64, after []txn.Placed) (txn.Placed, error) {
	deps := make([]repl.Waiter, 0, len(after))
	for _, a := range after {
		if t, ok := a.(*placed); ok {
			deps = append(deps, t.w)
		}
	}
	w, err := c.n.PlaceFramed(ctx, rec, async, epoch, deps)
	if err != nil {
		return nil, mapCommitError(err, c.primary)
	}
	return &placed{w: w, primary: c.primary}, nil
}

// placed is a repl ticket whose Wait maps errors as Commit does (a pointer: the pending set
// compares tickets).
type placed struct {
	w       repl.Waiter
	primary func() string
}

func (p *placed) Wait(ctx context.Context) (uint64, error) {
	idx, err := p.w.Wait(ctx)
	if err == nil {
		return idx, nil
	}
	return idx, mapCommitError(err, p.primary)
}

func mapCommitError(err error, primary func() string) error {
	var nl *repl.NotLeaderError
	var df *repl.DiskFullError
	var ie *repl.InterruptedError
	switch {
	case errors.As(err, &nl):
		return sql.ReplicaWriteError(primary())
	case errors.Is(err, repl.ErrStaleEpoch):
		return sqlerr.New(sqlerr.ErrLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction (the primary changed while the transaction ran; it was rolled back)")
	case errors.Is(err, repl.ErrNotCommitted):
		return sqlerr.New(sqlerr.ErrLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction (a new primary's log superseded this commit; it was rolled back)")
	case errors.Is(err, repl.ErrOutcomeUnknown):
		return sqlerr.New(sqlerr.ErrErrorDuringCommit, "Got error 4010 'commit outcome unknown: this node stopped being the primary before a majority acknowledged the commit; it is committed only if the new primary has it' during COMMIT")
	case errors.Is(err, repl.ErrStopped):
		return sqlerr.New(sqlerr.ErrServerShutdown, "Server shutdown in progress: the commit's outcome follows the log")
	case errors.As(err, &df):
		return sqlerr.New(sqlerr.ErrDiskFull, "Disk full (%d bytes free, reserve %d); commits resume when space returns", df.Free, df.Reserve)
	case errors.As(err, &ie):
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted while waiting for COMMIT; the transaction is committed (log index %d)", ie.Index)
	}
	return sqlerr.New(sqlerr.ErrUnknownError, "commit failed: %v", err)
}

// clusterView is the SQL layer's Cluster: the node's role and the catalog generation.
type clusterView struct {
	n       *repl.Node
	applier *txn.Applier
	primary func() string
}

func (c clusterView) Writable() (bool, string) {
	if c.n.IsLeader() {
		return true, ""
	}
	return false, c.primary()
}

// ReadBarrier: see sql.Cluster. The error is 1213 because the statement's transaction is over and
// a retry (on the current primary) is the remedy, which is what drivers do with 1213.
func (c clusterView) ReadBarrier(ctx context.Context) error {
	if !c.n.IsLeader() {
		return nil
	}
	if c.n.ReadLeaseValid() || c.n.WaitReadLease(ctx) {
		if err := c.n.WaitCommittedApplied(ctx); err != nil {
			return fmt.Errorf("waiting for this node to apply what it knows committed: %w", err)
		}
		return nil
	}
	return sqlerr.New(sqlerr.ErrLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction (this node stopped being the primary while the statement waited to confirm it; %s)", sql.PrimaryPhrase(c.primary()))
}

func (c clusterView) Generation() sql.Generation {
	// An installed engine snapshot replaces the catalog too; both counters only grow.
	return sql.Generation{CatalogWrites: c.applier.Writes() + c.n.Stats.SnapshotsInstalled.Load(), Epoch: c.n.Epoch()}
}

// ClusterIdentity is what a data directory records about the cluster it belongs to (DATA/CLUSTER),
// so a node restarts into the same cluster with the same id whatever flags it is given.
type ClusterIdentity struct {
	ClusterID string `json:"cluster_id"`
	NodeID    uint64 `json:"node_id"`
	// ClusterUUID is the cluster's GTID source id (derived from ClusterID, so every member has the
	// same one), ServerUUID this node's @@server_uuid (random, once). Both are recorded on the first
	// start, or on the first start of a build that has them (gtid.go).
	ClusterUUID string `json:"cluster_uuid,omitempty"`
	ServerUUID  string `json:"server_uuid,omitempty"`
}

// LoadClusterIdentity returns the identity recorded in dataDir, recording want on the first start
// (with newID as the cluster id when want names none). A recorded identity that contradicts want
// (another node id, another cluster) refuses the start: a data directory never silently changes
// cluster. want.ClusterID "" or want.NodeID 0 accept the recorded ones.
func LoadClusterIdentity(dataDir string, want ClusterIdentity, newID string) (ClusterIdentity, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return ClusterIdentity{}, fmt.Errorf("create data directory: %w", err)
	}
	if err := checkFormat(dataDir); err != nil {
		return ClusterIdentity{}, err
	}
	p := filepath.Join(dataDir, "CLUSTER")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		if want.ClusterID == "" {
			want.ClusterID = newID
		}
		if want.ClusterID == "" || want.NodeID == 0 {
			return ClusterIdentity{}, fmt.Errorf("%s: no cluster recorded and no cluster or node id given", p)
		}
		fillUUIDs(&want)
		return want, writeClusterIdentity(dataDir, want)
	}
	if err != nil {
		return ClusterIdentity{}, fmt.Errorf("read %s: %w", p, err)
	}
	var got ClusterIdentity
	if err := json.Unmarshal(b, &got); err != nil {
		return ClusterIdentity{}, fmt.Errorf("%s: %w", p, err)
	}
	if want.NodeID != 0 && want.NodeID != got.NodeID {
		return ClusterIdentity{}, fmt.Errorf("data directory %s belongs to node %d of cluster %s, not node %d: refusing to start", dataDir, got.NodeID, got.ClusterID, want.NodeID)
	}
	if want.ClusterID != "" && want.ClusterID != got.ClusterID {
		return ClusterIdentity{}, fmt.Errorf("data directory %s belongs to cluster %s, not %s: refusing to start", dataDir, got.ClusterID, want.ClusterID)
	}
	if got.ClusterUUID == "" || got.ServerUUID == "" {
		// Recorded by a build without GTIDs: the UUIDs are recorded now, once.
		fillUUIDs(&got)
		if err := writeClusterIdentity(dataDir, got); err != nil {
			return ClusterIdentity{}, err
		}
	}
	return got, nil
}

// writeClusterIdentity records id in DATA/CLUSTER atomically (temporary file, fsync, rename).
func writeClusterIdentity(dataDir string, id ClusterIdentity) error {
	p := filepath.Join(dataDir, "CLUSTER")
	js, _ := json.Marshal(id)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("record cluster identity: %w", err)
	}
	if err := syncPath(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("record cluster identity: %w", err)
	}
	return syncPath(dataDir)
}

// clusterMembers is the SQL layer's cluster status rows, from the node's view.
func (s *Server) clusterMembers() []sql.ClusterMember {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := s.node.Status(ctx)
	if err != nil {
		return nil
	}
	out := make([]sql.ClusterMember, 0, len(st.Members))
	for _, m := range st.Members {
		r := sql.ClusterMember{ID: m.ID, RaftAddr: m.Addr, Voter: m.Voter, MatchIndex: m.Match, Self: m.ID == st.ID, State: "ONLINE"}
		switch {
		case m.ID == st.Leader:
			r.Role = "PRIMARY"
		case m.Voter:
			r.Role = "SECONDARY"
		default:
			r.Role = "LEARNER"
		}
		if r.Self {
			r.MySQLAddr = s.cfg.MySQLAddr
			if st.Leader == 0 {
				r.State = "RECOVERING" // no leader known: electing, or cut off
			}
		} else if s.cfg.PeerMySQLAddr != nil {
			r.MySQLAddr = s.cfg.PeerMySQLAddr(m.ID)
		}
		// The leader knows who answers: a member in probe state with nothing matched is not
		// reachable now.
		if st.Role == "leader" && !r.Self && m.Progress == "StateProbe" {
			r.State = "UNREACHABLE"
		}
		out = append(out, r)
	}
	return out
}
