package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kiln-db/kiln/internal/workload/linkbench"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmark workloads against a MySQL-compatible server"}
	cmd.AddCommand(linkbenchCmd())
	return cmd
}

func linkbenchCmd() *cobra.Command {
	cfg := linkbench.DefaultConfig()
	var asJSON bool
	var maxErrors int64
	cmd := &cobra.Command{
		Use:   "linkbench",
		Short: "Facebook's LinkBench social-graph workload: load, timed request phase, count check",
		Long: `Runs LinkBench (nodetable, linktable, counttable) against any MySQL-compatible server.

Load (unless --skip-load): drops and creates --db, loads nodes 1..--nodes, their links
(power-law outdegree) and counttable, in multi-row INSERTs of 1,024 rows on --load-threads
connections. Requests: LinkBench's default operation mix on --threads connections for
--duration (and/or --requests in total). Check: counttable.count must equal the visible
links of every (id1, link_type). Exits non-zero if the check fails or more than
--max-errors operations failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cfg.Progress = os.Stderr
			rep, err := linkbench.Run(ctx, cfg)
			if rep != nil && (rep.Load != nil || rep.Request != nil || rep.Check != nil) {
				if asJSON {
					enc := json.NewEncoder(os.Stdout)
					enc.SetIndent("", "  ")
					if jerr := enc.Encode(rep); jerr != nil {
						return jerr
					}
				} else if werr := rep.WriteText(os.Stdout); werr != nil {
					return werr
				}
			}
			if err != nil {
				return err
			}
			if f := rep.Failures(maxErrors); len(f) > 0 {
				return errors.New("linkbench: " + strings.Join(f, "; "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", cfg.Addr, "server address host:port")
	f.StringVar(&cfg.User, "user", cfg.User, "user")
	f.StringVar(&cfg.Password, "password", cfg.Password, "password")
	f.StringVar(&cfg.DB, "db", cfg.DB, "database (dropped and re-created by the load)")
	f.Uint64Var(&cfg.Nodes, "nodes", cfg.Nodes, "node ids 1..nodes (LinkBench's maxid1 - 1)")
	f.IntVar(&cfg.LoadThreads, "load-threads", cfg.LoadThreads, "connections loading")
	f.IntVar(&cfg.Threads, "threads", cfg.Threads, "request-phase connections")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "request phase length (0 with --requests 0: no request phase)")
	f.Uint64Var(&cfg.Requests, "requests", 0, "stop the request phase after this many operations in total (0: no cap)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed (request stream, payloads, id shuffle)")
	f.BoolVar(&cfg.SkipLoad, "skip-load", false, "use the loaded database as it is (same --nodes)")
	f.BoolVar(&cfg.SkipCheck, "skip-check", false, "do not run the counttable consistency check")
	f.BoolVar(&cfg.JDBC, "jdbc", cfg.JDBC, "send what the original LinkBench sends through Connector/J: latin1 tables, random-byte payloads, LinkStoreMysql's text statements (false: the older Go workload, see --prepared)")
	f.BoolVar(&cfg.Prepared, "prepared", cfg.Prepared, "with --jdbc=false: server-side prepared statements in the request phase (false: text protocol, client-side interpolation)")
	f.IntVar(&cfg.MaxRetries, "max-retries", cfg.MaxRetries, "retries of an operation after a deadlock (1213) or lock wait timeout (1205)")
	f.Int64Var(&maxErrors, "max-errors", 0, "failed operations allowed before the exit status is non-zero (-1: any)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
