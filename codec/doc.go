// Package codec holds what recfs's record-file formats share: the Format
// names, the sentinel errors, [CorruptError] and [Damage] with its typed
// [DamageKind], and the leveldb family's masked CRC-32C helpers. The formats
// themselves live in sub-packages, one each, pebble-style:
// codec/leveldb (the leveldb log format with its App Engine and
// RocksDB/pebble flavours), codec/recordio (grailbio recordio, current
// and legacy formats) and codec/tfrecord (TFRecord, plain or GZIP/ZLIB). Telling them apart from a file's bytes is
// index.Detect's job, which asks each format's probe.
//
// codec is the first stage of recfs's pipeline (file → codec → index → fs →
// kernel): pure framing over io.Reader, io.ReaderAt and io.Writer that knows
// nothing of files, paths or FUSE. Scanners take an [io.ReaderAt] and a
// size, walk the file once, verify every checksum, and yield record
// *locations* — where each record's payload lives — never copies of the
// payloads. Random reads then go back to the file through those locations and
// touch only the bytes they need.
//
// Damage is data: by default a scanner skips what it cannot trust, records
// each skipped byte range as a [Damage], and goes on; with Strict set the
// first damage ends the scan with a [*CorruptError]. Errors are sentinel
// values ([ErrFormat], [ErrCorrupt], [ErrTruncated], [ErrUnsupported],
// [ErrLimit]) to be tested with [errors.Is].
//
// Glossary: a *record* is one user payload (grailbio calls it an item); a
// *chunk* is one framed fragment with its own header and checksum; a *block*
// is a 32 KiB unit of a leveldb log, or a group of items in a recordio file;
// *padding* is the filler at the end of a block.
//
// Each format package reads what its reference implementation writes, byte
// for byte, and writes what that implementation reads; its doc names the
// reference.
package codec
