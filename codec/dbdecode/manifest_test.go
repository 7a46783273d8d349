package dbdecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

func TestVersionEdit(t *testing.T) {
	tests := []struct {
		name string
		rec  []byte
		want string
		err  error
	}{
		{"leveldb", rec(1, "leveldb.BytewiseComparator", 2, 5, 9, 0, 3, 7, 4, 42,
			5, 1, ikey("k", 9, 1), 6, 2, 11, 7, 0, 12, 1234, ikey("a b", 1, 1), ikey("z", 40, 0)),
			"comparator leveldb.BytewiseComparator\nlog-number 000005\nprev-log-number 000000\nnext-file 000007\nlast-seq 42\n" +
				"compact-pointer L1 k#9,SET\ndelete-file L2 000011\nadd-file L0 000012 size=1234 smallest=a\\x20b#1,SET largest=z#40,DEL\n", nil},
		{"new-file-2 and 3", rec(100, 1, 13, 99, ikey("a", 1, 1), ikey("b", 2, 1), 1, 2,
			102, 3, 1234567, 0, 98, ikey("c", 3, 1), ikey("d", 4, 1), 3, 4),
			"add-file L1 000013 size=99 smallest=a#1,SET largest=b#2,SET seqs=1-2\n" +
				"add-file L3 1234567 path-id=0 size=98 smallest=c#3,SET largest=d#4,SET seqs=3-4\n", nil},
		{"new-file-4 rocksdb customs", rec(103, 6, 15, 100, ikey("a", 1, 1), ikey("b", 2, 17), 1, 2,
			2, string([]byte{1}), 5, string(rec(0)), 6, string(rec(1700000000)), 7, "\xab\xcd", 77, "zz",
			3, "\x0f\x00\x00\x00\x00\x00\x00\x00", 1),
			"add-file L6 000015 size=100 smallest=a#1,SET largest=b#2,BLOBINDEX seqs=1-2 need-compaction=1 oldest-ancester-time=0 " +
				"creation-time=2023-11-14T22:13:20Z checksum=abcd custom-77=7a7a min-log-to-keep=000015\n", nil},
		{"new-file-4 pebble customs", rec(103, 6, 15, 100, ikey("a", 1, 18), ikey("b", 2, 17), 1, 2,
			66, 9, 69, 1, 2, 10, 100, 11, 200, 1),
			"add-file L6 000015 size=100 smallest=a#1,SETWITHDEL largest=b#2,SEPARATOR seqs=1-2 virtual-backing=000009 blob-depth=1 blob-refs=10:100,11:200\n", nil},
		{"new-file-5 range keys", rec(104, 0, 16, 10, byte(0), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1),
			"add-file L0 000016 size=10 bounds=0 range-smallest=a#5,RANGEKEYSET range-largest=c#5,RANGEKEYSET seqs=5-5\n", nil},
		{"new-file-5 both", rec(104, 0, 16, 10, byte(3), ikey("a", 5, 1), ikey("b", 5, 1), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1),
			"add-file L0 000016 size=10 bounds=3 smallest=a#5,SET largest=b#5,SET range-smallest=a#5,RANGEKEYSET range-largest=c#5,RANGEKEYSET seqs=5-5\n", nil},
		{"pebble backing and blobs", rec(105, 20, 4096, 106, 21, 107, 1, 22, 300, 250, 1700000000, 108, 1, 22),
			"add-backing 000020 size=4096\ndelete-backing 000021\nadd-blob-file id=1 file=000022 size=300 value-size=250 creation-time=2023-11-14T22:13:20Z\n" +
				"delete-blob-file id=1 file=000022\n", nil},
		{"rocksdb", rec(10, 4, 200, 2, 201, "meta data", 202, 203, 9, 300, 2,
			400, 30, 5, 500, "crc32c", "\x01\x02", 1, 401, 30, 1, 50, 1,
			8193, "db-uuid", 8199, string(rec(17, 2, 4096, 1)), 8200, string(rec(16)), 8196, 18, 1, 8197, 15, 8202, "\x01"),
			"min-log-number-to-keep 000004\ncolumn-family 2\nadd-column-family meta data\ndrop-column-family\nmax-column-family 9\natomic-group-remaining 2\n" +
				"blob-file-addition file=000030 count=5 bytes=500 checksum-method=crc32c checksum=0102\nblob-file-garbage file=000030 count=1 bytes=50\n" +
				"db-id db-uuid\nwal-add log=000017 synced-size=4096\nwal-delete log=000016\nwal-add log=000018\nwal-delete log=000015\nignorable-tag 8202 01\n", nil},
		{"short internal key", rec(5, 0, "abc"), "compact-pointer L0 abc#short\n", nil},
		{"new-file-5 without its range-largest", rec(104, 0, 16, 10, byte(0), ikey("a", 5, 21), 5, 5, 1), "", ErrMalformed},
		{"unknown tag", rec(2, 5, 77, 1, 2), "", ErrUnknownTag},
		{"truncated field", rec(2, 5, 7, 0, 12, 1234, "\x01"), "", ErrMalformed},
		{"bad varint", []byte{2, 0x80}, "", ErrMalformed},
		{"bad tag varint", []byte{0xff}, "", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendVersionEdit(nil, tc.rec)
			if string(got) != tc.want {
				t.Errorf("text:\n%s\nwant:\n%s", got, tc.want)
			}
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.err)
			}
		})
	}
}

// TestVersionEditJSON: one object per field, numbers as numbers, times
// as RFC 3339 strings, internal keys as objects with the kind's name.
func TestVersionEditJSON(t *testing.T) {
	r := rec(2, 5, 103, 6, 15, 100, ikey("a", 1, 1), ikey("b\xff", 2, 0), 1, 2, 6, string(rec(1700000000)), 1)
	w := decode.NewWriter(nil, decode.Output{JSON: true}, 3)
	if err := writeVersionEdit(w, r); err != nil {
		t.Fatal(err)
	}
	want := `{"n":3,"field":"log-number","file":5}
{"n":3,"field":"add-file","level":6,"file":15,"size":100,"smallest":{"user_key":"a","seq":1,"kind":"SET"},` +
		`"largest":{"user_key":{"base64":"Yv8="},"seq":2,"kind":"DEL"},"seqs":{"smallest":1,"largest":2},"creation_time":"2023-11-14T22:13:20Z"}
`
	if string(w.B) != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", w.B, want)
	}
}

// learnAll feeds recs to a new Manifest and returns its summary.
func learnAll(t *testing.T, budget int64, o decode.Output, recs ...[]byte) string {
	t.Helper()
	m := NewManifest(budget)
	for i, r := range recs {
		if err := m.Learn(&decode.Record{N: int64(i), Payload: r}); err != nil && !errors.Is(err, ErrBudget) {
			t.Fatal(err)
		}
	}
	w := decode.NewWriter(nil, o, -1)
	if err := m.Summary(w); err != nil {
		t.Fatal(err)
	}
	return string(w.B)
}

// TestLiveState: the summary is the LSM tree the edits leave: deleted
// files gone, levels sorted, column families by name (RocksDB names
// them anywhere in an edit), the last numbers, and the edits that did not
// decode counted.
func TestLiveState(t *testing.T) {
	got := learnAll(t, 0, decode.Output{},
		rec(1, "leveldb.BytewiseComparator", 2, 3, 3, 4, 4, 0),
		rec(7, 0, 5, 100, ikey("a", 1, 1), ikey("c", 3, 1), 7, 0, 6, 200, ikey("b", 4, 1), ikey("b", 4, 1), 4, 9),
		rec(7, 1, 8, 50, ikey("x", 5, 1), ikey("z", 6, 0), 7, 1, 7, 60, ikey("d", 5, 1), ikey("f", 6, 1)),
		rec(6, 0, 5, 2, 9, 4, 12),
		[]byte{0xff},
		rec(7, 2, 10, 70, ikey("q", 7, 1), ikey("r", 8, 1), 201, "users", 200, 1),
	)
	want := `live edits=6 undecoded=1 first-undecoded=4
live comparator=leveldb.BytewiseComparator
live log-number=000009
live next-file=000004
live last-seq=12
live column-family=0 name=default
live cf=default L0 files=1 size=200
live cf=default L0 000006 size=200 smallest=b#4,SET largest=b#4,SET
live cf=default L1 files=2 size=110
live cf=default L1 000007 size=60 smallest=d#5,SET largest=f#6,SET
live cf=default L1 000008 size=50 smallest=x#5,SET largest=z#6,DEL
live column-family=1 name=users
live cf=users L2 files=1 size=70
live cf=users L2 000010 size=70 smallest=q#7,SET largest=r#8,SET
`
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	// Past its budget the state stops, says where, and applies no more.
	small := learnAll(t, 300, decode.Output{Number: true},
		rec(7, 0, 5, 100, ikey("a", 1, 1), ikey("c", 3, 1)),
		rec(7, 0, 6, 100, ikey("d", 1, 1), ikey("e", 3, 1)),
		rec(7, 0, 7, 100, ikey("f", 1, 1), ikey("g", 3, 1)))
	if !strings.Contains(small, "summary\tlive incomplete: the state passed its memory budget at record 2;") || strings.Contains(small, "000007") {
		t.Errorf("over budget:\n%s", small)
	}
}
