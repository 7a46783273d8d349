// Package etcdwal reads and writes etcd's write-ahead log files
// (member/wal/SEQ-INDEX.wal, etcd 3.x and so every Kubernetes control
// plane). A [Scanner] walks a file once and yields record locations;
// [ReadRecord] reads a record back through its location, verifying it; a
// [Writer] frames records as etcd's encoder does.
//
// A file is a run of frames, each 8-byte aligned:
//
//	+------------------------------+----------------------------+---------+
//	| length field (8, LE)         | walpb.Record (protobuf)    | padding |
//	+------------------------------+----------------------------+---------+
//	length field: low 56 bits the record's length; bit 63 set when the
//	record is padded, bits 56-58 then the padding (1-7 zero bytes).
//	walpb.Record: type (1, varint), crc (2, varint), data (3, bytes).
//
// The crc is a CRC-32C chained across records: each record's crc continues
// the previous record's over its data; a crc record (type 4, no data),
// which starts every file, carries the chain's value at that point. Record
// types: 1 metadata, 2 entry (a raftpb.Entry), 3 state (a
// raftpb.HardState), 4 crc, 5 snapshot (a walpb.Snapshot). etcd
// preallocates its files (64 MB): a zero length field ends the log, and the
// zeros after it are preallocated space, not damage.
//
// A record's payload, as this package and recfs show it, is the
// walpb.Record protobuf of its frame (type, crc and data): what etcd's
// decoder reads, self-describing for a protobuf decoder.
//
// Damage is data: a frame that does not parse or whose crc does not
// continue the chain is skipped and recorded as a [codec.Damage]; a crc
// mismatch costs that record only (the chain goes on from the crc it
// stored), an unparsable frame is skipped to the next place where two
// frames chain. Damage followed only by zeros or the end of the file is a
// torn last write, of the truncation kind ([codec.ErrTruncated]). etcd's
// own reader stops at the first damage; this one keeps every record after
// it that verifies.
package etcdwal
