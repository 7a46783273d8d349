package dbdecode

import (
	"errors"
	"testing"
)

func TestBatch(t *testing.T) {
	tests := []struct {
		name string
		rec  []byte
		d    Dialect
		want string
		err  error
	}{
		{"leveldb", rec(hdr(7, 2), byte(1), "k1", "v 1", byte(0), "k2"), DialectAuto,
			"batch seq 7 count 2\nput k1 v\\x201\ndelete k2\n", nil},
		{"empty", hdr(1, 0), DialectAuto, "batch seq 1 count 0\n", nil},
		{"escaping", rec(hdr(1, 1), byte(1), "a\\b\n", "\xff\x00\""), DialectAuto,
			"batch seq 1 count 1\nput a\\\\b\\x0a \\xff\\x00\"\n", nil},
		{"empty key and value", rec(hdr(1, 1), byte(1), "", ""), DialectAuto,
			"batch seq 1 count 1\nput  \n", nil},
		{"common tags", rec(hdr(9, 4), byte(2), "m", "+1", byte(3), "blob", byte(7), "s", byte(15), "a", "c", byte(1), "k", "v"), DialectAuto,
			"batch seq 9 count 4\nmerge m +1\nlog-data blob\nsingle-delete s\nrange-delete a c\nput k v\n", nil},
		{"pebble range keys", rec(hdr(3, 3),
			byte(21), "a", string(rec("z", "@5", "val")), byte(20), "b", string(rec("y", "@1", "@2")), byte(19), "c", "x"), DialectAuto,
			"batch seq 3 count 3\nrange-key-set a z @5 val\nrange-key-unset b y @1 @2\nrange-key-delete c x\n", nil},
		{"pebble delete-sized excise ingest", rec(hdr(3, 3), byte(23), "k", string(rec(300)), byte(24), "a", "b", byte(22), "\x07"), DialectAuto,
			"batch seq 3 count 3\ndelete-sized k 300\nexcise a b\ningest-sst \\x07\n", nil},
		{"range-key-set raw", rec(hdr(3, 1), byte(21), "a", string(rec("z", "@5"))), DialectPebble,
			"batch seq 3 count 1\nrange-key-set-raw a \\x01z\\x02@5\n", nil},
		{"rocksdb column families", rec(hdr(5, 4), byte(5), 3, "k", "v", byte(4), 3, "d", byte(6), 2, "m", "x", byte(14), 300, "a", "b"), DialectAuto,
			"batch seq 5 count 4\nput-cf 3 k v\ndelete-cf 3 d\nmerge-cf 2 m x\nrange-delete-cf 300 a b\n", nil},
		{"rocksdb 2pc", rec(hdr(5, 1), byte(9), byte(1), "k", "v", byte(10), "xid", byte(11), "xid", byte(13)), DialectAuto,
			"batch seq 5 count 1\nbegin-prepare\nput k v\nend-prepare xid\ncommit xid\nnoop\n", nil},
		{"rocksdb blob index auto", rec(hdr(5, 2), byte(17), "k", "\x01idx", byte(16), 1, "k2", "i"), DialectAuto,
			"batch seq 5 count 2\nblob-index k \\x01idx\nblob-index-cf 1 k2 i\n", nil},
		{"rocksdb entity", rec(hdr(5, 2), byte(22), "k", "e", byte(23), 4, "k", "e"), DialectRocksDB,
			"batch seq 5 count 2\nput-entity k e\nput-entity-cf 4 k e\n", nil},
		{"unknown tag keeps the rest", rec(hdr(1, 2), byte(1), "k", "v", byte(0x40), byte(1), byte(2)), DialectAuto,
			"batch seq 1 count 2\nput k v\nunknown-tag 64 at byte 17: 400102\n", ErrUnknownTag},
		{"truncated op", rec(hdr(1, 2), byte(1), "k", "v", byte(1), byte(5), "ab"), DialectAuto,
			"batch seq 1 count 2\nput k v\nerror: truncated put at byte 17: 0105026162\n", ErrMalformed},
		{"short header", []byte{1, 2, 3}, DialectAuto,
			"error: batch header needs 12 bytes at byte 0: 010203\n", ErrMalformed},
		{"count mismatch", rec(hdr(1, 3), byte(1), "k", "v"), DialectPebble,
			"batch seq 1 count 3\nput k v\nerror: header count 3, batch holds 1\n", ErrMalformed},
		{"log data not counted", rec(hdr(1, 0), byte(3), "x"), DialectAuto,
			"batch seq 1 count 0\nlog-data x\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendBatch([]byte("pre\n"), tc.rec, Options{Dialect: tc.d})
			want := "pre\n" + tc.want
			if string(got) != want {
				t.Errorf("text:\n%s\nwant:\n%s", got, want)
			}
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.err)
			}
		})
	}
}

// TestBatchDialects: tag 19 is a pebble range-key delete (two strings) and
// a RocksDB begin-unprepare marker (nothing); each dialect reads its own.
func TestBatchDialects(t *testing.T) {
	pebble := rec(hdr(1, 1), byte(19), "a", "b")
	rocks := rec(hdr(1, 1), byte(19), byte(1), "k", "v")
	for _, tc := range []struct {
		rec  []byte
		d    Dialect
		want string
	}{
		{pebble, DialectAuto, "batch seq 1 count 1\nrange-key-delete a b\n"},
		{pebble, DialectPebble, "batch seq 1 count 1\nrange-key-delete a b\n"},
		{rocks, DialectAuto, "batch seq 1 count 1\nbegin-unprepare\nput k v\n"},
		{rocks, DialectRocksDB, "batch seq 1 count 1\nbegin-unprepare\nput k v\n"},
	} {
		if got := Batch(tc.rec, Options{Dialect: tc.d}); string(got) != tc.want {
			t.Errorf("%s: %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestUnescape(t *testing.T) {
	for _, s := range []string{"", "abc", "a b\\c\x00\xff\n\t\"'", "\\x"} {
		e := appendEscaped(nil, []byte(s))
		for _, c := range e {
			if c <= ' ' || c >= 0x7f {
				t.Fatalf("%q escapes to %q with byte %#x", s, e, c)
			}
		}
		back, err := Unescape(string(e))
		if err != nil || string(back) != s {
			t.Errorf("%q -> %q -> %q, %v", s, e, back, err)
		}
	}
	for _, bad := range []string{"\\", "\\x1", "\\y00", "\\xg0", "a b"} {
		if _, err := Unescape(bad); !errors.Is(err, ErrEscape) {
			t.Errorf("Unescape(%q): %v, want ErrEscape", bad, err)
		}
	}
}
