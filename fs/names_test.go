package fs

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index"
)

func TestNameWidth(t *testing.T) {
	for _, tc := range []struct {
		count int64
		want  int
	}{
		{0, 6}, {1, 6}, {10, 6}, {1000000, 6}, {1000001, 7}, {10000000, 7}, {10000001, 8},
	} {
		if got := NameWidth(tc.count); got != tc.want {
			t.Errorf("NameWidth(%d) = %d, want %d", tc.count, got, tc.want)
		}
	}
}

func TestRecordName(t *testing.T) {
	for _, tc := range []struct {
		n, count int64
		want     string
	}{
		{0, 1, "000000"}, {42, 100, "000042"}, {999999, 1000000, "999999"},
		{5, 1000001, "0000005"}, {1000000, 1000001, "1000000"},
	} {
		if got := RecordName(tc.n, tc.count); got != tc.want {
			t.Errorf("RecordName(%d, %d) = %q, want %q", tc.n, tc.count, got, tc.want)
		}
	}
}

func TestParseRecordName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int64
		want  int64
		ok    bool
	}{
		{"000000", 1, 0, true},
		{"0", 1, 0, true},
		{"000042", 100, 42, true},
		{"42", 100, 42, true},
		{"0042", 100, 0, false},    // neither padded nor plain
		{"00042", 100, 0, false},   // short padding
		{"0000042", 100, 0, false}, // long padding
		{"100", 100, 0, false},     // out of range
		{"000100", 100, 0, false},
		{"", 100, 0, false},
		{"-1", 100, 0, false},
		{"+1", 100, 0, false},
		{"1a", 100, 0, false},
		{" 1", 100, 0, false},
		{"000000", 0, 0, false},
		{"99999999999999999999", 100, 0, false}, // overflow
		{"1000000", 1000001, 1000000, true},
		{"0000005", 1000001, 5, true},
		{"000005", 1000001, 0, false}, // width is 7 here
	} {
		got, ok := ParseRecordName(tc.name, tc.count)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRecordName(%q, %d) = %d, %v; want %d, %v", tc.name, tc.count, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseRecordName checks that every accepted name is in range and is
// either the padded name or the plain decimal of its number, and that the
// padded and plain names of that number are both accepted.
func FuzzParseRecordName(f *testing.F) {
	f.Add("000042", int64(100))
	f.Add("42", int64(100))
	f.Add("0042", int64(1000001))
	f.Add("9223372036854775807", int64(9223372036854775807))
	f.Fuzz(func(t *testing.T, name string, count int64) {
		n, ok := ParseRecordName(name, count)
		if !ok {
			return
		}
		if n < 0 || n >= count {
			t.Fatalf("%q (count %d) -> %d out of range", name, count, n)
		}
		padded, plain := RecordName(n, count), strconv.FormatInt(n, 10)
		if name != padded && name != plain {
			t.Fatalf("%q (count %d) -> %d, which is named %q or %q", name, count, n, padded, plain)
		}
		for _, s := range []string{padded, plain} {
			if m, ok := ParseRecordName(s, count); !ok || m != n {
				t.Fatalf("%q (count %d) -> %d, %v; want %d", s, count, m, ok, n)
			}
		}
	})
}

// TestCheckName: Lookup, Create and Mkdir accept and refuse the same names
// (one check): what is no single path element is EINVAL for Create and
// Mkdir and ENOENT for Lookup.
func TestCheckName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tr, err := NewDir(dir, Options{Open: (&fakeOpener{}).open, Detect: fakeDetect, Logger: codectest.QuietLogger(), ReadWrite: true,
		Create: func(context.Context, SourceFile) (Records, error) { return &fakeAppender{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rw, _ := newWritableTree(t, codec.LevelDB, Options{})
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"a.log", true}, {"..a", true}, {strings.Repeat("x", 255), true},
		{"", false}, {".", false}, {"..", false}, {"a/b", false}, {"/", false}, {"a\x00b", false}, {strings.Repeat("x", 256), false},
	} {
		if got := checkName(tc.name) == nil; got != tc.ok {
			t.Errorf("checkName(%q) ok = %v, want %v", tc.name, got, tc.ok)
		}
		if tc.ok {
			continue
		}
		if _, err := tr.Lookup(ctx, tr.Root(), tc.name); Errno(err) != syscall.ENOENT {
			t.Errorf("Lookup(%q) = %v, want ENOENT", tc.name, err)
		}
		if _, err := tr.Mkdir(ctx, tr.Root(), tc.name); Errno(err) != syscall.EINVAL {
			t.Errorf("Mkdir(%q) = %v, want EINVAL", tc.name, err)
		}
		if _, _, err := rw.Create(ctx, rw.Root(), tc.name); Errno(err) != syscall.EINVAL {
			t.Errorf("Create(%q) = %v, want EINVAL", tc.name, err)
		}
	}
}

// fakeAppender is a fake source that takes appends.
type fakeAppender struct{ fakeRecords }

func (f *fakeAppender) Append(_ context.Context, recs [][]byte, _ index.AppendOptions) (int64, error) {
	first := f.Len()
	f.recs = append(f.recs, recs...)
	return first, nil
}
