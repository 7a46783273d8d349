package dbdecode

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/recfs/recfs/codec/decode"
)

// outputs are the three ways a decoder writes.
var outputs = []decode.Output{{}, {Number: true}, {JSON: true}}

// checkText asserts what every rendering holds: nothing for a record that
// does not decode; else bounded length, whole lines of valid UTF-8
// without control bytes but tabs, and in JSON mode one object a line.
func checkText(t *testing.T, rec, out []byte, err error, o decode.Output) {
	t.Helper()
	if err != nil {
		if len(out) != 0 {
			t.Fatalf("%v, yet %q written", err, out)
		}
		return
	}
	if len(out) > MaxTextLen(len(rec)) {
		t.Fatalf("%d bytes of text for %d bytes of record", len(out), len(rec))
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		t.Fatalf("text does not end in a newline: %q", out)
	}
	if !utf8.Valid(out) {
		t.Fatalf("text is not UTF-8: %q", out)
	}
	for _, c := range out {
		if c < ' ' && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("byte %#x in text %q", c, out)
		}
	}
	if o.JSON && len(out) > 0 {
		for _, l := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
			var v map[string]any
			if err := json.Unmarshal(l, &v); err != nil {
				t.Fatalf("line %s: %v", l, err)
			}
		}
	}
}

func FuzzBatch(f *testing.F) {
	f.Add(rec(hdr(7, 2), byte(1), "k1", "v1", byte(0), "k2"))
	f.Add(rec(hdr(3, 1), byte(21), "a", string(rec("z", "@5", "val"))))
	f.Add(rec(hdr(5, 1), byte(9), byte(5), 3, "k", "v", byte(11), "x"))
	f.Add(rec(hdr(1, 1), byte(1), "clé \\", "wörld \x85\xff"))
	f.Add(rec(hdr(1, 1), byte(0x40), byte(1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range []Dialect{DialectAuto, DialectPebble, DialectRocksDB} {
			for _, o := range outputs {
				w := decode.NewWriter(nil, o, 0)
				err := writeBatch(w, b, Options{Dialect: d, CFNames: map[uint64]string{1: "one two"}})
				checkText(t, b, w.B, err, o)
				if err == nil && o == (decode.Output{}) {
					checkUnescapes(t, w.B, b, "one two")
				}
			}
		}
	})
}

func FuzzVersionEdit(f *testing.F) {
	f.Add(rec(1, "leveldb.BytewiseComparator", 2, 5, 3, 7, 4, 42, 7, 0, 12, 1234, ikey("a", 1, 1), ikey("z", 40, 0)))
	f.Add(rec(103, 6, 15, 100, ikey("a", 1, 1), ikey("b", 2, 1), 1, 2, 2, "\x01", 66, 9, 69, 1, 1, 10, 100, 1))
	f.Add(rec(104, 0, 16, 10, byte(3), ikey("a", 5, 1), ikey("b", 5, 1), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1))
	f.Add(rec(8199, string(rec(17, 2, 4096, 1)), 400, 30, 5, 500, "m", "c", 1))
	f.Add(rec(7, 2, 10, 70, ikey("q", 7, 1), ikey("r", 8, 1), 201, "users", 200, 1, 6, 2, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range outputs {
			w := decode.NewWriter(nil, o, 0)
			err := writeVersionEdit(w, b)
			checkText(t, b, w.B, err, o)
		}
		// Learning the edit twice and summarising stays within bounds.
		m := NewManifest(1 << 16)
		for n := range 2 {
			if err := m.Learn(&decode.Record{N: int64(n), Payload: b}); err != nil && err != ErrBudget {
				t.Fatal(err)
			}
		}
		for _, o := range outputs {
			w := decode.NewWriter(nil, o, -1)
			if err := m.Summary(w); err != nil {
				t.Fatal(err)
			}
			checkText(t, b, w.B, nil, decode.Output{JSON: o.JSON})
		}
	})
}

// naiveEscaped is appendEscaped written byte by byte, as the package
// documentation states the rule.
func naiveEscaped(b []byte, last bool) string {
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\\':
			out = append(out, '\\', '\\')
		case r == ' ' && last, r != ' ' && r != utf8.RuneError && unicode.IsPrint(r):
			out = append(out, b[:n]...)
		default:
			if r == utf8.RuneError {
				n = 1
			}
			for _, c := range b[:n] {
				out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			}
		}
		b = b[n:]
	}
	return string(out)
}

// FuzzEscape: the word-at-a-time escaping agrees with the rule applied
// byte by byte, and Unescape reverses it.
func FuzzEscape(f *testing.F) {
	f.Add([]byte("plain text with spaces and a \\ backslash"), true)
	f.Add([]byte("0123456789abcdef\x00\x7f\x80\xffé中 \t\n~!"), false)
	f.Fuzz(func(t *testing.T, b []byte, last bool) {
		got := string(appendEscaped(nil, b, last))
		if want := naiveEscaped(b, last); got != want {
			t.Fatalf("%q (last %t): %q, want %q", b, last, got, want)
		}
		if back, err := Unescape(got); err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%q -> %q -> %q, %v", b, got, back, err)
		}
	})
}
