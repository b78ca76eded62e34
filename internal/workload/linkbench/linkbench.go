package linkbench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"
)

// LinkBench's constants (LinkStore, NodeStore, ID2Chooser, FBWorkload.properties).
const (
	DefaultLinkType = 123456789 // LinkStore.DEFAULT_LINK_TYPE
	LinkTypeCount   = 2         // link_type_count
	NodeType        = 2048      // LinkStore.ID1_TYPE
	BatchRows       = 1024      // mysql_bulk_insert_batch (LinkStoreMysql.DEFAULT_BULKINSERT_SIZE)
	RangeLimit      = 10000     // LinkStore.DEFAULT_LIMIT: rows per getlinklist

	pGetExist    = 0.5  // ID2Chooser.P_GET_EXIST
	pUpdateExist = 0.9  // P_UPDATE_EXIST
	pDeleteExist = 0.9  // P_DELETE_EXIST
	pAddExist    = 0.05 // P_ADD_EXIST
	maxUniqIters = 100  // ID2Chooser.MAX_UNIQ_ITERS

	pHistoryGetLinkList = 0.003 // getlinklist_history = 0.3 (percent)
	tailHistoryLimit    = 2048  // LinkBenchRequest.listTailHistoryLimit

	// Zipf shapes of the request-phase id choice (FBWorkload.properties:
	// read_shape, write_shape, node_read_shape, node_update_shape; deletes are
	// uniform).
	readShape       = 0.8
	writeShape      = 0.741
	nodeReadShape   = 0.625
	nodeUpdateShape = 0.606

	outdegreeExponent = 2.0
	outdegreeMax      = 10000

	visibilityHidden  = 0
	visibilityDefault = 1
)

var (
	linkDataSize = LogNormal{Median: 8, Sigma: 1, Min: 0, Max: 255}     // link_datasize, MAX_LINK_DATA
	nodeDataSize = LogNormal{Median: 128, Sigma: 1, Min: 0, Max: 16384} // node_datasize
	multigetDist = Geometric{Min: 1, Max: 128, P: 0.382}                // link_multiget_dist_*
)

// Config is one run.
type Config struct {
	Addr     string // host:port
	User     string
	Password string
	DB       string // database; dropped and created by the load

	Nodes       uint64 // node ids 1..Nodes
	LoadThreads int
	Threads     int           // request-phase connections
	Duration    time.Duration // request phase length; 0 with Requests 0 skips it
	Requests    uint64        // total request cap across threads; 0 = none
	Seed        uint64
	SkipLoad    bool
	SkipCheck   bool
	// JDBC sends what the original LinkBench sends through Connector/J (jdbc.go): latin1
	// tables, random-byte payloads, LinkStoreMysql's text statements with literal values, two
	// connections per requester. False is the older Go workload: the server's default
	// charset, ASCII payloads, and Prepared's choice of protocol in the request phase.
	JDBC       bool
	Prepared   bool // without JDBC: server-side prepared statements in the request phase (else text protocol)
	MaxRetries int  // retries of an operation after deadlock (1213) / lock wait timeout (1205)
	Mix        Mix

	Progress io.Writer // progress lines (stderr); nil for none
}

// DefaultConfig is the CLI's defaults.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:3306", User: "root", DB: "linkbench", Nodes: 100000, LoadThreads: 4,
		Threads: 4, Duration: 60 * time.Second, Seed: 1, JDBC: true, Prepared: true, MaxRetries: 10, Mix: DefaultMix}
}

// Report is everything a run measured.
type Report struct {
	Server  string         `json:"server"`
	Addr    string         `json:"addr"`
	Nodes   uint64         `json:"nodes"`
	Seed    uint64         `json:"seed"`
	Load    *LoadReport    `json:"load,omitempty"`
	Request *RequestReport `json:"request,omitempty"`
	Check   *CheckReport   `json:"check,omitempty"`
}

// Failures lists why the run should exit non-zero: count mismatches, or
// more failed operations than maxErrors (negative: any number allowed).
func (r *Report) Failures(maxErrors int64) []string {
	var f []string
	if r.Check != nil && !r.Check.OK() {
		f = append(f, fmt.Sprintf("consistency check: %d (id1, link_type) counts differ from their visible links", r.Check.Mismatches))
	}
	if r.Request != nil && maxErrors >= 0 && r.Request.Errors > uint64(maxErrors) {
		f = append(f, fmt.Sprintf("%d operations failed (allowed %d)", r.Request.Errors, maxErrors))
	}
	return f
}

// workload is the read-only state shared by the workers.
type workload struct {
	cfg      *Config
	out      *Outdegree
	chooser  *Chooser
	linkRead IDChooser
	linkWr   IDChooser
	nodeRead IDChooser
	nodeUpd  IDChooser
	nodeDel  IDChooser
}

func newWorkload(cfg *Config) (*workload, error) {
	ch, err := NewChooser(cfg.Mix)
	if err != nil {
		return nil, err
	}
	n := cfg.Nodes
	// One permutation for every Zipf: the ids hot for link reads are also
	// hot for link writes and node accesses (LinkBench's default blends 99.5%
	// of link reads and 95% of link writes "uncorrelated" with outdegree).
	perm := NewPermutation(n, cfg.Seed)
	return &workload{
		cfg: cfg, out: NewOutdegree(outdegreeExponent, outdegreeMax), chooser: ch,
		linkRead: ZipfIDs{NewZipf(n, readShape), perm},
		linkWr:   ZipfIDs{NewZipf(n, writeShape), perm},
		nodeRead: ZipfIDs{NewZipf(n, nodeReadShape), perm},
		nodeUpd:  ZipfIDs{NewZipf(n, nodeUpdateShape), perm},
		nodeDel:  UniformIDs{n},
	}, nil
}

// linkCount is how many links of linkType node id1 got at load: its
// outdegree split between the link types, the first ones taking the remainder.
func (w *workload) linkCount(id1 uint64, linkType uint64) uint64 {
	total := uint64(w.out.Links(id1))
	n := total / LinkTypeCount
	if linkType-DefaultLinkType < total%LinkTypeCount {
		n++
	}
	return n
}

func (c *Config) connector(db string) (driver.Connector, error) {
	mc := mysql.NewConfig()
	mc.User = c.User
	mc.Passwd = c.Password
	mc.Net = "tcp"
	mc.Addr = c.Addr
	mc.DBName = db
	mc.Timeout = 10 * time.Second
	mc.InterpolateParams = !c.Prepared && !c.JDBC
	// LinkStoreMysql appends "; commit;" to a transaction's last statement (allowMultiQueries).
	mc.MultiStatements = c.JDBC
	return mysql.NewConnector(mc)
}

// client names the request-phase protocol for the report.
func (c *Config) client() string {
	switch {
	case c.JDBC:
		return "jdbc"
	case c.Prepared:
		return "prepared"
	}
	return "text"
}

func (c *Config) open(db string, conns int) (*sql.DB, error) {
	conn, err := c.connector(db)
	if err != nil {
		return nil, err
	}
	d := sql.OpenDB(conn)
	d.SetMaxOpenConns(conns)
	d.SetMaxIdleConns(conns)
	return d, nil
}

func (c *Config) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// Run loads (unless SkipLoad), runs the request phase (if Duration or
// Requests is set) and checks the counts (unless SkipCheck). The report
// holds what completed even when an error is returned.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Nodes < 1 {
		return nil, errors.New("linkbench: --nodes must be at least 1")
	}
	cfg.LoadThreads = max(cfg.LoadThreads, 1)
	cfg.Threads = max(cfg.Threads, 1)
	wl, err := newWorkload(&cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Addr: cfg.Addr, Nodes: cfg.Nodes, Seed: cfg.Seed}
	if !cfg.SkipLoad {
		if err := createSchema(ctx, &cfg); err != nil {
			return rep, err
		}
	}
	reqConns := cfg.Threads
	if cfg.JDBC {
		reqConns *= 2 // LinkStoreMysql's read-write and read-only connections
	}
	db, err := cfg.open(cfg.DB, max(cfg.LoadThreads, reqConns)+1)
	if err != nil {
		return rep, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&rep.Server); err != nil {
		return rep, fmt.Errorf("linkbench: connect %s: %w", cfg.Addr, err)
	}
	if !cfg.SkipLoad {
		ld := load
		if cfg.JDBC {
			ld = loadJDBC
		}
		if rep.Load, err = ld(ctx, db, wl); err != nil {
			return rep, err
		}
	}
	if cfg.Duration > 0 || cfg.Requests > 0 {
		if rep.Request, err = requests(ctx, db, wl); err != nil {
			return rep, err
		}
	}
	if !cfg.SkipCheck {
		cfg.progressf("check: comparing counttable with the visible links")
		t0 := time.Now()
		if rep.Check, err = Check(ctx, db, 10); err != nil {
			return rep, err
		}
		rep.Check.Seconds = time.Since(t0).Seconds()
	}
	return rep, nil
}
