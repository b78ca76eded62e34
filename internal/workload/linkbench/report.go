package linkbench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the report as aligned tables.
func (r *Report) WriteText(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("LinkBench against %s (%s), nodes 1..%d, seed %d\n", r.Addr, r.Server, r.Nodes, r.Seed)
	if l := r.Load; l != nil {
		p("\nload: %d threads, multi-row INSERTs of %d rows, %.1f s, %.2f links per node\n", l.Threads, l.BatchRows, l.Seconds, l.LinksPerNode)
		p("table\trows\tseconds\trows/s\t\n")
		for _, t := range l.Tables {
			p("%s\t%d\t%.2f\t%.0f\t\n", t.Table, t.Rows, t.Seconds, t.RowsPerSec)
		}
	}
	if q := r.Request; q != nil {
		ps := "server-side prepared statements"
		switch {
		case q.Client == "jdbc":
			ps = "LinkStoreMysql's text statements (JDBC mode)"
		case !q.Prepared:
			ps = "text protocol"
		}
		p("\nrequests: %d threads, %s, %.1f s: %d ops, %.1f ops/s, %d errors, %d retries\n",
			q.Threads, ps, q.Seconds, q.Ops, q.OpsPerSec, q.Errors, q.Retries)
		p("op\tmix %%\tcount\terrors\tretries\trows/op\tp50 ms\tp95 ms\tp99 ms\tmax ms\t\n")
		for i, o := range q.PerOp {
			mix := 0.0
			if i < len(q.Mix) {
				mix = q.Mix[i].Percent
			}
			p("%s\t%.2f\t%d\t%d\t%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", o.Op, mix, o.Count, o.Errors, o.Retries,
				o.RowsPerOp, o.P50Ms, o.P95Ms, o.P99Ms, o.MaxMs)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if q := r.Request; q != nil {
		for _, o := range q.PerOp {
			for _, e := range o.ErrorSamples {
				fmt.Fprintf(out, "error in %s: %s\n", o.Op, e)
			}
		}
	}
	if c := r.Check; c != nil {
		status := "OK"
		if !c.OK() {
			status = fmt.Sprintf("FAILED: %d mismatches", c.Mismatches)
		}
		fmt.Fprintf(out, "\ncheck: %d (id1, link_type) with visible links, %d counttable rows (%.1f s): %s\n",
			c.Groups, c.CountRows, c.Seconds, status)
		for _, m := range c.Examples {
			row := fmt.Sprintf("count %d", m.Count)
			if !m.HasRow {
				row = "no counttable row"
			}
			fmt.Fprintf(out, "  id1 %d link_type %d: %d visible links, %s\n", m.ID1, m.LinkType, m.Visible, row)
		}
	}
	return nil
}
