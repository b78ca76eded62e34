// Command failoverprobe keeps a light write load on whichever node of a Kiln cluster is the leader
// and logs, with timestamps, when the leader changes and when writes stop and start succeeding, so
// a script that kills the leader can measure how long the cluster took to accept writes again
// (bench/cluster-compare.sh's failover section).
//
// Usage:
//
//	failoverprobe --mysql A1,A2,A3 --http H1,H2,H3 [--db kilnbench] [--table failover]
//	              [--writers 2] [--interval 10ms] [--poll 20ms] [--out FILE]
//
// Node i (1-based) is the i-th address of --mysql and of --http. Every --poll, GET /primary on
// every node (the one answering 200 is the leader). Each of --writers connections loops: INSERT one
// row into DB.TABLE (id BIGINT AUTO_INCREMENT PRIMARY KEY, writer INT, at_us BIGINT; created if
// missing) on the current leader, then sleep --interval; after an error (or with no leader known)
// it sleeps --poll and tries again on whatever node is then the leader.
//
// Lines written to --out (default stdout), times in microseconds since the Unix epoch:
//
//	T leader N            node N answers /primary 200 (N = 0: no node does)
//	T ok N W              writer W's first successful INSERT on node N after an error, at start, or
//	                      after its last INSERT went to another node
//	T err N W MESSAGE     writer W's first failed INSERT on node N (likewise)
//	summary acked=A rows=R lost=L   on SIGINT/SIGTERM: A INSERTs acknowledged, R rows in the table
//	                                (read on the leader), L = max(0, A-R) acknowledged rows missing
//
// Connections select no database unless --handshake-db: on a Kiln node whose catalog changed
// through the log and that has run no statement since, a database named in the handshake is
// refused with 1049 (the in-memory catalog is reloaded only before a statement runs), which would
// keep a new leader unreachable for such clients; --handshake-db shows that.
//
// Rows can exceed acknowledgements (a write whose connection broke after it committed); fewer rows
// than acknowledgements means acknowledged writes were lost. failoverprobe exits 1 in that case.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

func main() {
	mysqlAddrs := flag.String("mysql", "", "the nodes' MySQL addresses, comma separated (node 1 first)")
	httpAddrs := flag.String("http", "", "the nodes' HTTP addresses, in the same order")
	db := flag.String("db", "kilnbench", "database (must exist); statements name it, connections do not select it")
	handshakeDB := flag.Bool("handshake-db", false, "also select --db when connecting (in the handshake)")
	table := flag.String("table", "failover", "table written to (created if missing)")
	user := flag.String("user", "root", "MySQL user (empty password)")
	writers := flag.Int("writers", 2, "connections writing")
	interval := flag.Duration("interval", 10*time.Millisecond, "pause between a writer's successful INSERTs")
	poll := flag.Duration("poll", 20*time.Millisecond, "how often /primary is polled, and the pause after a failed INSERT")
	out := flag.String("out", "", "event log (default stdout)")
	flag.Parse()
	mas := split(*mysqlAddrs)
	has := split(*httpAddrs)
	if len(mas) == 0 || len(mas) != len(has) || *writers < 1 {
		fmt.Fprintln(os.Stderr, "usage: failoverprobe --mysql A1,A2,... --http H1,H2,... [flags]")
		os.Exit(2)
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		w = f
	}
	p := &probe{out: w, http: has, poll: *poll, table: *db + "." + *table,
		client: &http.Client{Timeout: 200 * time.Millisecond}}
	for _, a := range mas {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = *user, "tcp", a
		if *handshakeDB {
			cfg.DBName = *db
		}
		cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, 5*time.Second, 5*time.Second
		cfg.InterpolateParams = true
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			fatal(err)
		}
		d := sql.OpenDB(conn)
		d.SetMaxOpenConns(*writers + 1)
		d.SetMaxIdleConns(*writers + 1)
		p.dbs = append(p.dbs, d)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	p.pollOnce(ctx)
	if err := p.createTable(ctx); err != nil {
		fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.pollLoop(ctx) }()
	for i := 1; i <= *writers; i++ {
		wg.Add(1)
		go func(id int) { defer wg.Done(); p.writer(ctx, id, *interval) }(i)
	}
	<-ctx.Done()
	wg.Wait()

	// The final count: on the leader, once one answers.
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	rows := int64(-1)
	for rows < 0 && cctx.Err() == nil {
		p.pollOnce(cctx)
		if l := p.leader.Load(); l > 0 {
			if err := p.dbs[l-1].QueryRowContext(cctx, "SELECT COUNT(*) FROM "+p.table).Scan(&rows); err != nil {
				rows = -1
			}
		}
		if rows < 0 {
			time.Sleep(*poll)
		}
	}
	acked := p.acked.Load()
	lost := int64(0)
	if rows >= 0 && rows < acked {
		lost = acked - rows
	}
	p.printf("summary acked=%d rows=%d lost=%d", acked, rows, lost)
	if rows < 0 {
		fatal(fmt.Errorf("could not count %s on a leader", p.table))
	}
	if lost > 0 {
		os.Exit(1)
	}
}

type probe struct {
	out    io.Writer
	outMu  sync.Mutex
	http   []string
	dbs    []*sql.DB
	poll   time.Duration
	table  string
	client *http.Client
	leader atomic.Int64 // 1-based node, 0 = none known
	acked  atomic.Int64
}

func (p *probe) printf(format string, args ...any) {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	fmt.Fprintf(p.out, format+"\n", args...)
	if f, ok := p.out.(*os.File); ok {
		_ = f.Sync()
	}
}

func now() int64 { return time.Now().UnixMicro() }

func (p *probe) createTable(ctx context.Context) error {
	for ctx.Err() == nil {
		if l := p.leader.Load(); l > 0 {
			_, err := p.dbs[l-1].ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+p.table+
				" (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, writer INT NOT NULL, at_us BIGINT NOT NULL)")
			if err == nil {
				return nil
			}
			fmt.Fprintf(os.Stderr, "failoverprobe: create table on node %d: %v\n", l, err)
		}
		time.Sleep(p.poll)
		p.pollOnce(ctx)
	}
	return ctx.Err()
}

func (p *probe) pollLoop(ctx context.Context) {
	t := time.NewTicker(p.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.pollOnce(ctx)
		}
	}
}

// pollOnce asks every node's /primary at once and records the leader.
func (p *probe) pollOnce(ctx context.Context) {
	ok := make([]bool, len(p.http))
	var wg sync.WaitGroup
	for i, h := range p.http {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h+"/primary", nil)
			if err != nil {
				return
			}
			resp, err := p.client.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok[i] = resp.StatusCode == http.StatusOK
		}()
	}
	wg.Wait()
	cur := p.leader.Load()
	next := int64(0)
	for i, b := range ok {
		if b && (next == 0 || int64(i+1) == cur) {
			next = int64(i + 1)
		}
	}
	if next != cur && ctx.Err() == nil {
		p.leader.Store(next)
		p.printf("%d leader %d", now(), next)
	}
}

func (p *probe) writer(ctx context.Context, id int, interval time.Duration) {
	state := 0       // 0 start, 1 succeeding, -1 failing
	last := int64(0) // the node of the last INSERT
	for ctx.Err() == nil {
		l := p.leader.Load()
		if l == 0 {
			sleep(ctx, p.poll)
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := p.dbs[l-1].ExecContext(qctx, "INSERT INTO "+p.table+" (writer, at_us) VALUES (?, ?)", id, now())
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			p.acked.Add(1)
			if state != 1 || l != last {
				p.printf("%d ok %d %d", now(), l, id)
			}
			state, last = 1, l
			sleep(ctx, interval)
			continue
		}
		if state != -1 || l != last {
			p.printf("%d err %d %d %s", now(), l, id, strings.ReplaceAll(err.Error(), "\n", " "))
		}
		state, last = -1, l
		sleep(ctx, p.poll)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "failoverprobe:", err)
	os.Exit(1)
}
