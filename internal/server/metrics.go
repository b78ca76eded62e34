package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exposes the server's status counters as Prometheus metrics.
func (s *Server) Collector() prometheus.Collector { return &collector{s: s} }

type collector struct{ s *Server }

var metricDescs = map[string]*prometheus.Desc{
	"Kiln_commits":            prometheus.NewDesc("kiln_commits_total", "Transactions committed with writes.", nil, nil),
	"Kiln_commit_groups":      prometheus.NewDesc("kiln_commit_groups_total", "Commit groups written (one fsync each).", nil, nil),
	"Questions":               prometheus.NewDesc("kiln_queries_total", "Statements executed.", nil, nil),
	"Threads_connected":       prometheus.NewDesc("kiln_connections", "Open client connections.", nil, nil),
	"Innodb_row_lock_waits":   prometheus.NewDesc("kiln_row_lock_waits_total", "Row lock requests that waited.", nil, nil),
	"Innodb_deadlocks":        prometheus.NewDesc("kiln_deadlocks_total", "Deadlocks detected.", nil, nil),
	"Kiln_lock_wait_timeouts": prometheus.NewDesc("kiln_lock_wait_timeouts_total", "Lock waits that timed out.", nil, nil),
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metricDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.status()
	for k, d := range metricDescs {
		v, _ := strconv.ParseFloat(st[k], 64)
		kind := prometheus.CounterValue
		if k == "Threads_connected" {
			kind = prometheus.GaugeValue
		}
		ch <- prometheus.MustNewConstMetric(d, kind, v)
	}
}
