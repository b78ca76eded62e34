// Package linkbench owns Kiln's Go implementation of Facebook's LinkBench
// social-graph workload (https://github.com/facebookarchive/linkbench), run
// against any MySQL-compatible server through database/sql and
// go-sql-driver/mysql: the schema (nodetable, linktable, counttable), the
// load phase (nodes, links with a power-law outdegree, counts consistent
// with the links, multi-row INSERTs of 1,024 rows), the request phase
// (LinkBench's default operation mix from config/FBWorkload.properties,
// Zipf-distributed ids, the transactions of LinkBench's MySQL link store),
// per-operation latency statistics, and the final check that every
// counttable row equals the number of visible links it counts.
//
// It imports only the standard library and the MySQL driver; the CLI is
// `kiln bench linkbench` in cmd/kiln. docs/benchmarks.md ("LinkBench")
// describes what differs from the Java original.
package linkbench
