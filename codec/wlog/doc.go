// Package wlog reads and writes the segments of the Prometheus TSDB
// write-ahead log (Prometheus's tsdb/wlog package, which Prometheus, the
// Prometheus Agent, Mimir, Cortex, Thanos receive and Loki share). A
// [Scanner] walks a segment once and yields record locations; [ReadRecord]
// reads bytes of an uncompressed record back through its location and
// [Decode] returns a whole record, decompressed; a [Writer] frames records
// as Prometheus's writer does.
//
// A segment is a run of 32 KiB pages (the last one of the live segment may
// be partial) holding fragments, a cousin of the leveldb log framing with
// the header fields in another order and the checksum unmasked:
//
//	+---------+------------------+-------------------------+------------+
//	| type(1) | length(2, BE)    | CRC-32C(4, BE) of data  | data       |
//	+---------+------------------+-------------------------+------------+
//	type: bits 0-2 the kind (0 = the rest of the page is zeros, 1 FULL,
//	      2 FIRST, 3 MIDDLE, 4 LAST); bit 3 snappy, bit 4 zstd: the record
//	      (all its fragments together) is compressed that way.
//
// A record never crosses a segment. A fragment header never crosses a page:
// the writer zero-fills a page with fewer than 7 bytes left. Segments are
// files 00000000, 00000001, … in a wal/ directory, and checkpoint.NNNNNNNN/
// directories hold segments of their own.
//
// Records are the payloads Prometheus's reader returns: decompressed. A
// record's location ([Record]) says where its stored bytes are, how they
// are compressed and how long the record is once decompressed, so that a
// table of records knows every size without decompressing.
//
// Damage is data, as for the other codecs: a fragment that fails its
// checksum, length or type drops the rest of its page (and the record in
// progress) and is recorded as a [codec.Damage]; the scan goes on at the
// next page, where Prometheus's own repair would have truncated the
// segment. A record cut short by the end of the file — the live segment's
// last record while it is written, or a torn last page — is damage of the
// truncation kind ([codec.ErrTruncated]).
package wlog
