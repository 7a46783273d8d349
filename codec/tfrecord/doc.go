// Package tfrecord reads and writes TFRecord files, the record format of
// TensorFlow, JAX/Flax input pipelines and Apache Beam.
//
// A TFRecord file is a sequence of records, each
//
//	uint64 length | uint32 masked CRC-32C of the 8 length bytes | data | uint32 masked CRC-32C of data
//
// little-endian, with leveldb's CRC masking (rotate right by 15 bits, add
// 0xa282ead8). There is no block structure, no padding and no file header: a
// record is 16 bytes of framing around its data. A whole file may be
// compressed with GZIP or ZLIB; records are then positions in the
// decompressed stream. [IndexCompressed] reads such a file once, finding
// its records and making checkpoints into its stream (a [SeekIndex]);
// [Inflated] then reads any part of the stream by decompressing from the
// checkpoint before it, checking what it decompressed against the index.
//
// As for the other formats of package codec, scanners take an
// [io.ReaderAt] and a size, verify both checksums of every record, and yield record locations ([Record]), never
// copies of the data. Damage is data: a [Scanner] skips what it cannot trust
// (resynchronising on the next position that carries a valid length
// checksum and whose data checksum verifies), reports each skipped range as
// a [codec.Damage], and goes on. A valid length field whose record runs
// past the end of the file is a torn tail: the rest of the file is its
// partial data, never searched for records (records inside a record are
// not the file's); resynchronisation gives up, the rest of the file
// damage, once candidates that failed have cost it four passes of the file
// (a hostile file of many valid-looking length fields stays linear). With
// Strict set the first damage ends the
// scan with a [*codec.CorruptError]. Errors match codec's sentinels.
package tfrecord
