package dbdecode

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/recfs/recfs/codec/decode"
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
			"batch seq 7 count 2\nput k1 v 1\ndelete k2\n", nil},
		{"empty", hdr(1, 0), DialectAuto, "batch seq 1 count 0\n", nil},
		{"escaping", rec(hdr(1, 1), byte(1), "a\\b\n c", "\xff\x00\" x\t"), DialectAuto,
			"batch seq 1 count 1\nput a\\\\b\\x0a\\x20c \\xff\\x00\" x\\x09\n", nil},
		{"utf-8 stays", rec(hdr(1, 1), byte(1), "clé", "hello wörld 中\u0085"), DialectAuto,
			"batch seq 1 count 1\nput clé hello wörld 中\\xc2\\x85\n", nil},
		{"empty key and value", rec(hdr(1, 1), byte(1), "", ""), DialectAuto,
			"batch seq 1 count 1\nput  \n", nil},
		{"common tags", rec(hdr(9, 4), byte(2), "m", "+1", byte(3), "blob", byte(7), "s", byte(15), "a", "c", byte(1), "k", "v"), DialectAuto,
			"batch seq 9 count 4\nmerge m +1\nlog-data blob\nsingle-delete s\nrange-delete a c\nput k v\n", nil},
		{"pebble range keys", rec(hdr(3, 3),
			byte(21), "a", string(rec("z", "@5", "v w")), byte(20), "b", string(rec("y", "@1", "@2")), byte(19), "c", "x y"), DialectAuto,
			"batch seq 3 count 3\nrange-key-set a z @5 v\\x20w\nrange-key-unset b y @1 @2\nrange-key-delete c x y\n", nil},
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
		{"log data not counted", rec(hdr(1, 0), byte(3), "x"), DialectAuto,
			"batch seq 1 count 0\nlog-data x\n", nil},
		// Records that are no WriteBatch show nothing.
		{"unknown tag", rec(hdr(1, 2), byte(1), "k", "v", byte(0x40), byte(1), byte(2)), DialectAuto, "", ErrUnknownTag},
		{"truncated op", rec(hdr(1, 2), byte(1), "k", "v", byte(1), byte(5), "ab"), DialectAuto, "", ErrMalformed},
		{"short header", []byte{1, 2, 3}, DialectAuto, "", ErrMalformed},
		{"count mismatch", rec(hdr(1, 3), byte(1), "k", "v", byte(1), "k", "v"), DialectPebble, "", ErrMalformed},
		{"count overruns the payload", rec(hdr(3475127932898452091, 1937056300), byte(1), "k", "v"), DialectAuto, "", ErrMalformed},
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
			if err == nil {
				checkUnescapes(t, got[4:], tc.rec)
			}
		})
	}
}

// checkUnescapes: every field of every operation line unescapes, and the
// bytes of the fields all come from the record (or are the names given).
func checkUnescapes(t *testing.T, text, rec []byte, names ...string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")[1:] {
		for _, f := range strings.Split(l, " ")[1:] {
			b, err := Unescape(f)
			if err != nil {
				t.Fatalf("field %q of %q: %v", f, l, err)
			}
			if len(b) > 0 && !bytes.Contains(rec, b) && !bytes.Contains(text, b) && !slices.Contains(names, string(b)) {
				t.Fatalf("field %q of %q is in neither the record nor the text", f, l)
			}
		}
	}
}

// TestBatchOutputs: --number labels every line with the record and the
// sequence number the operation gets (log data and markers the batch's);
// JSON has one object per line with the same labels and the fields by
// name, bytes as text or marked base64; column families by name.
func TestBatchOutputs(t *testing.T) {
	r := rec(hdr(40, 3), byte(3), "note", byte(1), "user 1", "hello world", byte(5), 2, "k", "\xff", byte(0), "gone")
	names := map[uint64]string{2: "users"}
	for _, tc := range []struct {
		o    decode.Output
		want string
	}{
		{decode.Output{}, "batch seq 40 count 3\nlog-data note\nput user\\x201 hello world\nput-cf users k \\xff\ndelete gone\n"},
		{decode.Output{Number: true, Width: 3}, "007\tseq=40\tbatch seq 40 count 3\n007\tseq=40\tlog-data note\n007\tseq=40\tput user\\x201 hello world\n" +
			"007\tseq=41\tput-cf users k \\xff\n007\tseq=42\tdelete gone\n"},
		{decode.Output{JSON: true}, `{"n":7,"seq":40,"op":"batch","count":3}
{"n":7,"seq":40,"op":"log-data","data":"note"}
{"n":7,"seq":40,"op":"put","key":"user 1","value":"hello world"}
{"n":7,"seq":41,"op":"put-cf","cf":2,"cf_name":"users","key":"k","value":{"base64":"/w=="}}
{"n":7,"seq":42,"op":"delete","key":"gone"}
`},
	} {
		w := decode.NewWriter(nil, tc.o, 7)
		if err := writeBatch(w, r, Options{CFNames: names}); err != nil || string(w.B) != tc.want {
			t.Errorf("%+v:\n%s\n%v\nwant:\n%s", tc.o, w.B, err, tc.want)
		}
	}
	w := decode.NewWriter(nil, decode.Output{JSON: true}, 0)
	rk := rec(hdr(3, 2), byte(21), "a", string(rec("z", "@5", "val")), byte(23), "k", string(rec(300)))
	if err := writeBatch(w, rk, Options{}); err != nil || !strings.Contains(string(w.B), `"op":"range-key-set","key":"a","end":"z","suffix_values":["@5","val"]`) ||
		!strings.Contains(string(w.B), `"op":"delete-sized","key":"k","size":300}`) {
		t.Errorf("range key JSON:\n%s\n%v", w.B, err)
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
	for _, s := range []string{"", "abc", "a b\\c\x00\xff\n\t\"'", "\\x", "clé 中", "\u0085\u2028"} {
		for _, last := range []bool{false, true} {
			e := appendEscaped(nil, []byte(s), last)
			if bytes.ContainsAny(e, "\n\r\t\x00") || !last && bytes.ContainsRune(e, ' ') || !utf8.Valid(e) {
				t.Fatalf("%q (last %t) escapes to %q", s, last, e)
			}
			back, err := Unescape(string(e))
			if err != nil || string(back) != s {
				t.Errorf("%q -> %q -> %q, %v", s, e, back, err)
			}
		}
	}
	for _, bad := range []string{"\\", "\\x1", "\\y00", "\\xg0", "a\nb"} {
		if _, err := Unescape(bad); !errors.Is(err, ErrEscape) {
			t.Errorf("Unescape(%q): %v, want ErrEscape", bad, err)
		}
	}
}
