package etcddecode

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcdwal"
)

// msg builds a protobuf message (codectest.Message).
var msg = codectest.Message

// walRec wraps data as a walpb.Record of type typ.
func walRec(typ int64, data []byte) []byte {
	return etcdwal.AppendRecord(nil, etcdwal.WALRecord{Type: typ, CRC: 7, Data: data})
}

// ent wraps a request as a normal entry's record.
func ent(term, index uint64, data []byte) []byte {
	return walRec(etcdwal.EntryType, msg(2, term, 3, index, 4, data))
}

func render(t testing.TB, o decode.Output, p []byte) (string, error) {
	t.Helper()
	w := decode.NewWriter(nil, o, 3)
	err := Decode(w, &decode.Record{N: 3, Payload: p})
	return string(w.B), err
}

// TestRender: every record type and the requests inside entries render as
// the package documentation says.
func TestRender(t *testing.T) {
	t.Parallel()
	k8s := append([]byte("k8s\x00"), msg(1, msg(1, "v1", 2, "Secret"), 2, msg(1, msg(1, "db-password", 3, "default")))...)
	hdr := msg(2, "root")
	for _, tc := range []struct {
		name string
		rec  []byte
		want string
	}{
		{"crc", etcdwal.AppendRecord(nil, etcdwal.WALRecord{Type: etcdwal.CrcType, CRC: 0xbeef}), "crc 0xbeef\n"},
		{"metadata", walRec(etcdwal.MetadataType, msg(1, uint64(0x8e9e), 2, uint64(0xcdf8))), "metadata node=8e9e cluster=cdf8\n"},
		{"state", walRec(etcdwal.StateType, msg(1, uint64(2), 2, uint64(0xab), 3, uint64(34))), "state term=2 vote=ab commit=34\n"},
		{"snapshot", walRec(etcdwal.SnapshotType, msg(1, uint64(50), 2, uint64(3), 3, msg(1, uint64(1), 1, uint64(0x10), 2, uint64(5)))),
			"snapshot index=50 term=3 voters=1,10 learners=5\n"},
		{"empty entry", ent(2, 1, nil), "entry term=2 index=1 type=normal empty\n"},
		{"put", ent(2, 5, msg(1, uint64(9), 4, msg(1, "/app/a b", 2, "v 1\n", 3, uint64(0x694d)))),
			"entry term=2 index=5 type=normal put /app/a\\x20b v 1\\x0a lease=694d\n"},
		{"k8s put", ent(2, 6, msg(4, msg(1, "/registry/secrets/default/db-password", 2, k8s))),
			"entry term=2 index=6 type=normal put /registry/secrets/default/db-password k8s{apiVersion=v1 kind=Secret namespace=default name=db-password} k8s\\x00\\x0a\\x0c\\x0a\\x02v1\\x12\\x06Secret\\x12\\x18\\x0a\\x16\\x0a\\x0bdb-password\\x1a\\x07default\n"},
		{"delete", ent(2, 7, msg(5, msg(1, "/a", 2, "/b"))), "entry term=2 index=7 type=normal delete-range /a /b\n"},
		{"txn", ent(2, 8, msg(6, msg(1, msg(1, uint64(0), 2, uint64(3), 3, "/a", 7, "x y"), 2, msg(2, msg(1, "/a", 2, "y")), 3, msg(3, msg(1, "/a"))))),
			"entry term=2 index=8 type=normal txn compare /a value = x y\nentry term=2 index=8 type=normal txn success put /a y\nentry term=2 index=8 type=normal txn failure delete-range /a\n"},
		{"lease grant", ent(2, 9, msg(8, msg(1, uint64(600), 2, uint64(0xabc)))), "entry term=2 index=9 type=normal lease-grant ttl=600 id=abc\n"},
		{"compaction", ent(2, 10, msg(7, msg(1, uint64(5)))), "entry term=2 index=10 type=normal compaction revision=5\n"},
		{"user add", ent(2, 11, msg(100, hdr, 1100, msg(1, "alice", 2, "secret"))),
			"entry term=2 index=11 type=normal user-add alice password=<redacted> user=root\n"},
		{"grant permission", ent(2, 12, msg(1203, msg(1, "reader", 2, msg(1, uint64(0), 2, "/app/", 3, "/app0")))),
			"entry term=2 index=12 type=normal role-grant-permission reader read /app/ /app0\n"},
		{"range", ent(2, 14, msg(3, msg(1, "/a", 2, "/b"))), "entry term=2 index=14 type=normal range /a /b\n"},
		{"lease revoke", ent(2, 15, msg(9, msg(1, uint64(0xabc)))), "entry term=2 index=15 type=normal lease-revoke id=abc\n"},
		{"lease checkpoint", ent(2, 16, msg(11, msg(1, msg(1, uint64(0xabc), 2, uint64(30)), 1, msg(1, uint64(0xdef), 2, uint64(7))))),
			"entry term=2 index=16 type=normal lease-checkpoint id=abc remaining_ttl=30\nentry term=2 index=16 type=normal lease-checkpoint id=def remaining_ttl=7\n"},
		{"alarm", ent(2, 17, msg(10, msg(1, uint64(1), 2, uint64(0x8e), 3, uint64(1)))), "entry term=2 index=17 type=normal alarm action=1 member=8e alarm=1\n"},
		{"auth enable", ent(2, 18, msg(1000, msg())), "entry term=2 index=18 type=normal auth-enable\n"},
		{"user grant role", ent(2, 19, msg(1104, msg(1, "alice", 2, "reader"))), "entry term=2 index=19 type=normal user-grant-role alice reader\n"},
		{"revoke permission", ent(2, 20, msg(1204, msg(1, "reader", 2, "/app/", 3, "/app0"))),
			"entry term=2 index=20 type=normal role-revoke-permission reader /app/ /app0\n"},
		{"downgrade", ent(2, 21, msg(1302, msg(1, uint64(1), 2, "3.5"))), "entry term=2 index=21 type=normal downgrade-info-set enabled=1 version=3.5\n"},
		{"unknown request", ent(2, 22, msg(1500, msg(1, uint64(1)))), "entry term=2 index=22 type=normal request field=1500 \\x08\\x01\n"},
		{"v2", ent(2, 13, msg(1, uint64(1), 2, "PUT", 3, "/0/version", 4, "3.4.0")), "entry term=2 index=13 type=normal v2 PUT /0/version 3.4.0\n"},
		{"conf change", walRec(etcdwal.EntryType, msg(1, uint64(1), 2, uint64(1), 3, uint64(1), 4, msg(2, uint64(2), 3, uint64(0x8e), 4, `{"id":1}`))),
			"entry term=1 index=1 type=conf-change update-node node=8e context={\"id\":1}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, decode.Output{}, tc.rec)
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tc.want)
			}
			js, err := render(t, decode.Output{JSON: true}, tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSuffix(js, "\n"), "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil || v["n"] != 3.0 {
					t.Fatalf("JSON line %q: %v", line, err)
				}
			}
		})
	}
}

// TestMisfit: bytes that are not a record, or an entry whose data is
// neither kind of request, fail as misfits.
func TestMisfit(t *testing.T) {
	t.Parallel()
	for name, p := range map[string][]byte{
		"not a record":  {0xff, 0xff},
		"bad entry":     walRec(etcdwal.EntryType, []byte{0x0a, 0x05}),
		"neither":       ent(1, 1, msg(1, uint64(3))),
		"bad put":       ent(1, 1, msg(4, []byte{0x0a, 0x09, 'x'})),
		"bad metadata":  walRec(etcdwal.MetadataType, []byte{0x08}),
		"bad txn":       ent(1, 1, msg(6, msg(2, []byte{0x12, 0x7f}))),
		"bad conf":      walRec(etcdwal.EntryType, msg(1, uint64(1), 4, []byte{0x1a, 0x03})),
		"bad snapshot":  walRec(etcdwal.SnapshotType, msg(3, []byte{0x0a, 0x02, 0x80, 0x80})),
		"bad hardstate": walRec(etcdwal.StateType, []byte{0x10}),
	} {
		_, err := render(t, decode.Output{}, p)
		if !errors.Is(err, decode.ErrMisfit) {
			t.Errorf("%s: %v, want a misfit", name, err)
		}
	}
}

// TestDetect: records of a WAL are recognised, other bytes are not.
func TestDetect(t *testing.T) {
	t.Parallel()
	wal := [][]byte{etcdwal.AppendRecord(nil, etcdwal.WALRecord{Type: etcdwal.CrcType}), walRec(etcdwal.MetadataType, msg(1, uint64(1))), ent(1, 1, nil)}
	if !Detect(wal) {
		t.Fatal("WAL records not detected")
	}
	for _, recs := range [][][]byte{nil, {[]byte("hello")}, {walRec(9, nil)}} {
		if Detect(recs) {
			t.Errorf("%q detected", recs)
		}
	}
}
