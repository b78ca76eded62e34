package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kiln-db/kiln/internal/backup"
	"github.com/kiln-db/kiln/internal/memory"
	"github.com/kiln-db/kiln/internal/server"
)

// logHandler serves GET /log?after=P: the node's committed log after index P, followed until the
// client goes away or the node stops (kiln log archive). Like /backup it exposes every row.
func logHandler(base context.Context, srv *server.Server, guard func(http.HandlerFunc) http.HandlerFunc, logger *slog.Logger) http.HandlerFunc {
	return guard(func(w http.ResponseWriter, r *http.Request) {
		var after uint64
		if v := r.URL.Query().Get("after"); v != "" {
			var err error
			if after, err = strconv.ParseUint(v, 10, 64); err != nil {
				http.Error(w, "after: want a log index", http.StatusBadRequest)
				return
			}
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		rc := http.NewResponseController(w)
		defer context.AfterFunc(base, func() {
			cancel()
			_ = rc.SetWriteDeadline(time.Now())
		})()
		start := time.Now()
		cw := &countingWriter{w: w}
		err := srv.ServeLog(ctx, cw, after, func() { _ = rc.Flush() })
		if err != nil && cw.n == 0 {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
		logger.Info("log stream", "remote", r.RemoteAddr, "after", after, "bytes", cw.n, "took", time.Since(start), "err", err)
	})
}

// logCmd is `kiln log archive --from HOST:HTTPPORT --to DIR`.
func logCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Work with a node's binlog from outside (kiln log archive)"}
	var from, to, segBytes string
	var retry time.Duration
	var ctf clientTLSFlags
	arch := &cobra.Command{
		Use:   "archive",
		Short: "Follow a node's committed log and write it to DIR in fsynced segment files, resuming where it stopped (until interrupted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return errors.New("--from HOST:HTTPPORT and --to DIR are required")
			}
			seg, err := memory.ParseSize(segBytes)
			if err != nil || seg <= 0 {
				return fmt.Errorf("--segment-bytes %q: want a size with an optional K/M/G suffix", segBytes)
			}
			scheme, tc, err := ctf.client()
			if err != nil {
				return err
			}
			c := &http.Client{}
			if tc != nil {
				c.Transport = &http.Transport{TLSClientConfig: tc}
			}
			a, err := backup.OpenArchive(to, seg)
			if err != nil {
				return err
			}
			defer a.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			logger.Info("archiving", "from", from, "to", to, "after", a.Last())
			for ctx.Err() == nil {
				err := follow(ctx, c, scheme+"://"+from, a)
				if ctx.Err() != nil {
					break
				}
				var fatal *archiveFatal
				if errors.As(err, &fatal) {
					return fatal.err
				}
				logger.Warn("log stream ended; retrying", "err", err, "archived_to", a.Last(), "retry_in", retry)
				select {
				case <-ctx.Done():
				case <-time.After(retry):
				}
			}
			logger.Info("stopped", "archived_to", a.Last())
			return nil
		},
	}
	f := arch.Flags()
	f.StringVar(&from, "from", "", "the node's HTTP address (HOST:PORT, as kiln serve --http); any member with the log")
	f.StringVar(&to, "to", "", "archive directory (created; an existing archive is continued)")
	f.StringVar(&segBytes, "segment-bytes", "64M", "start a new segment file past this size")
	f.DurationVar(&retry, "retry", time.Second, "wait this long before reconnecting after the stream ends (the node restarted, the network failed)")
	ctf.register(f)
	cmd.AddCommand(arch)
	cmd.AddCommand(&cobra.Command{
		Use:   "verify DIR",
		Short: "Check a log archive: every record's CRC, contiguous indexes across segments; prints its range",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := backup.VerifyArchive(args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"ok": true, "dir": args[0], "cluster_uuid": s.ClusterUUID, "first_index": s.First,
				"last_index": s.Last, "last_term": s.LastTerm, "unfinished_segment": s.Unfinished})
		},
	})
	return cmd
}

// archiveFatal is an error retrying cannot cure (another cluster, a gap, damage).
type archiveFatal struct{ err error }

func (e *archiveFatal) Error() string { return e.err.Error() }

func follow(ctx context.Context, c *http.Client, base string, a *backup.Archiver) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/log?after=%d", base, a.Last()), nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		msg := strings.TrimSpace(string(b))
		if strings.Contains(msg, "purged") {
			return &archiveFatal{fmt.Errorf("log archive: %s", msg)}
		}
		return fmt.Errorf("log archive: %s: %s", resp.Status, msg)
	}
	err = a.Follow(resp.Body)
	if err != nil && (strings.Contains(err.Error(), "does not continue") || strings.Contains(err.Error(), "holds the log of cluster")) {
		return &archiveFatal{err}
	}
	return err
}
