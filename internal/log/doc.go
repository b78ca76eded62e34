// Package log owns the binlog: the only thing Kiln fsyncs. It is etcd raft's log storage (entries and
// HardState) in segment files of CRC-framed records under one directory, with an in-memory cache of
// recent entries, purge of old segments, crash recovery, and an offline checker (Check, for `kiln
// check`). The format is "kiln binlog format 1", documented in docs/log-format.md.
//
// The contract, as numbered duties:
//  1. Append takes contiguous entries. If ents[0].Index <= LastIndex, the log is first truncated back to
//     ents[0].Index-1 (raft overwriting a conflicting, uncommitted suffix); overwriting an entry at or
//     below the commit index of the last HardState written is refused. Appended entries are readable at
//     once. SetHardState and Append of one Ready may come in either order.
//  2. SetHardState records raft's HardState; HardState returns the last one set.
//  3. Sync writes everything appended and set since the previous Sync with one write call, then makes it
//     durable with one fsync. When Sync returns nil, all of it survives power loss. The caller batches:
//     append every entry of a raft Ready, set its HardState, then Sync once. Appends and reads may run
//     concurrently with a Sync; they never wait for the disk.
//  4. Term(i) answers for i in [FirstIndex-1, LastIndex]; below that it is ErrCompacted, above it
//     ErrUnavailable. Entries(lo, hi, maxBytes) returns [lo, hi) cut to maxBytes the way raft.Storage does
//     (at least one entry), from memory when the entries are recent, else from the segment files.
//  5. Purge(below) removes whole sealed segments whose entries are all below `below`, never the active
//     one, and keeps the term of the last purged entry.
//  6. Open recovers: it replays the segments in order and stops at the first unusable record. If that
//     record is the unsynced tail of the last write (a torn tail: garbage, zero-filled holes, stray
//     records after a hole), Open truncates the file there durably and logs what it dropped. If the
//     record had been synced (an entry at or below the durable commit index is damaged or missing, a
//     later write follows it, or a later segment exists), Open fails with a *CorruptionError naming the
//     file and offset: never silent loss. See (*scan).badPoint for the rules. With Options.Preallocate,
//     a zero-filled remainder of the last segment is its clean end (preallocated space, kept as it is),
//     and a torn tail is overwritten with zeros in place instead of cut off; the rules are the same.
//  7. A failed write or fsync is sticky: every later call that writes returns the error, because after a
//     failed fsync nothing about the file's contents can be trusted. Reopen to recover.
//
// Invariants:
//   - CRC before use: no byte of a record (length aside, which is bounded to 256 MiB) is interpreted
//     before its CRC32C matched, at recovery and on every read back from disk.
//   - Index contiguity: entries in the files follow each other by index, except where a truncate record
//     or a segment start (an implicit truncation, see maybeRoll) says otherwise; a gap is corruption.
//   - Nothing is served above what was appended: LastIndex, Term and Entries only cover entries passed
//     to Append (and not overwritten since), recovered ones included.
//   - A batch's first byte is written only after the previous batch's fsync returned, and a hardstate
//     record follows every entry its commit index covers. Recovery tells a torn tail from corruption by
//     these two orderings.
//   - Sealed segments hold only committed entries (a roll copies the uncommitted tail into the new
//     segment), so a truncation always lands in the active segment, and every segment starts with the
//     HardState current when it was created, so purging never loses it.
//   - A segment file appears complete or not at all (written under a temporary name, synced, renamed,
//     directory synced), and the directory is synced after every removal.
//   - Preallocation (Options.Preallocate): a new segment is written over a spare file of SegmentBytes
//     zeros that a background goroutine wrote and synced beforehand, so commits overwrite allocated,
//     written blocks and their fdatasync commits no metadata. Only the last segment has preallocated
//     room: a segment is sealed only once its records reach the end of the file. The format does not
//     change (a reader without Preallocate cuts the zeros as a torn tail).
package log
