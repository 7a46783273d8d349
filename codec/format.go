package codec

import (
	"fmt"
	"io"
	"strings"
)

// Format names a record-file format.
type Format uint8

// The formats recfs reads. The zero value, Unknown, asks for detection.
const (
	Unknown        Format = iota
	LevelDB               // leveldb log: leveldb, goleveldb, App Engine records, RocksDB/pebble WALs
	RecordIO              // grailbio recordio, current (v2) format
	RecordIOLegacy        // grailbio recordio, legacy packed/unpacked format
	TFRecord              // TFRecord (TensorFlow, JAX, Beam), plain or GZIP/ZLIB-compressed
	PrometheusWAL         // Prometheus TSDB write-ahead log segment (tsdb/wlog: Prometheus, Agent, Mimir, Cortex, Thanos, Loki)
	EtcdWAL               // etcd write-ahead log file (member/wal/*.wal)
	Kafka                 // Kafka log segment: record batches (v2) and message sets (v0/v1)
)

var formatNames = [...]string{
	Unknown:        "unknown",
	LevelDB:        "leveldb",
	RecordIO:       "recordio",
	RecordIOLegacy: "recordio-legacy",
	TFRecord:       "tfrecord",
	PrometheusWAL:  "prometheus-wal",
	EtcdWAL:        "etcd-wal",
	Kafka:          "kafka",
}

// String returns the format's short name, as ParseFormat accepts it.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// Formats returns every format recfs reads (not Unknown), in the order of
// their constants.
func Formats() []Format {
	out := make([]Format, 0, len(formatNames)-1)
	for f := Unknown + 1; int(f) < len(formatNames); f++ {
		out = append(out, f)
	}
	return out
}

// ParseFormat parses a format name: "leveldb" (alias "log"), "recordio"
// (alias "rio"), "recordio-legacy", "tfrecord" (alias "tfrecords"),
// "prometheus-wal" (aliases "prometheus", "wlog"), "etcd-wal" (alias
// "etcd") or "kafka".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "leveldb", "log", "appengine", "rocksdb", "pebble":
		return LevelDB, nil
	case "recordio", "rio", "grailbio":
		return RecordIO, nil
	case "recordio-legacy", "legacy":
		return RecordIOLegacy, nil
	case "tfrecord", "tfrecords":
		return TFRecord, nil
	case "prometheus-wal", "prometheus", "wlog":
		return PrometheusWAL, nil
	case "etcd-wal", "etcd":
		return EtcdWAL, nil
	case "kafka":
		return Kafka, nil
	}
	return Unknown, fmt.Errorf("codec: unknown format %q (want leveldb, recordio, recordio-legacy, tfrecord, prometheus-wal, etcd-wal or kafka)", s)
}

// ByteSlicer is an io.ReaderAt that can also hand out its bytes without
// copying, as a memory-mapped file can. Scanners that are given one slice
// their windows from it instead of reading them into a buffer; they never
// write to the slices, which must stay valid while the scanner is used.
type ByteSlicer interface {
	io.ReaderAt
	// Slice returns the n bytes at off, read-only; fewer only with an error.
	Slice(off, n int64) ([]byte, error)
}
