// Package etcddecode renders the records of an etcd write-ahead log (the
// walpb.Record payloads codec/etcdwal reads) as lines a user can grep: the
// decoder of --decode etcd (package codec/decode says how decoders plug
// in). Records are decoded with protowire against the field numbers of
// etcd's walpb, raftpb, etcdserverpb, authpb and membershippb messages, so
// that recfs does not depend on etcd's modules.
//
// One line per record, and for a normal entry one line per request inside
// it (each operation of a transaction on its own line), every entry line
// starting with the entry's term, index and type, so that a line grep
// finds says when and where:
//
//	crc 0x8e3c2a1f
//	metadata node=8e9e05c52164694d cluster=cdf818194e3a8c32
//	snapshot index=0 term=0 voters=
//	state term=2 vote=8e9e05c52164694d commit=34
//	entry term=2 index=3 type=normal empty
//	entry term=2 index=7 type=normal put /registry/secrets/default/db k8s{apiVersion=v1 kind=Secret namespace=default name=db} k8s\x00…
//	entry term=2 index=8 type=normal put /app/key01 value 1 with spaces lease=694d7a1c2b3e4f50
//	entry term=2 index=9 type=normal delete-range /app/key1 /app/key2
//	entry term=2 index=10 type=normal txn compare /app/key00 value = value 0
//	entry term=2 index=10 type=normal txn success put /app/txn yes
//	entry term=2 index=11 type=normal lease-grant id=694d7a1c2b3e4f50 ttl=600
//	entry term=2 index=12 type=normal compaction revision=5 physical=false
//	entry term=2 index=13 type=normal user-add alice password=<redacted> user=root
//	entry term=2 index=14 type=conf-change update-node node=8e9e05c52164694d context={"id":…}
//	entry term=2 index=15 type=normal v2 PUT /0/version 3.4.0
//
// Keys and values keep printable UTF-8 as it is; a backslash is written
// \\ and control characters, other bytes that are not UTF-8, and (in a key
// or any field but the last of its line) spaces are written \xNN, so a
// line splits back into its fields and every byte can be restored. A value
// is the last field of its line but for the lease or user that follows it
// as name=value. IDs (members, leases, the voter) are hex, as etcdctl
// shows them. Passwords and tokens are not shown. A Kubernetes value (the
// k8s\0 prefix of its protobuf encoding) is preceded by
// k8s{apiVersion=… kind=… namespace=… name=…}, read from its
// runtime.Unknown wrapper and ObjectMeta.
//
// With JSON output each line is an object with the same fields: "type",
// "term", "index", "entry_type", "op" ("put", "txn success put", …),
// "key", "value", "range_end", "lease", and so on; keys and values are
// JSON strings when UTF-8, else {"base64":…}.
package etcddecode
