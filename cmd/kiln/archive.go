package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// holdHandlers serves the purge holds of log archivers (kiln log archive --hold):
//
//	POST   /log/hold?name=N&from=I&ttl=D[&max_bytes=B]  set or renew N's hold at index I for D
//	DELETE /log/hold?name=N                            drop it
//	GET    /log/holds                                  the holds standing, as JSON
//
// Like /log they need the client certificate under peer TLS: a hold keeps log on the node's disk.
func holdHandlers(mux *http.ServeMux, srv *server.Server, guard func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("POST /log/hold", guard(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, err := strconv.ParseUint(q.Get("from"), 10, 64)
		if err != nil {
			http.Error(w, "from: want a log index", http.StatusBadRequest)
			return
		}
		ttl, err := time.ParseDuration(q.Get("ttl"))
		if err != nil {
			http.Error(w, "ttl: want a duration (10m)", http.StatusBadRequest)
			return
		}
		var maxBytes int64
		if v := q.Get("max_bytes"); v != "" {
			if maxBytes, err = strconv.ParseInt(v, 10, 64); err != nil {
				http.Error(w, "max_bytes: want a byte count", http.StatusBadRequest)
				return
			}
		}
		hi, err := srv.ArchiveHolds().Renew(q.Get("name"), from, ttl, maxBytes)
		if err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, backup.ErrHoldTooLarge) {
				code = http.StatusConflict
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(hi)
	}))
	mux.HandleFunc("DELETE /log/hold", guard(func(w http.ResponseWriter, r *http.Request) {
		if !srv.ArchiveHolds().Release(r.URL.Query().Get("name")) {
			http.Error(w, "no such hold", http.StatusNotFound)
		}
	}))
	mux.HandleFunc("GET /log/holds", guard(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(srv.ArchiveHolds().List())
	}))
}

// holdRenewer keeps an archiver's purge hold on the node at the entry after what the archive
// holds durably: it renews when that moves and at least every ttl/4, so the hold lapses only ttl
// after the archiver stopped (or lost the node).
type holdRenewer struct {
	c        *http.Client
	base     string
	name     string
	ttl      time.Duration
	maxBytes int64
	a        *backup.Archiver
	logger   *slog.Logger
	lastFrom uint64
	lastAt   time.Time
	lastErr  string
	kick     chan struct{} // renew now: the stream (re)connects, the node may have restarted without it
}

// run renews until ctx ends or stop is closed. A renewal in flight when stop closes completes
// first: cancelling it could leave the node to apply it after a release (the hold set again).
func (h *holdRenewer) run(ctx context.Context, stop <-chan struct{}) {
	tick := time.NewTicker(min(h.ttl/4, time.Second))
	defer tick.Stop()
	for {
		h.renew(ctx)
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
		case <-h.kick:
			h.lastAt = time.Time{}
		}
	}
}

func (h *holdRenewer) renew(ctx context.Context) {
	from := h.a.Durable() + 1
	if from == h.lastFrom && h.lastErr == "" && time.Since(h.lastAt) < h.ttl/4 {
		return
	}
	u := fmt.Sprintf("%s/log/hold?name=%s&from=%d&ttl=%s&max_bytes=%d", h.base, url.QueryEscape(h.name), from, h.ttl, h.maxBytes)
	rctx, cancel := context.WithTimeout(ctx, max(h.ttl/4, time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, u, nil)
	if err != nil {
		h.report(err.Error())
		return
	}
	resp, err := h.c.Do(req)
	if err != nil {
		h.report(err.Error())
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.report(fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(b))))
		return
	}
	if h.lastErr != "" || h.lastFrom == 0 {
		h.logger.Info("log purge hold set on the node", "name", h.name, "from", from, "ttl", h.ttl, "max_bytes", h.maxBytes)
	}
	h.lastFrom, h.lastAt, h.lastErr = from, time.Now(), ""
}

// release drops the hold on the node (DELETE /log/hold), best effort.
func (h *holdRenewer) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, fmt.Sprintf("%s/log/hold?name=%s", h.base, url.QueryEscape(h.name)), nil)
	if err != nil {
		return
	}
	if resp, err := h.c.Do(req); err == nil {
		resp.Body.Close()
		h.logger.Info("log purge hold released on the node", "name", h.name, "status", resp.Status)
	}
}

// report logs a failed renewal once per distinct error (the node is down: every try fails alike).
func (h *holdRenewer) report(msg string) {
	if msg != h.lastErr {
		h.logger.Warn("log purge hold not renewed; the node may purge what is not archived", "name", h.name, "err", msg)
	}
	h.lastErr = msg
}

// logCmd is `kiln log archive --from HOST:HTTPPORT --to DIR`.
func logCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Work with a node's binlog from outside (kiln log archive)"}
	var from, to, segBytes, holdMax, holdName string
	var retry, holdTTL time.Duration
	var hold bool
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
			var maxBytes int64
			if hold {
				if holdTTL <= 0 || holdTTL > backup.MaxHoldTTL {
					return fmt.Errorf("--hold-ttl %v: want more than 0 and at most %v", holdTTL, backup.MaxHoldTTL)
				}
				if maxBytes, err = memory.ParseSize(holdMax); err != nil || maxBytes < 0 {
					return fmt.Errorf("--hold-max-bytes %q: want a size with an optional K/M/G suffix (0: no byte bound)", holdMax)
				}
				if holdName == "" {
					holdName = defaultHoldName(to)
				}
			}
			a, err := backup.OpenArchive(to, seg)
			if err != nil {
				return err
			}
			defer a.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			var hr *holdRenewer
			stopRenewer := func() {}
			if hold {
				// The hold outlives this process by design (a restart must not lose what the node
				// kept for it); --hold-ttl bounds it.
				hr = &holdRenewer{kick: make(chan struct{}, 1), c: c, base: scheme + "://" + from, name: holdName, ttl: holdTTL, maxBytes: maxBytes, a: a, logger: logger}
				stop, done := make(chan struct{}), make(chan struct{})
				go func() { defer close(done); hr.run(ctx, stop) }()
				stopRenewer = sync.OnceFunc(func() { close(stop); <-done })
				defer stopRenewer()
			}
			logger.Info("archiving", "from", from, "to", to, "after", a.Last())
			for ctx.Err() == nil {
				if hr != nil {
					select {
					case hr.kick <- struct{}{}:
					default:
					}
				}
				err := follow(ctx, c, scheme+"://"+from, a)
				if ctx.Err() != nil {
					break
				}
				var fatal *archiveFatal
				if errors.As(err, &fatal) {
					if hr != nil {
						stopRenewer()
						// This archive cannot go on (a gap, another history): keeping log for it
						// on the node would only cost disk until the ttl.
						hr.release(cmd.Context())
					}
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
	f.BoolVar(&hold, "hold", false, "keep the node from purging log this archive does not hold durably yet (a hold it renews; bounded by --hold-ttl and --hold-max-bytes)")
	f.DurationVar(&holdTTL, "hold-ttl", 10*time.Minute, "with --hold: the node drops the hold this long after the archiver's last renewal (a dead archiver cannot keep the log forever)")
	f.StringVar(&holdMax, "hold-max-bytes", "0", "with --hold: the node drops the hold once the log it keeps is larger than this (K/M/G suffix; 0: only --hold-ttl bounds it)")
	f.StringVar(&holdName, "hold-name", "", "with --hold: the hold's name on the node (default HOSTNAME:ABSOLUTE-DIR; one per archive)")
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

// defaultHoldName names an archive's hold on the node: one per archive directory and machine, so a
// restarted archiver renews its own hold and two archives of one node do not share one.
func defaultHoldName(dir string) string {
	host, _ := os.Hostname()
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return host + ":" + dir
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
