package repl

import (
	"errors"
	"fmt"
	"log/slog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	klog "github.com/kiln-db/kiln/internal/log"
)

// storage adapts the binlog to raft.Storage.
type storage struct {
	lg   *klog.Log
	cs   pb.ConfState
	snap func() (pb.Snapshot, error) // the leader's engine snapshot (snapshot.go)
}

func (s *storage) InitialState() (pb.HardState, pb.ConfState, error) {
	hs := s.lg.HardState()
	return pb.HardState{Term: hs.Term, Vote: hs.Vote, Commit: hs.Commit}, s.cs, nil
}

func (s *storage) Entries(lo, hi, maxSize uint64) ([]pb.Entry, error) {
	ents, err := s.lg.Entries(lo, hi, maxSize)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]pb.Entry, len(ents))
	for i, e := range ents {
		out[i] = pb.Entry{Index: e.Index, Term: e.Term, Type: pb.EntryType(e.Type), Data: e.Data}
	}
	return out, nil
}

func (s *storage) Term(i uint64) (uint64, error) {
	t, err := s.lg.Term(i)
	return t, mapErr(err)
}

func (s *storage) LastIndex() (uint64, error)  { return s.lg.LastIndex(), nil }
func (s *storage) FirstIndex() (uint64, error) { return s.lg.FirstIndex(), nil }

// Snapshot is asked for when a member needs entries below FirstIndex: the engine snapshot.
func (s *storage) Snapshot() (pb.Snapshot, error) {
	if s.snap == nil {
		return pb.Snapshot{}, raft.ErrSnapshotTemporarilyUnavailable
	}
	return s.snap()
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, klog.ErrCompacted):
		return raft.ErrCompacted
	case errors.Is(err, klog.ErrUnavailable):
		return raft.ErrUnavailable
	}
	return err
}

// raftLogger routes raft's logging to slog, quietly.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)                 {}
func (r raftLogger) Debugf(format string, v ...any) {}
func (r raftLogger) Info(v ...any)                  {}
func (r raftLogger) Infof(format string, v ...any)  {}
func (r raftLogger) Warning(v ...any)               { r.l.Warn(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Error(v ...any) { r.l.Error(fmt.Sprint(v...), "component", "raft") }
func (r raftLogger) Errorf(format string, v ...any) {
	r.l.Error(fmt.Sprintf(format, v...), "component", "raft")
}
func (r raftLogger) Fatal(v ...any) {
	r.l.Error(fmt.Sprint(v...), "component", "raft")
	panic(fmt.Sprint(v...))
}
func (r raftLogger) Fatalf(format string, v ...any) {
	r.l.Error(fmt.Sprintf(format, v...), "component", "raft")
	panic(fmt.Sprintf(format, v...))
}
func (r raftLogger) Panic(v ...any) { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(format string, v ...any) {
	panic(fmt.Sprintf(format, v...))
}
