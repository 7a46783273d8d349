package dbdecode

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// checkText asserts the properties every decoded text has: bounded length,
// lines of printable ASCII, and an unknown-tag or error line that ends with
// the record's remaining bytes in hex.
func checkText(t *testing.T, rec, out []byte) {
	t.Helper()
	if len(out) > MaxTextLen(len(rec)) {
		t.Fatalf("%d bytes of text for %d bytes of record", len(out), len(rec))
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		t.Fatalf("text does not end in a newline: %q", out)
	}
	for _, c := range out {
		if c != '\n' && (c < ' ' || c > '~') {
			t.Fatalf("byte %#x in text %q", c, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	last := lines[len(lines)-1]
	if strings.HasPrefix(last, "unknown-tag ") || strings.HasPrefix(last, "error: ") && strings.Contains(last, " at byte ") {
		_, tail, _ := strings.Cut(last, ": ")
		if strings.HasPrefix(last, "error: ") {
			tail = last[strings.LastIndex(last, ": ")+2:]
		}
		b, err := hex.DecodeString(tail)
		if err != nil || !bytes.HasSuffix(rec, b) {
			t.Fatalf("last line %q does not end in the record's tail (%v)", last, err)
		}
		if strings.HasPrefix(last, "unknown-tag ") && len(b) == 0 {
			t.Fatalf("unknown tag line without the tag: %q", last)
		}
	}
}

func FuzzBatch(f *testing.F) {
	f.Add(rec(hdr(7, 2), byte(1), "k1", "v1", byte(0), "k2"))
	f.Add(rec(hdr(3, 1), byte(21), "a", string(rec("z", "@5", "val"))))
	f.Add(rec(hdr(5, 1), byte(9), byte(5), 3, "k", "v", byte(11), "x"))
	f.Add(rec(hdr(1, 1), byte(0x40), byte(1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{DialectAuto, DialectPebble, DialectRocksDB} {
			out, err := AppendBatch(nil, b, Options{Dialect: d})
			checkText(t, b, out)
			if err == nil && bytes.Contains(out, []byte("\nerror: ")) {
				t.Fatalf("error line without an error: %q", out)
			}
		}
	})
}

func FuzzVersionEdit(f *testing.F) {
	f.Add(rec(1, "leveldb.BytewiseComparator", 2, 5, 3, 7, 4, 42, 7, 0, 12, 1234, ikey("a", 1, 1), ikey("z", 40, 0)))
	f.Add(rec(103, 6, 15, 100, ikey("a", 1, 1), ikey("b", 2, 1), 1, 2, 2, "\x01", 66, 9, 69, 1, 1, 10, 100, 1))
	f.Add(rec(104, 0, 16, 10, byte(3), ikey("a", 5, 1), ikey("b", 5, 1), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1))
	f.Add(rec(8199, string(rec(17, 2, 4096, 1)), 400, 30, 5, 500, "m", "c", 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := AppendVersionEdit(nil, b)
		checkText(t, b, out)
		if (err == nil) == (bytes.Contains(out, []byte("unknown-tag ")) || bytes.Contains(out, []byte("error: "))) &&
			!bytes.Contains(b, []byte("unknown-tag")) && !bytes.Contains(b, []byte("error: ")) {
			t.Fatalf("error %v does not match the text %q", err, out)
		}
	})
}
