// Package dbdecode turns the records of database logs into text a user
// can grep: the WriteBatches of a leveldb, RocksDB or pebble write-ahead
// log, and the VersionEdits of a MANIFEST with the live LSM state they
// leave. It is pure: bytes of one record in, text out; it reads no files
// (a WAL's column family names come through decode.Dir) and knows nothing
// of the log framing around a record (package codec removes that first).
// Its decoders plug into package codec/decode ([BatchDecoder],
// [Manifest]).
//
// # Batch text
//
// [AppendBatch] writes a header line and one line per operation:
//
//	batch seq 42 count 3
//	put user00042 {"name": "ann smith"}
//	delete user00017
//	range-delete a c
//
// The operations are those of leveldb (put, delete), RocksDB (merge,
// single-delete, range-delete, log-data, blob-index, the -cf variants that
// name a column family, wide-column put-entity, the two-phase-commit
// markers) and pebble (range-key-set, range-key-unset, range-key-delete,
// delete-sized, ingest-sst, excise). Tags 19 to 24 mean different things to
// RocksDB and pebble; [Options.Dialect] chooses, and the default tries
// pebble first and RocksDB when pebble's reading fails. Values show as
// stored: delete-sized's number is what pebble stores, the deleted value's
// size plus the key's length. A -cf operation shows the column family's
// name when one is known ([Options.CFNames]: a MANIFEST or OPTIONS file
// beside the WAL, or --manifest), else its id. RocksDB's
// deletion-with-timestamp type (20) lives in tables, not in batches; in a
// batch it is an unknown tag.
//
// Labels: with decode.Output.Number every line starts with the record
// number and "seq=S", the sequence number the operation was written at
// (the batch's for the header, log data and transaction markers, which
// take none). JSON Lines have one object per line: {"n","seq","op":"batch",
// "count"} for the header, then {"n","seq","op", and the operation's
// fields: "key", "value", "end", "cf" and "cf_name", "data", "xid", "size",
// "suffix_values" or "suffixes"}.
//
// # Manifest text
//
// [AppendVersionEdit] writes one line per field of a VersionEdit, in the
// record's order: comparator, log-number, prev-log-number, next-file,
// last-seq, compact-pointer, delete-file, add-file (with level, file number,
// size, smallest and largest internal keys, sequence range and the custom
// fields of RocksDB's and pebble's later encodings), column families,
// atomic groups, blob files, backing tables and RocksDB's ignorable fields:
//
//	add-file L0 000012 size=1234 smallest=user001#510,SET largest=user099#530,DEL seqs=510-530 creation-time=2024-05-01T10:00:00Z
//
// File numbers are zero-padded to six digits as their files are named;
// times (creation-time, oldest-ancester-time, a blob file's creation-time)
// are RFC 3339 in UTC (0 stays 0: unknown); internal keys print as
// USERKEY#SEQ,KIND with pebble's kind names (SET, DEL, MERGE, SINGLEDEL,
// RANGEDEL, SETWITHDEL, RANGEKEYSET, ...), or RocksDB's (BLOBINDEX,
// DELWITHTS, ENTITY, ...) in an edit only RocksDB writes, and the number
// for a kind without a name. JSON Lines: one object per field, {"n",
// "field", and its parts by name ("level", "file", "size", "smallest":
// {"user_key","seq","kind"}, "seqs": {"smallest","largest"},
// "creation_time", ...)}.
//
// [Manifest] also learns the edits in order and renders the live state
// after the last one as its summary, each line starting with "live": the
// edit count (and those that did not decode), the comparator, the last
// log, file and sequence numbers, and per column family and level the
// tables' count and size, then one line per table (L0 by file number,
// deeper levels by smallest key) with its size, key range and sequence
// numbers:
//
//	live L1 files=2 size=4096
//	live L1 000007 size=2048 smallest=a#5,SET largest=f#6,SET seqs=5-6
//
// Column families other than the default show as "cf=NAME" first. The
// state is bounded by a memory budget: past it, learning stops and the
// summary says at which edit.
//
// # Escaping
//
// Text is escaped for grep: every field stays on its line and fields split
// at single spaces, and nothing else changes. Printable UTF-8 prints as
// itself, a space too in the last field of a line (a put's value, a
// comparator's name) unless the number of fields varies (range-key-set and
// range-key-unset); the backslash prints as \\; every other byte (control
// bytes, DEL, bytes of invalid UTF-8, the bytes of characters that do not
// print, a space in a field that is not last) prints as \xNN with two
// lowercase hex digits. An empty field prints as nothing between its
// separators. [Unescape] reverses the escaping.
//
// # Records that do not fit
//
// A record that is not what the decoder reads (a count that overruns the
// payload, trailing bytes, an unknown or truncated tag) renders as
// nothing: [AppendBatch] and [AppendVersionEdit] return a *DecodeError with
// the offset, and the decoders a decode misfit (cat exits non-zero, a
// mount answers EIO). The output is at most a constant factor longer than
// the record ([MaxTextLen]).
package dbdecode
