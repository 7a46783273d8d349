// Package dbdecode turns the records of database logs into text: the
// WriteBatches of a leveldb, RocksDB or pebble write-ahead log, and the
// VersionEdits of a MANIFEST. It is pure: bytes of one record in, text out;
// it reads no files and knows nothing of the log framing around a record
// (package codec removes that first).
//
// # Batch text
//
// [AppendBatch] writes a header line and one line per operation:
//
//	batch seq 42 count 3
//	put user00042 {"name":\x20"ann"}
//	delete user00017
//	range-delete a c
//
// The operations are those of leveldb (put, delete), RocksDB (merge,
// single-delete, range-delete, log-data, blob-index, the -cf variants that
// name a column family id, wide-column put-entity, the two-phase-commit
// markers) and pebble (range-key-set, range-key-unset, range-key-delete,
// delete-sized, ingest-sst, excise). Tags 19 to 24 mean different things to
// RocksDB and pebble; [Options.Dialect] chooses, and the default tries
// pebble first and RocksDB when pebble's reading fails. Values show as
// stored: delete-sized's number is what pebble stores, the deleted value's
// size plus the key's length. RocksDB's deletion-with-timestamp type (20)
// lives in tables, not in batches; in a batch it is an unknown tag.
//
// # Manifest text
//
// [AppendVersionEdit] writes one line per field of a VersionEdit, in the
// record's order: comparator, log-number, prev-log-number, next-file,
// last-seq, compact-pointer, delete-file, add-file (with level, file number,
// size, smallest and largest internal keys, sequence range and the custom
// fields of RocksDB's and pebble's later encodings), column families,
// atomic groups, blob files, backing tables and RocksDB's ignorable fields.
// Internal keys print as USERKEY#SEQ,KIND.
//
// # Escaping
//
// Every key, value and string field is escaped so that an operation stays
// one line and fields split at single spaces: the bytes 0x21 to 0x7e print as
// themselves except the backslash, which prints as \\; every other byte
// (space, control bytes, bytes >= 0x80) prints as \xNN with two lowercase
// hex digits. An empty field prints as nothing between its two spaces.
// [Unescape] reverses the escaping. Printable keys thus print unchanged and
// grep finds them.
//
// # Damage
//
// Nothing is dropped. An operation or field with an unknown tag ends the
// decoding with a line "unknown-tag N at byte B: HEX" that holds every byte
// from that tag to the end of the record; a record that does not decode
// ends with "error: WHAT at byte B: HEX", again with the rest of the record
// in hex, after every line that did decode. Byte offsets count from the
// start of the record. The output is at most a constant factor longer than
// the record ([MaxTextLen]).
package dbdecode
