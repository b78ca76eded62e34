package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/repl"
	"github.com/kiln-db/kiln/internal/repl/rafthttp"
	"github.com/kiln-db/kiln/internal/server"
	"github.com/kiln-db/kiln/internal/tlsconf"
)

// clusterFlags are kiln serve's cluster options.
type clusterFlags struct {
	nodeID          uint64
	raftListen      string
	peers           string
	clusterID       string
	electionTimeout time.Duration
	replicaMaxLag   time.Duration
	join            bool
	logOnly         bool
	logOnlyIDs      []uint
	// unsafeNoReadIndex is a test hook (hidden): see server.Config.UnsafeNoReadIndex.
	unsafeNoReadIndex bool
}

func (c *clusterFlags) register(f *pflag.FlagSet) {
	f.Uint64Var(&c.nodeID, "node-id", 0, "this node's id in its cluster (default 1; recorded in the data directory on first start)")
	f.StringVar(&c.raftListen, "raft-listen", "", "address the cluster's raft traffic is served on (HOST:PORT); needed with --peers")
	f.StringVar(&c.peers, "peers", "", "initial members of a new cluster: ID=HOST:PORT,... (their --raft-listen addresses, this node included); without it a node is a cluster of one")
	f.StringVar(&c.clusterID, "cluster-id", "", "name of a new cluster (default: derived from --peers); recorded in the data directory, which then refuses any other")
	f.DurationVar(&c.electionTimeout, "election-timeout", 500*time.Millisecond, "a follower that hears no leader for this long (randomised up to 2x) starts an election; heartbeats go every tenth of it")
	f.BoolVar(&c.logOnly, "log-only", false, "run a log-only voter: keeps and fsyncs the log, votes and acknowledges, holds no data and serves no MySQL clients (a cheap third vote)")
	f.UintSliceVar(&c.logOnlyIDs, "log-only-ids", nil, "members of the initial --peers that are log-only voters (give the same list to every member)")
	f.BoolVar(&c.join, "join", false, "join a running cluster as a new member (empty data directory; add it first with kiln cluster add); --peers then lists the members to contact")
	f.DurationVar(&c.replicaMaxLag, "replica-max-lag", 10*time.Second, "/replica answers 503 when this node's apply is further behind the commit index than this")
	f.BoolVar(&c.unsafeNoReadIndex, "unsafe-no-read-index", false, "TESTS ONLY: linearizable reads skip raft's ReadIndex and read this node's applied state (stale reads; proves the linearizability checker catches them)")
	_ = f.MarkHidden("unsafe-no-read-index")
}

// parsePeers reads ID=HOST:PORT,... .
func parsePeers(s string) ([]repl.Peer, error) {
	var out []repl.Peer
	seen := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("--peers: %q is not ID=HOST:PORT with ID > 0", part)
		}
		if seen[n] {
			return nil, fmt.Errorf("--peers: node id %d appears twice", n)
		}
		seen[n] = true
		out = append(out, repl.Peer{ID: n, Addr: addr})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// clusterNode is the wiring between the transport and the node, which is created after it.
type clusterNode struct {
	tr     *rafthttp.Transport
	stopTr func() error
	node   atomic.Pointer[repl.Node]
	// scheme and httpc fetch engine snapshots from the leader: https and a client with the peer
	// certificate under peer TLS.
	scheme string
	httpc  *http.Client
}

func (c *clusterNode) attach(n *repl.Node) {
	if c != nil {
		c.node.Store(n)
	}
}

func (c *clusterNode) stop() {
	if c == nil || c.tr == nil {
		return
	}
	_ = c.stopTr()
	c.tr.Stop()
}

// Step, ReportUnreachable and ReportSnapshot deliver to the node once it exists (rafthttp.Raft).
func (c *clusterNode) Step(ctx context.Context, m pb.Message) error {
	n := c.node.Load()
	if n == nil {
		return errors.New("node starting")
	}
	return n.Step(ctx, m)
}

func (c *clusterNode) ReportUnreachable(id uint64) {
	if n := c.node.Load(); n != nil {
		n.ReportUnreachable(id)
	}
}

func (c *clusterNode) ReportSnapshot(id uint64, st raft.SnapshotStatus) {
	if n := c.node.Load(); n != nil {
		n.ReportSnapshot(id, st)
	}
}

// snapshotPath serves a leader's engine snapshot to a member that needs one (repl/snapshot.go).
const snapshotPath = "/raft/engine-snapshot"

func (c *clusterNode) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	n := c.node.Load()
	if n == nil {
		http.Error(w, "node starting", http.StatusServiceUnavailable)
		return
	}
	var after []byte
	if a := r.URL.Query().Get("after"); a != "" {
		var err error
		if after, err = hex.DecodeString(a); err != nil {
			http.Error(w, "bad after", http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if err := n.ServeSnapshot(r.Context(), w, r.URL.Query().Get("id"), after); err != nil {
		// Once the body started, the receiver sees a stream without its end frame and retries.
		http.Error(w, err.Error(), http.StatusGone)
	}
}

func (c *clusterNode) fetchSnapshot(ctx context.Context, leader uint64, addr, id string, after []byte) (io.ReadCloser, error) {
	if addr == "" {
		return nil, fmt.Errorf("no raft address known for node %d", leader)
	}
	u := c.scheme + "://" + addr + snapshotPath + "?id=" + id
	if after != nil {
		u += "&after=" + hex.EncodeToString(after)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	c.tr.Header(req.Header, leader)
	resp, err := c.httpc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return resp.Body, nil
}

// setUp fills cfg's cluster fields: the identity recorded in the data directory, the raft
// transport (when this node has or may have peers) and its listener.
// With peerTLS (--tls-ca), the raft port and the snapshot fetches use mutual TLS against its CA.
func (c *clusterFlags) setUp(cfg *server.Config, logger *slog.Logger, mysqlAddr, httpAddr string, peerTLS *tlsconf.Set) (*clusterNode, error) {
	peers, err := parsePeers(c.peers)
	if err != nil {
		return nil, err
	}
	if len(peers) > 0 && c.raftListen == "" {
		return nil, errors.New("--peers needs --raft-listen (this node's raft address)")
	}
	want := server.ClusterIdentity{NodeID: c.nodeID, ClusterID: c.clusterID}
	if want.NodeID == 0 && len(peers) == 0 && !c.join {
		want.NodeID = 1
	}
	// A new cluster's id, unless --cluster-id names one: the members of a new cluster derive the
	// same id from the same --peers; a cluster of one gets a unique one. Used only on a first start.
	h := sha256.New()
	for _, p := range peers {
		fmt.Fprintf(h, "%d=%s,", p.ID, p.Addr)
	}
	if len(peers) == 0 {
		fmt.Fprintf(h, "solo:%s:%d", cfg.DataDir, time.Now().UnixNano())
	}
	newID := hex.EncodeToString(h.Sum(nil))[:32]
	id, err := server.LoadClusterIdentity(cfg.DataDir, want, newID)
	if err != nil {
		return nil, err
	}
	if id.NodeID == 0 {
		return nil, errors.New("--node-id is required with --peers")
	}
	for i := range peers {
		for _, lo := range c.logOnlyIDs {
			if uint64(lo) == peers[i].ID {
				peers[i].LogOnly = true
			}
		}
		if peers[i].ID == id.NodeID && peers[i].LogOnly != c.logOnly {
			return nil, fmt.Errorf("node %d: --log-only-ids and --log-only disagree", id.NodeID)
		}
	}
	cfg.NodeID = id.NodeID
	cfg.LogOnly = c.logOnly
	cfg.MySQLAddr = mysqlAddr
	cfg.Peers = peers
	cfg.Join = c.join
	cfg.ClusterID = id.ClusterID
	cfg.ClusterUUID, cfg.ServerUUID = id.ClusterUUID, id.ServerUUID
	tick := c.electionTimeout / 10
	if tick < time.Millisecond {
		return nil, fmt.Errorf("--election-timeout %v is too short", c.electionTimeout)
	}
	cfg.TickInterval, cfg.ElectionTicks = tick, 10
	cfg.UnsafeNoReadIndex = c.unsafeNoReadIndex
	if c.raftListen == "" {
		return nil, nil // a cluster of one without a raft port
	}
	cn := &clusterNode{scheme: "http", httpc: http.DefaultClient}
	rcfg := rafthttp.Config{ID: id.NodeID, ClusterID: id.ClusterID, Raft: cn, Logger: logger,
		Meta:  map[string]string{"mysql": mysqlAddr, "http": httpAddr},
		Extra: map[string]http.Handler{"GET " + snapshotPath: http.HandlerFunc(cn.serveSnapshot)}}
	if peerTLS != nil {
		rcfg.ServerTLS, rcfg.ClientTLS = peerTLS.PeerServer(true), peerTLS.PeerClient()
		// Snapshots on connections of their own (HTTP/1.1), as without TLS, beside the raft streams.
		cn.scheme, cn.httpc = "https", &http.Client{Transport: &http.Transport{TLSClientConfig: peerTLS.PeerClient()}}
	}
	cn.tr = rafthttp.New(rcfg)
	cfg.FetchSnapshot = cn.fetchSnapshot
	bound, stop, err := cn.tr.Serve(c.raftListen)
	if err != nil {
		cn.tr.Stop()
		return nil, err
	}
	c.raftListen = bound
	cn.stopTr = stop
	cfg.Transport = cn.tr
	cfg.OnNode = cn.attach
	cfg.PrimaryAddr = func(id uint64) string { return cn.tr.PeerMeta(id)["mysql"] }
	cfg.PeerMySQLAddr = cfg.PrimaryAddr
	return cn, nil
}

// roleHandlers serves the role checks load balancers use (Patroni's convention): 200 or 503.
// Membership changes go through guard (requireClientCert: a cluster certificate under peer TLS).
func roleHandlers(mux *http.ServeMux, srv *server.Server, maxLag time.Duration, guard func(http.HandlerFunc) http.HandlerFunc) {
	answer := func(w http.ResponseWriter, ok bool, why string) {
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = io.WriteString(w, why+"\n")
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		err := srv.Node().Failed()
		answer(w, err == nil, map[bool]string{true: "ok", false: fmt.Sprintf("not serving: %v", err)}[err == nil])
	})
	mux.HandleFunc("GET /primary", func(w http.ResponseWriter, _ *http.Request) {
		n := srv.Node()
		if n.IsLeader() {
			answer(w, true, "primary")
			return
		}
		answer(w, false, fmt.Sprintf("not the primary (leader: node %d)", n.Leader()))
	})
	mux.HandleFunc("GET /replica", func(w http.ResponseWriter, r *http.Request) {
		n := srv.Node()
		entries, behind := n.Lag()
		maxLag := maxLag
		if v := r.URL.Query().Get("max_lag"); v != "" {
			// A load balancer may ask for its own bound: /replica?max_lag=SECONDS.
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs < 0 || secs > 1e6 {
				http.Error(w, "max_lag: want a number of seconds", http.StatusBadRequest)
				return
			}
			maxLag = time.Duration(secs * float64(time.Second))
		}
		switch {
		case n.Failed() != nil:
			answer(w, false, "not serving")
		case n.IsLogOnly(n.ID()):
			answer(w, false, "log-only voter: holds no data")
		case n.IsLeader() || n.Leader() == n.ID():
			answer(w, false, "primary, not a replica")
		case n.Leader() == 0:
			answer(w, false, "no leader known: this replica may be cut off")
		case n.RestoredPending():
			answer(w, false, "restored from a backup: its history is not confirmed by the leader yet")
		case behind > maxLag:
			answer(w, false, fmt.Sprintf("lagging: %d entries, %.1fs behind", entries, behind.Seconds()))
		default:
			answer(w, true, fmt.Sprintf("replica (leader: node %d, lag %d entries)", n.Leader(), entries))
		}
	})
	mux.HandleFunc("POST /cluster/members", guard(func(w http.ResponseWriter, r *http.Request) {
		var c repl.MemberChange
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&c); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if err := srv.Node().ChangeMembership(ctx, c); err != nil {
			var nl *repl.NotLeaderError
			code := http.StatusConflict
			if errors.As(err, &nl) {
				code = http.StatusMisdirectedRequest
			}
			http.Error(w, err.Error(), code)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	}))
	mux.HandleFunc("GET /cluster/status", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		st, err := srv.Node().Status(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(clusterStatus{ClusterID: srv.ClusterID(), Status: st})
	})
}

// clusterStatus is /cluster/status's answer.
type clusterStatus struct {
	ClusterID string
	repl.Status
}

// clusterCmd is `kiln cluster status --http HOST:PORT`.
func clusterCmd() *cobra.Command {
	var httpAddr string
	var ctf clientTLSFlags
	root := &cobra.Command{Use: "cluster", Short: "Inspect a Kiln cluster through a node's HTTP port"}
	root.PersistentFlags().StringVar(&httpAddr, "http", "127.0.0.1:8080", "a node's HTTP address")
	ctf.register(root.PersistentFlags())
	// httpClient returns the client and base URL for the node (HTTPS with --tls-ca).
	httpClient := func(timeout time.Duration) (*http.Client, string, error) {
		scheme, tc, err := ctf.client()
		if err != nil {
			return nil, "", err
		}
		c := &http.Client{Timeout: timeout}
		if tc != nil {
			c.Transport = &http.Transport{TLSClientConfig: tc}
		}
		return c, scheme + "://" + httpAddr, nil
	}
	root.AddCommand(&cobra.Command{Use: "status", Short: "Members, roles, log positions and lag as this node sees them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, base, err := httpClient(5 * time.Second)
			if err != nil {
				return err
			}
			resp, err := c.Get(base + "/cluster/status")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
			}
			var st clusterStatus
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "cluster %s\n", st.ClusterID)
			fmt.Fprintf(out, "node %d: %s, term %d, leader %d, commit %d, applied %d, log [%d, %d], lag %d entries (%.1fs)\n",
				st.ID, st.Role, st.Term, st.Leader, st.Commit, st.Applied, st.FirstIndex, st.LastIndex, st.LagEntries, st.LagSeconds)
			if st.Restored != "" {
				// A member built by kiln restore --join: whether it caught up from the log.
				fmt.Fprintf(out, "restored member: %s (engine snapshots installed: %d)\n", st.Restored, st.SnapshotsInstalled)
			}
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tRAFT ADDRESS\tKIND\tMATCH\tPROGRESS")
			for _, m := range st.Members {
				kind := "voter"
				switch {
				case m.LogOnly:
					kind = "log-only voter"
				case !m.Voter:
					kind = "learner"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", m.ID, m.Addr, kind, m.Match, m.Progress)
			}
			return tw.Flush()
		}})
	var id uint64
	var raftAddr string
	var learner bool
	change := func(op repl.MemberOp, use, short string) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, RunE: func(cmd *cobra.Command, _ []string) error {
			op := op
			if learner && op == repl.AddVoter {
				op = repl.AddLearner
			}
			body, _ := json.Marshal(repl.MemberChange{Op: op, ID: id, Addr: raftAddr})
			c, base, err := httpClient(15 * time.Second)
			if err != nil {
				return err
			}
			resp, err := c.Post(base+"/cluster/members", "application/json", strings.NewReader(string(body)))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s node %d: done\n", op, id)
			return nil
		}}
		c.Flags().Uint64Var(&id, "id", 0, "the member's node id")
		if op == repl.AddVoter || op == repl.AddLearner || op == repl.AddLogOnly {
			c.Flags().StringVar(&raftAddr, "raft", "", "the new member's --raft-listen address")
		}
		if op == repl.AddVoter {
			c.Flags().BoolVar(&learner, "learner", false, "add a learner (a read replica that never votes) instead of a voter: the same as add-learner")
		}
		return c
	}
	root.AddCommand(change(repl.AddVoter, "add", "Add a voting member (send it to the leader's --http)"))
	root.AddCommand(change(repl.AddLearner, "add-learner", "Add a non-voting replica (a learner)"))
	root.AddCommand(change(repl.AddLogOnly, "add-log-only", "Add a log-only voter (start it with kiln serve --log-only --join)"))
	root.AddCommand(change(repl.Promote, "promote", "Make a learner a voter"))
	root.AddCommand(change(repl.Remove, "remove", "Remove a member"))
	return root
}
