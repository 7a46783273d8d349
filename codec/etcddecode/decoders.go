package etcddecode

import (
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcdwal"
)

// Prepare is the registry's constructor of etcd decoders.
func Prepare(*decode.Params) (decode.Factory, error) { return decode.Static(New()), nil }

// Detect reports whether recs, the first records of a source, are etcd
// WAL records: each a walpb.Record of a type etcd writes that renders
// without error.
func Detect(recs [][]byte) bool {
	for i, r := range recs {
		w, err := etcdwal.ParseRecord(r)
		if err != nil || w.Type < etcdwal.MetadataType || w.Type > etcdwal.SnapshotType {
			return false
		}
		if Decode(decode.NewWriter(nil, decode.Output{}, int64(i)), &decode.Record{N: int64(i), Payload: r}) != nil {
			return false
		}
	}
	return len(recs) > 0
}
