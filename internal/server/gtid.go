package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/sql/gtid"
	"github.com/kiln-db/kiln/internal/sqlerr"
)

// ClusterUUID derives the cluster's GTID source UUID from its id, so that every member, which is
// started with the same cluster id (or derives it from the same --peers), has the same one
// without asking the others. A 32-hex-digit id (the derived ids, see kiln serve) is the UUID
// itself, hyphenated, so an operator recognises it; any other id (--cluster-id prod-eu) is hashed
// (SHA-256, first 16 bytes, marked as a version-8 RFC 9562 UUID).
func ClusterUUID(clusterID string) string {
	if len(clusterID) == 32 {
		if u, err := gtid.ParseUUID(clusterID); err == nil {
			return u.String()
		}
	}
	sum := sha256.Sum256([]byte("kiln-cluster:" + clusterID))
	var u gtid.UUID
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x80 // version 8 (custom)
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// NewServerUUID is a random (version 4) UUID: a node's @@server_uuid, made once and recorded in
// DATA/CLUSTER, as MySQL records its own in auto.cnf.
func NewServerUUID() string {
	var u gtid.UUID
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// fillUUIDs sets the identity's missing UUIDs.
func fillUUIDs(id *ClusterIdentity) {
	if id.ClusterUUID == "" {
		id.ClusterUUID = ClusterUUID(id.ClusterID)
	}
	if id.ServerUUID == "" {
		id.ServerUUID = NewServerUUID()
	}
}

// logPosition is the SQL layer's view of the node's log position (sql.LogPosition): the cluster
// UUID, this node's server UUID, the applied index and a wait for it.
type logPosition struct {
	n       *repl.Node
	cluster gtid.UUID
	server  string
	noRead  bool // Config.UnsafeNoReadIndex (a test hook)
}

func newLogPosition(n *repl.Node, cfg Config) (logPosition, error) {
	cu, su := cfg.ClusterUUID, cfg.ServerUUID
	if cu == "" {
		// A server opened without an identity (not through kiln serve): one for this process.
		id := cfg.ClusterID
		if id == "" {
			var b [16]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		cu = ClusterUUID(id)
	}
	if su == "" {
		su = NewServerUUID()
	}
	u, err := gtid.ParseUUID(cu)
	if err != nil {
		return logPosition{}, err
	}
	return logPosition{n: n, cluster: u, server: su, noRead: cfg.UnsafeNoReadIndex}, nil
}

func (p logPosition) ClusterUUID() gtid.UUID { return p.cluster }
func (p logPosition) ServerUUID() string     { return p.server }
func (p logPosition) Applied() uint64        { return p.n.Applied() }

// ReadIndex is the node's quorum-confirmed read index (linearizable reads).
func (p logPosition) ReadIndex(ctx context.Context) (uint64, error) {
	if p.noRead {
		return p.n.Applied(), nil // the test hook: no quorum confirmation, so stale reads
	}
	idx, err := p.n.ReadIndex(ctx)
	if errors.Is(err, repl.ErrStopped) {
		return 0, sqlerr.New(sqlerr.ErrServerShutdown, "Server shutdown in progress")
	}
	return idx, err
}

// WaitApplied waits for the applied index; the node stopping is 1053, as for a commit that waited.
func (p logPosition) WaitApplied(ctx context.Context, index uint64) error {
	err := p.n.WaitApplied(ctx, index)
	if errors.Is(err, repl.ErrStopped) {
		return sqlerr.New(sqlerr.ErrServerShutdown, "Server shutdown in progress")
	}
	return err
}

// WaitMajorityApplied is kiln_commit_ack = applied (sql.AppliedAcker): it waits until a majority
// of the engine-bearing voters has applied the commit at index. Every outcome but success is an
// error that says the transaction is committed (it was durable on a majority and applied here
// before this wait began), so a client never takes it for a rollback it could safely retry:
//   - this node stopped leading before the level was confirmed: 1180 ER_ERROR_DURING_COMMIT;
//   - the client was killed (KILL QUERY, max_execution_time) while waiting: 1317;
//   - the node stopped: 1053.
func (p logPosition) WaitMajorityApplied(ctx context.Context, index uint64) error {
	err := p.n.WaitMajorityApplied(ctx, index)
	var ie *repl.InterruptedError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, repl.ErrAppliedUnconfirmed):
		return sqlerr.New(sqlerr.ErrErrorDuringCommit, "Got error 4011 'the transaction is committed (GTID %s:%d) but this node stopped being the primary before a majority of voters confirmed applying it, as kiln_commit_ack = applied requires; reads on other nodes may not see it yet' during COMMIT", p.cluster, index)
	case errors.As(err, &ie):
		return sqlerr.New(sqlerr.ErrQueryInterrupted, "Query execution was interrupted while waiting for a majority of voters to apply the commit (kiln_commit_ack = applied); the transaction is committed (GTID %s:%d)", p.cluster, index)
	case errors.Is(err, repl.ErrStopped):
		return sqlerr.New(sqlerr.ErrServerShutdown, "Server shutdown in progress: the transaction is committed (GTID %s:%d)", p.cluster, index)
	}
	return err
}
