// Command sltrun runs sqllogictest files against any MySQL-compatible server
// and reports, per folder of the corpus, how many records ran, passed, failed
// and were skipped.
//
// Usage:
//
//	sltrun [-addr 127.0.0.1:3306] [-user root] [-password ''] [-parallel N]
//	       [-root DIR] [-files-from LIST] [-json out.json] [-v] FILE|DIR...
//
// The format and the value rules follow /work/shared/sqllogictest/README.md
// and the reference runner (sqllogictest.c): skipif/onlyif (engine "mysql"),
// halt, hash-threshold, statement ok/error, query with a type string (I, R,
// T) and a sort mode (nosort, rowsort, valuesort), results as values or as
// "N values hashing to <md5>".
//
// Each file runs on its own connection (multi-statements off) in a fresh
// database slt_<n>, dropped at the end. Every statement has a timeout
// (-timeout); a statement that times out fails, its connection is killed and
// the file goes on with a new one. No error in a record stops a file, only
// "halt" does. -max-timeouts and -deadline bound the time a slow or hanging
// server can take: records past them count as failed without running.
//
// Folders: the path of a file relative to the corpus root (-root; by default
// the directory given as argument, or the nearest ancestor named "test"),
// cut to two levels (index/between/10/x.test -> index/between); files at the
// top level are grouped as "select".
package main

import (
	"bufio"
	"context"
	"database/sql/driver"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, "; ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// FolderResult aggregates the files of one folder.
type FolderResult struct {
	Counts
	Files   int     `json:"files"`
	Seconds float64 `json:"seconds"` // sum of the files' wall times
	Timeout int     `json:"timeouts,omitempty"`
}

// Report is what -json writes.
type Report struct {
	Server    string                   `json:"server_version"`
	Addr      string                   `json:"addr"`
	Engine    string                   `json:"engine"`
	Root      string                   `json:"root"`
	Started   string                   `json:"started"`
	Seconds   float64                  `json:"seconds"`
	Parallel  int                      `json:"parallel"`
	TimeoutS  float64                  `json:"timeout_seconds"`
	Total     Counts                   `json:"total"`
	Folders   map[string]*FolderResult `json:"folders"`
	FileStats []*FileResult            `json:"files"`
}

func main() {
	var (
		opt       Options
		parallel  int
		jsonOut   string
		verbose   bool
		root      string
		filesFrom string
		dbPrefix  string
		initSQL   stringList
		quiet     bool
		deadline  time.Duration
	)
	flag.StringVar(&opt.Addr, "addr", "127.0.0.1:3306", "server address host:port")
	flag.StringVar(&opt.User, "user", "root", "user")
	flag.StringVar(&opt.Password, "password", "", "password")
	flag.StringVar(&opt.Engine, "engine", "mysql", "engine name for skipif/onlyif")
	flag.DurationVar(&opt.Timeout, "timeout", 10*time.Second, "timeout per statement")
	flag.BoolVar(&opt.KeepDB, "keep-db", false, "keep each file's database")
	flag.IntVar(&opt.MaxFailLog, "max-failures", 200, "failures printed by -v per file")
	flag.Var(&initSQL, "init", "statement run after each connect (repeatable), e.g. \"SET SESSION sql_mode=''\"")
	flag.IntVar(&opt.MaxTimeouts, "max-timeouts", 0, "per file: after this many timeouts the file's remaining records fail unrun (0: no limit)")
	flag.DurationVar(&deadline, "deadline", 0, "whole run: records not started within this time fail unrun (0: none)")
	flag.IntVar(&parallel, "parallel", 1, "files run at once")
	flag.StringVar(&jsonOut, "json", "", "write the results as JSON to this file")
	flag.BoolVar(&verbose, "v", false, "print every failure with file:line and SQL")
	flag.BoolVar(&quiet, "q", false, "no progress lines on stderr")
	flag.StringVar(&root, "root", "", "corpus root for folder names and relative paths")
	flag.StringVar(&filesFrom, "files-from", "", "read file paths (relative to -root) from this file, one per line, # comments")
	flag.StringVar(&dbPrefix, "db-prefix", "slt_", "prefix of the per-file database names")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: sltrun [flags] FILE|DIR...\n")
		flag.PrintDefaults()
	}
	// Flags may come after the files too (sltrun DIR -v).
	var args []string
	rest := os.Args[1:]
	for {
		if err := flag.CommandLine.Parse(rest); err != nil {
			os.Exit(2)
		}
		rest = flag.Args()
		for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			args = append(args, rest[0])
			rest = rest[1:]
		}
		if len(rest) == 0 {
			break
		}
	}
	opt.InitSQL = initSQL
	if parallel < 1 {
		parallel = 1
	}

	if filesFrom != "" {
		list, err := readList(filesFrom)
		if err != nil {
			fatalf("%v", err)
		}
		args = append(args, list...)
	}
	if len(args) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if root == "" {
		root = guessRoot(args)
	}
	files, err := collect(args, root)
	if err != nil {
		fatalf("%v", err)
	}
	if len(files) == 0 {
		fatalf("no .test files found")
	}

	version, err := serverVersion(&opt)
	if err != nil {
		fatalf("cannot reach server at %s: %v", opt.Addr, err)
	}

	started := time.Now()
	if deadline > 0 {
		opt.Deadline = started.Add(deadline)
	}
	results := make([]*FileResult, len(files))

	// Biggest files first, so that -parallel balances.
	order := make([]int, len(files))
	sizes := make([]int64, len(files))
	for i, f := range files {
		order[i] = i
		if st, err := os.Stat(f); err == nil {
			sizes[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })

	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	work := make(chan int)
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				path := files[i]
				rel := relPath(root, path)
				folder := folderOf(rel)
				var res *FileResult
				b, err := os.ReadFile(path)
				var recs []Record
				if err == nil {
					recs, err = ParseBytes(b)
				}
				if err != nil {
					res = &FileResult{Path: rel, Folder: folder, SetupErr: err.Error()}
				} else {
					res = runFile(&opt, path, rel, folder, recs, fmt.Sprintf("%s%d", dbPrefix, i+1))
				}
				results[i] = res
				mu.Lock()
				done++
				if !quiet {
					fmt.Fprintf(os.Stderr, "[%d/%d] %s: %d/%d passed, %d failed, %d skipped (%.1fs)%s\n",
						done, len(files), rel, res.Counts.Passed, res.Counts.Run, res.Counts.Failed,
						res.Counts.Skipped, res.Seconds, setupNote(res))
				}
				if verbose {
					for _, f := range res.Failures {
						fmt.Printf("FAIL %s:%d: %s\n%s\n\n", f.File, f.Line, f.Reason, indent(f.SQL))
					}
					if res.failCount > len(res.Failures) {
						fmt.Printf("(%s: %d more failures not shown)\n\n", rel, res.failCount-len(res.Failures))
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()

	rep := &Report{
		Server:   version,
		Addr:     opt.Addr,
		Engine:   opt.Engine,
		Root:     root,
		Started:  started.UTC().Format(time.RFC3339),
		Seconds:  round1(time.Since(started).Seconds()),
		Parallel: parallel,
		TimeoutS: opt.Timeout.Seconds(),
		Folders:  map[string]*FolderResult{},
	}
	for _, r := range results {
		r.Seconds = round1(r.Seconds)
		f := rep.Folders[r.Folder]
		if f == nil {
			f = &FolderResult{}
			rep.Folders[r.Folder] = f
		}
		f.Add(r.Counts)
		f.Files++
		f.Seconds = round1(f.Seconds + r.Seconds)
		f.Timeout += r.Timeouts
		rep.Total.Add(r.Counts)
		rep.FileStats = append(rep.FileStats, r)
	}
	printTable(rep)
	if jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fatalf("%v", err)
		}
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
}

func setupNote(r *FileResult) string {
	s := ""
	if r.Halted {
		s += " [halt]"
	}
	if r.Timeouts > 0 {
		s += fmt.Sprintf(" [%d timeouts]", r.Timeouts)
	}
	if r.SetupErr != "" {
		s += " [setup error: " + r.SetupErr + "]"
	}
	return s
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func printTable(rep *Report) {
	names := make([]string, 0, len(rep.Folders))
	for n := range rep.Folders {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "folder\tfiles\trecords\trun\tpassed\tfailed\tskipped\tpass%%\tseconds\t\n")
	row := func(name string, files int, c Counts, secs float64) {
		pct := 0.0
		if c.Run > 0 {
			pct = 100 * float64(c.Passed) / float64(c.Run)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.1f\t\n", name, files, c.Records, c.Run, c.Passed, c.Failed, c.Skipped, pct, secs)
	}
	nfiles := 0
	for _, n := range names {
		f := rep.Folders[n]
		row(n, f.Files, f.Counts, f.Seconds)
		nfiles += f.Files
	}
	row("TOTAL", nfiles, rep.Total, rep.Seconds)
	tw.Flush()
	fmt.Printf("server %s at %s, %d files, %.1fs wall, parallel %d\n", rep.Server, rep.Addr, nfiles, rep.Seconds, rep.Parallel)
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "sltrun: "+format+"\n", a...)
	os.Exit(2)
}

func readList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// guessRoot picks the corpus root: a directory argument if there is exactly
// one, else the nearest ancestor of the first argument named "test".
func guessRoot(args []string) string {
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
			abs, _ := filepath.Abs(args[0])
			return abs
		}
	}
	abs, err := filepath.Abs(args[0])
	if err != nil {
		return "."
	}
	for d := filepath.Dir(abs); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "test" {
			return d
		}
	}
	return filepath.Dir(abs)
}

// collect expands arguments (files, or directories searched for *.test) into
// a sorted list of absolute paths. A relative path that does not exist is
// tried relative to root.
func collect(args []string, root string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		abs, err := filepath.Abs(p)
		if err == nil && !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	for _, a := range args {
		p := a
		if _, err := os.Stat(p); err != nil && !filepath.IsAbs(p) && root != "" {
			p = filepath.Join(root, a)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".test") {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

func relPath(root, path string) string {
	if root != "" {
		if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path)))
}

// folderOf maps a path relative to the corpus root to its reporting folder:
// its directory cut to two levels; top-level files are "select".
func folderOf(rel string) string {
	dir := filepath.ToSlash(filepath.Dir(rel))
	if dir == "." || dir == "" {
		return "select"
	}
	parts := strings.Split(dir, "/")
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, "/")
}

func serverVersion(opt *Options) (string, error) {
	c, err := newConnector(opt, "")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := c.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	rows, err := conn.(driver.QueryerContext).QueryContext(ctx, "SELECT VERSION()", nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return "", err
	}
	return textOf(dest[0]), nil
}
