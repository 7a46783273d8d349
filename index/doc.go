// Package index turns a record file into a compact table of record
// locations, so that "how many records", "how long is record k" and "read
// bytes [a, b) of record k" are answered without rescanning the file.
//
// It is the second stage of recfs's pipeline (file → codec → index → fs →
// kernel): it drives the codec scanners once (in parallel for leveldb logs,
// split at block boundaries), keeps per record only what random access needs
// (about 12 bytes), saves the table to a cache file named by the Key of the
// source's source.Identity and checked against its version, so the next
// open of the unchanged source is instant, and extends it when the source
// grows. Local files are read as a local.File (source/local) over the table's descriptor.
//
// Concurrency: a *Table is safe for concurrent use. ReadAt and the accessors
// may run while Refresh extends the table; a reader sees either the old or
// the new record count, never a torn record.
package index
