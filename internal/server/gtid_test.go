package server

import (
	"testing"

	"github.com/kiln-db/kiln/internal/sql/gtid"
)

// The cluster UUID is a pure function of the cluster id (every member derives the same one): a
// 32-hex-digit id is the UUID itself, any other is hashed into a version-8 UUID.
func TestClusterUUID(t *testing.T) {
	if got := ClusterUUID("e5ddca59cc51f82b58b2be9aee9dd1ef"); got != "e5ddca59-cc51-f82b-58b2-be9aee9dd1ef" {
		t.Errorf("hex id: %s", got)
	}
	a, b := ClusterUUID("prod-eu"), ClusterUUID("prod-eu")
	if a != b || a == ClusterUUID("prod-us") {
		t.Errorf("named ids: %s %s %s", a, b, ClusterUUID("prod-us"))
	}
	u, err := gtid.ParseUUID(a)
	if err != nil || u[6]>>4 != 8 || u[8]>>6 != 2 {
		t.Errorf("named id's UUID %s: %v, want version 8, RFC variant", a, err)
	}
	s1, s2 := NewServerUUID(), NewServerUUID()
	if u, err := gtid.ParseUUID(s1); err != nil || s1 == s2 || u[6]>>4 != 4 {
		t.Errorf("server UUIDs %s %s: %v", s1, s2, err)
	}
}
