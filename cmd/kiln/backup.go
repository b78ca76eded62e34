package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kiln-db/kiln/internal/backup"
	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/server"
)

// backupHandler serves GET /backup: the node's online backup stream (server.ServeBackup, or
// server.ServeBackupFiles with form=files; POST with the files the client holds for an
// incremental file-form backup). It
// exposes every row, hence guard (a cluster client certificate under peer TLS) and the HTTP port's
// loopback default. A stream ends with its request or with base (the HTTP server's shutdown).
// maxRate (kiln serve --backup-max-rate; 0: none) caps the pace a client asks for.
func backupHandler(base context.Context, srv *server.Server, maxRate int64, guard func(http.HandlerFunc) http.HandlerFunc, logger *slog.Logger) http.HandlerFunc {
	return guard(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return // a probe: no stream
		}
		start := time.Now()
		cw := &countingWriter{w: w}
		w.Header().Set("Content-Type", "application/octet-stream")
		var rate int64
		if v := r.URL.Query().Get("max_rate"); v != "" {
			var err error
			if rate, err = strconv.ParseInt(v, 10, 64); err != nil || rate < 0 {
				http.Error(w, "max_rate: want a number of bytes per second", http.StatusBadRequest)
				return
			}
		}
		rate = capRate(rate, maxRate)
		var after uint64
		if v := r.URL.Query().Get("after"); v != "" {
			var err error
			if after, err = strconv.ParseUint(v, 10, 64); err != nil || after == 0 {
				http.Error(w, "after: want the log index an incremental backup starts after", http.StatusBadRequest)
				return
			}
		}
		files := false
		switch v := r.URL.Query().Get("form"); v {
		case "files":
			files = true
		case "", "logical":
		default:
			http.Error(w, "form: want files or logical", http.StatusBadRequest)
			return
		}
		var have map[string]backup.HaveFile
		if r.Method == http.MethodPost {
			// An incremental file-form backup: the engine files the client already holds.
			var req struct {
				Have []backup.HaveFile `json:"have"`
			}
			d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20))
			d.DisallowUnknownFields()
			if err := d.Decode(&req); err != nil {
				http.Error(w, "body: want {\"have\": [{\"name\", \"bytes\", \"crc32c\"}...]}: "+err.Error(), http.StatusBadRequest)
				return
			}
			have = make(map[string]backup.HaveFile, len(req.Have))
			for _, h := range req.Have {
				have[h.Name] = h
			}
		}
		if files && after != 0 || !files && have != nil {
			http.Error(w, "after (a log-only incremental) goes with form=logical, a list of files held with form=files", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		rc := http.NewResponseController(w)
		defer context.AfterFunc(base, func() {
			// A write blocked on a slow client must fail now too: the engine is about to close.
			cancel()
			_ = rc.SetWriteDeadline(time.Now())
		})()
		var err error
		if files {
			err = srv.ServeBackupFiles(ctx, cw, rate, have)
		} else {
			err = srv.ServeBackup(ctx, cw, rate, after)
		}
		if err != nil && cw.n == 0 {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
		// A failure after the first byte cuts the stream short; the client sees no trailer.
		logger.Info("backup stream", "remote", r.RemoteAddr, "files", files, "bytes", cw.n, "took", time.Since(start), "err", err)
	})
}

// capRate is a backup stream's pace: the client's (0: unlimited) within the node's limit (0: none).
func capRate(asked, limit int64) int64 {
	if limit > 0 && (asked == 0 || asked > limit) {
		return limit
	}
	return asked
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// backupCmd is `kiln backup --from HOST:HTTPPORT --to DIR` and `kiln backup verify DIR`.
func backupCmd() *cobra.Command {
	var from, to, maxRate, incFrom, form string
	var nice int
	var ctf clientTLSFlags
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Take an online backup of a running node through its HTTP port (kiln backup verify DIR checks one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return errors.New("--from HOST:HTTPPORT and --to DIR are required")
			}
			if to == "-" {
				if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
					return errors.New("--to - writes a tar stream: redirect stdout to a file or a pipe")
				}
			}
			if nice < 0 || nice > 19 {
				return fmt.Errorf("--nice %d: want 0 (off) to 19", nice)
			}
			if nice > 0 {
				// The backup's CPU (receiving, checksumming, writing) yields to the node's when
				// they share cores; the node's sending follows the client's pace (TCP backpressure).
				if err := lowerPriority(nice); err != nil {
					return err
				}
			}
			scheme, tc, err := ctf.client()
			if err != nil {
				return err
			}
			c := &http.Client{}
			if tc != nil {
				c.Transport = &http.Transport{TLSClientConfig: tc}
			}
			q := neturl.Values{}
			if maxRate != "" {
				rate, err := memory.ParseSize(maxRate)
				if err != nil || rate <= 0 {
					return fmt.Errorf("--max-rate %q: want bytes per second with an optional K/M/G suffix", maxRate)
				}
				q.Set("max_rate", fmt.Sprint(rate))
			}
			if form != "files" && form != "logical" {
				return fmt.Errorf("--form %q: want files or logical", form)
			}
			q.Set("form", form)
			var body []byte
			if incFrom != "" {
				if to == "-" {
					return errors.New("--incremental-from writes a directory: --to - is not supported with it")
				}
				// The whole chain must be sound before it is extended.
				prev, err := backup.Verify(incFrom)
				if err != nil {
					return fmt.Errorf("--incremental-from: %w", err)
				}
				if prev.EndIndex == 0 {
					return fmt.Errorf("--incremental-from %s: that backup ends at index 0; take a full backup", incFrom)
				}
				if form == "files" {
					have, err := backup.ChainHave(incFrom)
					if err != nil {
						return fmt.Errorf("--incremental-from: %w", err)
					}
					req := struct {
						Have []backup.HaveFile `json:"have"`
					}{Have: []backup.HaveFile{}}
					for _, h := range have {
						req.Have = append(req.Have, h)
					}
					body, _ = json.Marshal(req)
				} else {
					q.Set("after", fmt.Sprint(prev.EndIndex))
				}
			}
			url := scheme + "://" + from + "/backup"
			if len(q) > 0 {
				url += "?" + q.Encode()
			}
			start := time.Now()
			var resp *http.Response
			if body != nil {
				resp, err = c.Post(url, "application/json", bytes.NewReader(body))
			} else {
				resp, err = c.Get(url)
			}
			if err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
				return fmt.Errorf("backup: %s: %s", resp.Status, strings.TrimSpace(string(b)))
			}
			var progress backup.Progress
			if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				progress = func(n int64) {
					secs := time.Since(start).Seconds()
					fmt.Fprintf(os.Stderr, "\r%s received, %s/s   ", humanBytes(n), humanBytes(int64(float64(n)/secs)))
				}
			}
			var m backup.Manifest
			out := cmd.OutOrStdout()
			if to == "-" {
				// The tar stream goes to stdout; the summary to stderr.
				m, err = backup.FetchTar(resp.Body, os.Stdout, progress)
				out = cmd.ErrOrStderr()
			} else if incFrom != "" {
				m, err = backup.FetchIncremental(resp.Body, to, incFrom, progress)
			} else {
				m, err = backup.Fetch(resp.Body, to, progress)
			}
			if progress != nil {
				fmt.Fprintln(os.Stderr)
			}
			if err != nil {
				return err
			}
			var size int64
			for _, f := range m.Files {
				size += f.Bytes
			}
			took := time.Since(start)
			fmt.Fprintf(out, "backup complete: %s\n", map[bool]string{true: "tar stream on stdout", false: to}[to == "-"])
			if m.Parent != nil && m.Format == backup.FormatFiles {
				fmt.Fprintf(out, "incremental: follows %s, copies only the engine files it does not hold\n", incFrom)
			} else if m.Parent != nil {
				fmt.Fprintf(out, "incremental: follows %s (index %d), log entries %d..%d\n", incFrom, m.EngineIndex, m.EngineIndex+1, m.EndIndex)
			}
			if m.Format == backup.FormatFiles {
				// Referenced files are in earlier backups: not counted in what this one copied.
				var copied, refs int
				size = 0
				for _, f := range m.Files {
					if f.Ref {
						refs++
					} else {
						copied++
						size += f.Bytes
					}
				}
				fmt.Fprintf(out, "engine at index %d (files: %d copied, %d in earlier backups), log entries to index %d (%d entries, %s in %s, %s/s)\n", m.EngineIndex,
					copied, refs, m.EndIndex, m.Entries, humanBytes(size), took.Round(time.Millisecond), humanBytes(int64(float64(size)/took.Seconds())))
			} else {
				fmt.Fprintf(out, "engine at index %d, log entries to index %d (%d keys, %d entries, %s in %s, %s/s)\n", m.EngineIndex, m.EndIndex,
					m.Keys, m.Entries, humanBytes(size), took.Round(time.Millisecond), humanBytes(int64(float64(size)/took.Seconds())))
			}
			fmt.Fprintf(out, "log_index\t%d\n", m.EndIndex)
			fmt.Fprintf(out, "gtid_executed\t%s\n", m.GTID)
			if m.EndCommitTime != nil {
				// What restore --to-time can reach: after the snapshot's last commit, before the last one.
				fmt.Fprintf(out, "last_commit_time\t%s\n", m.EndCommitTime.Format(time.RFC3339Nano))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the node's HTTP address (HOST:PORT, as kiln serve --http)")
	f.StringVar(&to, "to", "", "directory to write the backup to (created; must be empty), or - for a tar stream of the same files on stdout")
	f.StringVar(&incFrom, "incremental-from", "", "take an incremental backup following the backup in this directory: with --form files, only the engine files the chain does not hold (sstables are immutable) and the log; with --form logical, only the log after its end (the node must still hold it); restore the newest backup of the chain")
	f.StringVar(&form, "form", "files", "files: the engine as a copy of its files (a checkpoint: cheap for the node); logical: every key read and streamed (format 1, as older versions)")
	f.StringVar(&maxRate, "max-rate", "", "the node sends the backup at most this fast (bytes per second, K/M/G suffix), to spare its disk and network; default: unlimited")
	f.IntVar(&nice, "nice", 0, "run the backup client at this nice value (1-19; 0: unchanged), so that on a host it shares with the node its CPU yields to the node's")
	ctf.register(f)
	cmd.AddCommand(&cobra.Command{
		Use:   "verify DIR",
		Short: "Check a backup: manifest, every file's size and checksum (SHA-256 or CRC32C), key order or every sstable block's checksum, the log contiguous from the engine's index to the end",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := backup.Verify(args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"ok": true, "dir": args[0], "cluster_id": m.ClusterID, "engine_index": m.EngineIndex,
				"end_index": m.EndIndex, "gtid": m.GTID, "files": len(m.Files), "keys": m.Keys, "entries": m.Entries,
				"engine_commit_time": m.EngineCommitTime, "end_commit_time": m.EndCommitTime, "parent": m.Parent})
		},
	})
	return cmd
}

// restoreCmd is `kiln restore --from DIR --data-dir NEW [--to-index N | --join --cluster-id ID --node-id K]`.
func restoreCmd() *cobra.Command {
	var from, dataDir, toTime, toGTID, logDir, clusterID string
	var toIndex, nodeID uint64
	var join bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Build a data directory from a backup, rolled forward to its end or to --to-index, --to-time or --to-gtid; it starts as a new single-node cluster, or with --join as a new member of the backup's cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || dataDir == "" {
				return errors.New("--from DIR and --data-dir NEW are required")
			}
			if cmd.Flags().Changed("to-index") && toIndex == 0 {
				return errors.New("--to-index must be at least 1")
			}
			if join && (!cmd.Flags().Changed("node-id") || clusterID == "") {
				return errors.New("--join needs --node-id (the new member's id) and --cluster-id (the cluster to join, from kiln cluster status)")
			}
			if !join && clusterID != "" {
				return errors.New("--cluster-id is for --join (a restore without it makes a new cluster)")
			}
			opts := backup.RestoreOptions{ToIndex: toIndex, ToGTID: toGTID, NodeID: nodeID, LogDir: logDir, Join: join, JoinCluster: clusterID}
			if toTime != "" {
				t, err := parseRestoreTime(toTime)
				if err != nil {
					return err
				}
				opts.ToTime = t
			}
			opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			start := time.Now()
			res, err := backup.Restore(from, dataDir, opts)
			if err != nil {
				return err
			}
			id := server.NewRestoredIdentity(nodeID)
			if join {
				id = server.JoinedIdentity(res.Manifest.ClusterID, res.Manifest.ClusterUUID, nodeID)
			}
			if err := server.WriteRestoredDataDir(dataDir, id); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "restored %s into %s in %s\n", from, dataDir, time.Since(start).Round(time.Millisecond))
			fmt.Fprintf(out, "engine at index %d; log to index %d (replayed on the first start)\n", res.EngineIndex, res.Index)
			fmt.Fprintf(out, "source position\t%s\n", backup.GTIDSet(res.Manifest.ClusterUUID, res.Index))
			if join {
				fmt.Fprintf(out, "joins cluster\t%s as node %d (log index %d, term %d)\n", id.ClusterID, nodeID, res.Index, res.Term)
				fmt.Fprintf(out, "next: kiln cluster add-learner --http LEADER --id %d --raft THIS_RAFT_ADDR; then kiln serve --data-dir %s --join --cluster-id %s --node-id %d --raft-listen THIS_RAFT_ADDR --peers ...\n", nodeID, dataDir, id.ClusterID, nodeID)
				return nil
			}
			if res.CommitTime != nil {
				fmt.Fprintf(out, "last commit time\t%s\n", res.CommitTime.Format(time.RFC3339Nano))
			}
			fmt.Fprintf(out, "new cluster\t%s (node %d, gtid_executed %s)\n", id.ClusterID, id.NodeID, backup.GTIDSet(id.ClusterUUID, res.Index))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "backup directory (kiln backup --to)")
	f.StringVar(&dataDir, "data-dir", "", "data directory to create (must not exist or be empty)")
	f.Uint64Var(&toIndex, "to-index", 0, "last log index to restore (default: the backup's end); between the backup's engine index and its end")
	f.StringVar(&toTime, "to-time", "", "restore exactly the commits with a commit time at or before this time: RFC 3339 (2026-11-24T10:32:00.5Z) or 'YYYY-MM-DD HH:MM:SS[.frac]' in the local time zone, as mysqlbinlog --stop-datetime")
	f.StringVar(&logDir, "log-dir", "", "a log archive (kiln log archive --to) that continues the backup: restore on past the backup's end, up to the archive's")
	f.StringVar(&toGTID, "to-gtid", "", "restore the commits of this GTID set of the backup's cluster, <cluster uuid>:1-<index> (as @@gtid_executed or kiln backup print it)")
	f.Uint64Var(&nodeID, "node-id", 1, "raft id of the restored node, the only member of its new cluster (with --join: its id as a new member, required)")
	f.BoolVar(&join, "join", false, "make the restored node a new member of the backup's own cluster (same cluster id and GTIDs, rolled forward to the end of the backup and --log-dir) that catches up from the leader's log after the backup's end: add it with kiln cluster add-learner and start it with kiln serve --join; needs --node-id and --cluster-id, refuses --to-*")
	f.StringVar(&clusterID, "cluster-id", "", "with --join: the cluster to join (kiln cluster status shows it); a backup of another cluster is refused")
	return cmd
}

// parseRestoreTime reads --to-time: RFC 3339 with an optional fraction, or MySQL's DATETIME form
// (a space or T between date and time) in the local time zone, as mysqlbinlog --stop-datetime.
func parseRestoreTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--to-time %q: want RFC 3339 (2026-11-24T10:32:00Z, 2026-11-24T10:32:00.123+01:00) or 'YYYY-MM-DD HH:MM:SS[.fraction]' in the local time zone", s)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	d, e := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		d *= unit
		e++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(d), "KMGTPE"[e])
}
