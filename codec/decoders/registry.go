package decoders

import (
	"fmt"
	"path"
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcddecode"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/codec/pbdecode"
	"github.com/recfs/recfs/codec/promdecode"
	"github.com/recfs/recfs/codec/tfexample"
)

// registry lists the decoders, one line each, in the order --help shows
// them. See package codec/decode for how to write one.
var registry = []Entry{
	{Name: "batch", Help: "WriteBatches of a leveldb/RocksDB/pebble WAL, one line per operation (tags 19-25 read as pebble's, else RocksDB's)",
		Formats: leveldbOnly, Detect: dbdecode.DetectBatch, NameHint: isLog, Prepare: dbdecode.PrepareBatch(dbdecode.DialectAuto)},
	{Name: "batch-rocksdb", Help: "batch, reading tags 19-25 as RocksDB's", Prepare: dbdecode.PrepareBatch(dbdecode.DialectRocksDB)},
	{Name: "batch-pebble", Help: "batch, reading tags 19-25 as pebble's", Prepare: dbdecode.PrepareBatch(dbdecode.DialectPebble)},
	{Name: "manifest", Help: "VersionEdits of a leveldb/RocksDB/pebble MANIFEST, one line per field; the live LSM state after the last edit as a summary",
		Formats: leveldbOnly, Detect: dbdecode.DetectManifest, NameHint: isManifest, Prepare: dbdecode.PrepareManifest},
	{Name: "prometheus", Help: "records of a Prometheus TSDB WAL: series, samples with their series' labels, tombstones, exemplars, metadata, histograms",
		Formats: []codec.Format{codec.PrometheusWAL}, Detect: promdecode.Detect, Prepare: promdecode.Prepare},
	{Name: "etcd", Help: "records of an etcd WAL: entries with the requests inside (put, delete-range, txn, leases, auth, members), hard states, snapshots",
		Formats: []codec.Format{codec.EtcdWAL}, Detect: etcddecode.Detect, Prepare: etcddecode.Prepare},
	{Name: "example", Help: `tf.train.Example and SequenceExample records, one JSON object each: {"features": {"NAME": [values], ...}}`,
		Detect: tfexample.Detect, NameHint: isTFRecord, Prepare: static(tfexample.Decoder)},
	{Name: "protobuf", Arg: "MESSAGE", Help: "protobuf messages: as protoc --decode_raw, or with :MESSAGE and --proto FILE (.proto or protoc -o descriptor set) as protojson",
		Prepare: pbdecode.Prepare},
	{Name: "kafka", Arg: "VALUE", Help: "records of a Kafka log segment: offset, time, key, headers and value, one line each; kafka:json shows JSON values as JSON, kafka:NAME[:ARG] renders values with decoder NAME",
		Formats: []codec.Format{codec.Kafka}, ByFraming: true}, // Prepare: prepareKafka, set by init
}

// static is the Prepare of a decoder without parameters.
func static(d decode.Decoder) func(*decode.Params) (decode.Factory, error) {
	return func(*decode.Params) (decode.Factory, error) { return decode.Static(d), nil }
}

// isTFRecord: a TFRecord file's name (train-00000-of-00100.tfrecord).
func isTFRecord(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".tfrecord" || ext == ".tfrecords" || strings.Contains(strings.ToLower(name), ".tfrecord")
}

var leveldbOnly = []codec.Format{codec.LevelDB}

// isLog: a WAL's name (000042.log).
func isLog(name string) bool { return strings.EqualFold(path.Ext(name), ".log") }

// isManifest: a MANIFEST's name (MANIFEST-000005).
func isManifest(name string) bool { return strings.HasPrefix(name, "MANIFEST-") }

// init completes the kafka entry, whose Prepare looks other entries up.
func init() {
	for i := range registry {
		if registry[i].Name == "kafka" {
			registry[i].Prepare = prepareKafka
		}
	}
}

// prepareKafka prepares --decode kafka[:VALUE]: VALUE "json", or the
// NAME[:ARG] of another decoder that renders the values.
func prepareKafka(p *decode.Params) (decode.Factory, error) {
	switch p.Arg {
	case "":
		return kafka.PrepareDecoder(kafka.DecoderOptions{}), nil
	case "json":
		return kafka.PrepareDecoder(kafka.DecoderOptions{JSONValues: true}), nil
	}
	e, arg, err := lookup(p.Arg)
	if err != nil {
		return nil, err
	}
	if e.ByFraming {
		return nil, fmt.Errorf("%w: --decode kafka:%s: values are not %s records", ErrUsage, p.Arg, e.Name)
	}
	inner := *p
	inner.Arg = arg
	f, err := e.Prepare(&inner)
	if err != nil {
		return nil, err
	}
	return kafka.PrepareDecoder(kafka.DecoderOptions{Values: f}), nil
}
