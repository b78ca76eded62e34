package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"sync"

	"github.com/kiln-db/kiln/internal/backup"
)

// ServeBackup writes an online backup stream of this node to w (backup.Serve: the engine at its
// applied index, then the log after it up to the applied index at the end). It blocks no writer.
// kiln serve exposes it as GET /backup on the HTTP port: whoever reaches that port can read every
// row, so the port listens on 127.0.0.1 by default and takes peer TLS with client certificates.
//
// after, if not 0, makes it incremental: only the log after index after (backup.Source.After).
func (s *Server) ServeBackup(ctx context.Context, w io.Writer, maxRate int64, after uint64) error {
	src, err := s.backupSource(maxRate)
	if err != nil {
		return err
	}
	src.After = after
	return backup.Serve(ctx, w, src)
}

// backupSource is what both backup forms serve from: this node's engine and log, its cluster's
// identity and the pace. A log-only voter and a failed node refuse.
func (s *Server) backupSource(maxRate int64) (backup.Source, error) {
	if s.cfg.LogOnly {
		return backup.Source{}, errors.New("backup: a log-only voter holds no data; back up a full member")
	}
	if err := s.node.Failed(); err != nil {
		return backup.Source{}, err
	}
	cu := s.cfg.ClusterUUID
	if cu == "" {
		cu = ClusterUUID(s.cfg.ClusterID)
	}
	return backup.Source{Engine: s.eng, Log: s.lg, Applied: s.node.Applied, HoldLog: s.node.HoldLog,
		ClusterID: s.cfg.ClusterID, ClusterUUID: cu, Node: s.node.ID(), DataFormat: DataFormatVersion, MaxRate: maxRate}, nil
}

// ServeBackupFiles is ServeBackup in the file form (the default of kiln backup): the engine as
// a checkpoint's files rather than its keys (backup.Source.Files). have lists the engine files
// the client already holds (an incremental backup): those the node still has unchanged are
// referred to, not sent.
func (s *Server) ServeBackupFiles(ctx context.Context, w io.Writer, maxRate int64, have map[string]backup.HaveFile) error {
	src, err := s.backupSource(maxRate)
	if err != nil {
		return err
	}
	src.Files, src.Have = true, have
	return backup.Serve(ctx, w, src)
}

// ServeLog streams this node's committed log after index after, following it until ctx ends
// (backup.ServeLog; GET /log, for kiln log archive). flush pushes each batch to the client.
func (s *Server) ServeLog(ctx context.Context, w io.Writer, after uint64, flush func()) error {
	if err := s.node.Failed(); err != nil {
		return err
	}
	cu := s.cfg.ClusterUUID
	if cu == "" {
		cu = ClusterUUID(s.cfg.ClusterID)
	}
	return backup.ServeLog(ctx, w, backup.Source{Log: s.lg, Applied: s.node.Applied, HoldLog: s.node.HoldLog,
		ClusterID: s.cfg.ClusterID, ClusterUUID: cu, Node: s.node.ID()}, after, flush)
}

// archiveHoldSet is made on first use: most nodes never have an archiver with a hold.
type archiveHoldSet struct {
	once sync.Once
	h    *backup.ArchiveHolds
}

// ArchiveHolds are the purge holds of this node's log archivers (kiln log archive --hold; POST
// /log/hold): the log from each hold's index on is not purged until the hold lapses.
func (s *Server) ArchiveHolds() *backup.ArchiveHolds {
	s.archiveHolds.once.Do(func() {
		s.archiveHolds.h = backup.NewArchiveHolds(s.node.HoldLog, s.lg.BytesFrom, s.log)
	})
	return s.archiveHolds.h
}

// NewRestoredIdentity is the identity of a data directory built by kiln restore: a new cluster
// (a random id, so its GTID source UUID is new too: the restored history diverges from the
// source's from its first new commit) whose only member is node.
func NewRestoredIdentity(node uint64) ClusterIdentity {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := ClusterIdentity{ClusterID: hex.EncodeToString(b[:]), NodeID: node}
	fillUUIDs(&id)
	return id
}

// JoinedIdentity is the identity of a data directory built by kiln restore --join: a new member
// (node) of the backup's own cluster, so the same cluster id and GTID source UUID (its history is
// the cluster's; clusterUUID "" derives it from the id, as every member does), and a server UUID
// of its own.
func JoinedIdentity(clusterID, clusterUUID string, node uint64) ClusterIdentity {
	id := ClusterIdentity{ClusterID: clusterID, ClusterUUID: clusterUUID, NodeID: node}
	fillUUIDs(&id)
	return id
}

// WriteRestoredDataDir finishes a data directory whose engine and log kiln restore has built: it
// records the identity (DATA/CLUSTER), then the format (DATA/FORMAT, last: a directory without it
// is refused by kiln serve, so an interrupted restore never starts).
func WriteRestoredDataDir(dataDir string, id ClusterIdentity) error {
	if err := writeClusterIdentity(dataDir, id); err != nil {
		return err
	}
	return writeFormat(dataDir)
}
