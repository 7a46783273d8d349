package decoders

import (
	"path"
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/etcddecode"
	"github.com/recfs/recfs/codec/promdecode"
)

// registry lists the decoders, one line each, in the order --help shows
// them. See package codec/decode for how to write one.
var registry = []Entry{
	{Name: "batch", Help: "WriteBatches of a leveldb/RocksDB/pebble WAL, one line per operation (tags 19-25 read as pebble's, else RocksDB's)",
		Formats: leveldbOnly, Detect: dbdecode.DetectBatch, NameHint: isLog, Prepare: dbdecode.PrepareBatch(dbdecode.DialectAuto)},
	{Name: "batch-rocksdb", Help: "batch, reading tags 19-25 as RocksDB's", Prepare: dbdecode.PrepareBatch(dbdecode.DialectRocksDB)},
	{Name: "batch-pebble", Help: "batch, reading tags 19-25 as pebble's", Prepare: dbdecode.PrepareBatch(dbdecode.DialectPebble)},
	{Name: "manifest", Help: "VersionEdits of a leveldb/RocksDB/pebble MANIFEST, one line per field",
		Formats: leveldbOnly, Detect: dbdecode.DetectManifest, NameHint: isManifest, Prepare: dbdecode.PrepareManifest},
	{Name: "prometheus", Help: "records of a Prometheus TSDB WAL: series, samples with their series' labels, tombstones, exemplars, metadata, histograms",
		Formats: []codec.Format{codec.PrometheusWAL}, Detect: promdecode.Detect, Prepare: promdecode.Prepare},
	{Name: "etcd", Help: "records of an etcd WAL: entries with the requests inside (put, delete-range, txn, leases, auth, members), hard states, snapshots",
		Formats: []codec.Format{codec.EtcdWAL}, Detect: etcddecode.Detect, Prepare: etcddecode.Prepare},
}

var leveldbOnly = []codec.Format{codec.LevelDB}

// isLog: a WAL's name (000042.log).
func isLog(name string) bool { return strings.EqualFold(path.Ext(name), ".log") }

// isManifest: a MANIFEST's name (MANIFEST-000005).
func isManifest(name string) bool { return strings.HasPrefix(name, "MANIFEST-") }
