package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kiln-db/kiln/internal/repl"
)

// Collector exposes the server's status counters as Prometheus metrics.
func (s *Server) Collector() prometheus.Collector { return &collector{s: s} }

type collector struct{ s *Server }

var metricDescs = map[string]*prometheus.Desc{
	"Kiln_commits":                prometheus.NewDesc("kiln_commits_total", "Transactions committed with writes.", nil, nil),
	"Kiln_commit_groups":          prometheus.NewDesc("kiln_commit_groups_total", "Commit groups written (one fsync each).", nil, nil),
	"Questions":                   prometheus.NewDesc("kiln_queries_total", "Statements executed.", nil, nil),
	"Threads_connected":           prometheus.NewDesc("kiln_connections", "Open client connections.", nil, nil),
	"Threads_running":             prometheus.NewDesc("kiln_commands_running", "Client commands being served now (Threads_running).", nil, nil),
	"Kiln_commit_wait_timeouts":   prometheus.NewDesc("kiln_commit_wait_timeouts_total", "Commit groups held open for other commands (--commit-wait-time) that closed at the wait's bound.", nil, nil),
	"Kiln_engine_version_flushes": prometheus.NewDesc("kiln_engine_version_flushes_total", "Memtable flushes started because range scans stepped over more old versions than rows.", nil, nil),
	"Innodb_row_lock_waits":       prometheus.NewDesc("kiln_row_lock_waits_total", "Row lock requests that waited.", nil, nil),
	"Innodb_deadlocks":            prometheus.NewDesc("kiln_deadlocks_total", "Deadlocks detected.", nil, nil),
	"Kiln_lock_wait_timeouts":     prometheus.NewDesc("kiln_lock_wait_timeouts_total", "Lock waits that timed out.", nil, nil),
	"Kiln_memory_accounted":       prometheus.NewDesc("kiln_memory_accounted_bytes", "Memory statements and connections hold, as accounted against --memory-limit.", nil, nil),
	"Kiln_memory_limit":           prometheus.NewDesc("kiln_memory_limit_bytes", "The server-wide memory limit (0: none).", nil, nil),
	"Kiln_memory_refused":         prometheus.NewDesc("kiln_memory_refused_total", "Memory reservations refused at the server-wide limit (statements failed with 3170, long data refused).", nil, nil),
}

var (
	groupSizeDesc = prometheus.NewDesc("kiln_commit_group_size", "Log entries per fsync (group commit size).", nil, nil)
	latencyDesc   = prometheus.NewDesc("kiln_commit_latency_seconds", "Time from COMMIT to durable and applied.", nil, nil)
	indexDesc     = prometheus.NewDesc("kiln_log_index", "Log indexes: applied and durable.", []string{"kind"}, nil)
	fsyncDesc     = prometheus.NewDesc("kiln_log_fsyncs_total", "Log fsyncs.", nil, nil)
	bytesDesc     = prometheus.NewDesc("kiln_log_bytes_written_total", "Bytes written to the log.", nil, nil)
	recoveryDesc  = prometheus.NewDesc("kiln_last_recovery_seconds", "Duration of the last start-up replay.", nil, nil)
	lagDesc       = prometheus.NewDesc("kiln_replica_lag_entries", "Committed log entries not yet applied on this node.", nil, nil)
	lagSecDesc    = prometheus.NewDesc("kiln_replica_lag_seconds", "How long this node's apply has been behind the commit index (0 when caught up).", nil, nil)
	primaryDesc   = prometheus.NewDesc("kiln_is_primary", "1 when this node leads and takes writes.", nil, nil)
	termDesc      = prometheus.NewDesc("kiln_raft_term", "The current raft term.", nil, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metricDescs {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{groupSizeDesc, latencyDesc, indexDesc, fsyncDesc, bytesDesc, recoveryDesc, lagDesc, lagSecDesc, primaryDesc, termDesc} {
		ch <- d
	}
}

// histogram converts a repl.Histogram (power-of-two buckets) to a Prometheus histogram.
func histogram(d *prometheus.Desc, h *repl.Histogram, scale float64) prometheus.Metric {
	count, sum, upper, cum := h.Snapshot()
	buckets := make(map[float64]uint64, len(upper))
	for i, u := range upper {
		buckets[float64(u)*scale] = cum[i]
	}
	return prometheus.MustNewConstHistogram(d, count, float64(sum)*scale, buckets)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.status()
	for k, d := range metricDescs {
		v, _ := strconv.ParseFloat(st[k], 64)
		kind := prometheus.CounterValue
		if k == "Threads_connected" || k == "Threads_running" || k == "Kiln_memory_accounted" || k == "Kiln_memory_limit" {
			kind = prometheus.GaugeValue
		}
		ch <- prometheus.MustNewConstMetric(d, kind, v)
	}
	n := c.s.node
	ch <- histogram(groupSizeDesc, &n.Stats.GroupSizes, 1)
	ch <- histogram(latencyDesc, &n.Stats.CommitNanos, 1e-9)
	ch <- prometheus.MustNewConstMetric(indexDesc, prometheus.GaugeValue, float64(n.Applied()), "applied")
	ch <- prometheus.MustNewConstMetric(indexDesc, prometheus.GaugeValue, float64(n.Durable()), "durable")
	ch <- prometheus.MustNewConstMetric(fsyncDesc, prometheus.CounterValue, float64(n.Stats.Syncs.Load()))
	ch <- prometheus.MustNewConstMetric(bytesDesc, prometheus.CounterValue, float64(c.s.lg.Stats().BytesWritten))
	ch <- prometheus.MustNewConstMetric(recoveryDesc, prometheus.GaugeValue, n.RecoveryTime.Seconds())
	lagN, lagT := n.Lag()
	ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(lagN))
	ch <- prometheus.MustNewConstMetric(lagSecDesc, prometheus.GaugeValue, lagT.Seconds())
	primary := 0.0
	if n.IsLeader() {
		primary = 1
	}
	ch <- prometheus.MustNewConstMetric(primaryDesc, prometheus.GaugeValue, primary)
	ch <- prometheus.MustNewConstMetric(termDesc, prometheus.GaugeValue, float64(n.Term()))
	ch <- prometheus.MustNewConstMetric(indexDesc, prometheus.GaugeValue, float64(n.CommitIndex()), "commit")
}
