package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestOpenInputs: every way an append reads its inputs gives the records
// the inputs hold, in order, and keeps memory bounded: small inputs in
// memory, a large one (a file, or a stdin copied to a temporary file)
// makes every input a stream; with lines, one record a line.
func TestOpenInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small", []byte("small file"))
	empty := write("empty", nil)
	big := bytes.Repeat([]byte("B"), memInput+5)
	bigFile := write("big", big)
	lines := write("lines", []byte("l1\r\nl2\nl3"))
	for _, tc := range []struct {
		name    string
		stdin   []byte
		names   []string
		lines   bool
		want    [][]byte
		streams bool // read as streams, not into memory
		temps   int  // anonymous temporary files
	}{
		{"stdin by default", []byte("from stdin"), nil, false, [][]byte{[]byte("from stdin")}, false, 0},
		{"files and stdin", []byte("x"), []string{small, "-", empty}, false, [][]byte{[]byte("small file"), []byte("x"), {}}, false, 0},
		{"a large file streams all", nil, []string{small, bigFile}, false, [][]byte{[]byte("small file"), big}, true, 0},
		{"a large stdin spools", big, []string{"-", small}, false, [][]byte{big, []byte("small file")}, true, 1},
		{"lines", []byte("s1\n\ns3\n"), []string{"-", lines}, true, [][]byte{[]byte("s1"), {}, []byte("s3"), []byte("l1"), []byte("l2"), []byte("l3")}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			in, err := OpenInputs(bytes.NewReader(tc.stdin), tc.names, tc.lines)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if got := in.streams != nil; got != tc.streams {
				t.Errorf("streams %v, want %v", got, tc.streams)
			}
			temps := 0
			for _, f := range in.files {
				if !strings.HasPrefix(f.Name(), dir) {
					temps++
				}
			}
			if temps != tc.temps {
				t.Errorf("%d temporary files, want %d", temps, tc.temps)
			}
			tb, err := Create(ctx, filepath.Join(t.TempDir(), "a.log"), codec.LevelDB, false, Options{CacheDir: "-"})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			first, count, err := in.AppendTo(ctx, tb, AppendOptions{})
			if err != nil || first != 0 || count != int64(len(tc.want)) {
				t.Fatalf("AppendTo: first %d, count %d, %v; want 0, %d", first, count, err, len(tc.want))
			}
			got := readRecords(t, tb)
			if len(got) != len(tc.want) {
				t.Fatalf("%d records, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.want[i]) {
					t.Errorf("record %d: %d bytes %.20q, want %d bytes %.20q", i, len(got[i]), got[i], len(tc.want[i]), tc.want[i])
				}
			}
		})
	}
}

// TestOpenInputsMissing: an input that cannot be opened fails the whole
// call, with no Inputs (what was opened is closed).
func TestOpenInputsMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "ok")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, lines := range []bool{false, true} {
		in, err := OpenInputs(nil, []string{p, filepath.Join(dir, "missing")}, lines)
		if !os.IsNotExist(err) || in != nil {
			t.Errorf("lines=%v: %v, %v; want nil, not exist", lines, in, err)
		}
	}
}
