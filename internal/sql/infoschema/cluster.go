package infoschema

import (
	"net"
	"strconv"
	"strings"

	"github.com/kiln-db/kiln/internal/sql/expr"
	"github.com/kiln-db/kiln/internal/sql/types"
)

// ClusterMember is one row of the cluster status tables (sql.Config.ClusterMembers, set by the server).
type ClusterMember struct {
	ID          uint64
	RaftAddr    string
	MySQLAddr   string // "" when this node has not heard from it
	Role        string // PRIMARY, SECONDARY (a voter that follows), LEARNER
	State       string // ONLINE, UNREACHABLE (as the leader sees it; this node's own view otherwise)
	Voter       bool
	MatchIndex  uint64 // the leader's knowledge of its log (0 on other nodes)
	Self        bool
	AppliedHere uint64 // this node's applied index, on its own row
}

// clusterTable serves information_schema.KILN_CLUSTER_MEMBERS (Kiln's view: ids, raft and MySQL
// addresses, roles, log positions) and performance_schema.replication_group_members (MySQL Group
// Replication's shape, which proxies and monitoring tools already read).
func clusterTable(s Session, db, name string) (Table, bool) {
	rows := s.ClusterMembers
	switch {
	case strings.EqualFold(db, "information_schema") && strings.EqualFold(name, "KILN_CLUSTER_MEMBERS"):
		return table([]Col{IntCol("MEMBER_ID"), StringCol("RAFT_ADDRESS"), StringCol("MYSQL_ADDRESS"), StringCol("MEMBER_ROLE"), StringCol("MEMBER_STATE"), StringCol("IS_VOTER"), IntCol("MATCH_INDEX"), StringCol("IS_THIS_NODE")},
			func(*expr.Env) ([][]types.Value, error) {
				var out [][]types.Value
				for _, m := range rows() {
					out = append(out, []types.Value{types.NewUint(m.ID), stringVal(m.RaftAddr), stringVal(m.MySQLAddr), stringVal(m.Role), stringVal(m.State), stringVal(yesNo(m.Voter)), types.NewUint(m.MatchIndex), stringVal(yesNo(m.Self))})
				}
				return out, nil
			}), true
	case strings.EqualFold(db, "performance_schema") && strings.EqualFold(name, "replication_group_members"):
		return table([]Col{StringCol("CHANNEL_NAME"), StringCol("MEMBER_ID"), StringCol("MEMBER_HOST"), IntCol("MEMBER_PORT"), StringCol("MEMBER_STATE"), StringCol("MEMBER_ROLE"), StringCol("MEMBER_VERSION"), StringCol("MEMBER_COMMUNICATION_STACK")},
			func(*expr.Env) ([][]types.Value, error) {
				var out [][]types.Value
				for _, m := range rows() {
					host, port := types.Null, types.Null
					if h, p, err := net.SplitHostPort(m.MySQLAddr); err == nil {
						host = stringVal(h)
						if n, err := strconv.Atoi(p); err == nil {
							port = intVal(int64(n))
						}
					}
					out = append(out, []types.Value{stringVal("group_replication_applier"), stringVal(strconv.FormatUint(m.ID, 10)), host, port, stringVal(m.State), stringVal(m.Role), stringVal(s.ServerVersion()), stringVal("KILN_RAFT")})
				}
				return out, nil
			}), true
	}
	return Table{}, false
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
