package etcddecode_test

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcddecode"
	"github.com/recfs/recfs/codec/etcdwal"
)

// Render an entry holding a put, as etcd writes it to its WAL.
func Example() {
	var put []byte // etcdserverpb.PutRequest
	put = protowire.AppendTag(put, 1, protowire.BytesType)
	put = protowire.AppendString(put, "/registry/secrets/default/db")
	put = protowire.AppendTag(put, 2, protowire.BytesType)
	put = protowire.AppendString(put, "hunter2")
	var req []byte // etcdserverpb.InternalRaftRequest
	req = protowire.AppendTag(req, 4, protowire.BytesType)
	req = protowire.AppendBytes(req, put)
	var ent []byte // raftpb.Entry
	ent = protowire.AppendTag(ent, 2, protowire.VarintType)
	ent = protowire.AppendVarint(ent, 2)
	ent = protowire.AppendTag(ent, 3, protowire.VarintType)
	ent = protowire.AppendVarint(ent, 41)
	ent = protowire.AppendTag(ent, 4, protowire.BytesType)
	ent = protowire.AppendBytes(ent, req)
	payload := etcdwal.AppendRecord(nil, etcdwal.WALRecord{Type: etcdwal.EntryType, CRC: 1, Data: ent})

	w := decode.NewWriter(nil, decode.Output{}, 0)
	etcddecode.Decode(w, &decode.Record{Payload: payload})
	fmt.Print(string(w.B))
	// Output:
	// entry term=2 index=41 type=normal put /registry/secrets/default/db hunter2
}
