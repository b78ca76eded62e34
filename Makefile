# Kiln. `make build` builds bin/kiln; `make run` starts it on the defaults
# (./kiln-data, MySQL on 127.0.0.1:3306, HTTP on 127.0.0.1:8080); `make test`
# runs every suite (scripts/test.sh: installs what it needs; what .ci/run
# calls); `make bench` compares Kiln with MariaDB (bench/sysbench-compare.sh);
# `make bench-commit` runs bench/commit-path.sh (durable/async/hot-row commit path vs MariaDB);
# `make bench-pipeline` bench/commit-pipeline.sh (group commit, serial vs --commit-pipeline vs MariaDB).
# `make bench-cluster` runs bench/cluster-compare.sh (3-voter Kiln vs MariaDB semi-sync, with and
# without added network delay, 2 voters + 1 log-only voter, and Kiln's failover time).
# `make bench-ack` runs bench/commit-ack.sh (kiln_commit_ack durable vs applied on 3 voters).
# `make bench-reads` runs bench/read-scaleout.sh (point selects on the leader vs spread over the
# followers and a learner, kiln_read_concern local vs linearizable).
# `make bench-backup` runs bench/backup-compare.sh (online backup, restore, incremental: Kiln vs mariadb-backup).
# `make bench-linkbench` runs bench/linkbench-compare.sh (LinkBench, MariaDB then Kiln).
# `make soak` runs a long mixed load (scripts/soak.sh); `make soak-cluster` the
# deterministic cluster simulation for SEEDS seeds; `make conformance`
# runs the whole sqllogictest corpus against Kiln (the table for
# docs/conformance.md). `make fuzz FUZZTIME=10m` runs every Go fuzz target (scripts/fuzz.sh).
# `make ryw RYW=100000` runs the cluster read-your-writes test through GTIDs (test/cluster) that many
# times (CI runs 10,000).
GO ?= go

.PHONY: build run test fuzz soak soak-crash soak-cluster ryw bench bench-sysbench bench-commit bench-pipeline bench-cluster bench-ack bench-reads bench-linkbench bench-backup conformance sltrun

build:
	$(GO) build -o bin/kiln ./cmd/kiln

run: build
	bin/kiln serve

test:
	scripts/test.sh

FUZZTIME ?= 2m
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

soak: build
	scripts/soak.sh

# Simulated power-loss crashes for as long as asked, in sync and in async mode: make soak-crash
# CYCLES=1000000 (prints the seed of any failure; rerun it with KILN_CRASH_SEED=...).
CYCLES ?= 100000
soak-crash:
	KILN_CRASH_CYCLES=$(CYCLES) KILN_ASYNC_CRASH_CYCLES=$(CYCLES) $(GO) test -count=1 -timeout 0 -v ./test/crash/

# The deterministic cluster simulation (internal/repl/sim_test.go) for as many seeds as asked:
# make soak-cluster SEEDS=1000000 [SEED=first]. Each failing seed is printed with the command that
# replays it (KILN_SIM_SEED=... KILN_SIM_SEEDS=1 go test -run 'TestClusterSim$$' ./internal/repl/);
# it stops after 3. Without -race; one process (the simulation is single-threaded by design).
SEEDS ?= 100000
SEED ?=
soak-cluster:
	KILN_SIM_SEEDS=$(SEEDS) KILN_SIM_SEED=$(SEED) $(GO) test -count=1 -timeout 0 -v -run 'TestClusterSim$$' ./internal/repl/

# Read-your-writes on a 3-node cluster through GTIDs (commit on the leader, wait and read on a
# follower): RYW iterations (docs/operations.md, "Reads on a cluster: GTIDs").
RYW ?= 100000
ryw: build
	KILN_BIN=bin/kiln KILN_RYW_ITERATIONS=$(RYW) $(GO) test -count=1 -timeout 0 -v -run 'TestReadYourWritesGTID$$' ./test/cluster/

# Issue 12's benchmark in one run: sysbench (text and prepared, 1-64 threads), durable group commit,
# LinkBench, Kiln vs MariaDB, medians of 3; writes bench/results/bench/report.md, a TPS-vs-threads
# plot, and docs/benchmarks.md's "make bench" section (bench/all.sh; ~2 h; CI does not run it).
bench: build
	bench/all.sh

# One sysbench comparison (bench/sysbench-compare.sh; env WORKLOADS, THREADS, PS_MODE, REPS, ...).
bench-sysbench: build
	bench/sysbench-compare.sh

# Online backup vs mariadb-backup: backup/restore time, sysbench TPS and p99 during backups, incremental
# size (env TABLES, TABLE_SIZE, THREADS, DURATION, ROUNDS; see its header). CI does not run it.
bench-backup: build
	bench/backup-compare.sh

# Durable commit path (fsyncs/commit, group size, hot row), Kiln vs MariaDB: bench/commit-path.sh
bench-commit: build
	bench/commit-path.sh

# Group commit at 16/64 threads, serial vs --commit-pipeline vs MariaDB, median of 3: bench/commit-pipeline.sh
bench-pipeline: build
	BINS="serial=bin/kiln pipelined=bin/kiln,--commit-pipeline" bench/commit-pipeline.sh

# Replicated commit path and failover, Kiln cluster vs MariaDB semi-sync: bench/cluster-compare.sh
# (env DURATION, THREADS, TABLE_SIZE, DELAY_MS, KILLS, SECTIONS; see its header)
bench-cluster: build
	$(GO) build -o bin/delayproxy ./tools/delayproxy
	$(GO) build -o bin/failoverprobe ./tools/failoverprobe
	bench/cluster-compare.sh

# kiln_commit_ack = applied against durable on a 3-voter cluster (docs/benchmarks.md).
bench-ack: build
	bench/commit-ack.sh

# Read scale-out on a 3-voter cluster + a learner, local vs linearizable reads (docs/benchmarks.md).
bench-reads: build
	bench/read-scaleout.sh

# LinkBench (kiln bench linkbench), MariaDB then Kiln: bench/linkbench-compare.sh (env NODES, THREADS, DURATION)
bench-linkbench: build
	bench/linkbench-compare.sh

conformance: build
	scripts/conformance.sh

sltrun:
	$(GO) build -o bin/sltrun ./tools/sltrun
