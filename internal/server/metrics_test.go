package server

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kiln-db/kiln/internal/memory"
)

// The commit-wait gauges reach /metrics: the commands being served (Threads_running, kept by the
// protocol layer through Running) and the held groups that closed at the bound.
func TestMetricsCommandsRunning(t *testing.T) {
	s, err := Open(context.Background(), Config{DataDir: t.TempDir(), Memory: memory.NewAccount(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Running().Store(3)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetGauge() != nil:
				got[f.GetName()] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				got[f.GetName()] = m.GetCounter().GetValue()
			}
		}
	}
	if v, ok := got["kiln_commands_running"]; !ok || v != 3 {
		t.Fatalf("kiln_commands_running = %v (present %v), want the gauge at 3", v, ok)
	}
	if _, ok := got["kiln_commit_wait_timeouts_total"]; !ok {
		t.Fatal("kiln_commit_wait_timeouts_total is not exported")
	}
	if got := s.status()["Threads_running"]; got != "3" {
		t.Fatalf("Threads_running = %q, want 3", got)
	}
}
