package repl

import (
	"testing"

	"go.etcd.io/raft/v3/quorum"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// solo and alone decide whether commits may be acknowledged before the leader's own fsync
// (canPipeline) and whether a leader's read may skip waiting for its apply (WaitCommittedApplied):
// both must be false as soon as any other member exists.
func TestNoteMembership(t *testing.T) {
	cases := []struct {
		name        string
		cs          pb.ConfState
		solo, alone bool
	}{
		{"only voter", pb.ConfState{Voters: []uint64{1}}, true, true},
		{"only voter, a learner", pb.ConfState{Voters: []uint64{1}, Learners: []uint64{2}}, true, false},
		{"only voter, a learner being demoted to", pb.ConfState{Voters: []uint64{1}, LearnersNext: []uint64{2}}, true, false},
		{"three voters", pb.ConfState{Voters: []uint64{1, 2, 3}}, false, false},
		{"joint: leaving a config with others", pb.ConfState{Voters: []uint64{1}, VotersOutgoing: []uint64{1, 2}}, false, false},
		{"another node is the only voter", pb.ConfState{Voters: []uint64{2}}, false, false},
		{"no voters (a node that has not joined yet)", pb.ConfState{}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &Node{id: 1}
			// Start from the opposite so a field left alone shows.
			n.solo.Store(!tc.solo)
			n.alone.Store(!tc.alone)
			n.noteMembership(tc.cs)
			if n.solo.Load() != tc.solo || n.alone.Load() != tc.alone {
				t.Fatalf("solo, alone = %v, %v; want %v, %v", n.solo.Load(), n.alone.Load(), tc.solo, tc.alone)
			}
		})
	}
}

func TestConfStateOf(t *testing.T) {
	c := tracker.Config{
		Voters:       quorum.JointConfig{quorum.MajorityConfig{3: {}, 1: {}}, quorum.MajorityConfig{1: {}, 2: {}}},
		Learners:     map[uint64]struct{}{5: {}, 4: {}},
		LearnersNext: map[uint64]struct{}{2: {}},
	}
	cs := confStateOf(c)
	want := pb.ConfState{Voters: []uint64{1, 3}, VotersOutgoing: []uint64{1, 2}, Learners: []uint64{4, 5}, LearnersNext: []uint64{2}}
	if err := cs.Equivalent(want); err != nil {
		t.Fatalf("confStateOf: %v", err)
	}
}
